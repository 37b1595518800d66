package io.tidemark.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.metadata.controller.ControllerRequest.*;
import io.tidemark.metadata.controller.PartitionControl.Outcome;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.metadata.record.MetadataRecord.Partition;
import io.tidemark.stream.metadata.NodeRef;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Deterministic tests of moving partitions in the controller: reassignments, elections, their errors and completion. */
class PartitionControlTest {
  private final Controller controller = new Controller(ControllerLimits.DEFAULT);
  private final MetadataReplica replica = new MetadataReplica(controller, 100);
  private final UUID topic = UUID.randomUUID();
  private long offset;
  private NodeRef n1;
  private NodeRef n2;
  private NodeRef n3;
  private long data;
  private long meta;

  private ControllerReply apply(Write request) {
    return replica.apply(++offset, ByteBuffer.wrap(MetadataReplica.entry(1_000, request)));
  }

  private NodeRef register(int nodeId) {
    ControllerReply r = apply(new RegisterBroker(nodeId, List.of(new Endpoint("kafka", "h", 1)), ""));
    return new NodeRef(nodeId, r.bodyOrThrow().readLong());
  }

  /** Three brokers; one topic of two partitions; partition 0 led by node 1 at epoch 0 with its streams open there. */
  @BeforeEach
  void cluster() {
    n1 = register(1);
    n2 = register(2);
    n3 = register(3);
    apply(new CreateTopic(topic, "t", 2));
    data = apply(new CreateStream(n1, Map.of())).bodyOrThrow().readLong();
    meta = apply(new CreateStream(n1, Map.of())).bodyOrThrow().readLong();
    apply(new UpdatePartition(topic, 0, 1, 0, List.of(data, meta)));
    apply(new OpenStream(n1, data, 0));
    apply(new OpenStream(n1, meta, 0));
  }

  private List<PartitionControl.Result> reassign(List<Integer> target) {
    return reassign(0, target);
  }

  private List<PartitionControl.Result> reassign(int partition, List<Integer> target) {
    ControllerReply r = apply(new ReassignPartitions(List.of(new Reassignment(topic, partition, target))));
    return PartitionControl.decode(r.bodyOrThrow());
  }

  private Partition p0() {
    return replica.image().partition(topic, 0);
  }

  @Test
  void aMoveBumpsTheEpochAndTheTargetOpensOnlyOnceTheSourceClosed() {
    // Goal: a reassignment writes the new leader with a bumped epoch; the target cannot take the streams while the
    // source holds them (its WAL may hold acknowledged data); it completes once the target serves at the new epoch.
    assertThat(p0().replicas()).containsExactly(1);
    assertThat(reassign(List.of(2))).extracting(PartitionControl.Result::outcome).containsExactly(Outcome.NONE);
    Partition moving = p0();
    assertThat(moving.leaderNodeId()).isEqualTo(2);
    assertThat(moving.leaderEpoch()).isEqualTo(1);
    assertThat(moving.replicas()).containsExactly(2);
    assertThat(moving.previousReplicas()).containsExactly(1);
    assertThat(PartitionControl.completable(replica.image(), moving)).isFalse();

    assertThat(apply(new OpenStream(n2, data, 1)).code()).isEqualTo(ErrorCode.STREAM_NOT_CLOSED);
    assertThat(replica.image().stream(data).ownerNodeId()).isEqualTo(1);
    apply(new CloseStream(n1, data, 0));
    apply(new CloseStream(n1, meta, 0));
    assertThat(apply(new OpenStream(n2, data, 1)).code()).isEqualTo(ErrorCode.NONE);
    assertThat(apply(new OpenStream(n2, meta, 1)).code()).isEqualTo(ErrorCode.NONE);
    assertThat(PartitionControl.completable(replica.image(), p0())).isTrue();
    apply(new CompleteReassignment(topic, 0, 1));
    assertThat(p0().reassigning()).isFalse();
    assertThat(p0().replicas()).containsExactly(2);
    // the old holder's epoch is fenced
    assertThat(apply(new CloseStream(n1, data, 0)).code()).isEqualTo(ErrorCode.STREAM_FENCED);
  }

  @Test
  void badReassignmentsGetTheirOutcomeAndChangeNothing() {
    // Goal: unknown partition, unknown broker, a broker named twice, an empty assignment, a second move while one
    // runs and a cancel without a move are refused one by one; the other entries of the request still apply.
    MetadataImage before = replica.image();
    assertThat(reassign(5, List.of(2))).extracting(PartitionControl.Result::outcome)
        .containsExactly(Outcome.UNKNOWN_PARTITION);
    assertThat(reassign(List.of(9))).extracting(PartitionControl.Result::outcome).containsExactly(Outcome.INVALID_ASSIGNMENT);
    assertThat(reassign(List.of(2, 2))).extracting(PartitionControl.Result::outcome)
        .containsExactly(Outcome.INVALID_ASSIGNMENT);
    assertThat(reassign(List.of())).extracting(PartitionControl.Result::outcome).containsExactly(Outcome.INVALID_ASSIGNMENT);
    assertThat(reassign(null)).extracting(PartitionControl.Result::outcome)
        .containsExactly(Outcome.NO_REASSIGNMENT_IN_PROGRESS);
    assertThat(reassign(List.of(1))).extracting(PartitionControl.Result::outcome).containsExactly(Outcome.NONE);
    assertThat(replica.image().sameContentAs(before)).isTrue();

    reassign(List.of(3));
    MetadataImage moving = replica.image();
    assertThat(reassign(List.of(2))).extracting(PartitionControl.Result::outcome)
        .containsExactly(Outcome.REASSIGNMENT_IN_PROGRESS);
    assertThat(replica.image().sameContentAs(moving)).isTrue();
    // one request, one good and one bad entry
    ControllerReply mixed = apply(new ReassignPartitions(List.of(new Reassignment(topic, 0, List.of(2)),
        new Reassignment(topic, 7, List.of(2)))));
    assertThat(PartitionControl.decode(mixed.bodyOrThrow())).extracting(PartitionControl.Result::outcome)
        .containsExactly(Outcome.REASSIGNMENT_IN_PROGRESS, Outcome.UNKNOWN_PARTITION);
  }

  @Test
  void cancelDuringAMoveSendsLeadershipBackWithANewEpoch() {
    // Goal: cancelling a running move restores the old assignment; the leader changes again with a higher epoch.
    reassign(List.of(2));
    assertThat(reassign(null)).extracting(PartitionControl.Result::outcome).containsExactly(Outcome.NONE);
    assertThat(p0().leaderNodeId()).isEqualTo(1);
    assertThat(p0().leaderEpoch()).isEqualTo(2);
    assertThat(p0().replicas()).containsExactly(1);
    assertThat(p0().reassigning()).isFalse();
  }

  @Test
  void aReplicaAddedBehindTheLeaderMovesNothingAndPreferredElectionMovesLeadership() {
    // Goal: a new assignment that keeps the live leader changes only the assignment; ElectLeaders moves leadership
    // to the first replica; elections that are not needed or whose candidate is not live are refused.
    reassign(List.of(3, 1));
    assertThat(p0().leaderNodeId()).isEqualTo(1);
    assertThat(p0().leaderEpoch()).isZero();
    assertThat(p0().reassigning()).isFalse();
    List<PartitionControl.Result> elected = PartitionControl.decode(
        apply(new ElectLeaders(List.of(new PartitionRef(topic, 0)), false)).bodyOrThrow());
    assertThat(elected).extracting(PartitionControl.Result::outcome).containsExactly(Outcome.NONE);
    assertThat(p0().leaderNodeId()).isEqualTo(3);
    assertThat(p0().leaderEpoch()).isEqualTo(1);
    assertThat(decode(apply(new ElectLeaders(List.of(new PartitionRef(topic, 0)), false)).bodyOrThrow()))
        .containsExactly(Outcome.ELECTION_NOT_NEEDED);
    assertThat(decode(apply(new ElectLeaders(List.of(new PartitionRef(topic, 0)), true)).bodyOrThrow()))
        .containsExactly(Outcome.ELECTION_NOT_NEEDED);
    // the leader is fenced: unclean election picks the first live replica; preferred fails while 3 is not live
    apply(new FenceBroker(3, n3.nodeEpoch()));
    assertThat(decode(apply(new ElectLeaders(List.of(new PartitionRef(topic, 0)), false)).bodyOrThrow()))
        .containsExactly(Outcome.ELECTION_NOT_NEEDED);
    assertThat(decode(apply(new ElectLeaders(List.of(new PartitionRef(topic, 0)), true)).bodyOrThrow()))
        .containsExactly(Outcome.NONE);
    assertThat(p0().leaderNodeId()).isEqualTo(1);
    assertThat(decode(apply(new ElectLeaders(List.of(new PartitionRef(topic, 0)), false)).bodyOrThrow()))
        .containsExactly(Outcome.PREFERRED_LEADER_NOT_AVAILABLE);
  }

  @Test
  void aStaleLeaderUpdateCannotTakeBackAMovedPartition() {
    // Goal: a broker that computed "I lead it at epoch 1" from an old image (a restart racing a move) is refused.
    reassign(List.of(2));
    assertThat(apply(new UpdatePartition(topic, 0, 1, 1, List.of(data, meta))).code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(p0().leaderNodeId()).isEqualTo(2);
  }

  @Test
  void aDrainingBrokerHandsItsPartitionsToLiveBrokersAndReceivesNoMoves() {
    // Goal: controlled shutdown moves every partition the node leads (to another replica first) with a bumped epoch,
    // and the node is no target for moves afterwards; a new registration (restart) makes it a target again.
    reassign(List.of(1, 3));
    apply(new UpdatePartition(topic, 1, 1, 0, List.of(data + 100, meta + 100)));
    ControllerReply drained = apply(new DrainBroker(n1));
    assertThat(drained.bodyOrThrow().readLong()).isEqualTo(2);
    assertThat(p0().leaderNodeId()).isEqualTo(3);
    assertThat(p0().leaderEpoch()).isEqualTo(1);
    assertThat(p0().replicas()).containsExactly(1, 3);
    Partition p1 = replica.image().partition(topic, 1);
    assertThat(p1.leaderNodeId()).isIn(2, 3);
    assertThat(p1.replicas()).containsExactly(p1.leaderNodeId());
    assertThat(PartitionControl.shuttingDown(replica.image(), 1)).isTrue();
    assertThat(reassign(List.of(1))).extracting(PartitionControl.Result::outcome).containsExactly(Outcome.INVALID_ASSIGNMENT);
    NodeRef restarted = register(1);
    assertThat(restarted.nodeEpoch()).isGreaterThan(n1.nodeEpoch());
    assertThat(PartitionControl.shuttingDown(replica.image(), 1)).isFalse();
    assertThat(reassign(List.of(1))).extracting(PartitionControl.Result::outcome).containsExactly(Outcome.NONE);
  }

  @Test
  void requestsRoundTripThroughTheCodec() {
    // Goal: the new requests decode to what was encoded (they are Raft log entries).
    List<Write> requests = List.of(
        new ReassignPartitions(List.of(new Reassignment(topic, 0, List.of(2, 3)), new Reassignment(topic, 1, null))),
        new ElectLeaders(List.of(new PartitionRef(topic, 0), new PartitionRef(topic, 1)), true),
        new CompleteReassignment(topic, 1, 7),
        new DrainBroker(new NodeRef(2, 5)));
    for (Write w : requests) {
      assertThat(RequestCodec.decode(ByteBuffer.wrap(RequestCodec.encode(w)))).isEqualTo(w);
    }
  }

  private static List<Outcome> decode(FieldReader r) {
    return PartitionControl.decode(r).stream().map(PartitionControl.Result::outcome).toList();
  }
}
