package io.tidemark.broker.group;

import java.util.Set;
import java.util.function.BiPredicate;
import org.apache.kafka.common.Uuid;

/**
 * One step of moving a consumer group member from its current assignment towards its target
 * (KIP-848 reconciliation). A partition is never handed to a member while another member still
 * holds it: first the old owner is asked to revoke it (it stays at its epoch in
 * {@link State#UNREVOKED_PARTITIONS} until its heartbeat no longer reports the partition), then
 * the new owner gets it, possibly a heartbeat later ({@link State#UNRELEASED_PARTITIONS}). Pure
 * functions over immutable values; callable from any thread.
 */
final class Reconciliation {

  /** Where a member stands in its reconciliation. */
  enum State {
    /** At its target epoch with every target partition it can have. */
    STABLE,
    /** Asked to revoke partitions; stays at its old epoch until it has. */
    UNREVOKED_PARTITIONS,
    /** At its target epoch, waiting for partitions other members still hold. */
    UNRELEASED_PARTITIONS
  }

  /** A member's reconciliation state: its epoch, where it stands, what it may use and what it must give up. */
  record Step(int epoch, State state, Assignment assigned, Assignment pendingRevocation) {}

  private Reconciliation() {}

  /**
   * The member's next step.
   *
   * @param current where the member is now
   * @param targetEpoch the group's assignment epoch
   * @param target the member's target assignment at that epoch
   * @param subscribed topic ids the member is subscribed to now (target partitions of other topics are ignored)
   * @param heldByOther whether a partition is still assigned to, or being revoked by, another member
   * @param owned the partitions the member reported owning in this heartbeat, or null if it did not say
   */
  static Step next(Step current, int targetEpoch, Assignment target, Set<Uuid> subscribed,
      BiPredicate<Uuid, Integer> heldByOther, Assignment owned) {
    return switch (current.state()) {
      case STABLE -> current.epoch() == targetEpoch ? current : advance(current, targetEpoch, target, subscribed, heldByOther, owned);
      case UNREVOKED_PARTITIONS -> ownsAny(owned, current.pendingRevocation())
          ? current
          : advance(current, targetEpoch, target, subscribed, heldByOther, owned);
      case UNRELEASED_PARTITIONS -> advance(current, targetEpoch, target, subscribed, heldByOther, owned);
    };
  }

  private static Step advance(Step current, int targetEpoch, Assignment target, Set<Uuid> subscribed,
      BiPredicate<Uuid, Integer> heldByOther, Assignment owned) {
    Assignment wanted = target.filter((t, p) -> subscribed.contains(t));
    Assignment kept = current.assigned().intersect(wanted);
    Assignment revoke = current.assigned().minus(kept);
    Assignment missing = wanted.minus(kept);
    Assignment free = missing.filter((t, p) -> !heldByOther.test(t, p));
    if (!revoke.isEmpty() && ownsAny(owned, revoke)) {
      return new Step(current.epoch(), State.UNREVOKED_PARTITIONS, kept, revoke);
    }
    State next = free.size() < missing.size() ? State.UNRELEASED_PARTITIONS : State.STABLE;
    return new Step(targetEpoch, next, kept.union(free), Assignment.EMPTY);
  }

  /** Whether the member may still hold any of {@code partitions}: it did not report, or reported one of them. */
  private static boolean ownsAny(Assignment owned, Assignment partitions) {
    return owned == null || !partitions.intersect(owned).isEmpty();
  }
}
