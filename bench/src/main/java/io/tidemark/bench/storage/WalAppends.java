package io.tidemark.bench.storage;

import io.tidemark.stream.wal.WriteAheadLog;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Load generators for a {@link WriteAheadLog}: a closed loop (N appenders, each waiting for its
 * append to be durable before the next, as producers with one request in flight do) and an open
 * loop (appends sent at a fixed rate whatever the log does, latency measured from the intended
 * send time so that a stalled log is not hidden by the generator slowing down). Both keep the log
 * from filling by trimming continuously behind the durable appends (the engine trims after each
 * upload, so the WAL is measured here without upload pauses).
 */
final class WalAppends {

  private final WriteAheadLog wal;
  private final AtomicLong highestDurable = new AtomicLong(-1);
  private final AtomicLong completions = new AtomicLong();
  private final AtomicBoolean trimming = new AtomicBoolean();

  WalAppends(WriteAheadLog wal) {
    this.wal = wal;
  }

  /** {@code appenders} threads appending {@code recordBytes} each; measures after {@code warmupNanos}. */
  Measurement closedLoop(int recordBytes, int appenders, long warmupNanos, long durationNanos) throws InterruptedException {
    byte[] record = randomBytes(recordBytes);
    long[] window = new long[2]; // measure start, measure end: set before the appenders are released
    CountDownLatch ready = new CountDownLatch(appenders);
    CountDownLatch go = new CountDownLatch(1);
    LatencyRecorder latencies = new LatencyRecorder(1 << 21);
    AtomicLong bytes = new AtomicLong();
    AtomicLong ops = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int i = 0; i < appenders; i++) {
      threads.add(Thread.ofPlatform().name("appender-" + i).start(() -> {
        try {
          ready.countDown();
          go.await();
          long measureStart = window[0];
          long measureEnd = window[1];
          while (true) {
            long before = System.nanoTime();
            if (before >= measureEnd) {
              return;
            }
            long offset = wal.append(ByteBuffer.wrap(record).asReadOnlyBuffer()).join();
            long after = System.nanoTime();
            durable(offset);
            if (before >= measureStart && after <= measureEnd) {
              latencies.record(after - before);
              bytes.addAndGet(recordBytes);
              ops.incrementAndGet();
            }
          }
        } catch (Throwable t) {
          failures.add(t);
        }
      }));
    }
    // Start the clock only when every appender thread is running: thread start-up is not WAL time.
    ready.await();
    window[0] = System.nanoTime() + warmupNanos;
    window[1] = window[0] + durationNanos;
    go.countDown();
    for (Thread t : threads) {
      t.join();
    }
    if (!failures.isEmpty()) {
      throw new IllegalStateException("WAL appends failed: " + failures.get(0), failures.get(0));
    }
    double seconds = durationNanos / 1e9;
    return new Measurement(bytes.get() / seconds, ops.get() / seconds, latencies.percentileMicros(0.50),
        latencies.percentileMicros(0.99));
  }

  /**
   * Appends {@code recordBytes} at {@code appendsPerSecond} for {@code durationNanos}, at most
   * {@code maxInFlight} outstanding (beyond that the sender waits, and the wait counts as latency).
   */
  Measurement openLoop(int recordBytes, double appendsPerSecond, long durationNanos, int maxInFlight)
      throws InterruptedException {
    byte[] record = randomBytes(recordBytes);
    LatencyRecorder latencies = new LatencyRecorder(1 << 21);
    Semaphore inFlight = new Semaphore(maxInFlight);
    AtomicLong bytes = new AtomicLong();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    long intervalNanos = (long) (1e9 / appendsPerSecond);
    long start = System.nanoTime();
    long end = start + durationNanos;
    long sent = 0;
    for (long intended = start; intended < end; intended = start + sent * intervalNanos) {
      long wait = intended - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
      }
      inFlight.acquire();
      long scheduled = intended;
      CompletableFuture<Long> append = wal.append(ByteBuffer.wrap(record).asReadOnlyBuffer());
      append.whenComplete((offset, err) -> {
        inFlight.release();
        if (err != null) {
          failures.add(err);
          return;
        }
        latencies.record(System.nanoTime() - scheduled);
        bytes.addAndGet(recordBytes);
        durable(offset);
      });
      sent++;
    }
    if (!inFlight.tryAcquire(maxInFlight, 60, TimeUnit.SECONDS)) {
      throw new IllegalStateException("WAL appends did not complete within 60 s");
    }
    if (!failures.isEmpty()) {
      throw new IllegalStateException("WAL appends failed: " + failures.get(0), failures.get(0));
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Measurement(bytes.get() / seconds, latencies.count() / seconds, latencies.percentileMicros(0.50),
        latencies.percentileMicros(0.99));
  }

  /**
   * Trims behind the durable appends, one trim in flight at a time: as soon as one completes, the
   * next durable append starts another, so space is freed at whatever rate the log trims.
   */
  private void durable(long walOffset) {
    highestDurable.accumulateAndGet(walOffset, Math::max);
    completions.incrementAndGet();
    if (trimming.compareAndSet(false, true)) {
      wal.trim(highestDurable.get()).whenComplete((v, err) -> trimming.set(false));
    }
  }

  private static byte[] randomBytes(int size) {
    byte[] bytes = new byte[size];
    new SplittableRandom(size).nextBytes(bytes);
    return bytes;
  }
}
