package io.tidemark.broker.group;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The durable form of a classic group at the end of a generation: what a coordinator needs to
 * carry on without a rebalance after it restarts or moves (protocol, generation, leader, and each
 * member with its timeouts, offered protocols and assignment). An empty member list is an Empty
 * group. Immutable; written to and read from {@link OffsetLog}.
 */
record GroupMetadata(String protocolType, String protocolName, int generation, String leaderId, List<MemberMetadata> members)
    implements StoredGroup {

  /** One member as stored; {@code protocols} in the member's preference order. */
  record MemberMetadata(String memberId, String groupInstanceId, String clientId, String clientHost, int rebalanceTimeoutMs,
      int sessionTimeoutMs, List<Member.Protocol> protocols, byte[] assignment) {}

  GroupMetadata {
    members = List.copyOf(members);
  }

  /** The group as it is, each member with its assignment from {@code assignments} (its current one when absent). */
  static GroupMetadata of(ClassicGroup g, Map<String, byte[]> assignments) {
    List<MemberMetadata> members = new ArrayList<>();
    for (Member m : g.members.values()) {
      members.add(new MemberMetadata(m.memberId, m.groupInstanceId, m.clientId, m.clientHost, m.rebalanceTimeoutMs,
          m.sessionTimeoutMs, List.copyOf(m.protocols), assignments.getOrDefault(m.memberId, m.assignment)));
    }
    return new GroupMetadata(g.protocolType, members.isEmpty() ? null : g.protocolName, g.generation,
        members.isEmpty() ? null : g.leaderId, members);
  }
}
