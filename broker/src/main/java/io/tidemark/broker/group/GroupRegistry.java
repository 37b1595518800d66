package io.tidemark.broker.group;

import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The groups coordinated here, by group id, each under exactly one protocol: classic groups
 * ({@link ClassicGroupCoordinator}) and consumer groups ({@link ConsumerGroupCoordinator}) share
 * one namespace and one bound on their count. An empty group may change protocol: an empty
 * consumer group becomes classic on a JoinGroup ({@link #claimForClassic}), an empty classic group
 * becomes a consumer group on a ConsumerGroupHeartbeat (in {@link ConsumerGroupCoordinator}).
 *
 * <p>Threading: owned by the group coordinator's owner thread; only code running on it reads or
 * changes the maps.
 */
final class GroupRegistry {

  private static final Logger log = LoggerFactory.getLogger(GroupRegistry.class);

  final Map<String, ClassicGroup> classic = new HashMap<>();
  final Map<String, ConsumerGroup> consumer = new HashMap<>();

  /** Groups of both protocols. */
  int count() {
    return classic.size() + consumer.size();
  }

  /**
   * Makes {@code groupId} available to the classic protocol: an empty consumer group becomes an
   * (empty) classic group with the same offsets; false if a consumer group with members holds it.
   */
  boolean claimForClassic(String groupId) {
    ConsumerGroup cg = consumer.get(groupId);
    if (cg == null) {
      return true;
    }
    if (!cg.members.isEmpty()) {
      return false;
    }
    consumer.remove(groupId);
    ClassicGroup converted = new ClassicGroup(groupId);
    converted.offsets.putAll(cg.offsets);
    classic.put(groupId, converted);
    log.info("empty consumer group {} becomes a classic group", groupId);
    return true;
  }
}
