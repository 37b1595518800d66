package io.tidemark.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.metadata.controller.ControllerRequest.*;
import io.tidemark.metadata.controller.FailoverControl.Failover;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.metadata.record.MetadataRecord.Partition;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.metadata.StreamRange;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Deterministic tests of the failover of a dead broker in the controller: compute, then replay. */
class FailoverControlTest {
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

  /** Three brokers; partition 0 led by node 1 at epoch 0 with its streams open there and 10 records committed. */
  @BeforeEach
  void cluster() {
    n1 = register(1);
    n2 = register(2);
    n3 = register(3);
    apply(new CreateTopic(topic, "t", 1));
    data = apply(new CreateStream(n1, Map.of())).bodyOrThrow().readLong();
    meta = apply(new CreateStream(n1, Map.of())).bodyOrThrow().readLong();
    apply(new UpdatePartition(topic, 0, 1, 0, List.of(data, meta)));
    apply(new OpenStream(n1, data, 0));
    apply(new OpenStream(n1, meta, 0));
    assertThat(commit(n1, 0, 10).code()).isEqualTo(ErrorCode.NONE);
  }

  private ControllerReply commit(NodeRef node, long start, long end) {
    ControllerReply prepared = apply(new PrepareObjects(node, 1, 60_000));
    if (!prepared.ok()) {
      return prepared;
    }
    long id = prepared.bodyOrThrow().readLong();
    return apply(new CommitStreamSetObject(node, new CommitStreamSetObjectRequest(id, 10,
        List.of(new StreamRange(data, 0, start, end)), List.of(), List.of())));
  }

  private Partition p0() {
    return replica.image().partition(topic, 0);
  }

  @Test
  void aFencedBrokerFailsOverToARecoveryIncarnationThatAloneMayCommitItsData() {
    // Goal: failover replaces the dead epoch by a recovery incarnation (never live), names a live recoverer, moves
    // leadership with a bumped epoch; the dead epoch can commit nothing; the new leader opens only after the
    // recovery committed and closed the streams; completion fences the incarnation for good.
    apply(new FenceBroker(1, n1.nodeEpoch()));
    long recoverer = apply(new FailoverBroker(1, n1.nodeEpoch())).bodyOrThrow().readLong();
    assertThat(recoverer).isIn(2L, 3L);
    NodeRef incarnation = new NodeRef(1, n1.nodeEpoch() + 1);
    assertThat(replica.image().broker(1).nodeEpoch()).isEqualTo(incarnation.nodeEpoch());
    assertThat(PartitionControl.live(replica.image(), 1)).isFalse();
    Failover f = FailoverControl.failoverOf(replica.image(), 1);
    assertThat(f).isEqualTo(new Failover(incarnation.nodeEpoch(), (int) recoverer,
        replica.image().broker((int) recoverer).nodeEpoch(), false));
    Partition moved = p0();
    assertThat(moved.leaderNodeId()).isIn(2, 3);
    assertThat(moved.leaderEpoch()).isEqualTo(1);

    // the dead epoch (a zombie) can commit nothing, nor heartbeat its way back
    assertThat(commit(n1, 10, 20).code()).isEqualTo(ErrorCode.NODE_FENCED);
    assertThat(apply(new UnfenceBroker(1, n1.nodeEpoch())).code()).isEqualTo(ErrorCode.NONE);
    assertThat(replica.image().broker(1).nodeEpoch()).isEqualTo(incarnation.nodeEpoch());
    // the new leader waits for the recovery
    NodeRef leader = moved.leaderNodeId() == 2 ? n2 : n3;
    assertThat(apply(new OpenStream(leader, data, 1)).code()).isEqualTo(ErrorCode.STREAM_NOT_CLOSED);
    assertThat(apply(new CompleteFailover(incarnation)).code()).isEqualTo(ErrorCode.INVALID_REQUEST); // still open

    // the recovery incarnation commits what the WAL held and closes the streams
    assertThat(commit(incarnation, 10, 20).code()).isEqualTo(ErrorCode.NONE);
    assertThat(apply(new CloseStream(incarnation, data, 0)).code()).isEqualTo(ErrorCode.NONE);
    assertThat(apply(new CloseStream(incarnation, meta, 0)).code()).isEqualTo(ErrorCode.NONE);
    assertThat(apply(new CompleteFailover(incarnation)).code()).isEqualTo(ErrorCode.NONE);
    assertThat(replica.image().broker(1).fenced()).isTrue();
    assertThat(FailoverControl.failoverOf(replica.image(), 1).done()).isTrue();
    assertThat(FailoverControl.needed(replica.image(), replica.image().broker(1))).isFalse();
    assertThat(apply(new UnfenceBroker(1, incarnation.nodeEpoch())).code()).isEqualTo(ErrorCode.NONE);
    assertThat(replica.image().broker(1).fenced()).as("a recovery incarnation is never unfenced").isTrue();

    assertThat(apply(new OpenStream(leader, data, 1)).code()).isEqualTo(ErrorCode.NONE);
    assertThat(replica.image().stream(data).endOffset()).isEqualTo(20);
    // a node that returns registers with a newer epoch and leads nothing
    NodeRef back = register(1);
    assertThat(back.nodeEpoch()).isEqualTo(incarnation.nodeEpoch() + 1);
    assertThat(p0().leaderNodeId()).isEqualTo(leader.nodeId());
  }

  @Test
  void aRecoveryWhoseRecovererDiesFailsOverAgainAndABrokerHoldingNothingIsOnlyFenced() {
    // Goal: a fenced recovery incarnation gets a new one with a newer epoch (the WAL is recovered again); a fenced
    // broker holding nothing is not replaced and may come back; with no live broker nothing happens.
    apply(new FenceBroker(1, n1.nodeEpoch()));
    apply(new FailoverBroker(1, n1.nodeEpoch()));
    NodeRef first = new NodeRef(1, n1.nodeEpoch() + 1);
    apply(new FenceBroker(1, first.nodeEpoch()));
    assertThat(FailoverControl.needed(replica.image(), replica.image().broker(1))).isTrue();
    apply(new FailoverBroker(1, first.nodeEpoch()));
    assertThat(replica.image().broker(1).nodeEpoch()).isEqualTo(first.nodeEpoch() + 1);
    assertThat(FailoverControl.failoverOf(replica.image(), 1).recoveryEpoch()).isEqualTo(first.nodeEpoch() + 1);
    assertThat(commit(first, 10, 20).code()).isEqualTo(ErrorCode.NODE_FENCED);
    assertThat(replica.image().stream(data).state()).isEqualTo(StreamState.OPEN);
    assertThat(p0().leaderEpoch()).as("leadership moved once; the second failover finds nothing led").isEqualTo(1);

    // node 3 holds nothing: fenced, marked as needing no recovery, unfenced by its next heartbeat
    apply(new FenceBroker(3, n3.nodeEpoch()));
    assertThat(apply(new FailoverBroker(3, n3.nodeEpoch())).bodyOrThrow().readLong()).isEqualTo(-1);
    assertThat(replica.image().broker(3).nodeEpoch()).isEqualTo(n3.nodeEpoch());
    assertThat(FailoverControl.needed(replica.image(), replica.image().broker(3))).isFalse();
    apply(new UnfenceBroker(3, n3.nodeEpoch()));
    assertThat(replica.image().broker(3).fenced()).isFalse();
    assertThat(FailoverControl.failoverOf(replica.image(), 3)).isNull();

    // no live broker: the failover waits
    NodeRef second = new NodeRef(1, first.nodeEpoch() + 1);
    apply(new FenceBroker(2, n2.nodeEpoch()));
    apply(new FenceBroker(3, n3.nodeEpoch()));
    apply(new FenceBroker(1, second.nodeEpoch()));
    assertThat(apply(new FailoverBroker(1, second.nodeEpoch())).bodyOrThrow().readLong()).isEqualTo(-1);
    assertThat(replica.image().broker(1).nodeEpoch()).isEqualTo(second.nodeEpoch());
  }
}
