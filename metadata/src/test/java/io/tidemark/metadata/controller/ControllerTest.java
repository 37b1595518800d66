package io.tidemark.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.metadata.controller.ControllerRequest.*;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.metadata.record.ObjectState;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamRange;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Deterministic tests of the controller logic with injected time and no Raft: compute, then replay. */
class ControllerTest {
  private final Controller controller = new Controller(ControllerLimits.DEFAULT);
  private final MetadataReplica replica = new MetadataReplica(controller, 100);
  private long offset;
  private long nowMs = 1_000;

  private ControllerReply apply(Write request) {
    return replica.apply(++offset, ByteBuffer.wrap(MetadataReplica.entry(nowMs, request)));
  }

  private NodeRef register(int nodeId) {
    ControllerReply r = apply(new RegisterBroker(nodeId, List.of(new Endpoint("PLAINTEXT", "h", 1)), ""));
    return new NodeRef(nodeId, r.bodyOrThrow().readLong());
  }

  @Test
  void nodeEpochGrowsOnEveryRegistrationAndFencingFollowsTheEpoch() {
    // Goal: re-registering bumps the epoch; fencing applies to the named epoch only; a fenced node changes nothing.
    NodeRef first = register(1);
    NodeRef second = register(1);
    assertThat(second.nodeEpoch()).isEqualTo(first.nodeEpoch() + 1);
    apply(new FenceBroker(1, first.nodeEpoch()));
    assertThat(replica.image().broker(1).fenced()).isFalse();
    apply(new FenceBroker(1, second.nodeEpoch()));
    assertThat(replica.image().broker(1).fenced()).isTrue();
    MetadataImage before = replica.image();
    ControllerReply rejected = apply(new CreateStream(second, Map.of()));
    assertThat(rejected.code()).isEqualTo(ErrorCode.NODE_FENCED);
    assertThat(replica.image().sameContentAs(before)).isTrue();
    apply(new UnfenceBroker(1, second.nodeEpoch()));
    assertThat(apply(new CreateStream(second, Map.of())).code()).isEqualTo(ErrorCode.NONE);
  }

  @Test
  void sessionsExpireAfterTheTimeoutAndANewLeaderGivesAGracePeriod() {
    // Goal: a broker silent for longer than the session timeout is due for fencing; heartbeats keep it alive.
    NodeRef a = register(1);
    NodeRef b = register(2);
    BrokerSessions sessions = new BrokerSessions(5_000, 0);
    assertThat(sessions.expired(replica.image(), 10_000)).isEmpty(); // grace: sessions start now
    sessions.heartbeat(a, 14_000);
    assertThat(sessions.expired(replica.image(), 15_000)).isEmpty();
    assertThat(sessions.expired(replica.image(), 15_001)).containsExactly(b);
    assertThat(sessions.expired(replica.image(), 19_001)).containsExactly(a, b);
    // a newer epoch of node 2 starts a new session
    NodeRef b2 = register(2);
    assertThat(sessions.expired(replica.image(), 19_002)).containsExactly(a);
    assertThat(sessions.expired(replica.image(), 24_003)).containsExactly(a, b2);
  }

  @Test
  void aNewLeaderKeepsTheSessionsItAppliedAndGivesOnlyAShortGrace() {
    // Goal: after a leader change, a broker dead since before the election is expired a session timeout after its
    // last heartbeat (not after the election), while the grace keeps live brokers that could not reach any leader
    // during the election from being fenced at once.
    NodeRef dead = register(1);
    NodeRef live = register(2);
    BrokerSessions sessions = new BrokerSessions(3_000, 1_500);
    sessions.heartbeat(dead, 10_000); // applied as a follower
    sessions.heartbeat(live, 10_000);
    sessions.leaderSince(11_500); // elected 1.5 s later
    assertThat(sessions.expired(replica.image(), 13_000)).isEmpty(); // grace runs until 13 000, the session too
    sessions.heartbeat(live, 12_600); // the live broker found the new leader
    assertThat(sessions.expired(replica.image(), 13_001)).containsExactly(dead); // 3 s after its last heartbeat
    // a late election: the grace, not the old heartbeat, decides, and nobody is fenced before it ends
    sessions.leaderSince(20_000);
    assertThat(sessions.expired(replica.image(), 21_500)).isEmpty();
    assertThat(sessions.expired(replica.image(), 21_501)).containsExactly(dead, live);
    // the grace never exceeds the session timeout
    BrokerSessions capped = new BrokerSessions(1_000, 60_000);
    capped.leaderSince(0);
    assertThat(capped.expired(replica.image(), 0)).isEmpty();
    assertThat(capped.expired(replica.image(), 1_001)).containsExactly(dead, live);
  }

  @Test
  void aHeartbeatThroughTheLogChangesNothingAndAnswersFencedOrRejectsAReplacedEpoch() {
    // Goal: the SessionHeartbeat write computes no records; a fenced epoch is told so; an old epoch gets NODE_FENCED.
    NodeRef n = register(1);
    long before = replica.image().brokers().size();
    ControllerReply ok = apply(new SessionHeartbeat(n));
    assertThat(ok.code()).isEqualTo(ErrorCode.NONE);
    assertThat(ok.bodyOrThrow().readBoolean()).isFalse();
    apply(new FenceBroker(1, n.nodeEpoch()));
    assertThat(apply(new SessionHeartbeat(n)).bodyOrThrow().readBoolean()).isTrue();
    NodeRef again = register(1);
    assertThat(apply(new SessionHeartbeat(n)).code()).isEqualTo(ErrorCode.NODE_FENCED);
    assertThat(apply(new SessionHeartbeat(again)).bodyOrThrow().readBoolean()).isFalse();
    assertThat(replica.image().brokers().size()).isEqualTo(before);
  }

  @Test
  void preparedObjectsExpireExactlyAtTheirTtlInBoundedBatches() {
    // Goal: ExpireObjects marks only prepared objects whose TTL passed at the entry's time, at most N per entry.
    NodeRef n = register(1);
    long first = apply(new PrepareObjects(n, 5, 1_000)).bodyOrThrow().readLong();
    nowMs += 999;
    assertThat(apply(new ExpireObjects(100)).bodyOrThrow().readLong()).isZero();
    nowMs += 1;
    assertThat(apply(new ExpireObjects(3)).bodyOrThrow().readLong()).isEqualTo(3);
    assertThat(apply(new ExpireObjects(3)).bodyOrThrow().readLong()).isEqualTo(2);
    for (long id = first; id < first + 5; id++) {
      assertThat(replica.image().object(id).state()).isEqualTo(ObjectState.MARKED_FOR_DELETION);
      assertThat(replica.image().object(id).markedAtMs()).isEqualTo(nowMs);
    }
    assertThat(replica.image().preparedByExpiry().isEmpty()).isTrue();
    assertThat(replica.image().markedForDeletion().size()).isEqualTo(5);
    apply(new RemoveDeletedObjects(List.of(first, first + 1, 9999L)));
    assertThat(replica.image().object(first)).isNull();
    assertThat(replica.image().markedForDeletion().size()).isEqualTo(3);
  }

  @Test
  void sameImageRequestAndTimeComputeTheSameRecords() {
    // Goal: handlers are deterministic (what lets every replica compute the same records from the log).
    NodeRef n = register(1);
    long s = apply(new CreateStream(n, Map.of("a", "b"))).bodyOrThrow().readLong();
    apply(new OpenStream(n, s, 1));
    long id = apply(new PrepareObjects(n, 2, 60_000)).bodyOrThrow().readLong();
    Write commit = new CommitStreamSetObject(n, new CommitStreamSetObjectRequest(id, 10,
        List.of(new StreamRange(s, 1, 0, 10)), List.of(new CommitStreamSetObjectRequest.StreamObject(id + 1, 5,
        new StreamRange(s, 1, 10, 15))), List.of()));
    ControllerResult one = controller.handle(replica.image(), commit, nowMs);
    ControllerResult two = controller.handle(replica.image(), commit, nowMs);
    assertThat(one.records()).isNotEmpty().isEqualTo(two.records());
    assertThat(one.code()).isEqualTo(ErrorCode.NONE);
  }

  @Test
  void rejectedRequestsOfEveryKindReturnNoRecordsAndLeaveTheImageAlone() {
    // Goal: each named rejection (stale node, fenced stream, gap, unknown ids, duplicates, bad args) changes nothing.
    NodeRef n = register(1);
    NodeRef stale = new NodeRef(1, n.nodeEpoch() - 1);
    long s = apply(new CreateStream(n, Map.of())).bodyOrThrow().readLong();
    apply(new OpenStream(n, s, 2));
    long id = apply(new PrepareObjects(n, 1, 60_000)).bodyOrThrow().readLong();
    UUID topic = UUID.randomUUID();
    apply(new CreateTopic(topic, "t", 2));
    Map<Write, ErrorCode> bad = new java.util.LinkedHashMap<>();
    bad.put(new CreateStream(stale, Map.of()), ErrorCode.NODE_FENCED);
    bad.put(new OpenStream(n, s, 1), ErrorCode.STREAM_FENCED);
    bad.put(new OpenStream(n, 12345, 1), ErrorCode.STREAM_NOT_FOUND);
    bad.put(new TrimStream(n, s, 2, 1), ErrorCode.OFFSET_OUT_OF_RANGE);
    bad.put(new PrepareObjects(n, 0, 1), ErrorCode.INVALID_ARGUMENT);
    bad.put(new CommitStreamSetObject(n, new CommitStreamSetObjectRequest(id, 1,
        List.of(new StreamRange(s, 2, 1, 5)), List.of(), List.of())), ErrorCode.INVALID_COMMIT);
    bad.put(new CommitStreamSetObject(n, new CommitStreamSetObjectRequest(id + 7, 1,
        List.of(new StreamRange(s, 2, 0, 5)), List.of(), List.of())), ErrorCode.INVALID_COMMIT);
    bad.put(new CommitStreamSetObject(n, new CommitStreamSetObjectRequest(id, 1,
        List.of(new StreamRange(s, 2, 0, 5), new StreamRange(s, 2, 5, 6)), List.of(), List.of())),
        ErrorCode.INVALID_COMMIT);
    bad.put(new CreateTopic(UUID.randomUUID(), "t", 1), ErrorCode.ALREADY_EXISTS);
    bad.put(new CreateTopic(UUID.randomUUID(), "", 1), ErrorCode.INVALID_REQUEST);
    bad.put(new UpdatePartition(topic, 5, 1, 1, List.of()), ErrorCode.NOT_FOUND);
    bad.put(new DeleteTopic(UUID.randomUUID()), ErrorCode.NOT_FOUND);
    bad.put(new GrowTopic(topic, 2), ErrorCode.INVALID_REQUEST);
    bad.put(new GrowTopic(topic, 1), ErrorCode.INVALID_REQUEST);
    bad.put(new GrowTopic(UUID.randomUUID(), 4), ErrorCode.NOT_FOUND);
    bad.put(new AllocateProducerIds(stale), ErrorCode.NODE_FENCED);
    for (Map.Entry<Write, ErrorCode> e : bad.entrySet()) {
      MetadataImage before = replica.image();
      ControllerResult result = controller.handle(before, e.getKey(), nowMs);
      assertThat(result.code()).as(e.getKey().toString()).isEqualTo(e.getValue());
      assertThat(result.records()).as(e.getKey().toString()).isEmpty();
      assertThat(result.message()).as(e.getKey().toString()).isNotBlank();
      apply(e.getKey());
      assertThat(replica.image().sameContentAs(before)).as(e.getKey().toString()).isTrue();
    }
  }

  @Test
  void topicsPartitionsConfigsKeyValuesAndProducerIds() {
    // Goal: the simple handlers for later issues store what they are given and answer reads.
    NodeRef n = register(1);
    UUID topic = UUID.randomUUID();
    apply(new CreateTopic(topic, "orders", 3));
    assertThat(replica.image().topicByName("orders").partitionCount()).isEqualTo(3);
    assertThat(replica.image().partition(topic, 2).leaderNodeId()).isEqualTo(-1);
    apply(new UpdatePartition(topic, 2, 1, 5, List.of(7L, 8L)));
    assertThat(replica.image().partition(topic, 2).streamIds()).containsExactly(7L, 8L);
    apply(new GrowTopic(topic, 5));
    assertThat(replica.image().topicByName("orders").partitionCount()).isEqualTo(5);
    assertThat(replica.image().partition(topic, 4).leaderNodeId()).isEqualTo(-1);
    assertThat(replica.image().partition(topic, 2).streamIds()).containsExactly(7L, 8L);
    assertThat(apply(new UpdatePartition(topic, 2, 1, 4, List.of())).code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    apply(new SetConfig((byte) 2, "orders", "retention.ms", "10"));
    assertThat(replica.image().config((byte) 2, "orders", "retention.ms")).isEqualTo("10");
    byte[] v1 = "one".getBytes(StandardCharsets.UTF_8);
    byte[] v2 = "two".getBytes(StandardCharsets.UTF_8);
    assertThat(apply(new PutKeyValue("table", "ckpt/orders", v1, true)).bodyOrThrow().readBytes()).isEqualTo(v1);
    assertThat(apply(new PutKeyValue("table", "ckpt/orders", v2, true)).bodyOrThrow().readBytes()).isEqualTo(v1);
    apply(new PutKeyValue("table", "ckpt/orders", v2, false));
    assertThat(replica.image().keyValue("table", "ckpt/orders")).isEqualTo(v2);
    assertThat(replica.image().keyValue("other", "ckpt/orders")).isNull();
    apply(new PutKeyValue("table", "ckpt/orders", null, false));
    assertThat(replica.image().keyValue("table", "ckpt/orders")).isNull();
    long p1 = apply(new AllocateProducerIds(n)).bodyOrThrow().readLong();
    long p2 = apply(new AllocateProducerIds(n)).bodyOrThrow().readLong();
    assertThat(p2).isEqualTo(p1 + ControllerLimits.DEFAULT.producerIdBlockSize());
    apply(new DeleteTopic(topic));
    assertThat(replica.image().topicByName("orders")).isNull();
    assertThat(replica.image().partition(topic, 2)).isNull();
  }

  @Test
  void waitersCompleteWhenTheImageReachesTheirOffsetAndAreBounded() {
    // Goal: awaitOffset completes once the image has the offset; beyond the bound it fails at once.
    MetadataReplica small = new MetadataReplica(controller, 2);
    var a = small.awaitOffset(2);
    var b = small.awaitOffset(1);
    assertThat(small.awaitOffset(3)).isCompletedExceptionally();
    small.apply(1, ByteBuffer.wrap(MetadataReplica.entry(0, new FenceBroker(1, 1))));
    assertThat(b).isCompleted();
    assertThat(a).isNotDone();
    small.advance(2);
    assertThat(a.join().offset()).isEqualTo(2);
    assertThat(small.awaitOffset(2)).isCompleted();
  }

  @Test
  void listenersSeeEveryImageInOrderWithTheRecordsThatMadeIt() {
    // Goal: the broker hook gets the current image at once, then each applied image with its records, offsets growing.
    List<MetadataImage> images = new java.util.ArrayList<>();
    List<Integer> recordCounts = new java.util.ArrayList<>();
    replica.addListener((image, records) -> {
      images.add(image);
      recordCounts.add(records.size());
    });
    NodeRef n = register(1);
    apply(new CreateStream(n, Map.of()));
    apply(new CreateStream(new NodeRef(1, 99), Map.of())); // rejected: an image with no records
    assertThat(images).extracting(MetadataImage::offset).containsExactly(-1L, 1L, 2L, 3L);
    assertThat(recordCounts).containsExactly(0, 1, 2, 0);
    assertThat(images.get(2).streams().size()).isEqualTo(1);
    assertThat(images.get(1).streams().size()).isZero(); // earlier images never change
  }

  @Test
  void anEntryThatDoesNotDecodeHaltsTheReplica() {
    // Goal: a corrupt log entry stops the replica with a message naming the offset; it then refuses everything.
    register(1);
    MetadataImage before = replica.image();
    byte[] entry = MetadataReplica.entry(nowMs, new FenceBroker(1, 1));
    entry[8] = 99; // unknown request type
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> replica.apply(++offset, ByteBuffer.wrap(entry)))
        .hasMessageContaining("offset " + offset).hasMessageContaining("stops");
    assertThat(replica.haltedReason()).isNotNull();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> apply(new FenceBroker(1, 1)))
        .isInstanceOf(io.tidemark.metadata.record.CorruptRecordException.class);
    assertThat(replica.image()).isSameAs(before);
  }
}
