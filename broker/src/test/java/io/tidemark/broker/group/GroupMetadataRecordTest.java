package io.tidemark.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.record.KeyValue;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Goal: group metadata records of the offsets topic round-trip exactly, and replay keeps only the newest per group. */
class GroupMetadataRecordTest {

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static GroupMetadata twoMembers(int generation) {
    return new GroupMetadata("consumer", "range", generation, "m-1", List.of(
        new GroupMetadata.MemberMetadata("m-1", null, "client-a", "/10.0.0.1", 60_000, 10_000,
            List.of(new Member.Protocol("range", bytes("sub-a")), new Member.Protocol("cooperative-sticky", bytes("sub-a2"))),
            bytes("assign-a")),
        new GroupMetadata.MemberMetadata("m-2", "instance-2", null, "/10.0.0.2", 30_000, 6_000,
            List.of(new Member.Protocol("range", new byte[0])), new byte[0])));
  }

  private static final org.apache.kafka.common.Uuid TOPIC_ID = new org.apache.kafka.common.Uuid(12, 34);

  private static Assignment partitions(int... ps) {
    return Assignment.of(java.util.Map.of(TOPIC_ID, java.util.Arrays.stream(ps).boxed().toList()));
  }

  private static ConsumerGroupMetadata consumerGroup(int epoch) {
    return new ConsumerGroupMetadata(epoch, epoch - 1, "uniform", java.util.Map.of("orders", new ConsumerGroup.TopicShape(TOPIC_ID, 4)),
        List.of(
            new ConsumerGroupMetadata.MemberState("c-1", null, "rack-a", "client-1", "/10.0.0.1", 45_000, List.of("orders"), null,
                "uniform", new Reconciliation.Step(epoch - 1, Reconciliation.State.UNREVOKED_PARTITIONS, partitions(0, 1), partitions(2)),
                epoch - 2, partitions(0, 1)),
            new ConsumerGroupMetadata.MemberState("c-2", "instance-2", null, null, null, 30_000, List.of(), "ord.*", null,
                new Reconciliation.Step(epoch - 1, Reconciliation.State.STABLE, Assignment.EMPTY, Assignment.EMPTY), -1,
                partitions(2, 3))));
  }

  private static OffsetLog.Loaded roundTrip(byte[][] record, long offset) {
    return OffsetLog.decode(new KeyValue(offset, record[0], record[1]));
  }

  private static OffsetLog.GroupEntry groupEntry(String group, StoredGroup md) {
    return (OffsetLog.GroupEntry) roundTrip(OffsetLog.groupRecord(group, md), 0);
  }

  @Test
  void groupMetadataRoundTrips() {
    // Goal: every field of a stored generation, nulls and empty byte arrays included, decodes to the same values.
    GroupMetadata md = twoMembers(7);
    OffsetLog.GroupEntry e = groupEntry("orders", md);
    assertThat(e.group()).isEqualTo("orders");
    GroupMetadata back = (GroupMetadata) e.metadata();
    assertThat(back.protocolType()).isEqualTo("consumer");
    assertThat(back.protocolName()).isEqualTo("range");
    assertThat(back.generation()).isEqualTo(7);
    assertThat(back.leaderId()).isEqualTo("m-1");
    assertThat(back.members()).hasSize(2);
    GroupMetadata.MemberMetadata a = back.members().get(0);
    assertThat(a.memberId()).isEqualTo("m-1");
    assertThat(a.groupInstanceId()).isNull();
    assertThat(a.clientId()).isEqualTo("client-a");
    assertThat(a.clientHost()).isEqualTo("/10.0.0.1");
    assertThat(a.rebalanceTimeoutMs()).isEqualTo(60_000);
    assertThat(a.sessionTimeoutMs()).isEqualTo(10_000);
    assertThat(a.protocols()).extracting(Member.Protocol::name).containsExactly("range", "cooperative-sticky");
    assertThat(a.protocols().get(1).metadata()).isEqualTo(bytes("sub-a2"));
    assertThat(a.assignment()).isEqualTo(bytes("assign-a"));
    GroupMetadata.MemberMetadata b = back.members().get(1);
    assertThat(b.groupInstanceId()).isEqualTo("instance-2");
    assertThat(b.clientId()).isNull();
    assertThat(b.sessionTimeoutMs()).isEqualTo(6_000);
    assertThat(b.protocols().get(0).metadata()).isEmpty();
    assertThat(b.assignment()).isEmpty();

    GroupMetadata empty = (GroupMetadata) groupEntry("idle", new GroupMetadata("consumer", null, 12, null, List.of())).metadata();
    assertThat(empty.generation()).isEqualTo(12);
    assertThat(empty.protocolName()).isNull();
    assertThat(empty.leaderId()).isNull();
    assertThat(empty.members()).isEmpty();

    assertThat(groupEntry("gone", null).metadata()).isNull();
  }

  @Test
  void consumerGroupMetadataRoundTrips() {
    // Goal: a KIP-848 group's epochs, topics, members' subscriptions, steps and targets decode equal to what was written.
    ConsumerGroupMetadata md = consumerGroup(9);
    OffsetLog.GroupEntry e = groupEntry("kip848", md);
    assertThat(e.group()).isEqualTo("kip848");
    assertThat(e.metadata()).isEqualTo(md);
    ConsumerGroupMetadata back = (ConsumerGroupMetadata) e.metadata();
    assertThat(back.groupEpoch()).isEqualTo(9);
    assertThat(back.members().get(0).step().pendingRevocation()).isEqualTo(partitions(2));
    assertThat(back.members().get(1).subscribedTopicRegex()).isEqualTo("ord.*");
    assertThat(back.members().get(1).target()).isEqualTo(partitions(2, 3));
    assertThat(groupEntry("kip848", consumerGroup(10)).metadata()).isNotEqualTo(md);
  }

  @Test
  void offsetCommitsAndGroupRecordsShareThePartitionWithoutConfusion() {
    // Goal: both record kinds decode to their own type from the same log, and a value of an unknown version is skipped.
    TopicPartition tp = new TopicPartition("t", 3);
    OffsetLog.Loaded commit = roundTrip(OffsetLog.commitRecord("orders", tp, new ClassicGroup.Committed(42, 5, "m", 1000)), 1);
    assertThat(commit).isInstanceOf(OffsetLog.Entry.class);
    assertThat(((OffsetLog.Entry) commit).committed().offset()).isEqualTo(42);
    assertThat(((OffsetLog.Entry) commit).partition()).isEqualTo(tp);

    byte[][] future = OffsetLog.groupRecord("orders", twoMembers(1));
    future[1][1] = 99; // value version 99
    assertThat(roundTrip(future, 2)).isNull();
  }

  @Test
  void corruptLengthIsRejectedNotAllocated() {
    // Goal: a byte length larger than the record fails with the record's offset instead of allocating gigabytes.
    byte[][] record = OffsetLog.groupRecord("orders", twoMembers(1));
    byte[] value = Arrays.copyOf(record[1], record[1].length);
    // the value ends with m-2's empty assignment: its 4-byte length 0; make it 0x7f000000
    value[value.length - 4] = 0x7f;
    assertThatThrownBy(() -> OffsetLog.decode(new KeyValue(17, record[0], value)))
        .isInstanceOf(UncheckedIOException.class).hasMessageContaining("offset 17");
  }

  @Test
  void replayKeepsOnlyTheNewestRecordPerGroupAndHonoursTombstones() {
    // Goal: later records replace earlier ones, a tombstone removes a group, a record after a tombstone brings it back.
    LoadedGroups loaded = new LoadedGroups();
    for (int gen = 1; gen <= 1000; gen++) {
      loaded.replay(groupEntry("a", twoMembers(gen)));
    }
    loaded.replay(groupEntry("b", twoMembers(3)));
    loaded.replay(groupEntry("b", null));
    loaded.replay(groupEntry("c", null));
    loaded.replay(groupEntry("c", new GroupMetadata("consumer", null, 4, null, List.of())));
    loaded.replay(groupEntry("d", twoMembers(9)));
    loaded.replay(groupEntry("d", new GroupMetadata("consumer", null, 10, null, List.of())));

    loaded.replay(groupEntry("e", twoMembers(2)));
    loaded.replay(groupEntry("e", consumerGroup(5)));
    loaded.replay(groupEntry("f", consumerGroup(5)));
    loaded.replay(groupEntry("f", null));

    assertThat(loaded.groups()).containsOnlyKeys("a", "c", "d", "e");
    assertThat(((GroupMetadata) loaded.groups().get("a")).generation()).isEqualTo(1000);
    assertThat(((GroupMetadata) loaded.groups().get("c")).generation()).isEqualTo(4);
    assertThat(((GroupMetadata) loaded.groups().get("d")).generation()).isEqualTo(10);
    assertThat(((GroupMetadata) loaded.groups().get("d")).members()).isEmpty();
    assertThat(loaded.groups().get("e")).isEqualTo(consumerGroup(5));
  }

  @Test
  void restoreBringsBackAStableGroupWithStaticMapping() {
    // Goal: a fresh group restored from a record is STABLE in the stored generation with members, assignments and instance ids.
    ClassicGroup g = new ClassicGroup("orders");
    g.restore(twoMembers(7));
    assertThat(g.state).isEqualTo(ClassicGroup.State.STABLE);
    assertThat(g.generation).isEqualTo(7);
    assertThat(g.leaderId).isEqualTo("m-1");
    assertThat(g.protocolName).isEqualTo("range");
    assertThat(g.members).containsOnlyKeys("m-1", "m-2");
    assertThat(g.members.get("m-1").assignment).isEqualTo(bytes("assign-a"));
    assertThat(g.staticMembers).containsExactlyEntriesOf(java.util.Map.of("instance-2", "m-2"));
    assertThat(g.supports("consumer", List.of(new Member.Protocol("range", new byte[0])))).isTrue();

    ClassicGroup empty = new ClassicGroup("idle");
    empty.restore(new GroupMetadata("consumer", null, 12, null, List.of()));
    assertThat(empty.state).isEqualTo(ClassicGroup.State.EMPTY);
    assertThat(empty.generation).isEqualTo(12);
    assertThatThrownBy(() -> g.restore(twoMembers(8))).isInstanceOf(IllegalStateException.class).hasMessageContaining("STABLE");
  }
}
