package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.ConsumerGroupDescribeResponse;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: the consumer group protocol (KIP-848) as the broker speaks it on the wire, step by step:
 * epochs, revocation before reassignment, fencing, static members, timeouts, regex subscriptions,
 * assignors, the namespace shared with classic groups, and member checks on offset commits.
 */
class ConsumerGroupProtocolTest {

  static TestBroker broker;
  static Admin admin;
  static RawConnection conn;

  @BeforeAll
  static void start() throws Exception {
    broker = new TestBroker(Map.of("kafka.group.consumer.session.timeout.ms", "3000",
        "kafka.group.consumer.heartbeat.interval.ms", "300"));
    admin = broker.admin();
    conn = new RawConnection(broker.broker.port());
  }

  @AfterAll
  static void stop() throws IOException {
    conn.close();
    admin.close();
    broker.close();
  }

  private static Uuid createTopic(String name, int partitions) throws Exception {
    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
    return admin.describeTopics(List.of(name)).allTopicNames().get().get(name).topicId();
  }

  /** One member driven by hand: its id, the epoch it knows and the partitions it owns. */
  static final class Member {
    final String group;
    final String id = Uuid.randomUuid().toString();
    final String instanceId;
    int epoch;
    Map<Uuid, Set<Integer>> owned = new TreeMap<>();

    Member(String group, String instanceId) {
      this.group = group;
      this.instanceId = instanceId;
    }

    ConsumerGroupHeartbeatRequestData request() {
      return new ConsumerGroupHeartbeatRequestData().setGroupId(group).setMemberId(id).setMemberEpoch(epoch).setInstanceId(instanceId);
    }

    ConsumerGroupHeartbeatResponseData join(List<String> topics, String assignor) throws IOException {
      return send(request().setMemberEpoch(0).setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(topics).setServerAssignor(assignor)
          .setTopicPartitions(List.of()));
    }

    /** A heartbeat that reports what this member owns. */
    ConsumerGroupHeartbeatResponseData beat() throws IOException {
      List<ConsumerGroupHeartbeatRequestData.TopicPartitions> tps = new ArrayList<>();
      owned.forEach((t, ps) -> tps.add(new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(t).setPartitions(new ArrayList<>(ps))));
      return send(request().setTopicPartitions(tps));
    }

    /** Sends, then applies the answer like a client: new epoch, and the assignment (revoking at once) when one came. */
    ConsumerGroupHeartbeatResponseData send(ConsumerGroupHeartbeatRequestData data) throws IOException {
      ConsumerGroupHeartbeatResponseData r = heartbeat(data);
      if (r.errorCode() == Errors.NONE.code()) {
        epoch = r.memberEpoch();
        if (r.assignment() != null) {
          Map<Uuid, Set<Integer>> next = new TreeMap<>();
          r.assignment().topicPartitions().forEach(t -> next.put(t.topicId(), new TreeSet<>(t.partitions())));
          owned = next;
        }
      }
      return r;
    }

    int count() {
      return owned.values().stream().mapToInt(Set::size).sum();
    }
  }

  static ConsumerGroupHeartbeatResponseData heartbeat(ConsumerGroupHeartbeatRequestData data) throws IOException {
    short v = 1;
    int id = conn.send(new ConsumerGroupHeartbeatRequest.Builder(data), v);
    return ((ConsumerGroupHeartbeatResponse) conn.receive(ApiKeys.CONSUMER_GROUP_HEARTBEAT, v, id)).data();
  }

  static ConsumerGroupDescribeResponseData.DescribedGroup describe(String group) throws IOException {
    short v = 1;
    int id = conn.send(new ConsumerGroupDescribeRequest.Builder(new ConsumerGroupDescribeRequestData().setGroupIds(List.of(group))), v);
    return ((ConsumerGroupDescribeResponse) conn.receive(ApiKeys.CONSUMER_GROUP_DESCRIBE, v, id)).data().groups().get(0);
  }

  /** No partition is owned by two members. */
  static void assertDisjoint(Member... members) {
    Set<String> seen = new HashSet<>();
    for (Member m : members) {
      m.owned.forEach((t, ps) -> ps.forEach(p -> assertThat(seen.add(t + "-" + p)).as("%s-%d owned twice", t, p).isTrue()));
    }
  }

  @Test
  void aPartitionMovesOnlyAfterItsOwnerRevokedIt() throws Exception {
    Uuid topic = createTopic("cg-move", 4);
    Member a = new Member("g-move", null);
    Member b = new Member("g-move", null);
    ConsumerGroupHeartbeatResponseData r = a.join(List.of("cg-move"), null);
    assertThat(r.errorCode()).isZero();
    assertThat(r.memberEpoch()).isEqualTo(1);
    assertThat(a.count()).isEqualTo(4);
    a.beat();

    r = b.join(List.of("cg-move"), null);
    assertThat(r.memberEpoch()).as("new member moves to the group epoch at once").isEqualTo(2);
    assertThat(b.count()).as("its partitions are still held by a").isZero();
    assertThat(describe("g-move").groupState()).isEqualTo("Reconciling");

    r = a.send(a.request()); // a heartbeat that does not report owned partitions cannot complete a revocation
    assertThat(r.memberEpoch()).isEqualTo(1);
    assertThat(a.count()).as("a is told to keep two").isEqualTo(2);
    assertThat(a.owned).containsOnlyKeys(topic);
    assertDisjoint(a, b);
    b.beat();
    assertThat(b.count()).as("nothing is released until a acknowledges").isZero();
    r = a.send(a.request());
    assertThat(r.memberEpoch()).as("still revoking: a has not reported").isEqualTo(1);

    r = a.beat(); // a reports that it now owns only the two it kept
    assertThat(r.memberEpoch()).isEqualTo(2);
    r = b.beat();
    assertThat(b.count()).isEqualTo(2);
    assertDisjoint(a, b);
    b.beat();
    ConsumerGroupDescribeResponseData.DescribedGroup d = describe("g-move");
    assertThat(d.groupState()).isEqualTo("Stable");
    assertThat(d.groupEpoch()).isEqualTo(2);
    assertThat(d.assignorName()).isEqualTo("uniform");
    assertThat(d.members()).allSatisfy(m -> {
      assertThat(m.memberEpoch()).isEqualTo(2);
      assertThat(m.assignment().topicPartitions()).singleElement().satisfies(t -> {
        assertThat(t.topicName()).isEqualTo("cg-move");
        assertThat(t.partitions()).hasSize(2);
      });
      assertThat(m.memberType()).isEqualTo((byte) 1);
    });

    r = b.send(b.request().setMemberEpoch(-1));
    assertThat(r.memberEpoch()).isEqualTo(-1);
    a.beat();
    assertThat(a.count()).as("a gets back what b released by leaving").isEqualTo(4);
    assertThat(describe("g-move").members()).hasSize(1);
  }

  @Test
  void wrongEpochsAndUnknownMembersAreFenced() throws Exception {
    createTopic("cg-fence", 2);
    Member a = new Member("g-fence", null);
    a.join(List.of("cg-fence"), null);
    a.beat();
    ConsumerGroupHeartbeatResponseData r = heartbeat(a.request().setMemberEpoch(a.epoch + 1));
    assertThat(r.errorCode()).isEqualTo(Errors.FENCED_MEMBER_EPOCH.code());
    r = heartbeat(new Member("g-fence", null).request().setMemberEpoch(3));
    assertThat(r.errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
    r = heartbeat(new Member("no-such-group", null).request().setMemberEpoch(3));
    assertThat(r.errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
    // a fenced member rejoins with epoch 0 and the same id, owning nothing
    a.owned = new TreeMap<>();
    r = a.join(List.of("cg-fence"), null);
    assertThat(r.errorCode()).isZero();
    assertThat(a.count()).isEqualTo(2);

    assertThat(heartbeat(a.request().setGroupId("")).errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
    assertThat(describe("").errorCode()).isEqualTo(Errors.INVALID_GROUP_ID.code());
    assertThat(describe("no-such-group").errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
    assertThat(heartbeat(new ConsumerGroupHeartbeatRequestData().setGroupId("g-fence").setMemberId("").setMemberEpoch(0)
        .setRebalanceTimeoutMs(1000).setSubscribedTopicNames(List.of("cg-fence")).setTopicPartitions(List.of())).errorCode())
        .as("v1 requires a client-generated member id").isEqualTo(Errors.INVALID_REQUEST.code());
    assertThat(heartbeat(new Member("g-fence", null).request().setMemberEpoch(0).setRebalanceTimeoutMs(1000)
        .setTopicPartitions(List.of())).errorCode()).as("a join names a subscription").isEqualTo(Errors.INVALID_REQUEST.code());
    assertThat(new Member("g-fence", null).join(List.of("cg-fence"), "sticky-cooperative").errorCode())
        .isEqualTo(Errors.UNSUPPORTED_ASSIGNOR.code());
  }

  @Test
  void aStaticMemberKeepsItsPartitionsWhileAway() throws Exception {
    createTopic("cg-static", 4);
    Member a = new Member("g-static", "instance-a");
    Member b = new Member("g-static", "instance-b");
    a.join(List.of("cg-static"), null);
    a.beat();
    b.join(List.of("cg-static"), null);
    settle(a, b);
    assertThat(a.count()).isEqualTo(2);
    int groupEpoch = describe("g-static").groupEpoch();

    ConsumerGroupHeartbeatResponseData r = a.send(a.request().setMemberEpoch(-2));
    assertThat(r.memberEpoch()).isEqualTo(-2);
    b.beat();
    assertThat(b.count()).as("a's partitions stay with a while it is away").isEqualTo(2);
    assertThat(describe("g-static").members()).anySatisfy(m -> assertThat(m.memberEpoch()).isEqualTo(-2));

    Member a2 = new Member("g-static", "instance-a");
    r = a2.join(List.of("cg-static"), null);
    assertThat(r.errorCode()).isZero();
    assertThat(a2.owned).as("the replacement gets a's partitions back").isEqualTo(a.owned);
    assertThat(describe("g-static").groupEpoch()).as("no rebalance").isEqualTo(groupEpoch);
    assertThat(new Member("g-static", "instance-a").join(List.of("cg-static"), null).errorCode())
        .isEqualTo(Errors.UNRELEASED_INSTANCE_ID.code());
    assertThat(heartbeat(a.request().setMemberEpoch(a2.epoch)).errorCode()).as("the replaced member id is gone")
        .isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
  }

  @Test
  void silentMembersAndMembersThatDoNotRevokeAreRemoved() throws Exception {
    createTopic("cg-timeout", 2);
    Member a = new Member("g-timeout", null);
    Member b = new Member("g-timeout", null);
    a.join(List.of("cg-timeout"), null);
    a.beat();
    b.join(List.of("cg-timeout"), null);
    settle(a, b);
    assertThat(a.count()).isEqualTo(1);
    // b goes silent: after the 3 s session timeout a gets both partitions
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300)).until(() -> {
      a.beat();
      return a.count() == 2;
    });
    assertThat(heartbeat(b.request()).errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());

    // c joins; a keeps heartbeating but never revokes within its 1 s rebalance timeout
    a.send(a.request().setMemberEpoch(0).setRebalanceTimeoutMs(1000).setSubscribedTopicNames(List.of("cg-timeout"))
        .setTopicPartitions(List.of()));
    Member c = new Member("g-timeout", null);
    c.join(List.of("cg-timeout"), null);
    Map<Uuid, Set<Integer>> held = a.owned;
    a.beat();
    assertThat(a.count()).as("a is asked to revoke one").isEqualTo(1);
    List<ConsumerGroupHeartbeatRequestData.TopicPartitions> stillHeld = new ArrayList<>();
    held.forEach((t, ps) -> stillHeld.add(new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(t).setPartitions(new ArrayList<>(ps))));
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
        .until(() -> heartbeat(a.request().setTopicPartitions(stillHeld)).errorCode() == Errors.UNKNOWN_MEMBER_ID.code());
    c.beat();
    assertThat(c.count()).isEqualTo(2);
  }

  @Test
  void regexSubscriptionsFollowNewTopics() throws Exception {
    createTopic("rx.one", 2);
    Member a = new Member("g-regex", null);
    ConsumerGroupHeartbeatResponseData r = a.send(a.request().setMemberEpoch(0).setRebalanceTimeoutMs(30_000)
        .setSubscribedTopicRegex("rx\\..*").setTopicPartitions(List.of()));
    assertThat(r.errorCode()).isZero();
    assertThat(a.count()).isEqualTo(2);
    createTopic("rx.two", 1);
    admin.createPartitions(Map.of("rx.one", NewPartitions.increaseTo(3))).all().get();
    a.beat();
    assertThat(a.count()).as("new topic and new partition are assigned").isEqualTo(4);
    assertThat(describe("g-regex").members().get(0).subscribedTopicRegex()).isEqualTo("rx\\..*");
    r = new Member("g-regex", null).send(new Member("g-regex", null).request().setMemberEpoch(0).setRebalanceTimeoutMs(1000)
        .setSubscribedTopicRegex("rx[").setTopicPartitions(List.of()));
    assertThat(r.errorCode()).isEqualTo(Errors.INVALID_REGULAR_EXPRESSION.code());
  }

  @Test
  void theRangeAssignorGivesContiguousRanges() throws Exception {
    createTopic("cg-range", 4);
    Member a = new Member("g-range", null);
    Member b = new Member("g-range", null);
    a.join(List.of("cg-range"), "range");
    a.beat();
    b.join(List.of("cg-range"), "range");
    settle(a, b);
    Member first = a.id.compareTo(b.id) < 0 ? a : b;
    Member second = first == a ? b : a;
    assertThat(first.owned.values()).containsExactly(Set.of(0, 1));
    assertThat(second.owned.values()).containsExactly(Set.of(2, 3));
    assertThat(describe("g-range").assignorName()).isEqualTo("range");
  }

  @Test
  void classicAndConsumerGroupsShareTheGroupNamespace() throws Exception {
    createTopic("cg-ns", 1);
    Member a = new Member("g-ns", null);
    a.join(List.of("cg-ns"), null);
    short v = 5;
    int id = conn.send(new JoinGroupRequest.Builder(new JoinGroupRequestData().setGroupId("g-ns").setMemberId("")
        .setSessionTimeoutMs(10_000).setRebalanceTimeoutMs(10_000).setProtocolType("consumer")
        .setProtocols(new JoinGroupRequestData.JoinGroupRequestProtocolCollection(List.of(
            new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(new byte[0])).iterator()))), v);
    assertThat(((JoinGroupResponse) conn.receive(ApiKeys.JOIN_GROUP, v, id)).data().errorCode())
        .isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL.code());

    v = 6;
    id = conn.send(new DescribeGroupsRequest.Builder(new DescribeGroupsRequestData().setGroups(List.of("g-ns"))), v);
    var described = ((DescribeGroupsResponse) conn.receive(ApiKeys.DESCRIBE_GROUPS, v, id)).data().groups().get(0);
    assertThat(described.errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
    assertThat(described.errorMessage()).contains("not a classic group");

    v = 5;
    id = conn.send(new ListGroupsRequest.Builder(new ListGroupsRequestData().setTypesFilter(List.of("consumer"))), v);
    var listed = ((ListGroupsResponse) conn.receive(ApiKeys.LIST_GROUPS, v, id)).data().groups();
    assertThat(listed).anySatisfy(g -> {
      assertThat(g.groupId()).isEqualTo("g-ns");
      assertThat(g.groupType()).isEqualTo("consumer");
      assertThat(g.protocolType()).isEqualTo("consumer");
    });
    id = conn.send(new ListGroupsRequest.Builder(new ListGroupsRequestData().setTypesFilter(List.of("classic"))), v);
    assertThat(((ListGroupsResponse) conn.receive(ApiKeys.LIST_GROUPS, v, id)).data().groups()).noneMatch(g -> g.groupId().equals("g-ns"));

    // a classic group with members keeps its id from the consumer protocol
    id = conn.send(new JoinGroupRequest.Builder(new JoinGroupRequestData().setGroupId("g-classic").setMemberId("")
        .setSessionTimeoutMs(10_000).setRebalanceTimeoutMs(10_000).setProtocolType("consumer")
        .setProtocols(new JoinGroupRequestData.JoinGroupRequestProtocolCollection(List.of(
            new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(new byte[0])).iterator()))), (short) 3);
    assertThat(((JoinGroupResponse) conn.receive(ApiKeys.JOIN_GROUP, (short) 3, id)).data().errorCode()).isZero();
    assertThat(new Member("g-classic", null).join(List.of("cg-ns"), null).errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
    assertThat(describe("g-classic").errorMessage()).contains("not a consumer group");

    // once empty, a consumer group with offsets becomes a classic group for a classic member
    commit("g-ns", a.id, a.epoch, (short) 9, "cg-ns");
    a.send(a.request().setMemberEpoch(-1));
    id = conn.send(new JoinGroupRequest.Builder(new JoinGroupRequestData().setGroupId("g-ns").setMemberId("")
        .setSessionTimeoutMs(10_000).setRebalanceTimeoutMs(10_000).setProtocolType("consumer")
        .setProtocols(new JoinGroupRequestData.JoinGroupRequestProtocolCollection(List.of(
            new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(new byte[0])).iterator()))), (short) 3);
    assertThat(((JoinGroupResponse) conn.receive(ApiKeys.JOIN_GROUP, (short) 3, id)).data().errorCode()).isZero();
    assertThat(admin.listConsumerGroupOffsets("g-ns").partitionsToOffsetAndMetadata().get()).hasSize(1);
  }

  @Test
  void offsetCommitsAndFetchesCarryTheMemberEpoch() throws Exception {
    createTopic("cg-commit", 1);
    Member a = new Member("g-commit", null);
    a.join(List.of("cg-commit"), null);
    assertThat(commit("g-commit", a.id, a.epoch, (short) 9, "cg-commit")).isEqualTo(Errors.NONE);
    assertThat(commit("g-commit", a.id, a.epoch + 1, (short) 9, "cg-commit")).isEqualTo(Errors.STALE_MEMBER_EPOCH);
    assertThat(commit("g-commit", "stranger", a.epoch, (short) 9, "cg-commit")).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    assertThat(commit("g-commit", a.id, a.epoch, (short) 8, "cg-commit")).isEqualTo(Errors.UNSUPPORTED_VERSION);
    assertThat(commit("g-commit", "", -1, (short) 9, "cg-commit")).as("admin commits wait for an empty group")
        .isEqualTo(Errors.UNKNOWN_MEMBER_ID);

    short v = 9;
    int id = conn.send(OffsetFetchRequest.Builder.forTopicNames(new OffsetFetchRequestData().setGroups(List.of(
        new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g-commit").setMemberId(a.id).setMemberEpoch(a.epoch + 5)
            .setTopics(null))), false), v);
    assertThat(((OffsetFetchResponse) conn.receive(ApiKeys.OFFSET_FETCH, v, id)).data().groups().get(0).errorCode())
        .isEqualTo(Errors.STALE_MEMBER_EPOCH.code());
    id = conn.send(OffsetFetchRequest.Builder.forTopicNames(new OffsetFetchRequestData().setGroups(List.of(
        new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g-commit").setMemberId(a.id).setMemberEpoch(a.epoch)
            .setTopics(null))), false), v);
    var group = ((OffsetFetchResponse) conn.receive(ApiKeys.OFFSET_FETCH, v, id)).data().groups().get(0);
    assertThat(group.errorCode()).isZero();
    assertThat(group.topics().get(0).partitions().get(0).committedOffset()).isEqualTo(5);
  }

  /** Commits offset 5 of partition 0 of {@code topic}; returns the partition's error. */
  private static Errors commit(String group, String memberId, int epoch, short version, String topic) throws IOException {
    int id = conn.send(OffsetCommitRequest.Builder.forTopicNames(new OffsetCommitRequestData().setGroupId(group).setMemberId(memberId)
        .setGenerationIdOrMemberEpoch(epoch).setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(topic)
            .setPartitions(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                .setCommittedOffset(5)))))), version);
    OffsetCommitResponse r = (OffsetCommitResponse) conn.receive(ApiKeys.OFFSET_COMMIT, version, id);
    return Errors.forCode(r.data().topics().get(0).partitions().get(0).errorCode());
  }

  /** Heartbeats both members, each reporting what it owns, until neither changes (at most a few rounds). */
  private static void settle(Member a, Member b) throws IOException {
    for (int i = 0; i < 6; i++) {
      a.beat();
      b.beat();
      assertDisjoint(a, b);
    }
  }
}
