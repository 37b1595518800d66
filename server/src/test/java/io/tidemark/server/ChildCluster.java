package io.tidemark.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.awaitility.Awaitility;

/**
 * Three combined controller+broker nodes as child JVMs ({@code Main start}; three voters, each node
 * with its own WAL and data directory, one shared object storage directory and one embedded table
 * catalog), so that a test can {@code kill -9} a node, pause it with SIGSTOP or stop it with
 * SIGTERM. Each node's log goes to {@code node-N.log} under the root; {@link #logMark} and
 * {@link #logSince} let a test look only at what was logged after a point. {@link #heal} brings
 * every node back (for a fixture shared by several tests, see {@link SharedCluster}); {@link
 * #close} kills every child.
 */
final class ChildCluster implements AutoCloseable {

  private final Path root;
  private final int[] kafkaPorts = {FreePorts.pick(), FreePorts.pick(), FreePorts.pick()};
  private final int[] adminPorts = {FreePorts.pick(), FreePorts.pick(), FreePorts.pick()};
  private final String voters = "1@127.0.0.1:" + FreePorts.pick() + ",2@127.0.0.1:" + FreePorts.pick()
      + ",3@127.0.0.1:" + FreePorts.pick();
  private final Process[] children = new Process[3];
  private final int[] starts = new int[3];
  private final boolean[] paused = new boolean[3];
  private final List<String> extra;
  private final List<String> jvmOptions;
  private java.util.function.IntFunction<List<String>> perNode = id -> List.of();
  private Map<String, Object> clientSecurity = Map.of();

  ChildCluster(Path root, List<String> extraSettings) {
    this(root, extraSettings, List.of());
  }

  /** {@code extraSettings} as {@code key=value}; {@code jvmOptions} go on each child's java command line. */
  ChildCluster(Path root, List<String> extraSettings, List<String> jvmOptions) {
    this.root = root;
    this.extra = extraSettings;
    this.jvmOptions = jvmOptions;
  }

  /**
   * Settings that differ between nodes (a node's listeners and key store), by node id, added after
   * the shared ones; {@link #kafkaPort} is the port the node's clients are told to bootstrap from.
   * Call before {@link #start}.
   */
  ChildCluster perNodeSettings(java.util.function.IntFunction<List<String>> settings) {
    this.perNode = settings;
    return this;
  }

  /**
   * The kafka-clients security properties ({@code security.protocol}, TLS trust, SASL login) that
   * {@link #admin} and the fixture's own waits use against a secured cluster. Call before {@link #start}.
   */
  ChildCluster clientSecurity(Map<String, Object> properties) {
    this.clientSecurity = Map.copyOf(properties);
    return this;
  }

  /** {@link #clientSecurity} with this cluster's bootstrap servers: the base of a test's client configs. */
  Map<String, Object> clientConfigs() {
    Map<String, Object> out = new java.util.HashMap<>(clientSecurity);
    out.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapAll());
    return out;
  }

  /** Starts the three nodes, each once the previous one opened the shared object directory, and waits for all three. */
  ChildCluster start() throws Exception {
    for (int id = 1; id <= 3; id++) {
      startNode(id);
      Path opened = root.resolve("node-" + id).resolve("controller");
      int nodeId = id;
      Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(50))
          .until(() -> Files.isDirectory(opened) || !children[nodeId - 1].isAlive());
    }
    for (int id = 1; id <= 3; id++) {
      awaitStartedRestarting(id);
    }
    awaitBrokers(3);
    return this;
  }

  /**
   * Waits until the node serves; a node whose start failed (on a loaded machine a node may give up
   * waiting for a quorum whose other voters are still starting, and exit) is started again, at most
   * twice, as a service manager would.
   */
  void awaitStartedRestarting(int nodeId) throws IOException {
    for (int attempt = 1; ; attempt++) {
      try {
        awaitStarted(nodeId);
        return;
      } catch (RuntimeException e) {
        if (alive(nodeId) || attempt >= 3) {
          throw e;
        }
        System.out.println("ChildCluster: node " + nodeId + " exited while starting (attempt " + attempt
            + "); starting it again");
        startNode(nodeId);
      }
    }
  }

  /** Waits until {@code count} brokers are registered and live (as the first live node reports). */
  void awaitBrokers(int count) {
    Awaitility.await().atMost(Duration.ofMinutes(6)).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
        .until(() -> {
          try (Admin admin = admin()) {
            return admin.describeCluster().nodes().get(20, TimeUnit.SECONDS).size() == count;
          }
        });
  }

  /** Starts (or restarts) one node with the same id and directories. */
  Process startNode(int nodeId) throws IOException {
    Path dir = root.resolve("node-" + nodeId);
    Files.createDirectories(dir);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(java, "-Xmx384m", "-XX:+UseSerialGC"));
    cmd.addAll(jvmOptions);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "start"));
    List<String> sets = new ArrayList<>(extra);
    sets.addAll(List.of("node.id=" + nodeId, "data.dir=" + dir, "process.roles=controller,broker",
        "controller.voters=" + voters, "storage.local.path=" + root.resolve("objects"),
        "wal.capacity.bytes=" + (32L << 20), "admin.host=127.0.0.1", "admin.port=" + adminPorts[nodeId - 1],
        "table.rest.host=127.0.0.1", "table.rest.port=0", "registry.host=127.0.0.1", "registry.port=0",
        "kafka.listener.host=127.0.0.1", "kafka.advertised.host=127.0.0.1",
        "kafka.listener.port=" + kafkaPorts[nodeId - 1], "kafka.group.initial.rebalance.delay.ms=0",
        "controller.client.retry.backoff.ms=500", "stream.close.timeout.ms=5000",
        io.tidemark.table.config.TableCatalogConfig.EMBEDDED_DB + "=" + catalogDb()));
    sets.addAll(perNode.apply(nodeId));
    for (String s : sets) {
      cmd.add("--set");
      cmd.add(s);
    }
    ProcessBuilder builder = new ProcessBuilder(cmd);
    builder.redirectErrorStream(true);
    builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log(nodeId).toFile()));
    children[nodeId - 1] = builder.start();
    paused[nodeId - 1] = false;
    starts[nodeId - 1]++;
    return children[nodeId - 1];
  }

  /** Waits until the node's latest start serves Kafka (its storage recovered and its broker listening). */
  void awaitStarted(int nodeId) {
    Awaitility.await().atMost(Duration.ofMinutes(6)).pollInterval(Duration.ofMillis(200)).until(() -> {
      if (!alive(nodeId)) {
        throw new IllegalStateException("node " + nodeId + " exited; see " + log(nodeId));
      }
      return logText(nodeId).lines().filter(l -> l.contains("of cluster") && l.contains("started on port")).count()
          >= starts[nodeId - 1];
    });
  }

  /**
   * Brings the cluster back to three running, unpaused nodes and three live brokers with no
   * reassignment in progress: a node paused is resumed, a node dead or stopped is restarted.
   */
  void heal() throws Exception {
    for (int id = 1; id <= 3; id++) {
      if (alive(id) && paused[id - 1]) {
        resume(id);
      }
    }
    for (int id = 1; id <= 3; id++) {
      if (!alive(id)) {
        startNode(id);
      }
    }
    for (int id = 1; id <= 3; id++) {
      awaitStartedRestarting(id);
    }
    awaitBrokers(3);
    try (Admin admin = admin()) {
      Awaitility.await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(300)).ignoreExceptions()
          .until(() -> admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS).isEmpty());
    }
  }

  /** SIGTERM (a controlled shutdown: the node hands its partitions over first); waits until the process exited. */
  void stop(int nodeId) throws InterruptedException {
    children[nodeId - 1].destroy();
    if (!children[nodeId - 1].waitFor(3, TimeUnit.MINUTES)) {
      throw new IllegalStateException("node " + nodeId + " did not exit within 3 minutes of SIGTERM; see " + log(nodeId));
    }
  }

  /** The current Raft leader of the metadata quorum, as a live node reports it. */
  int controllerLeader() {
    return Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(300)).ignoreExceptions()
        .until(() -> {
          try (Admin admin = admin()) {
            return admin.describeMetadataQuorum().quorumInfo().get(20, TimeUnit.SECONDS).leaderId();
          }
        }, id -> id >= 1 && id <= 3);
  }

  /** Where the node's log ends now: {@link #logSince} reads from here. */
  long logMark(int nodeId) throws IOException {
    return Files.exists(log(nodeId)) ? Files.size(log(nodeId)) : 0;
  }

  /** What the node logged after {@code mark}. */
  String logSince(int nodeId, long mark) throws IOException {
    byte[] all = Files.readAllBytes(log(nodeId));
    return new String(all, (int) Math.min(mark, all.length), all.length - (int) Math.min(mark, all.length),
        java.nio.charset.StandardCharsets.UTF_8);
  }

  Path root() {
    return root;
  }

  /** The shared object storage directory. */
  Path objects() {
    return root.resolve("objects");
  }

  /** The shared embedded table catalog. */
  Path catalogDb() {
    return root.resolve("catalog.db");
  }

  Path log(int nodeId) {
    return root.resolve("node-" + nodeId + ".log");
  }

  String logText(int nodeId) throws IOException {
    return Files.readString(log(nodeId));
  }

  /** Copies the nodes' logs to {@code dir} (for a look after the run). */
  void keepLogs(Path dir) throws IOException {
    Files.createDirectories(dir);
    for (int id = 1; id <= 3; id++) {
      if (Files.exists(log(id))) {
        Files.copy(log(id), dir.resolve("node-" + id + ".log"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  /** kill -9. */
  void kill(int nodeId) throws InterruptedException {
    children[nodeId - 1].destroyForcibly();
    children[nodeId - 1].waitFor(1, TimeUnit.MINUTES);
  }

  /** SIGSTOP: the process stays, frozen. */
  void pause(int nodeId) throws Exception {
    signal(nodeId, "STOP");
    paused[nodeId - 1] = true;
  }

  /** SIGCONT. */
  void resume(int nodeId) throws Exception {
    signal(nodeId, "CONT");
    paused[nodeId - 1] = false;
  }

  private void signal(int nodeId, String signal) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(children[nodeId - 1].pid())).start();
    if (kill.waitFor() != 0) {
      throw new IllegalStateException("kill -" + signal + " of node " + nodeId + " failed");
    }
  }

  boolean alive(int nodeId) {
    return children[nodeId - 1] != null && children[nodeId - 1].isAlive();
  }

  /** The process id of the node's latest start. */
  long pid(int nodeId) {
    return children[nodeId - 1].pid();
  }

  /** The node's admin endpoint (health, metrics, console). */
  int adminPort(int nodeId) {
    return adminPorts[nodeId - 1];
  }

  int kafkaPort(int nodeId) {
    return kafkaPorts[nodeId - 1];
  }

  String bootstrap(int nodeId) {
    return "127.0.0.1:" + kafkaPorts[nodeId - 1];
  }

  String bootstrapAll() {
    return bootstrap(1) + "," + bootstrap(2) + "," + bootstrap(3);
  }

  /** An admin client over every node (it finds a live one). */
  Admin admin() {
    Map<String, Object> config = clientConfigs();
    config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
    config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    return Admin.create(config);
  }

  @Override
  public void close() {
    for (Process p : children) {
      if (p != null) {
        p.destroyForcibly(); // SIGKILL ends a paused process too
      }
    }
    for (Process p : children) {
      if (p != null) {
        try {
          p.waitFor(1, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }
}
