package io.tidemark.metadata.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.client.ControllerFixtures;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.NodeFencedException;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.MultipartUpload;
import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The leader's housekeeping through Ratis with a manual clock: session fencing, expiry, delayed batched deletion. */
class HousekeepingTest {
  private final AtomicLong now = new AtomicLong(5_000_000);
  private final Clock clock = new ControllerFixtures.SupplierClock(now::get);

  @Test
  void aSilentBrokerIsFencedAndCannotChangeAnythingUntilItHeartbeatsAgain(@TempDir Path dir) throws Exception {
    // Goal: after the session timeout (injected time) the leader fences the broker; its writes fail; a heartbeat unfences it.
    try (TestQuorum q = new TestQuorum(dir, 1, clock, Map.of(ControllerConfig.SESSION_TIMEOUT_MS.name(), "1000",
        ControllerConfig.HOUSEKEEPING_INTERVAL_MS.name(), "20")).startAll()) {
      ControllerClient c = q.client();
      NodeRef node = c.registerBroker(4, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), "").join();
      // a second broker heartbeats all along: sessions expire only while heartbeats are being applied (a table
      // that applied none for a while is stale, not proof that every broker died)
      NodeRef witness = c.registerBroker(5, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9093)), "").join();
      long stream = c.createStream(node, Map.of()).join();
      assertThat(c.heartbeat(node).join()).isFalse();
      c.heartbeat(witness).join();
      advance(c, witness, 900);
      assertThat(c.heartbeat(node).join()).isFalse();
      advance(c, witness, 900); // 900 ms after the last heartbeat: still alive
      c.prepareObjects(node, 1, 1000).join(); // (it opens no stream: a broker holding nothing is fenced, not failed over)
      advance(c, witness, 200); // 1100 ms after the last heartbeat
      await().atMost(Duration.ofSeconds(20)).until(() -> q.node(1).image().broker(4).fenced());
      assertThatThrownBy(() -> c.prepareObjects(node, 1, 1000).join()).hasCauseInstanceOf(NodeFencedException.class);
      assertThatThrownBy(() -> c.trimStream(node, stream, 1, 0).join()).hasCauseInstanceOf(NodeFencedException.class);
      assertThat(c.heartbeat(node).join()).isTrue();
      await().atMost(Duration.ofSeconds(20)).until(() -> !q.node(1).image().broker(4).fenced());
      c.prepareObjects(node, 1, 1000).join();
      // a restarted broker gets a new epoch; the old epoch's heartbeat is rejected
      NodeRef restarted = c.registerBroker(4, List.of(), "").join();
      assertThat(restarted.nodeEpoch()).isGreaterThan(node.nodeEpoch());
      assertThatThrownBy(() -> c.heartbeat(node).join()).hasCauseInstanceOf(NodeFencedException.class);
    }
  }

  @Test
  void aSilentBrokerWhoseListenerRefusesIsFencedBeforeTheSessionTimeoutALiveOneIsNot(@TempDir Path dir) throws Exception {
    // Goal: controller.session.probe: a broker silent for two heartbeat intervals whose listener (which accepted a
    // probe at this epoch) now refuses connections is fenced at once, long before the session timeout; a broker as
    // silent whose listener still accepts (a starved or paused process) is probed and left alone.
    // the listeners close after the quorum (resources close in reverse order)
    try (java.net.ServerSocket dead = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        java.net.ServerSocket alive = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        TestQuorum q = new TestQuorum(dir, 1, clock, Map.of(ControllerConfig.SESSION_TIMEOUT_MS.name(), "60000",
            ControllerConfig.HEARTBEAT_INTERVAL_MS.name(), "500", ControllerConfig.HOUSEKEEPING_INTERVAL_MS.name(), "20"))
            .startAll()) {
      AtomicLong deadAccepts = accepting(dead);
      AtomicLong aliveAccepts = accepting(alive);
      ControllerClient c = q.client();
      NodeRef gone = c.registerBroker(4, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", dead.getLocalPort())), "").join();
      NodeRef starved = c.registerBroker(6, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", alive.getLocalPort())), "").join();
      NodeRef witness = c.registerBroker(5, List.of(), "").join();
      c.heartbeat(gone).join();
      c.heartbeat(starved).join();
      c.heartbeat(witness).join();
      // both listeners were seen accepting at this epoch
      await().atMost(Duration.ofSeconds(20)).until(() -> deadAccepts.get() >= 1 && aliveAccepts.get() >= 1);
      dead.close(); // the process is gone: connections are refused
      long aliveBefore = aliveAccepts.get();
      advance(c, witness, 1100); // silent for two heartbeat intervals, far from the 60 s session timeout
      await().atMost(Duration.ofSeconds(20)).until(() -> q.node(1).image().broker(4).fenced());
      await().atMost(Duration.ofSeconds(20)).until(() -> aliveAccepts.get() > aliveBefore); // probed while as late
      advance(c, witness, 500);
      await().atMost(Duration.ofSeconds(20)).until(() -> aliveAccepts.get() > aliveBefore + 1);
      assertThat(q.node(1).image().broker(6).fenced()).as("a silent broker whose listener accepts").isFalse();
      assertThat(q.node(1).image().broker(5).fenced()).as("the witness").isFalse();
      assertThat(starved.nodeEpoch()).isEqualTo(q.node(1).image().broker(6).nodeEpoch());
    }
  }

  /** Accepts (and closes) connections on {@code server} until it closes; returns the count so far. */
  private static AtomicLong accepting(java.net.ServerSocket server) {
    AtomicLong accepted = new AtomicLong();
    Thread.ofVirtual().start(() -> {
      while (!server.isClosed()) {
        try (java.net.Socket s = server.accept()) {
          accepted.incrementAndGet();
        } catch (java.io.IOException closed) {
          return;
        }
      }
    });
    return accepted;
  }

  /** Moves the clock {@code ms} ahead in steps of 100 ms, the witness heartbeating at each. */
  private void advance(ControllerClient c, NodeRef witness, long ms) {
    for (long done = 0; done < ms; done += 100) {
      now.addAndGet(Math.min(100, ms - done));
      c.heartbeat(witness).join();
    }
  }

  @Test
  void expiredObjectsAreDeletedAfterTheDelayInBoundedBatches(@TempDir Path dir) throws Exception {
    // Goal: never-committed objects expire, stay in storage for the delete delay, then go in batches of at most N keys.
    RecordingStorage storage = new RecordingStorage(new MemoryObjectStorage());
    ObjectKeys keys = ObjectKeys.defaults();
    try (TestQuorum q = new TestQuorum(dir, 1, clock, storage, keys::key, Map.of(
        ControllerConfig.SESSION_TIMEOUT_MS.name(), "3600000",
        ControllerConfig.HOUSEKEEPING_INTERVAL_MS.name(), "20",
        ControllerConfig.OBJECT_DELETE_DELAY_MS.name(), "5000",
        ControllerConfig.OBJECT_DELETE_BATCH_SIZE.name(), "3")).startAll()) {
      ControllerClient c = q.client();
      NodeRef node = c.registerBroker(1, List.of(), "").join();
      long first = c.prepareObjects(node, 7, 1000).join();
      for (long id = first; id < first + 7; id++) {
        storage.put(keys.key(id), ByteBuffer.allocate(4)).join();
      }
      now.addAndGet(1000);
      await().atMost(Duration.ofSeconds(20)).until(() -> q.node(1).image().markedForDeletion().size() == 7);
      now.addAndGet(4999);
      q.node(1).runHousekeeping().join();
      assertThat(storage.list("").join()).hasSize(7);
      now.addAndGet(1);
      await().atMost(Duration.ofSeconds(20)).until(() -> q.node(1).image().objects().isEmpty());
      assertThat(storage.list("").join()).isEmpty();
      assertThat(storage.deleteBatchSizes).isNotEmpty().allMatch(n -> n <= 3);
    }
  }

  /** Delegates to another storage and records the size of every delete request. */
  static final class RecordingStorage implements ObjectStorage {
    final ObjectStorage delegate;
    final List<Integer> deleteBatchSizes = new CopyOnWriteArrayList<>();

    RecordingStorage(ObjectStorage delegate) {
      this.delegate = delegate;
    }

    @Override
    public CompletableFuture<Void> put(String key, ByteBuffer data) {
      return delegate.put(key, data);
    }

    @Override
    public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
      return delegate.startMultipartUpload(key);
    }

    @Override
    public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
      return delegate.get(key, start, end);
    }

    @Override
    public CompletableFuture<Void> delete(List<String> keys) {
      deleteBatchSizes.add(keys.size());
      return delegate.delete(keys);
    }

    @Override
    public CompletableFuture<List<ObjectInfo>> list(String prefix) {
      return delegate.list(prefix);
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}
