package io.tidemark.broker.group;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;

/**
 * One member of a classic group: identity, timeouts, the protocols it offers (name → metadata, in
 * preference order), its assignment, and the join or sync call it is waiting on. Owned by the
 * coordinator thread.
 */
final class Member {

  /** One offered protocol. */
  record Protocol(String name, byte[] metadata) {}

  String memberId;
  final String groupInstanceId;
  String clientId;
  String clientHost;
  int rebalanceTimeoutMs;
  int sessionTimeoutMs;
  List<Protocol> protocols;
  byte[] assignment = new byte[0];
  CompletableFuture<JoinGroupResponseData> awaitingJoin;
  short joinVersion;
  CompletableFuture<SyncGroupResponseData> awaitingSync;
  ScheduledFuture<?> sessionTimer;

  Member(String memberId, String groupInstanceId, String clientId, String clientHost, int rebalanceTimeoutMs, int sessionTimeoutMs,
      List<Protocol> protocols) {
    this.memberId = memberId;
    this.groupInstanceId = groupInstanceId;
    this.clientId = clientId;
    this.clientHost = clientHost;
    this.rebalanceTimeoutMs = rebalanceTimeoutMs;
    this.sessionTimeoutMs = sessionTimeoutMs;
    this.protocols = protocols;
  }

  byte[] metadata(String protocol) {
    for (Protocol p : protocols) {
      if (p.name().equals(protocol)) {
        return p.metadata();
      }
    }
    return new byte[0];
  }

  boolean sameProtocols(List<Protocol> other) {
    if (other.size() != protocols.size()) {
      return false;
    }
    for (int i = 0; i < other.size(); i++) {
      if (!other.get(i).name().equals(protocols.get(i).name())
          || !java.util.Arrays.equals(other.get(i).metadata(), protocols.get(i).metadata())) {
        return false;
      }
    }
    return true;
  }
}
