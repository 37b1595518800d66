package io.tidemark.registry.store;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.RecordBatches;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.utils.Time;

/**
 * A {@link SchemaStore} on a broker partition, normally {@code _schemas}-0: each record is appended
 * as a one-record internal batch (so it lives in the partition's streams and object storage like
 * any topic data) and read back as key/value records. The partition must be open on this broker
 * with its leader epoch; a partition fenced by a newer leader fails appends, which the registry
 * reports as a store error. Thread-safe as {@link PartitionLog} is.
 */
public final class PartitionSchemaStore implements SchemaStore {
  /** The internal topic the registry keeps its log in. */
  public static final String TOPIC = "_schemas";
  private static final int READ_MAX_BYTES = 1024 * 1024;

  private final PartitionLog log;
  private final Time time;
  private final long timeoutMs;

  public PartitionSchemaStore(PartitionLog log, Time time, long timeoutMs) {
    this.log = log;
    this.time = time;
    this.timeoutMs = timeoutMs;
  }

  @Override
  public long append(byte[] key, byte[] value) {
    try {
      return log.append(RecordBatches.internalBatch(time.milliseconds(), java.util.Collections.singletonList(new byte[][] {key, value})))
          .get(timeoutMs, TimeUnit.MILLISECONDS).baseOffset();
    } catch (ExecutionException e) {
      throw new SchemaStoreException("append to " + log.topicPartition() + " failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new SchemaStoreException("append to " + log.topicPartition() + " did not complete within " + timeoutMs
          + " ms; its outcome is unknown until the log is read again", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SchemaStoreException("interrupted appending to " + log.topicPartition(), e);
    }
  }

  @Override
  public List<StoredRecord> read(long fromOffset, int maxRecords) {
    long from = Math.max(fromOffset, log.logStartOffset());
    List<StoredRecord> out = new ArrayList<>();
    while (out.size() < maxRecords && from < log.highWatermark()) {
      PartitionLog.RecordPage page;
      try {
        page = log.readRecords(from, READ_MAX_BYTES).get(timeoutMs, TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        throw new SchemaStoreException("read of " + log.topicPartition() + " at " + from + " failed: " + e.getCause(), e.getCause());
      } catch (TimeoutException e) {
        throw new SchemaStoreException("read of " + log.topicPartition() + " at " + from + " timed out", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SchemaStoreException("interrupted reading " + log.topicPartition(), e);
      }
      long next = page.nextOffset(); // past a damaged range too, so replay goes on after it
      for (KeyValue kv : page.records()) {
        if (out.size() == maxRecords) {
          next = kv.offset();
          break;
        }
        out.add(new StoredRecord(kv.offset(), kv.key(), kv.value()));
      }
      if (next <= from) {
        break;
      }
      from = next;
    }
    return out;
  }

  @Override
  public long endOffset() {
    return log.highWatermark();
  }
}
