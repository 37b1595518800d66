package io.tidemark.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.metadata.controller.ControllerRequest.*;
import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The batched stream request ({@link StreamOps}): each operation has the checks and outcome of a single open or close. */
class StreamOpsTest {
  private final Controller controller = new Controller(ControllerLimits.DEFAULT);
  private final MetadataReplica replica = new MetadataReplica(controller, 100);
  private final UUID topic = UUID.randomUUID();
  private long offset;
  private NodeRef n1;
  private NodeRef n2;
  private final List<Long> streams = new ArrayList<>();

  private ControllerReply apply(Write request) {
    return replica.apply(++offset, ByteBuffer.wrap(MetadataReplica.entry(1_000, request)));
  }

  private NodeRef register(int nodeId) {
    ControllerReply r = apply(new RegisterBroker(nodeId, List.of(new Endpoint("kafka", "h", 1)), ""));
    return new NodeRef(nodeId, r.bodyOrThrow().readLong());
  }

  private Stream stream(long id) {
    return replica.image().stream(id);
  }

  private List<Stream> allStreams() {
    List<Stream> all = new ArrayList<>();
    replica.image().streams().values().forEach(all::add);
    return all;
  }

  private static List<ControllerReply> outcomes(ControllerReply reply) {
    FieldReader r = reply.bodyOrThrow();
    int n = r.readInt();
    List<ControllerReply> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(ControllerReply.decode(ByteBuffer.wrap(r.readBytes())));
    }
    return out;
  }

  /** Two brokers; four streams open on node 1 at epoch 0, the first two of them a partition's. */
  @BeforeEach
  void cluster() {
    n1 = register(1);
    n2 = register(2);
    for (int i = 0; i < 4; i++) {
      long id = apply(new CreateStream(n1, Map.of())).bodyOrThrow().readLong();
      streams.add(id);
      apply(new OpenStream(n1, id, 0));
    }
    apply(new CreateTopic(topic, "t", 1));
    apply(new UpdatePartition(topic, 0, 1, 0, List.of(streams.get(0), streams.get(1))));
  }

  @Test
  void closesAndReopensManyStreamsInOneEntryWithTheSingleRequestsChecks() {
    // Goal: one request closes a node's streams, or opens them again at a newer epoch, each checked as a single
    // close or open is: a stale epoch or a stream held elsewhere is refused alone, and changes nothing.
    NodeRef restarted = register(1); // the node's next epoch, as after a restart
    List<ControllerReply> closed = outcomes(apply(new StreamOps(restarted, List.of(
        new StreamOp(streams.get(0), 0, false), new StreamOp(streams.get(1), 0, false),
        new StreamOp(streams.get(2), 0, false)))));
    assertThat(closed).extracting(ControllerReply::code).containsOnly(ErrorCode.NONE);
    for (int i = 0; i < 3; i++) {
      assertThat(stream(streams.get(i)).state()).isEqualTo(StreamState.CLOSED);
    }
    assertThat(stream(streams.get(3)).state()).isEqualTo(StreamState.OPEN);

    // node 2 takes stream 3 only after node 1 closed it (a partition's stream is not: that one is refused)
    apply(new UpdatePartition(topic, 0, 2, 1, List.of(streams.get(0), streams.get(1), streams.get(3))));
    List<ControllerReply> mixed = outcomes(apply(new StreamOps(n2, List.of(
        new StreamOp(streams.get(0), 1, true), // closed: opens at the new epoch
        new StreamOp(streams.get(1), -1, true), // stale epoch
        new StreamOp(streams.get(3), 1, true), // a partition's stream still open on node 1
        new StreamOp(streams.get(2), 0, false))))); // closed already: nothing to do
    assertThat(mixed).extracting(ControllerReply::code).containsExactly(ErrorCode.NONE, ErrorCode.STREAM_FENCED,
        ErrorCode.STREAM_NOT_CLOSED, ErrorCode.NONE);
    Stream opened = stream(streams.get(0));
    assertThat(opened.state()).isEqualTo(StreamState.OPEN);
    assertThat(opened.ownerNodeId()).isEqualTo(2);
    assertThat(opened.epoch()).isEqualTo(1);
    assertThat(ReplyBodies.readStream(mixed.get(0).bodyOrThrow()).epoch()).isEqualTo(1);
    assertThat(stream(streams.get(1)).state()).isEqualTo(StreamState.CLOSED);
    assertThat(stream(streams.get(1)).epoch()).isZero();
    assertThat(stream(streams.get(3)).ownerNodeId()).isEqualTo(1);

    // the old holder is fenced: node 1 cannot close a stream node 2 took at a newer epoch
    List<ControllerReply> fenced = outcomes(apply(new StreamOps(restarted, List.of(new StreamOp(streams.get(0), 0, false),
        new StreamOp(streams.get(3), 0, false)))));
    assertThat(fenced).extracting(ControllerReply::code).containsExactly(ErrorCode.STREAM_FENCED, ErrorCode.NONE);
    assertThat(stream(streams.get(0)).ownerNodeId()).isEqualTo(2);
  }

  @Test
  void aStaleNodeADuplicateOrTooManyOperationsChangeNothing() {
    // Goal: a request of a node that is not current, one naming a stream twice and one above the bound are refused
    // whole, with the single requests' codes, and change nothing.
    List<Stream> before = allStreams();
    register(1); // n1 is stale now
    assertThat(apply(new StreamOps(n1, List.of(new StreamOp(streams.get(2), 0, false)))).code())
        .isEqualTo(ErrorCode.NODE_FENCED);
    assertThat(apply(new StreamOps(n2, List.of(new StreamOp(streams.get(2), 1, true),
        new StreamOp(streams.get(2), 2, true)))).code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    List<StreamOp> tooMany = new ArrayList<>();
    for (int i = 0; i <= StreamOps.MAX_OPS; i++) {
      tooMany.add(new StreamOp(1_000 + i, 0, false));
    }
    assertThat(apply(new StreamOps(n2, tooMany)).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(allStreams()).isEqualTo(before);
  }

  @Test
  void theRequestSurvivesItsEncoding() {
    StreamOps ops = new StreamOps(n1, List.of(new StreamOp(7, 3, true), new StreamOp(9, 0, false)));
    assertThat(RequestCodec.decode(ByteBuffer.wrap(RequestCodec.encode(ops)))).isEqualTo(ops);
  }
}
