package io.tidemark.table.sync;

import io.tidemark.table.convert.KafkaColumns;
import io.tidemark.table.source.PartitionRecordSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;

/**
 * Sends the rows of a table topic's dead-letter table {@code <table>_dlq} back through conversion, after the schema
 * or the data was fixed (a schema registered, a config changed, a row's value corrected in the DLQ table): each
 * dead-letter row becomes its Kafka record again (partition, offset, timestamp, key, value, headers as stored), is
 * converted with the topic's current settings by a {@link TableSync} of its own (no partition sources: it never
 * reads the log nor moves the table's offsets), and the rows that now convert land in the table; then they leave
 * the dead-letter table. Rows that still fail stay there, with their old reason.
 *
 * <p>Exactly once without a two-table transaction: the table append comes first and carries
 * {@link #RUN_ID} in its summary but no offsets ({@code TableCommitter} skips such snapshots); the dead-letter files
 * that held the landed rows are then rewritten without them in one rewrite. A crash between the two leaves rows in
 * both; the next run finds their (partition, offset) already in the table, does not add them again and only removes
 * them from the dead-letter table. Two runs at once cannot both remove a file: the second rewrite fails
 * validation and changes nothing. Bounded by {@code maxRows} per run (a run reads whole dead-letter files).
 * Single-threaded: one run at a time per instance.
 *
 * <p>Upsert tables: a dead letter lands only while it is still its id's latest change in its partition; one that a
 * later record of the partition changed (updated or deleted) is <em>superseded</em> and leaves the dead-letter table
 * without touching the table; one whose later records cannot be read here is <em>kept</em> for a later run. See
 * {@link UpsertDeadLetters} for the rule and the commit.
 */
public final class DeadLetterReprocessor {

  /** Snapshot summary key of the table append and the dead-letter overwrite of one run. */
  public static final String RUN_ID = "tidemark.dlq-reprocess-id";

  /** Bytes of a partition's log read per run to find later changes of an upsert table's dead letters. */
  public static final long DEFAULT_MAX_SCAN_BYTES = 4L << 30;

  /**
   * What one run did: rows landed now, rows found already landed, rows still failing, dead-letter rows removed;
   * for upsert tables also rows superseded by a later change of their id (removed, not landed) and rows kept for a
   * later run (their partition's later records could not be read here).
   */
  public record Result(String runId, long reprocessed, long alreadyInTable, long stillFailing, long removed,
      long superseded, long kept) {}

  private final TableSync sync;
  private final Catalog catalog;
  private final Supplier<String> runIds;
  private final Map<Integer, PartitionRecordSource> sources;
  private final long maxScanBytes;

  /** @param sync a sync over no partition sources, with the topic's current settings */
  public DeadLetterReprocessor(TableSync sync, Catalog catalog, Supplier<String> runIds) {
    this(sync, catalog, runIds, Map.of(), DEFAULT_MAX_SCAN_BYTES);
  }

  /**
   * @param sources the topic's partitions this node can read (an upsert table's dead letters of other partitions
   *     are kept)
   * @param maxScanBytes bytes of one partition read per run to find later changes of an upsert table's ids
   */
  public DeadLetterReprocessor(TableSync sync, Catalog catalog, Supplier<String> runIds,
      Map<Integer, PartitionRecordSource> sources, long maxScanBytes) {
    this.sync = sync;
    this.catalog = catalog;
    this.runIds = runIds;
    this.sources = Map.copyOf(sources);
    this.maxScanBytes = maxScanBytes;
  }

  /** One run over at most {@code maxRows} dead-letter rows (whole files, in the table's file order). */
  public Result run(int maxRows) {
    String runId = runIds.get();
    if (!catalog.tableExists(sync.dlqIdentifier())) {
      return new Result(runId, 0, 0, 0, 0, 0, 0);
    }
    Table dlq = catalog.loadTable(sync.dlqIdentifier());
    Map<DataFile, List<GenericRecord>> byFile = readDeadLetters(dlq, maxRows);
    Map<Integer, List<Record>> byPartition = new TreeMap<>();
    byFile.values().forEach(rows -> rows.forEach(r -> byPartition.computeIfAbsent(
        (Integer) r.getField(KafkaColumns.PARTITION), p -> new ArrayList<>()).add(kafkaRecord(r))));

    Table table = sync.table();
    Set<Long> landedKeys = new HashSet<>();
    Set<Long> stillFailingKeys = new HashSet<>();
    List<DataFile> files = new ArrayList<>();
    long reprocessed = 0;
    long already = 0;
    Map<Integer, List<Record>> todoByPartition = new TreeMap<>();
    for (Map.Entry<Integer, List<Record>> e : byPartition.entrySet()) {
      int partition = e.getKey();
      Set<Long> inTable = offsetsInTable(table, partition, e.getValue());
      already += inTable.size();
      inTable.forEach(o -> landedKeys.add(key(partition, o)));
      todoByPartition.put(partition, e.getValue().stream().filter(r -> !inTable.contains(r.offset())).toList());
    }
    if (sync.config().upsert().enabled()) {
      return upsertRun(runId, dlq, byFile, todoByPartition, landedKeys, already);
    }
    for (Map.Entry<Integer, List<Record>> e : todoByPartition.entrySet()) {
      int partition = e.getKey();
      List<Record> todo = e.getValue();
      TableSync.Reconverted converted = sync.reconvert(partition, todo, runId);
      files.addAll(converted.files());
      reprocessed += converted.rows();
      for (Record r : todo) {
        (converted.stillFailing().containsKey(r.offset()) ? stillFailingKeys : landedKeys).add(key(partition, r.offset()));
      }
    }
    if (!files.isEmpty()) {
      table.refresh();
      AppendFiles append = table.newAppend();
      files.forEach(append::appendFile);
      append.set(RUN_ID, runId);
      append.commit();
    }
    long removed = removeFromDeadLetters(dlq, byFile, landedKeys, runId);
    return new Result(runId, reprocessed, already, stillFailingKeys.size(), removed, 0, 0);
  }

  /** The run of an upsert table: lands what is still the latest change of its id, then removes what is settled. */
  private Result upsertRun(String runId, Table dlq, Map<DataFile, List<GenericRecord>> byFile,
      Map<Integer, List<Record>> todo, Set<Long> settledKeys, long already) {
    Map<Integer, Map<Long, UpsertDeadLetters.Outcome>> outcomes =
        new UpsertDeadLetters(sync, sources, maxScanBytes).run(todo, runId);
    Map<UpsertDeadLetters.Outcome, Long> counts = new java.util.EnumMap<>(UpsertDeadLetters.Outcome.class);
    outcomes.forEach((partition, byOffset) -> byOffset.forEach((offset, outcome) -> {
      counts.merge(outcome, 1L, Long::sum);
      if (outcome == UpsertDeadLetters.Outcome.LANDED || outcome == UpsertDeadLetters.Outcome.SUPERSEDED) {
        settledKeys.add(key(partition, offset));
      }
    }));
    long removed = removeFromDeadLetters(dlq, byFile, settledKeys, runId);
    return new Result(runId, counts.getOrDefault(UpsertDeadLetters.Outcome.LANDED, 0L), already,
        counts.getOrDefault(UpsertDeadLetters.Outcome.STILL_FAILING, 0L), removed,
        counts.getOrDefault(UpsertDeadLetters.Outcome.SUPERSEDED, 0L), counts.getOrDefault(UpsertDeadLetters.Outcome.KEPT, 0L));
  }

  private static long key(int partition, long offset) {
    return ((long) partition << 48) ^ offset; // offsets stay far below 2^48
  }

  private static Map<DataFile, List<GenericRecord>> readDeadLetters(Table dlq, int maxRows) {
    Map<DataFile, List<GenericRecord>> out = new java.util.LinkedHashMap<>();
    long rows = 0;
    try (CloseableIterable<FileScanTask> tasks = dlq.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        if (rows >= maxRows) {
          break;
        }
        List<GenericRecord> fileRows = new ArrayList<>();
        try (CloseableIterable<org.apache.iceberg.data.Record> reader = Parquet.read(dlq.io().newInputFile(task.file().location()))
            .project(dlq.schema())
            .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(dlq.schema(), fileSchema))
            .build()) {
          for (org.apache.iceberg.data.Record r : reader) {
            fileRows.add((GenericRecord) r.copy());
          }
        }
        out.put(task.file(), fileRows);
        rows += fileRows.size();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** The dead-letter row as the Kafka record it was, at its own offset. */
  private static Record kafkaRecord(GenericRecord row) {
    long offset = (Long) row.getField(KafkaColumns.OFFSET);
    long timestamp = ((OffsetDateTime) row.getField(KafkaColumns.TIMESTAMP)).toInstant().toEpochMilli();
    List<Header> headers = new ArrayList<>();
    @SuppressWarnings("unchecked")
    Map<String, ByteBuffer> stored = (Map<String, ByteBuffer>) row.getField(KafkaColumns.HEADERS);
    if (stored != null) {
      stored.forEach((k, v) -> headers.add(new RecordHeader(k, v == null ? null : bytes(v))));
    }
    SimpleRecord simple = new SimpleRecord(timestamp, bytes((ByteBuffer) row.getField(KafkaColumns.KEY)),
        bytes((ByteBuffer) row.getField(KafkaColumns.VALUE)), headers.toArray(new Header[0]));
    MemoryRecords batch = MemoryRecords.withRecords(offset, Compression.NONE, simple);
    return batch.records().iterator().next();
  }

  private static byte[] bytes(ByteBuffer b) {
    if (b == null) {
      return null;
    }
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  /** The offsets among {@code records} that the table already holds for {@code partition}. */
  private static Set<Long> offsetsInTable(Table table, int partition, List<Record> records) {
    Set<Long> wanted = new HashSet<>();
    records.forEach(r -> wanted.add(r.offset()));
    Set<Long> found = new HashSet<>();
    if (wanted.isEmpty() || table.currentSnapshot() == null) {
      return found;
    }
    try (CloseableIterable<org.apache.iceberg.data.Record> rows = IcebergGenerics.read(table)
        .select(KafkaColumns.PARTITION, KafkaColumns.OFFSET)
        .where(Expressions.and(Expressions.equal(KafkaColumns.PARTITION, partition),
            Expressions.in(KafkaColumns.OFFSET, wanted.toArray())))
        .build()) {
      for (org.apache.iceberg.data.Record r : rows) {
        Long offset = (Long) r.getField(KafkaColumns.OFFSET);
        if (Integer.valueOf(partition).equals(r.getField(KafkaColumns.PARTITION)) && wanted.contains(offset)) {
          found.add(offset);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }

  /** Rewrites each dead-letter file holding a landed row without those rows, in one overwrite; the rows removed. */
  private static long removeFromDeadLetters(Table dlq, Map<DataFile, List<GenericRecord>> byFile, Set<Long> landed,
      String runId) {
    RewriteFiles overwrite = dlq.newRewrite(); // fails if a file to remove is gone (another run took it)
    List<io.tidemark.table.writer.TableWriter> writers = new ArrayList<>();
    long removed = 0;
    try {
      for (Map.Entry<DataFile, List<GenericRecord>> e : byFile.entrySet()) {
        List<GenericRecord> kept = new ArrayList<>();
        for (GenericRecord r : e.getValue()) {
          if (!landed.contains(key((Integer) r.getField(KafkaColumns.PARTITION), (Long) r.getField(KafkaColumns.OFFSET)))) {
            kept.add(r);
          }
        }
        if (kept.size() == e.getValue().size()) {
          continue;
        }
        removed += e.getValue().size() - kept.size();
        overwrite.deleteFile(e.getKey());
        if (!kept.isEmpty()) {
          io.tidemark.table.writer.TableWriter writer = new io.tidemark.table.writer.TableWriter(dlq, dlq.schema(),
              (Integer) kept.get(0).getField(KafkaColumns.PARTITION), runId, Long.MAX_VALUE);
          writers.add(writer);
          kept.forEach(writer::write);
          writer.drain().forEach(overwrite::addFile);
        }
      }
      if (removed > 0) {
        overwrite.set(RUN_ID, runId);
        overwrite.commit();
      }
      return removed;
    } catch (RuntimeException e) {
      writers.forEach(io.tidemark.table.writer.TableWriter::abort);
      throw e;
    }
  }
}
