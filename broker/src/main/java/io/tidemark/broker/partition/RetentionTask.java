package io.tidemark.broker.partition;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enforces retention.ms and retention.bytes: every interval, each open partition drops its
 * oldest batches that are expired or beyond the size limit (trimming its data stream, whose
 * objects are then deleted by the storage engine). One run at a time, partitions one after
 * another, each looking at a bounded amount of data; owns one scheduler thread.
 */
public final class RetentionTask implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RetentionTask.class);
  private static final int MAX_SCAN_BYTES = 16 * 1024 * 1024;

  /** A topic partition's retention limits in ms and bytes (-1: unlimited). */
  public record Limits(long retentionMs, long retentionBytes) {}

  private final Partitions partitions;
  private final Function<TopicPartition, Limits> limits;
  private final Time time;
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "retention");
    t.setDaemon(true);
    return t;
  });

  public RetentionTask(Partitions partitions, Function<TopicPartition, Limits> limits, Time time) {
    this.partitions = partitions;
    this.limits = limits;
    this.time = time;
  }

  public void start(long intervalMs) {
    scheduler.scheduleWithFixedDelay(this::runOnce, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
  }

  /** One pass over every open partition; waits for it to finish. */
  public void runOnce() {
    for (PartitionLog p : partitions.all()) {
      Limits l = limits.apply(p.topicPartition());
      if (l == null) {
        continue;
      }
      try {
        p.enforceRetention(time.milliseconds(), l.retentionMs(), l.retentionBytes(), MAX_SCAN_BYTES).get(1, TimeUnit.MINUTES);
      } catch (Exception e) {
        log.warn("retention of {} failed: {}", p.topicPartition(), e.toString());
      }
    }
  }


  @Override
  public void close() {
    scheduler.shutdownNow();
  }
}
