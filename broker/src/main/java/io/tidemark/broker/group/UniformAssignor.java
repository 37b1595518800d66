package io.tidemark.broker.group;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;

/**
 * The {@code uniform} assignor (the default): spreads every subscribed partition over its
 * subscribers as evenly as their subscriptions allow, moving as few partitions as it can.
 *
 * <p>Three steps: (1) each member keeps the partitions of its previous target that it is still
 * subscribed to; (2) every partition left over goes to the least-loaded subscriber, the partitions
 * with the fewest possible owners first; (3) while a member holds at least two partitions more than
 * another member it can reach through a chain of shared subscriptions (a gives b a partition of a
 * topic both follow, b gives c one of a topic both follow), the partitions move along the shortest
 * such chain. Each chain lowers the sum of squared loads, so step 3 ends; then no member can give
 * a partition, directly or through others, to one holding two fewer. Stateless.
 */
final class UniformAssignor implements ConsumerAssignor {

  static final String NAME = "uniform";

  /** One partition of a topic. */
  private record Slot(Uuid topic, int partition) {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Map<String, Assignment> assign(Input input) {
    Map<Uuid, List<String>> subscribers = input.subscribersByTopic();
    Map<String, Integer> load = new HashMap<>();
    input.subscriptions().keySet().forEach(m -> load.put(m, 0));
    Map<Slot, String> owner = new HashMap<>();
    keepPrevious(input, owner, load);
    List<Slot> all = new ArrayList<>();
    subscribers.forEach((topic, members) -> {
      for (int p = 0; p < input.partitionCounts().getOrDefault(topic, 0); p++) {
        all.add(new Slot(topic, p));
      }
    });
    List<Slot> free = new ArrayList<>(all.stream().filter(s -> !owner.containsKey(s)).toList());
    free.sort(Comparator.comparingInt((Slot s) -> subscribers.get(s.topic()).size()));
    for (Slot s : free) {
      String target = leastLoaded(subscribers.get(s.topic()), load);
      owner.put(s, target);
      load.merge(target, 1, Integer::sum);
    }
    balance(all, subscribers, owner, load);
    Map<String, Map<Uuid, List<Integer>>> byMember = new HashMap<>();
    owner.forEach((slot, m) -> byMember.computeIfAbsent(m, x -> new TreeMap<>()).computeIfAbsent(slot.topic(), x -> new ArrayList<>())
        .add(slot.partition()));
    return input.result(byMember);
  }

  private static void keepPrevious(Input input, Map<Slot, String> owner, Map<String, Integer> load) {
    input.subscriptions().forEach((member, topics) -> {
      Assignment previous = input.previous().getOrDefault(member, Assignment.EMPTY);
      previous.forEach((topic, partition) -> {
        Slot s = new Slot(topic, partition);
        if (topics.contains(topic) && partition < input.partitionCounts().getOrDefault(topic, 0) && !owner.containsKey(s)) {
          owner.put(s, member);
          load.merge(member, 1, Integer::sum);
        }
      });
    });
  }

  /** One partition changing hands. */
  private record Move(Slot slot, String from, String to) {}

  /**
   * Moves partitions along chains of subscribers (a gives b one partition, b gives c another)
   * from a member to one holding at least two fewer, until no such chain exists.
   */
  private static void balance(List<Slot> all, Map<Uuid, List<String>> subscribers, Map<Slot, String> owner,
      Map<String, Integer> load) {
    Map<String, List<Slot>> held = new TreeMap<>();
    load.keySet().forEach(m -> held.put(m, new ArrayList<>()));
    for (Slot s : all) {
      held.get(owner.get(s)).add(s);
    }
    for (List<Move> chain = anyChain(held, subscribers, load); !chain.isEmpty(); chain = anyChain(held, subscribers, load)) {
      for (Move m : chain) {
        owner.put(m.slot(), m.to());
        held.get(m.from()).remove(m.slot());
        held.get(m.to()).add(m.slot());
      }
      load.merge(chain.get(0).from(), -1, Integer::sum);
      load.merge(chain.get(chain.size() - 1).to(), 1, Integer::sum);
    }
  }

  /** A chain from the most loaded member that has one; empty when the assignment is balanced. */
  private static List<Move> anyChain(Map<String, List<Slot>> held, Map<Uuid, List<String>> subscribers, Map<String, Integer> load) {
    int least = load.values().stream().mapToInt(Integer::intValue).min().orElse(0);
    List<String> byLoad = new ArrayList<>(held.keySet().stream().filter(m -> load.get(m) >= least + 2).toList());
    byLoad.sort(Comparator.comparingInt((String m) -> -load.get(m)));
    for (String source : byLoad) {
      List<Move> chain = chainFrom(source, subscribers, held, load);
      if (!chain.isEmpty()) {
        return chain;
      }
    }
    return List.of();
  }

  /** The shortest chain of moves from {@code source} to a member holding at least two fewer partitions; empty if none. */
  private static List<Move> chainFrom(String source, Map<Uuid, List<String>> subscribers, Map<String, List<Slot>> held,
      Map<String, Integer> load) {
    Map<String, Move> reachedBy = new HashMap<>();
    java.util.ArrayDeque<String> queue = new java.util.ArrayDeque<>(List.of(source));
    reachedBy.put(source, null);
    while (!queue.isEmpty()) {
      String x = queue.poll();
      for (Slot s : held.get(x)) {
        for (String y : subscribers.get(s.topic())) {
          if (reachedBy.containsKey(y)) {
            continue;
          }
          reachedBy.put(y, new Move(s, x, y));
          if (load.get(y) + 2 <= load.get(source)) {
            List<Move> chain = new ArrayList<>();
            for (Move m = reachedBy.get(y); m != null; m = reachedBy.get(m.from())) {
              chain.add(0, m);
            }
            return chain;
          }
          queue.add(y);
        }
      }
    }
    return List.of();
  }

  /** The candidate with the fewest partitions; the first in member-id order on a tie. */
  private static String leastLoaded(List<String> candidates, Map<String, Integer> load) {
    String best = candidates.get(0);
    for (String c : candidates) {
      if (load.get(c) < load.get(best)) {
        best = c;
      }
    }
    return best;
  }
}
