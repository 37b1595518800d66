package io.tidemark.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.store.MemorySchemaStore;
import io.tidemark.registry.store.SchemaStore;
import io.tidemark.registry.store.SchemaStoreException;
import io.tidemark.registry.store.StoredRecord;
import io.tidemark.stream.config.Settings;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Goal: the single writer's queue is bounded (429), slow writes time out (50002) and failed appends (50001) change nothing. */
class WriterBackpressureTest {

  /** A log whose appends can be held or failed. */
  static final class ControlledStore implements SchemaStore {
    final MemorySchemaStore log = new MemorySchemaStore();
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch appending = new CountDownLatch(1);
    final AtomicBoolean hold = new AtomicBoolean();
    final AtomicBoolean fail = new AtomicBoolean();

    @Override
    public long append(byte[] key, byte[] value) {
      if (fail.get()) {
        throw new SchemaStoreException("injected append failure");
      }
      if (hold.get()) {
        appending.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return log.append(key, value);
    }

    @Override
    public List<StoredRecord> read(long fromOffset, int maxRecords) {
      return log.read(fromOffset, maxRecords);
    }

    @Override
    public long endOffset() {
      return log.endOffset();
    }
  }

  private static RegistryConfig config(int queue, long timeoutMs) {
    return RegistryConfig.from(Settings.empty()
        .with(RegistryConfig.PORT.name(), "0")
        .with(RegistryConfig.WRITER_QUEUE_MAX.name(), Integer.toString(queue))
        .with(RegistryConfig.WRITE_TIMEOUT_MS.name(), Long.toString(timeoutMs)));
  }

  @Test
  void fullWriterQueueRefusesWritesAndTimeoutsAreReported() throws Exception {
    // Goal: with one write held in the store and one queued, the next is refused with 42901; waiting past the timeout gives 50002.
    ControlledStore store = new ControlledStore();
    java.util.concurrent.ExecutorService callers = java.util.concurrent.Executors.newFixedThreadPool(2);
    try (SchemaRegistry registry = new SchemaRegistry(config(1, 60_000), store)) {
      registry.start();
      store.hold.set(true);
      CompletableFuture<Integer> first = CompletableFuture.supplyAsync(
          () -> registry.register("a", SchemaRequest.of(SchemaType.AVRO, "\"int\""), false), callers);
      assertThat(store.appending.await(30, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<Integer> queued = CompletableFuture.supplyAsync(
          () -> registry.register("b", SchemaRequest.of(SchemaType.AVRO, "\"long\""), false), callers);
      org.awaitility.Awaitility.await().atMost(30, TimeUnit.SECONDS).untilAsserted(() ->
          assertThatThrownBy(() -> registry.register("c", SchemaRequest.of(SchemaType.AVRO, "\"string\""), false))
              .isInstanceOfSatisfying(RegistryException.class, e -> assertThat(e.error()).isEqualTo(RegistryError.WRITER_BUSY)));
      store.hold.set(false);
      store.release.countDown();
      assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(1);
      assertThat(queued.get(30, TimeUnit.SECONDS)).isEqualTo(2);
      assertThat(registry.subjects(false, null)).containsExactly("a", "b");
    } finally {
      callers.shutdownNow();
    }

    ControlledStore slow = new ControlledStore();
    try (SchemaRegistry registry = new SchemaRegistry(config(8, 200), slow)) {
      registry.start();
      slow.hold.set(true);
      assertThatThrownBy(() -> registry.register("a", SchemaRequest.of(SchemaType.AVRO, "\"int\""), false))
          .isInstanceOfSatisfying(RegistryException.class, e -> assertThat(e.error()).isEqualTo(RegistryError.OPERATION_TIMEOUT));
      slow.release.countDown();
      org.awaitility.Awaitility.await().atMost(30, TimeUnit.SECONDS).until(() -> registry.appliedOffset() == 1);
      assertThat(registry.versions("a", false)).as("the timed-out write still applied: outcome was unknown, not failed")
          .containsExactly(1);
    }
  }

  @Test
  void failedAppendsReportStoreErrorAndChangeNothing() {
    // Goal: when the log refuses an append the caller gets 50001 and the state is unchanged; later writes work.
    ControlledStore store = new ControlledStore();
    try (SchemaRegistry registry = new SchemaRegistry(config(8, 10_000), store)) {
      registry.start();
      store.fail.set(true);
      assertThatThrownBy(() -> registry.register("a", SchemaRequest.of(SchemaType.AVRO, "\"int\""), false))
          .isInstanceOfSatisfying(RegistryException.class, e -> assertThat(e.error()).isEqualTo(RegistryError.STORE_ERROR));
      assertThat(registry.subjects(true, null)).isEmpty();
      store.fail.set(false);
      assertThat(registry.register("a", SchemaRequest.of(SchemaType.AVRO, "\"int\""), false)).isEqualTo(1);
    }
  }
}
