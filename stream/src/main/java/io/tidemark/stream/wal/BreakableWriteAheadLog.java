package io.tidemark.stream.wal;

import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Fault injection around any {@link WriteAheadLog} (tests and drills, beside
 * {@code FaultInjectingObjectStorage}): once {@link #breakNow()} is called, every later append
 * fails with a {@link WalException} and {@link #healthy()} is false, exactly as a log whose
 * {@code fsync} failed behaves; appends accepted before keep their outcome. Recovery, trims and close
 * go to the delegate unchanged. Thread-safe as the delegate is.
 */
public final class BreakableWriteAheadLog implements WriteAheadLog {

  private final WriteAheadLog delegate;
  private final AtomicBoolean broken = new AtomicBoolean();

  public BreakableWriteAheadLog(WriteAheadLog delegate) {
    this.delegate = delegate;
  }

  /** From now on every append fails and the log reports itself unhealthy. */
  public void breakNow() {
    broken.set(true);
  }

  @Override
  public Iterator<WalRecord> recover() {
    return delegate.recover();
  }

  @Override
  public void start() {
    delegate.start();
  }

  @Override
  public CompletableFuture<Long> append(ByteBuffer record) {
    if (broken.get()) {
      return CompletableFuture.failedFuture(new WalException("injected WAL I/O error: the log is broken"));
    }
    return delegate.append(record);
  }

  @Override
  public CompletableFuture<Long> append(ByteBuffer head, ByteBuffer body) {
    if (broken.get()) {
      return CompletableFuture.failedFuture(new WalException("injected WAL I/O error: the log is broken"));
    }
    return delegate.append(head, body);
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
    return !broken.get() && delegate.healthy();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
