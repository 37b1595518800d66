package io.tidemark.metadata.raft;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.io.IOException;
import io.tidemark.stream.net.LoopbackPorts;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import io.tidemark.stream.object.ObjectKeys;

/** Test fixture: N controller voters on loopback with ephemeral ports, each under its own directory. */
public final class TestQuorum implements AutoCloseable {
  private final Path root;
  private final Map<String, String> overrides;
  private final String voters;
  private final int size;
  private final Clock clock;
  public final ObjectStorage storage;
  private final Map<Integer, ControllerNode> nodes = new HashMap<>();
  private final List<ControllerClient> clients = new ArrayList<>();

  private final LongFunction<String> objectKeys;
  private Consumer<RaftProperties> raftTweaks = p -> {};

  public TestQuorum(Path root, int size, Clock clock, Map<String, String> overrides) {
    this(root, size, clock, new MemoryObjectStorage(), ObjectKeys.defaults()::key, overrides);
  }

  public TestQuorum(Path root, int size, Clock clock, ObjectStorage storage, LongFunction<String> objectKeys,
      Map<String, String> overrides) {
    this.root = root;
    this.size = size;
    this.clock = clock;
    this.overrides = overrides;
    this.storage = storage;
    this.objectKeys = objectKeys;
    StringJoiner j = new StringJoiner(",");
    for (int id = 1; id <= size; id++) {
      j.add(id + "@127.0.0.1:" + freePort());
    }
    this.voters = j.toString();
  }

  public static int freePort() {
    return LoopbackPorts.pick();
  }

  public ControllerConfig config(int nodeId) {
    Map<String, String> m = new HashMap<>(overrides);
    m.put(ControllerConfig.NODE_ID.name(), String.valueOf(nodeId));
    m.put(ControllerConfig.VOTERS.name(), voters);
    m.put(ControllerConfig.DIR.name(), root.resolve("node-" + nodeId).toString());
    m.putIfAbsent(ControllerConfig.ELECTION_TIMEOUT_MS.name(), "300");
    m.putIfAbsent(ControllerConfig.REQUEST_TIMEOUT_MS.name(), "2000");
    m.putIfAbsent(ControllerConfig.CLIENT_MAX_ATTEMPTS.name(), "100");
    return new ControllerConfig(new Settings(m));
  }

  public TestQuorum startAll() throws IOException {
    for (int id = 1; id <= size; id++) {
      start(id);
    }
    return this;
  }

  /** Adjusts the Raft properties of voters started from now on. */
  public TestQuorum raftTweaks(Consumer<RaftProperties> tweaks) {
    this.raftTweaks = tweaks;
    return this;
  }

  /** Small log segments purged right after each snapshot, so tests reach "log purged" with little data. */
  public static void smallPurgedSegments(RaftProperties p) {
    RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("32KB"));
    RaftServerConfigKeys.Log.setPurgeGap(p, 1);
  }

  public ControllerNode start(int nodeId) throws IOException {
    ControllerNode node = new ControllerNode(config(nodeId), clock, storage, objectKeys).raftTweaks(raftTweaks).start();
    nodes.put(nodeId, node);
    return node;
  }

  public void stop(int nodeId) {
    ControllerNode node = nodes.remove(nodeId);
    if (node != null) {
      node.close();
    }
  }

  public ControllerNode node(int nodeId) {
    return nodes.get(nodeId);
  }

  public List<ControllerNode> running() {
    return new ArrayList<>(nodes.values());
  }

  /** The current leader, or null. */
  public ControllerNode leader() {
    for (ControllerNode n : nodes.values()) {
      if (n.isLeader()) {
        return n;
      }
    }
    return null;
  }

  public ControllerClient client() {
    ControllerClient c = new ControllerClient(config(1));
    clients.add(c);
    return c;
  }

  @Override
  public void close() {
    clients.forEach(ControllerClient::close);
    nodes.values().forEach(ControllerNode::close);
    nodes.clear();
  }
}
