package io.tidemark.server.storage;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tidemark.stream.wal.WalFullException;
import io.tidemark.stream.wal.WalRecord;
import io.tidemark.stream.wal.WriteAheadLog;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Meters around any {@link WriteAheadLog}: append latency until durable
 * ({@code tidemark_wal_append_seconds}, with a histogram for p50/p99 in Prometheus), appended
 * bytes, failed appends, appends refused while its queue was full, and the records found by
 * recovery. Also reports whether the log is open (recovered and started, not closed) for the
 * readiness check. Thread-safe as the delegate is.
 */
final class MeteredWriteAheadLog implements WriteAheadLog {

  private final WriteAheadLog delegate;
  private final Timer appendLatency;
  private final Counter appendedBytes;
  private final Counter failedAppends;
  private final Counter refusedAppends;
  private final Counter recoveredRecords;
  private volatile boolean open;

  MeteredWriteAheadLog(WriteAheadLog delegate, MeterRegistry meters) {
    this.delegate = delegate;
    this.appendLatency = Timer.builder("tidemark.wal.append").description("WAL append latency until durable")
        .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
        .maximumExpectedValue(Duration.ofSeconds(10)).register(meters);
    this.appendedBytes = Counter.builder("tidemark.wal.appended.bytes").description("Bytes made durable in the WAL")
        .baseUnit("bytes").register(meters);
    this.failedAppends = Counter.builder("tidemark.wal.append.failures").description("WAL appends that failed")
        .register(meters);
    this.refusedAppends = Counter.builder("tidemark.wal.append.refusals")
        .description("Appends the WAL refused at once because its queue was full (backpressure; the engine offers"
            + " them again)").register(meters);
    this.recoveredRecords = Counter.builder("tidemark.wal.recovered.records")
        .description("Records read back by WAL recovery at start-up").register(meters);
  }

  boolean open() {
    return open;
  }

  @Override
  public Iterator<WalRecord> recover() {
    Iterator<WalRecord> records = delegate.recover();
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return records.hasNext();
      }

      @Override
      public WalRecord next() {
        WalRecord record = records.next();
        recoveredRecords.increment();
        return record;
      }
    };
  }

  @Override
  public void start() {
    delegate.start();
    open = true;
  }

  @Override
  public CompletableFuture<Long> append(ByteBuffer record) {
    return metered(record.remaining(), delegate.append(record));
  }

  /** Forwarded as two parts, so that the delegate writes them without joining them first. */
  @Override
  public CompletableFuture<Long> append(ByteBuffer head, ByteBuffer body) {
    return metered(head.remaining() + body.remaining(), delegate.append(head, body));
  }

  private CompletableFuture<Long> metered(int size, CompletableFuture<Long> appended) {
    long start = System.nanoTime();
    return appended.whenComplete((offset, err) -> {
      if (err == null) {
        appendLatency.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        appendedBytes.increment(size);
      } else if (unwrap(err) instanceof WalFullException) { // a refusal is backpressure, not a failure
        refusedAppends.increment();
      } else {
        failedAppends.increment();
      }
    });
  }

  private static Throwable unwrap(Throwable error) {
    return error instanceof java.util.concurrent.CompletionException && error.getCause() != null ? error.getCause() : error;
  }

  @Override
  public CompletableFuture<Void> trim(long walOffset) {
    return delegate.trim(walOffset);
  }

  @Override
  public boolean trimWanted() {
    return delegate.trimWanted();
  }

  @Override
  public boolean healthy() {
    return delegate.healthy();
  }

  @Override
  public void close() {
    open = false;
    delegate.close();
  }
}
