package io.tidemark.table.control;

import io.tidemark.broker.partition.PartitionLog;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The control log of a broker in a cluster where {@value ControlLog#TOPIC} can move: every call
 * goes to the partition itself while this broker leads it ({@link PartitionControlLog} over the
 * partition log it has now; a partition that moved away and back is a new log) and, while it does
 * not, to a {@link KafkaControlLog} that follows the leader as any Kafka client does (opened on
 * first use, kept until {@link #close}). Offsets are the partition's, the same on every broker, so
 * a reader's position carries over from one route to the other. A call that races the move fails
 * with the partition's error (closed, not leader) and its caller retries, as after any control
 * topic failure.
 *
 * <p>Thread-safe: the route is chosen per call; the cached routes are guarded by this object.
 */
public final class FollowingControlLog implements ControlLog, AutoCloseable {

  private final Supplier<Optional<PartitionLog>> ledHere;
  private final Supplier<KafkaControlLog> openRemote;
  private final LongSupplier clockMs;
  private final int maxReadBytes;
  private PartitionLog localPartition;
  private PartitionControlLog local;
  private KafkaControlLog remote;
  private boolean closed;

  /**
   * @param ledHere the {@value ControlLog#TOPIC} partition 0's log while this broker leads it, else empty
   * @param openRemote opens the Kafka-protocol control log (called at most once)
   */
  public FollowingControlLog(Supplier<Optional<PartitionLog>> ledHere, Supplier<KafkaControlLog> openRemote,
      LongSupplier clockMs, int maxReadBytes) {
    this.ledHere = ledHere;
    this.openRemote = openRemote;
    this.clockMs = clockMs;
    this.maxReadBytes = maxReadBytes;
  }

  private synchronized ControlLog route() {
    if (closed) {
      throw new IllegalStateException("control log closed");
    }
    Optional<PartitionLog> led = ledHere.get();
    if (led.isPresent()) {
      if (led.get() != localPartition) {
        localPartition = led.get();
        local = new PartitionControlLog(localPartition, clockMs, maxReadBytes);
      }
      return local;
    }
    if (remote == null) {
      remote = openRemote.get();
    }
    return remote;
  }

  @Override
  public CompletableFuture<Long> append(ControlMessage message) {
    try {
      return route().append(message);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public long startOffset() {
    return route().startOffset();
  }

  @Override
  public long endOffset() {
    return route().endOffset();
  }

  @Override
  public CompletableFuture<Page> read(long offset) {
    try {
      return route().read(offset);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletableFuture<Long> trimBefore(long offset) {
    try {
      return route().trimBefore(offset);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public void close() {
    KafkaControlLog opened;
    synchronized (this) {
      closed = true;
      opened = remote;
      remote = null;
    }
    if (opened != null) {
      opened.close();
    }
  }
}
