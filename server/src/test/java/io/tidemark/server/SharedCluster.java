package io.tidemark.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One three-node child-process cluster ({@link ChildCluster}, local object storage, block WAL) for
 * every test class of the run that moves partitions or loses brokers ({@code
 * @ExtendWith(SharedCluster.class)}, then {@link #cluster()}): starting and stopping three JVMs costs
 * more than most of these tests, so they pay it once per run.
 *
 * <p>The cluster is started by the first class that asks and closed (every child killed, the logs
 * kept in {@code target/shared-cluster-logs}) when JUnit's run ends, through the root context's
 * store. Before each class and each test it is healed ({@link ChildCluster#heal}): every node running and
 * unpaused, three live brokers, no reassignment in progress. The tests use their own topics and
 * groups, so none depends on the order of the classes or on what an earlier one left.
 */
final class SharedCluster implements BeforeAllCallback, BeforeEachCallback {

  /**
   * The cluster's session timeout: 8 s in tests (a live node at load 20+ can miss the 3 s default); the failover
   * benchmark passes the documented default with {@code -Dtidemark.cluster.session.timeout.ms=3000}.
   */
  static final long SESSION_TIMEOUT_MS = Long.getLong("tidemark.cluster.session.timeout.ms", 8_000);
  private static final Path LOGS = Path.of("target", "shared-cluster-logs");
  private static volatile Holder holder;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    ExtensionContext.Store store = context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL);
    Holder h = store.getOrComputeIfAbsent(Holder.class, k -> Holder.start(), Holder.class);
    h.cluster.heal();
    holder = h;
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    cluster().heal();
  }

  /** The running shared cluster (after the class's {@code beforeAll}). */
  static ChildCluster cluster() {
    if (holder == null) {
      throw new IllegalStateException("annotate the test class with @ExtendWith(SharedCluster.class)");
    }
    return holder.cluster;
  }

  /** Owns the cluster and its directory; JUnit closes it at the end of the run. */
  private static final class Holder implements AutoCloseable {
    final Path root;
    final ChildCluster cluster;

    private Holder(Path root, ChildCluster cluster) {
      this.root = root;
      this.cluster = cluster;
    }

    static Holder start() {
      Path root = null;
      ChildCluster cluster = null;
      try {
        root = Files.createTempDirectory("tidemark-shared-cluster");
        // a session timeout above the default 3 s: on a machine at load 20-30 a live node's heartbeat can be late by
        // more than 3 s, and a spurious failover would fail a test that moves partitions to that node
        cluster = new ChildCluster(root, List.of("controller.session.timeout.ms=" + SESSION_TIMEOUT_MS));
        cluster.start();
        return new Holder(root, cluster);
      } catch (Exception e) {
        if (cluster != null) {
          cluster.close();
        }
        throw new IllegalStateException("the shared cluster did not start (logs in " + root + ")", e);
      }
    }

    @Override
    public void close() throws IOException {
      holder = null;
      cluster.close();
      cluster.keepLogs(LOGS);
      try (Stream<Path> all = Files.walk(root)) {
        all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
