package io.tidemark.server;

import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.table.config.TableCatalogConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Three combined controller+broker nodes in this JVM (three voters, each node with its own WAL, data
 * directory and metadata image), sharing one object storage directory: the fixture of the cluster
 * tests that move partitions. {@link #close} stops every node at once (each commits its last
 * uploads while a majority of voters still runs).
 */
final class InProcessCluster implements AutoCloseable {

  private final Path root;
  private final int[] kafkaPorts = {FreePorts.pick(), FreePorts.pick(), FreePorts.pick()};
  private final String voters = "1@127.0.0.1:" + FreePorts.pick() + ",2@127.0.0.1:" + FreePorts.pick()
      + ",3@127.0.0.1:" + FreePorts.pick();
  private final TidemarkServer[] nodes = new TidemarkServer[3];
  private final List<String> extra;

  InProcessCluster(Path root, List<String> extraSettings) {
    this.root = root;
    this.extra = extraSettings;
  }

  /**
   * Starts the three nodes concurrently (registration needs a majority of voters), each once the
   * previous one opened the shared object storage directory (the local store clears its temporary
   * files when it opens, so two nodes must not open it at the same moment).
   */
  InProcessCluster start() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<TidemarkServer>> starting = new ArrayList<>();
      for (int id = 1; id <= 3; id++) {
        int nodeId = id;
        starting.add(pool.submit(() -> launch(nodeId)));
        // the next node opens the shared directory only once this one did (its controller directory comes after)
        Path opened = root.resolve("node-" + nodeId).resolve("controller");
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofMinutes(2)).pollInterval(java.time.Duration.ofMillis(50))
            .until(() -> Files.isDirectory(opened) || starting.get(nodeId - 1).isDone());
      }
      for (int i = 0; i < 3; i++) {
        nodes[i] = starting.get(i).get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    return this;
  }

  /** Stops one node as SIGTERM does (controlled shutdown first). */
  void stopNode(int nodeId) {
    nodes[nodeId - 1].close();
    nodes[nodeId - 1] = null;
  }

  /** Starts (or restarts) one node with the same id and directories. */
  TidemarkServer startNode(int nodeId) {
    TidemarkServer node = launch(nodeId);
    nodes[nodeId - 1] = node;
    return node;
  }

  private TidemarkServer launch(int nodeId) {
    List<String> args = new ArrayList<>(extra);
    args.addAll(List.of("--set", "node.id=" + nodeId, "--set", "data.dir=" + root.resolve("node-" + nodeId),
        "--set", "process.roles=controller,broker", "--set", "controller.voters=" + voters,
        "--set", "storage.local.path=" + root.resolve("objects"), "--set", "wal.capacity.bytes=" + (32L << 20),
        "--set", "admin.host=127.0.0.1", "--set", "admin.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.advertised.host=127.0.0.1",
        "--set", "kafka.listener.port=" + kafkaPorts[nodeId - 1], "--set", "kafka.group.initial.rebalance.delay.ms=0",
        "--set", "controller.client.retry.backoff.ms=500", "--set", "stream.close.timeout.ms=5000",
        "--set", TableCatalogConfig.EMBEDDED_DB + "=" + root.resolve("catalog.db")));
    return Main.start(args, Map.of(), new EmbeddedStorage());
  }

  String bootstrap(int nodeId) {
    return "127.0.0.1:" + kafkaPorts[nodeId - 1];
  }

  String bootstrapAll() {
    return bootstrap(1) + "," + bootstrap(2) + "," + bootstrap(3);
  }

  TidemarkServer node(int nodeId) {
    return nodes[nodeId - 1];
  }

  @Override
  public void close() {
    List<CompletableFuture<Void>> stopping = new ArrayList<>();
    for (TidemarkServer node : nodes) {
      if (node != null) {
        stopping.add(CompletableFuture.runAsync(node::close));
      }
    }
    CompletableFuture.allOf(stopping.toArray(CompletableFuture[]::new)).orTimeout(5, TimeUnit.MINUTES).join();
  }
}
