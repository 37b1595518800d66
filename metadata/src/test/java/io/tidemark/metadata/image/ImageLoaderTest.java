package io.tidemark.metadata.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.metadata.controller.Controller;
import io.tidemark.metadata.controller.ControllerLimits;
import io.tidemark.metadata.controller.ControllerRequest;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.controller.MetadataWorkload;
import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest.StreamObject;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamRange;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ImageLoaderTest {

  /** Applies writes to one replica with a fixed clock. */
  private static final class Log {
    final MetadataReplica replica = new MetadataReplica(new Controller(ControllerLimits.DEFAULT), 10);
    long offset;

    FieldReader apply(ControllerRequest.Write w) {
      offset++;
      return replica.apply(offset, ByteBuffer.wrap(MetadataReplica.entry(1_000 + offset, w))).bodyOrThrow();
    }
  }

  static MetadataImage replayed(List<MetadataRecord> records, long offset) {
    MetadataImage.Builder b = MetadataImage.EMPTY.toBuilder();
    records.forEach(b::replay);
    return b.build(offset);
  }

  static void assertSameImage(MetadataImage actual, MetadataImage expected) {
    assertThat(actual.offset()).isEqualTo(expected.offset());
    assertThat(actual.toRecords()).isEqualTo(expected.toRecords());
    assertThat(actual.preparedByExpiry()).isEqualTo(expected.preparedByExpiry());
    assertThat(actual.markedForDeletion()).isEqualTo(expected.markedForDeletion());
    for (var s : expected.streams().values()) {
      assertThat(actual.objectsOfStream(s.streamId())).isEqualTo(expected.objectsOfStream(s.streamId()));
    }
    for (var b : expected.brokers().values()) {
      assertThat(actual.streamSetObjectsOfNode(b.nodeId())).isEqualTo(expected.streamSetObjectsOfNode(b.nodeId()));
    }
  }

  @Test
  void bulkBuiltMapsEqualMapsBuiltByInserts() {
    // Goal: a map built in bulk from keys in any order equals the one built by puts, and finds every key.
    Random random = new Random(7);
    for (int round = 0; round < 20; round++) {
      int n = random.nextInt(2_000);
      List<Long> keys = new ArrayList<>(random.longs(n, 0, 1_000_000).distinct().boxed().toList());
      if (round % 2 == 0) {
        Collections.sort(keys);
      }
      PersistentMap.BulkBuilder<Long, String> bulk = new PersistentMap.BulkBuilder<>();
      PersistentMap<Long, String> puts = PersistentMap.empty();
      for (long k : keys) {
        bulk.add(k, "v" + k);
        puts = puts.put(k, "v" + k);
      }
      PersistentMap<Long, String> built = bulk.build();
      assertThat(built).isEqualTo(puts);
      assertThat(built.size()).isEqualTo(keys.size());
      for (long k : keys) {
        assertThat(built.get(k)).isEqualTo("v" + k);
        assertThat(built.remove(k).get(k)).isNull();
      }
    }
    assertThatThrownBy(() -> new PersistentMap.BulkBuilder<Long, String>().add(2L, "a").add(1L, "b").add(2L, "c")
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("added twice");
  }

  @Test
  void snapshotRecordsLoadInBulkToTheImageTheirReplayGives() {
    // Goal: loading a workload image's records in bulk gives the replayed image, indexes included; records not in
    // snapshot form (removals, changed end offsets, repeats) fall back to replay with the same result.
    Log log = new Log();
    MetadataWorkload workload = new MetadataWorkload(11);
    for (int i = 0; i < 3_000; i++) {
      try {
        log.apply(workload.next(log.replica.image()));
      } catch (RuntimeException rejected) {
        // the workload includes requests the controller rejects
      }
    }
    MetadataImage image = log.replica.image();
    assertThat(image.objects().size()).isGreaterThan(50);
    assertThat(image.preparedByExpiry().size() + image.markedForDeletion().size()).isPositive();
    List<MetadataRecord> records = image.toRecords();
    assertSameImage(MetadataImage.fromRecords(records, image.offset()), image);

    List<MetadataRecord> notSnapshot = new ArrayList<>(records);
    MetadataRecord.StorageObject anObject = image.objects().first().getValue();
    notSnapshot.add(new MetadataRecord.RemoveObject(anObject.objectId()));
    notSnapshot.add(anObject);
    assertSameImage(MetadataImage.fromRecords(notSnapshot, 5), replayed(notSnapshot, 5));
  }

  @Test
  void bulkLoadOfOneHundredThousandObjects() {
    // Goal: 100k committed objects over 100 streams load in bulk to the replayed image; prints both load times.
    Log log = new Log();
    NodeRef node = new NodeRef(1, log.apply(new ControllerRequest.RegisterBroker(1,
        List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), "")).readLong());
    long[] streams = new long[100];
    long[] ends = new long[streams.length];
    for (int i = 0; i < streams.length; i++) {
      streams[i] = log.apply(new ControllerRequest.CreateStream(node, Map.of("i", String.valueOf(i)))).readLong();
      log.apply(new ControllerRequest.OpenStream(node, streams[i], 1));
    }
    for (int done = 0; done < 100_000; done += 2_000) {
      long first = log.apply(new ControllerRequest.PrepareObjects(node, 2_000, 600_000)).readLong();
      List<StreamObject> sos = new ArrayList<>();
      for (int k = 0; k < 2_000; k++) {
        int s = k % streams.length;
        sos.add(new StreamObject(first + k, 1024, new StreamRange(streams[s], 1, ends[s], ends[s] + 10)));
        ends[s] += 10;
      }
      log.apply(new ControllerRequest.CommitStreamSetObject(node,
          new CommitStreamSetObjectRequest(-1, 0, List.of(), sos, List.of())));
    }
    MetadataImage image = log.replica.image();
    List<MetadataRecord> records = image.toRecords();
    int rounds = "full".equals(System.getProperty("tidemark.test.scale")) ? 7 : 1;
    long[] replayMs = new long[rounds];
    long[] bulkMs = new long[rounds];
    MetadataImage bulk = null;
    for (int i = 0; i < rounds; i++) { // alternating, so machine load hits both alike
      long t0 = System.nanoTime();
      replayed(records, image.offset());
      replayMs[i] = (System.nanoTime() - t0) / 1_000_000;
      long t1 = System.nanoTime();
      bulk = MetadataImage.fromRecords(records, image.offset());
      bulkMs[i] = (System.nanoTime() - t1) / 1_000_000;
    }
    assertThat(bulk.objects().size()).isEqualTo(100_000);
    assertSameImage(bulk, image);
    Arrays.sort(replayMs);
    Arrays.sort(bulkMs);
    System.out.printf("image load of 100k objects (%d records): replay median %d ms (min %d), bulk median %d ms "
        + "(min %d)%n", records.size(), replayMs[rounds / 2], replayMs[0], bulkMs[rounds / 2], bulkMs[0]);
  }
}
