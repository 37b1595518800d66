package io.tidemark.table.sync;

import io.tidemark.table.commit.TableCommitter;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.table.convert.ColumnBinder;
import io.tidemark.table.convert.ConversionFailedException;
import io.tidemark.table.convert.FieldValue;
import io.tidemark.table.convert.InvalidRecordException;
import io.tidemark.table.convert.RecordConverter;
import io.tidemark.table.source.PartitionRecordSource;
import io.tidemark.table.writer.UpsertWriter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lands the dead letters of an upsert table that now convert, by the rule Kafka's own log compaction follows:
 * <b>within a partition, the change at the higher offset wins</b>. A dead-letter record at offset {@code o} of
 * partition {@code p} is applied as the change it is (an upsert of its id's row, or a delete of its id) only if no
 * record of {@code p} after {@code o} that reached the table changed the same id; otherwise it is
 * <em>superseded</em>: it leaves the dead-letter table and the table keeps the later state, a delete included (a
 * later tombstone keeps the id deleted). Of several dead letters of one id, only the last can land.
 *
 * <p>Which later records changed the id is read from the partition's log (the table does not keep deletes once
 * maintenance folds them into the data): the records of {@code p} from {@code o + 1} up to the table's committed
 * offset of {@code p} are converted with the current settings, and their ids compared; records that do not convert
 * are no change. A dead letter whose later records cannot all be read here is <em>kept</em> in the dead-letter
 * table for a later run: its partition is not led by this node, retention removed some of them, or the scan bound
 * ({@code maxScanBytes} per partition) was reached.
 *
 * <p>Across partitions Kafka has no order; a row of the same id that came from another partition is replaced (the
 * latest commit wins, as between the partitions of one round). Ids that stay in one partition (keyed producers,
 * Debezium) never meet this.
 *
 * <p>The landing commit is one row delta (data and equality/position deletes or deletion vectors, as a round
 * writes them) validated against the snapshot the scan read: if a round committed meanwhile, the records it added
 * are scanned too and the commit is tried again (the files are rewritten only when a dead letter became
 * superseded), at most {@link #COMMIT_ATTEMPTS} times. Single-threaded; one instance per run.
 */
final class UpsertDeadLetters {

  private static final Logger log = LoggerFactory.getLogger(UpsertDeadLetters.class);
  static final int COMMIT_ATTEMPTS = 10;
  private static final long READ_WAIT_SECONDS = 60;

  /** What became of one dead-letter record. */
  enum Outcome { LANDED, SUPERSEDED, STILL_FAILING, KEPT }

  /** A dead letter that converts and may land: its change and id. */
  private record Candidate(int partition, long offset, List<Object> id, RecordConverter.Change change,
      Map<String, FieldValue> row) {}

  private final TableSync sync;
  private final Table table;
  private final Map<Integer, PartitionRecordSource> sources;
  private final long maxScanBytes;
  private final TableTopicConfig.Upsert upsert;
  /** Outcome per partition and offset of every dead letter handled. */
  private final Map<Integer, Map<Long, Outcome>> outcomes = new TreeMap<>();
  /** Per partition: the candidates that may still land, by id. */
  private final Map<Integer, Map<List<Object>, Candidate>> candidates = new TreeMap<>();
  /** Per partition: the log is scanned up to here (exclusive) for later changes of the candidates. */
  private final Map<Integer, Long> scannedTo = new HashMap<>();

  UpsertDeadLetters(TableSync sync, Map<Integer, PartitionRecordSource> sources, long maxScanBytes) {
    this.sync = sync;
    this.table = sync.table();
    this.sources = sources;
    this.maxScanBytes = maxScanBytes;
    this.upsert = sync.config().upsert();
  }

  /**
   * Lands what may land of {@code records} (per partition, as read from the dead-letter table); the outcome of each,
   * by partition and offset. Throws, with nothing changed in the table, when conversion fails for a reason that is
   * not the record's (a registry out of reach) or the commit kept conflicting.
   */
  Map<Integer, Map<Long, Outcome>> run(Map<Integer, List<Record>> records, String runId) {
    Snapshot base = refreshed();
    Map<Integer, Long> committed = new TableCommitter(table).committed().nextOffsets();
    for (Map.Entry<Integer, List<Record>> e : records.entrySet()) {
      classify(e.getKey(), e.getValue());
    }
    for (Integer p : candidates.keySet()) {
      scan(p, candidates.get(p).values().stream().mapToLong(Candidate::offset).min().orElse(Long.MAX_VALUE) + 1,
          committed.get(p));
    }
    for (int attempt = 1; ; attempt++) {
      Written written = write(runId + "-" + attempt);
      if (written.empty()) {
        break;
      }
      try {
        commit(written, base, runId);
        candidates.values().forEach(c -> c.values().forEach(x -> outcome(x.partition(), x.offset(), Outcome.LANDED)));
        break;
      } catch (ValidationException conflict) {
        written.delete(table);
        if (attempt >= COMMIT_ATTEMPTS) {
          throw new IllegalStateException("reprocessing stopped, nothing changed: the table's commits kept conflicting with"
              + " it (" + attempt + " attempts); retry later", conflict);
        }
        log.info("{}: dead-letter run {} met a commit of the table; scanning what it added (attempt {})", table.name(),
            runId, attempt);
        base = refreshed();
        Map<Integer, Long> now = new TableCommitter(table).committed().nextOffsets();
        for (Integer p : candidates.keySet()) {
          scan(p, scannedTo.getOrDefault(p, Long.MAX_VALUE), now.get(p));
        }
      }
    }
    return outcomes;
  }

  private Snapshot refreshed() {
    table.refresh();
    return table.currentSnapshot();
  }

  private void outcome(int partition, long offset, Outcome o) {
    outcomes.computeIfAbsent(partition, p -> new TreeMap<>()).put(offset, o);
  }

  /** Converts the dead letters of one partition; those that convert become candidates, the last one per id. */
  private void classify(int partition, List<Record> records) {
    Map<List<Object>, Candidate> byId = new HashMap<>();
    List<Record> sorted = new ArrayList<>(records);
    sorted.sort(Comparator.comparingLong(Record::offset));
    for (Record r : sorted) {
      try {
        RecordConverter.Change change = sync.change(partition, r);
        if (change.kind() == RecordConverter.ChangeKind.IGNORE) {
          outcome(partition, r.offset(), Outcome.LANDED); // converts to no change: nothing to land
          continue;
        }
        Map<String, FieldValue> row = UpsertRows.checked(change.row(), upsert,
            change.kind() == RecordConverter.ChangeKind.DELETE);
        List<Object> id = UpsertRows.idKey(row, upsert);
        Candidate earlier = byId.put(id, new Candidate(partition, r.offset(), id, change, row));
        if (earlier != null) {
          outcome(partition, earlier.offset(), Outcome.SUPERSEDED);
        }
      } catch (InvalidRecordException e) {
        outcome(partition, r.offset(), Outcome.STILL_FAILING);
      } catch (ConversionFailedException e) {
        throw new IllegalStateException("reprocessing stopped, nothing changed: " + e.getMessage(), e);
      }
    }
    if (!byId.isEmpty()) {
      candidates.put(partition, byId);
    }
  }

  /**
   * Reads partition {@code p} over [{@code from}, {@code to}) and marks the candidates an id's later change
   * supersedes; when the range cannot be read in full, every candidate left that needed it is kept.
   */
  private void scan(int p, long from, Long to) {
    Map<List<Object>, Candidate> byId = candidates.get(p);
    if (to == null || from >= to || byId.isEmpty()) {
      scannedTo.merge(p, to == null ? from : Math.max(from, to), Math::max);
      return;
    }
    PartitionRecordSource source = sources.get(p);
    String unreadable = null;
    long offset = from;
    if (source == null) {
      unreadable = "partition " + p + " is not led by this node";
    } else if (source.logStartOffset() > from) {
      unreadable = "offsets " + from + ".." + (source.logStartOffset() - 1) + " of partition " + p + " are gone (retention)";
    } else {
      long bytes = 0;
      while (offset < to && unreadable == null) {
        if (bytes >= maxScanBytes) {
          unreadable = "the scan of partition " + p + " reached its bound of " + maxScanBytes + " bytes at offset " + offset;
          break;
        }
        PartitionRecordSource.Batches read = read(source, offset, (int) Math.min(1 << 20, maxScanBytes - bytes));
        if (read == null || read.batches().isEmpty()) {
          unreadable = "partition " + p + " did not answer a read at offset " + offset;
          break;
        }
        long before = offset;
        for (ByteBuffer buf : read.batches()) {
          bytes += buf.remaining();
          for (RecordBatch batch : MemoryRecords.readableRecords(buf.duplicate()).batches()) {
            if (batch.lastOffset() < offset) {
              continue;
            }
            if (!batch.isControlBatch()) {
              for (Record r : batch) {
                if (r.offset() >= offset && r.offset() < to) {
                  supersede(p, byId, r);
                }
              }
            }
            offset = Math.max(offset, batch.nextOffset());
          }
        }
        if (offset == before) {
          unreadable = "partition " + p + " returned nothing new at offset " + offset;
        }
      }
    }
    if (unreadable != null) {
      // every candidate left needs the records up to the committed offset: unverified, it waits for a later run
      log.info("{}: dead letters of partition {} stay for a later run: {}", table.name(), p, unreadable);
      byId.values().removeIf(c -> {
        boolean needed = c.offset() + 1 < to;
        if (needed) {
          outcome(p, c.offset(), Outcome.KEPT);
        }
        return needed;
      });
    }
    scannedTo.merge(p, Math.min(offset, to), Math::max);
  }

  /** A later record of the candidates' partition: a candidate of the same id at a lower offset is superseded. */
  private void supersede(int p, Map<List<Object>, Candidate> byId, Record r) {
    try {
      RecordConverter.Change change = sync.change(p, r);
      if (change.kind() == RecordConverter.ChangeKind.IGNORE) {
        return;
      }
      List<Object> id = UpsertRows.idKey(UpsertRows.checked(change.row(), upsert,
          change.kind() == RecordConverter.ChangeKind.DELETE), upsert);
      Candidate c = byId.get(id);
      if (c != null && c.offset() < r.offset()) {
        byId.remove(id);
        outcome(p, c.offset(), Outcome.SUPERSEDED);
      }
    } catch (InvalidRecordException e) {
      // a record that does not convert changed nothing in the table
    } catch (ConversionFailedException e) {
      throw new IllegalStateException("reprocessing stopped, nothing changed: " + e.getMessage(), e);
    }
  }

  private static PartitionRecordSource.Batches read(PartitionRecordSource source, long offset, int maxBytes) {
    try {
      return source.read(offset, Math.max(1, maxBytes)).get(READ_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted reading the partition", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("reading the partition failed: " + e.getCause(), e.getCause());
    }
  }

  /** The files of one attempt. */
  private record Written(List<DataFile> data, List<DeleteFile> deletes) {
    boolean empty() {
      return data.isEmpty() && deletes.isEmpty();
    }

    /** Best effort: files of a commit that did not happen (orphan removal takes what is left). */
    void delete(Table table) {
      List<ContentFile<?>> all = new ArrayList<>(data);
      all.addAll(deletes);
      for (ContentFile<?> f : all) {
        try {
          table.io().deleteFile(f.location());
        } catch (RuntimeException ignored) {
          // left for orphan removal
        }
      }
    }
  }

  /** Writes the candidates, partition by partition in offset order, as one round would. */
  private Written write(String filePrefix) {
    List<DataFile> data = new ArrayList<>();
    List<DeleteFile> deletes = new ArrayList<>();
    List<UpsertWriter> writers = new ArrayList<>();
    try {
      for (Map.Entry<Integer, Map<List<Object>, Candidate>> e : candidates.entrySet()) {
        List<Candidate> ordered = new ArrayList<>(e.getValue().values());
        ordered.sort(Comparator.comparingLong(Candidate::offset));
        UpsertWriter writer = null;
        for (Candidate c : ordered) {
          try {
            Schema schema = sync.fitTable(c.row());
            if (writer == null) {
              writer = new UpsertWriter(table, schema, e.getKey(), filePrefix, sync.targetFileBytes(), UpsertRows.idColumns(upsert));
              writers.add(writer);
            }
            writer.useSchema(schema);
            org.apache.iceberg.data.GenericRecord bound = ColumnBinder.bind(schema, c.row());
            if (c.change().kind() == RecordConverter.ChangeKind.DELETE) {
              writer.delete(bound);
            } else {
              writer.upsert(bound);
            }
          } catch (InvalidRecordException bad) {
            e.getValue().remove(c.id());
            outcome(c.partition(), c.offset(), Outcome.STILL_FAILING);
          }
        }
        if (writer != null) {
          UpsertWriter.Drained d = writer.drain();
          data.addAll(d.dataFiles());
          deletes.addAll(d.deleteFiles());
        }
      }
      return new Written(data, deletes);
    } catch (RuntimeException ex) {
      writers.forEach(UpsertWriter::abort);
      throw ex;
    }
  }

  /** One row delta, refused if a commit after {@code base} added data or delete files. */
  private void commit(Written w, Snapshot base, String runId) {
    RowDelta delta = table.newRowDelta();
    w.data().forEach(delta::addRows);
    w.deletes().forEach(delta::addDeletes);
    if (base != null) {
      delta.validateFromSnapshot(base.snapshotId());
    }
    delta.conflictDetectionFilter(Expressions.alwaysTrue())
        .validateNoConflictingDataFiles()
        .validateNoConflictingDeleteFiles()
        .set(DeadLetterReprocessor.RUN_ID, runId)
        .commit();
  }
}
