package io.tidemark.broker.group;

import java.util.List;
import java.util.concurrent.ScheduledFuture;
import com.google.re2j.Pattern;

/**
 * One member of a consumer group (KIP-848): identity, subscription, its reconciliation
 * {@link Reconciliation.Step} and its timers. A static member that left with epoch -2 stays (with
 * its partitions) until its session expires or a member with the same instance id takes its place.
 * Owned by the coordinator thread; no locking.
 */
final class ConsumerMember {

  /** The epoch a static member reports when it leaves temporarily. */
  static final int LEFT_STATIC_EPOCH = -2;

  final String memberId;
  final String instanceId;
  String rackId;
  String clientId;
  String clientHost;
  int rebalanceTimeoutMs;
  List<String> subscribedTopicNames = List.of();
  String subscribedTopicRegex;
  Pattern compiledRegex;
  String serverAssignor;
  Reconciliation.Step step = new Reconciliation.Step(0, Reconciliation.State.STABLE, Assignment.EMPTY, Assignment.EMPTY);
  int previousEpoch = -1;
  /** The epoch and assignment last sent to the member, to send the assignment again only when it changed. */
  int sentEpoch = -1;
  Assignment sentAssignment;
  ScheduledFuture<?> sessionTimer;
  ScheduledFuture<?> rebalanceTimer;

  ConsumerMember(String memberId, String instanceId) {
    this.memberId = memberId;
    this.instanceId = instanceId;
  }

  int epoch() {
    return step.epoch();
  }

  boolean leftStatic() {
    return step.epoch() == LEFT_STATIC_EPOCH;
  }

  /** Partitions this member holds: assigned or still being revoked. */
  Assignment held() {
    return step.assigned().union(step.pendingRevocation());
  }

  void moveTo(Reconciliation.Step next) {
    if (next.epoch() != step.epoch()) {
      previousEpoch = step.epoch();
    }
    step = next;
  }

  void cancelTimers() {
    if (sessionTimer != null) {
      sessionTimer.cancel(false);
      sessionTimer = null;
    }
    if (rebalanceTimer != null) {
      rebalanceTimer.cancel(false);
      rebalanceTimer = null;
    }
  }
}
