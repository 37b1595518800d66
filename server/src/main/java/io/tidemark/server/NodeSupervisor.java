package io.tidemark.server;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the process's node running while the process lives: no component stays failed short of
 * a process restart. Two events make the node start again in-process with the same configuration
 * ({@link TidemarkServer#restartNeeded}):
 * <ul>
 *   <li>its epoch is fenced and failed over although the process is alive (a pause longer than the
 *       session timeout: GC, a starved machine, SIGSTOP): the node can serve nothing under that epoch
 *       again, so it is closed (its engine halted, nothing uploaded: a survivor committed its WAL and
 *       its partitions have newer leader and stream epochs elsewhere);</li>
 *   <li>its storage engine failed for good (a WAL I/O error fails the engine, its streams and the
 *       partitions on them): the node is closed (nothing more is written to the failed WAL; what it
 *       holds stays in the file).</li>
 * </ul>
 * The new start takes exactly a restart's path: it registers a new node epoch, opens the WAL with
 * that epoch, recovers it (uploading every acknowledged record of the streams it still holds and
 * dropping what belongs to streams it no longer holds), and serves again: the partitions it still
 * leads reopen with a bumped leader epoch, so clients see a retriable error and a reconnect, never a
 * lost acknowledged record. A failed-over node leads nothing until moves or elections give it
 * partitions.
 *
 * <p>States: RUNNING (a node serves) → REJOINING (closing the replaced node, starting a new one;
 * a failed start is retried after a backoff doubling from {@link #RETRY_MS} to {@link #RETRY_MAX_MS})
 * → RUNNING; any state → STOPPED on {@link #stop} (SIGTERM), which closes the current node
 * gracefully. One supervising thread runs {@link #run}; {@link #stop} may come from any thread and
 * is serialized with a rejoin by the object's lock, so a node is never left running after stop.
 */
final class NodeSupervisor {

  private static final Logger LOG = LoggerFactory.getLogger(NodeSupervisor.class);
  static final long RETRY_MS = 1_000;
  static final long RETRY_MAX_MS = 30_000;

  private final Supplier<TidemarkServer> starter;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private TidemarkServer current; // guarded by this
  private boolean stopping; // guarded by this
  private int rejoins; // guarded by this

  /** Supervises {@code first}; {@code starter} starts a new node with the same configuration. */
  NodeSupervisor(TidemarkServer first, Supplier<TidemarkServer> starter) {
    this.current = first;
    this.starter = starter;
  }

  /** The node serving now. */
  synchronized TidemarkServer current() {
    return current;
  }

  /** How many times the node rejoined in-process. */
  synchronized int rejoins() {
    return rejoins;
  }

  /** Supervises until {@link #stop}; call on one thread. */
  void run() {
    while (true) {
      TidemarkServer node = current();
      String why;
      try {
        why = awaitReplacedOrStopped(node);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (why == null) {
        return;
      }
      rejoin(node, why);
    }
  }

  private String awaitReplacedOrStopped(TidemarkServer node) throws InterruptedException {
    var replaced = node.restartNeeded().toCompletableFuture();
    while (!stopped.await(100, TimeUnit.MILLISECONDS)) {
      if (replaced.isDone()) {
        return replaced.join();
      }
    }
    return null;
  }

  private synchronized void rejoin(TidemarkServer replacedNode, String why) {
    long backoff = RETRY_MS;
    LOG.warn("node {} rejoins in-process: {}", replacedNode.config().nodeId(), why);
    replacedNode.close();
    while (!stopping) {
      try {
        current = starter.get();
        rejoins++;
        LOG.info("node {} rejoined the cluster in-process (rejoin {})", current.config().nodeId(), rejoins);
        return;
      } catch (RuntimeException e) {
        LOG.error("node {} could not start again ({}); retrying in {} ms: {}",
            replacedNode.config().nodeId(), why, backoff, e.toString());
        try {
          wait(backoff); // releases the lock: stop() can end the retries
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
        backoff = Math.min(RETRY_MAX_MS, backoff * 2);
      }
    }
  }

  /** Stops supervising and closes the current node gracefully; idempotent. */
  void stop() {
    stopped.countDown();
    TidemarkServer node;
    synchronized (this) {
      stopping = true;
      notifyAll();
      node = current;
    }
    node.close();
  }
}
