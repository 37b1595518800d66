package io.tidemark.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/** Goal: the server-side assignors give every subscribed partition to exactly one subscriber, balanced, sticky where asked. */
class AssignorsTest {

  static final Uuid T1 = Uuid.randomUuid();
  static final Uuid T2 = Uuid.randomUuid();

  private static SortedMap<String, Set<Uuid>> members(int n, Set<Uuid> topics) {
    SortedMap<String, Set<Uuid>> out = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      out.put("m" + i, topics);
    }
    return out;
  }

  private static void assertEachOnce(Map<String, Assignment> result, Map<Uuid, Integer> counts) {
    Set<String> seen = new HashSet<>();
    result.values().forEach(a -> a.forEach((t, p) -> assertThat(seen.add(t + "-" + p)).as("%s-%d twice", t, p).isTrue()));
    assertThat(seen).hasSize(counts.values().stream().mapToInt(Integer::intValue).sum());
  }

  @Test
  void uniformBalancesAndMovesOnlyWhatItMust() {
    Map<Uuid, Integer> counts = Map.of(T1, 6, T2, 3);
    ConsumerAssignor uniform = new UniformAssignor();
    Map<String, Assignment> two = uniform.assign(new ConsumerAssignor.Input(members(2, Set.of(T1, T2)), counts, Map.of()));
    assertEachOnce(two, counts);
    assertThat(two.values()).allMatch(a -> a.size() == 4 || a.size() == 5);

    Map<String, Assignment> three = uniform.assign(new ConsumerAssignor.Input(members(3, Set.of(T1, T2)), counts, two));
    assertEachOnce(three, counts);
    assertThat(three.values()).allMatch(a -> a.size() == 3);
    int kept = three.get("m0").intersect(two.get("m0")).size() + three.get("m1").intersect(two.get("m1")).size();
    assertThat(kept).as("only what the new member needs moves").isEqualTo(6);

    Map<String, Assignment> back = uniform.assign(new ConsumerAssignor.Input(members(2, Set.of(T1, T2)), counts, three));
    assertEachOnce(back, counts);
    assertThat(back.get("m0").intersect(three.get("m0"))).isEqualTo(three.get("m0"));
  }

  @Test
  void uniformRespectsDifferentSubscriptions() {
    SortedMap<String, Set<Uuid>> subs = new TreeMap<>(Map.of("a", Set.of(T1), "b", Set.of(T1, T2), "c", Set.of(T2)));
    Map<Uuid, Integer> counts = Map.of(T1, 4, T2, 2);
    Map<String, Assignment> result = new UniformAssignor().assign(new ConsumerAssignor.Input(subs, counts, Map.of()));
    assertEachOnce(result, counts);
    assertThat(result.get("a").partitions()).containsOnlyKeys(T1);
    assertThat(result.get("c").partitions()).containsOnlyKeys(T2);
    assertThat(result.values()).allMatch(a -> a.size() == 2);
  }

  @Test
  void rangeGivesContiguousRangesInMemberOrder() {
    Map<Uuid, Integer> counts = Map.of(T1, 5);
    Map<String, Assignment> result = new RangeAssignor().assign(new ConsumerAssignor.Input(members(2, Set.of(T1)), counts, Map.of()));
    assertThat(result.get("m0").partitions().get(T1)).containsExactly(0, 1, 2);
    assertThat(result.get("m1").partitions().get(T1)).containsExactly(3, 4);
    Map<String, Assignment> lonely = new RangeAssignor().assign(new ConsumerAssignor.Input(
        new TreeMap<>(Map.of("x", Set.of())), counts, Map.of()));
    assertThat(lonely.get("x").isEmpty()).isTrue();
  }

  @Test
  void reconciliationRevokesBeforeItAssigns() {
    Assignment all = Assignment.of(Map.of(T1, List.of(0, 1)));
    Assignment zero = Assignment.of(Map.of(T1, List.of(0)));
    Assignment one = Assignment.of(Map.of(T1, List.of(1)));
    Reconciliation.Step a = new Reconciliation.Step(1, Reconciliation.State.STABLE, all, Assignment.EMPTY);
    Reconciliation.Step revoking = Reconciliation.next(a, 2, zero, Set.of(T1), (t, p) -> false, all);
    assertThat(revoking).isEqualTo(new Reconciliation.Step(1, Reconciliation.State.UNREVOKED_PARTITIONS, zero, one));
    assertThat(Reconciliation.next(revoking, 2, zero, Set.of(T1), (t, p) -> false, null)).as("no report, no progress")
        .isEqualTo(revoking);
    assertThat(Reconciliation.next(revoking, 2, zero, Set.of(T1), (t, p) -> false, zero))
        .isEqualTo(new Reconciliation.Step(2, Reconciliation.State.STABLE, zero, Assignment.EMPTY));

    Reconciliation.Step b = new Reconciliation.Step(0, Reconciliation.State.STABLE, Assignment.EMPTY, Assignment.EMPTY);
    Reconciliation.Step waiting = Reconciliation.next(b, 2, one, Set.of(T1), (t, p) -> true, Assignment.EMPTY);
    assertThat(waiting).isEqualTo(new Reconciliation.Step(2, Reconciliation.State.UNRELEASED_PARTITIONS, Assignment.EMPTY,
        Assignment.EMPTY));
    assertThat(Reconciliation.next(waiting, 2, one, Set.of(T1), (t, p) -> false, null))
        .isEqualTo(new Reconciliation.Step(2, Reconciliation.State.STABLE, one, Assignment.EMPTY));
    assertThat(Reconciliation.next(waiting, 2, one, Set.of(), (t, p) -> false, null).assigned().isEmpty())
        .as("target partitions of topics no longer subscribed are ignored").isTrue();
  }
}
