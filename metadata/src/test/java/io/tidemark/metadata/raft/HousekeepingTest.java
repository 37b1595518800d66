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
