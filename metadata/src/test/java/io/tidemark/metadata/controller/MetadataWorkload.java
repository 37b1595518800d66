package io.tidemark.metadata.controller;

import io.tidemark.metadata.controller.ControllerRequest.*;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.metadata.record.MetadataRecord.StorageObject;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.metadata.record.ObjectState;
import io.tidemark.stream.metadata.CommitStreamObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.metadata.StreamRange;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * Test fixture: a seeded generator of plausible (and sometimes invalid) write requests computed
 * from the current image: registrations, stream opens/closes/trims/deletes, prepares, uploads,
 * stream-object compactions, expiry, fencing, topics and key-values.
 */
public final class MetadataWorkload {
  private final Random random;

  public MetadataWorkload(long seed) {
    this.random = new Random(seed);
  }

  /** Opens and closes of a few random streams in one request (sometimes stale, sometimes of a stream held elsewhere). */
  private Write streamOps(NodeRef node, List<Stream> streams) {
    List<StreamOp> ops = new ArrayList<>();
    java.util.Set<Long> seen = new java.util.HashSet<>();
    for (int i = 1 + random.nextInt(4); i > 0; i--) {
      Stream s = streams.get(random.nextInt(streams.size()));
      if (seen.add(s.streamId())) {
        ops.add(new StreamOp(s.streamId(), s.epoch() + random.nextInt(2) - (random.nextInt(10) == 0 ? 1 : 0),
            random.nextBoolean()));
      }
    }
    return new StreamOps(node, ops);
  }

  /** Leader changes of a few random partitions in one request (sometimes at a stale epoch, sometimes twice one). */
  private Write partitionUpdates(MetadataImage image, List<NodeRef> nodes) {
    List<io.tidemark.metadata.record.MetadataRecord.Topic> topics = new ArrayList<>();
    image.topics().values().forEach(topics::add);
    List<UpdatePartition> updates = new ArrayList<>();
    for (int i = 1 + random.nextInt(4); i > 0; i--) {
      var t = topics.get(random.nextInt(topics.size()));
      int p = random.nextInt(t.partitionCount() + 1); // sometimes one that does not exist
      var now = image.partition(t.topicId(), p);
      int epoch = (now == null ? 0 : now.leaderEpoch()) + random.nextInt(3) - 1;
      updates.add(new UpdatePartition(t.topicId(), p, nodes.get(random.nextInt(nodes.size())).nodeId(), epoch, List.of()));
    }
    return updates.size() == 1 ? updates.get(0) : new UpdatePartitions(updates);
  }

  public Write next(MetadataImage image) {
    List<NodeRef> nodes = new ArrayList<>();
    image.brokers().values().forEach(b -> nodes.add(new NodeRef(b.nodeId(), b.nodeEpoch())));
    if (nodes.size() < 3 || random.nextInt(50) == 0) {
      return new RegisterBroker(random.nextInt(4), List.of(new Endpoint("PLAINTEXT", "h", 9092)), "r");
    }
    NodeRef node = nodes.get(random.nextInt(nodes.size()));
    List<Stream> streams = new ArrayList<>();
    image.streams().values().forEach(streams::add);
    int dice = random.nextInt(100);
    if (streams.size() < 4 || dice < 8) {
      return new CreateStream(node, Map.of("k", String.valueOf(random.nextInt(3))));
    }
    Stream s = streams.get(random.nextInt(streams.size()));
    if (dice < 18) {
      return new OpenStream(node, s.streamId(), s.epoch() + random.nextInt(2) - (random.nextInt(10) == 0 ? 1 : 0));
    }
    if (dice < 22) {
      return random.nextInt(4) > 0 ? new CloseStream(node, s.streamId(), s.epoch()) : streamOps(node, streams);
    }
    if (dice < 27) {
      return new TrimStream(node, s.streamId(), s.epoch(), s.startOffset() + random.nextInt(
          (int) Math.max(1, s.endOffset() - s.startOffset() + 2)));
    }
    if (dice < 29) {
      return new DeleteStream(node, s.streamId(), s.epoch());
    }
    if (dice < 40) {
      return new PrepareObjects(node, 1 + random.nextInt(3), 1 + random.nextInt(5_000));
    }
    if (dice < 43) {
      return new ExpireObjects(1 + random.nextInt(5));
    }
    if (dice < 45) {
      return new FenceBroker(node.nodeId(), node.nodeEpoch());
    }
    if (dice < 47) {
      return new UnfenceBroker(node.nodeId(), node.nodeEpoch());
    }
    if (dice < 49 && random.nextInt(4) == 0) {
      byte mechanism = (byte) (1 + random.nextInt(2));
      return new ControllerRequest.AlterScramCredential("u" + random.nextInt(3), mechanism, new byte[] {(byte) dice},
          new byte[] {1, (byte) dice}, new byte[] {2}, 4096, random.nextBoolean());
    }
    if (dice < 49) {
      return new PutKeyValue("ns", "k" + random.nextInt(5), random.nextBoolean() ? null : new byte[] {(byte) dice},
          random.nextBoolean());
    }
    if (dice < 50 && random.nextBoolean() && image.topics().size() > 0) {
      return partitionUpdates(image, nodes);
    }
    if (dice < 50) {
      return new CreateTopic(new UUID(random.nextLong(), random.nextLong()), "t" + random.nextInt(5), 2);
    }
    List<Long> prepared = new ArrayList<>();
    for (StorageObject o : image.objects().values()) {
      if (o.state() == ObjectState.PREPARED && o.nodeId() == node.nodeId()) {
        prepared.add(o.objectId());
      }
    }
    if (prepared.isEmpty()) {
      return new PrepareObjects(node, 2, 10_000);
    }
    long id = prepared.get(random.nextInt(prepared.size()));
    if (dice < 60) {
      List<Long> sources = new ArrayList<>();
      long start = -1;
      long end = -1;
      for (Long oid : image.objectsOfStream(s.streamId()).values()) {
        StorageObject o = image.object(oid);
        if (o.kind() != ObjectKind.STREAM) {
          continue;
        }
        StreamRange r = o.rangeOf(s.streamId());
        if (start < 0) {
          start = r.startOffset();
        } else if (r.startOffset() != end) {
          break;
        }
        end = r.endOffset();
        sources.add(oid);
      }
      if (sources.size() >= 2) {
        return new CommitStreamObject(node, new CommitStreamObjectRequest(id, 10,
            new StreamRange(s.streamId(), s.epoch(), start, end), sources));
      }
    }
    long len = 1 + random.nextInt(20);
    long start = s.endOffset() + (random.nextInt(15) == 0 ? 1 : 0);
    long epoch = s.state() == StreamState.OPEN ? s.epoch() : s.epoch() + 1;
    StreamRange range = new StreamRange(s.streamId(), epoch, start, start + len);
    if (random.nextBoolean()) {
      return new CommitStreamSetObject(node, new CommitStreamSetObjectRequest(id, 100, List.of(range), List.of(),
          List.of()));
    }
    return new CommitStreamSetObject(node, new CommitStreamSetObjectRequest(-1, 0, List.of(),
        List.of(new CommitStreamSetObjectRequest.StreamObject(id, 50, range)), List.of()));
  }
}
