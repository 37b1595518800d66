package io.tidemark.metadata.raft;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.SupportedRpcType;

/** The Raft group of the metadata quorum, built from {@code controller.voters}. Stateless. */
public final class RaftGroups {
  /** One metadata group per cluster; the id is fixed so every node and client agrees on it. */
  public static final RaftGroupId GROUP_ID =
      RaftGroupId.valueOf(UUID.nameUUIDFromBytes("tidemark-metadata".getBytes(StandardCharsets.UTF_8)));

  private RaftGroups() {}

  public static RaftPeerId peerId(int nodeId) {
    return RaftPeerId.valueOf("n" + nodeId);
  }

  public static RaftGroup group(Map<Integer, String> voters) {
    List<RaftPeer> peers = new ArrayList<>();
    voters.forEach((id, address) -> peers.add(RaftPeer.newBuilder().setId(peerId(id)).setAddress(address).build()));
    return RaftGroup.valueOf(GROUP_ID, peers);
  }

  /** Properties shared by servers and clients: the gRPC transport (Ratis shades its own gRPC and Netty). */
  static RaftProperties baseProperties() {
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
    return p;
  }
}
