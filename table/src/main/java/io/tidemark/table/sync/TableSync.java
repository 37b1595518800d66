package io.tidemark.table.sync;

import io.tidemark.table.commit.TableCommitter;
import io.tidemark.table.config.TableTopicConfig;
import io.tidemark.broker.partition.DamagedRangeException;
import io.tidemark.table.config.TableTopicConfig.ErrorTolerance;
import io.tidemark.table.convert.AvroSchemaSource;
import io.tidemark.table.convert.ColumnBinder;
import io.tidemark.table.convert.ConversionFailedException;
import io.tidemark.table.convert.ColumnChange;
import io.tidemark.table.convert.FieldValue;
import io.tidemark.table.convert.InvalidRecordException;
import io.tidemark.table.convert.RecordConverter;
import io.tidemark.table.convert.SchemaMismatchException;
import io.tidemark.table.convert.SchemaSource;
import io.tidemark.table.source.PartitionRecordSource;
import io.tidemark.table.writer.TableWriter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import io.tidemark.table.writer.UpsertWriter;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one table topic's Iceberg table in step with its partitions, one commit round at a time:
 * {@link #prepare()} reads each partition from the offset recorded in the table up to its high
 * watermark (at most {@code maxBytesPerPartitionRound}), converts the records, evolves the schema
 * as the data needs and writes Parquet files; {@link #commit} then lands all of them in one
 * snapshot with the next offsets. A crash anywhere before the commit leaves only orphan files;
 * the next instance resumes from the table's offsets, so every record lands exactly once.
 *
 * <p>Bad records: skipped and counted under {@code invalid_data}/{@code all}; under {@code none}
 * the partition stops before the record and is PAUSED with the reason until
 * {@link #updateConfig} (other partitions continue).
 *
 * <p>Schema evolution: several syncs evolve one table at once (the conversion groups of a broker,
 * the workers of other brokers), each through its own view of the table. Before a row is written
 * the table is evolved until the row fits it, a lost race being recomputed against the refreshed
 * table; the row is then bound to that schema and written to a file of that schema, the partition's
 * open file being rolled when it is older. A row is never bound to or written with a schema that
 * lacks one of its columns ({@link SchemaMismatchException}); files of older schemas are fine, as
 * Iceberg reads them by field id. A change that keeps losing the race leaves the record for the
 * next round, whatever the error tolerance.
 *
 * <p>Upsert tables ({@code table.topic.upsert}, CDC, Debezium, compacted topics): each record is
 * a change ({@link RecordConverter#change}): an upsert of its id's row or a delete of its id, written
 * through an {@link UpsertWriter} (equality deletes for ids of earlier snapshots, position deletes
 * or deletion vectors for rows replaced within the round) and committed with the data in one
 * snapshot; the id columns stay required ({@link UpsertRows}).
 *
 * <p>Backfill ({@code table.topic.backfill.*}): a partition of which the table holds no offset yet starts at the
 * log start, the high watermark or the first record at a timestamp, chosen once per instance and committed with
 * the first round even when no record moved it (so that a restart does not choose again). Records that were in the
 * partition when this instance first saw it (below its {@code backfillEndOffset}) are read at most at the
 * configured byte rate ({@link BackfillThrottle}); later records are not bounded.
 *
 * <p>Per-partition states: RUNNING ⇄ PAUSED. Single-threaded: the owner calls rounds one after
 * another (the commit interval is the owner's schedule).
 */
public final class TableSync {

  private static final Logger log = LoggerFactory.getLogger(TableSync.class);
  /** Tries of one schema update racing the workers of other brokers. */
  private static final int SCHEMA_UPDATE_ATTEMPTS = 5;

  /** Table property holding the {@code partition.by} the spec was last aligned to in full. */
  public static final String PARTITION_BY_PROPERTY = PartitionSpecAlignment.PROPERTY;

  /** Whether a partition is being copied into the table. */
  public enum PartitionState { RUNNING, PAUSED }

  /** What the table holds of one partition. */
  public record PartitionStatus(PartitionState state, long nextOffset, long skippedRecords, String pauseReason,
      long backfillStartOffset, long backfillEndOffset) {

    PartitionStatus with(PartitionState newState, long next, long skipped, String reason) {
      return new PartitionStatus(newState, next, skipped, reason, backfillStartOffset, backfillEndOffset);
    }
  }

  /** A round whose files are written but not yet committed. */
  public record PreparedRound(String commitId, Map<Integer, Long> baseOffsets, Map<Integer, Long> nextOffsets,
      List<DataFile> files, List<DeleteFile> deleteFiles, long rows, long skipped, boolean moreData, DeadLetters deadLetters) {

    /** The rounds of syncs over disjoint partitions of one topic, as one round. */
    public static PreparedRound union(String commitId, List<PreparedRound> parts) {
      Map<Integer, Long> base = new TreeMap<>();
      Map<Integer, Long> next = new TreeMap<>();
      Map<Integer, Long> dlqBase = new TreeMap<>();
      Map<Integer, Long> dlqNext = new TreeMap<>();
      List<DataFile> files = new ArrayList<>();
      List<DeleteFile> deletes = new ArrayList<>();
      List<DataFile> dlqFiles = new ArrayList<>();
      long rows = 0;
      long skipped = 0;
      boolean more = false;
      for (PreparedRound p : parts) {
        base.putAll(p.baseOffsets());
        next.putAll(p.nextOffsets());
        files.addAll(p.files());
        deletes.addAll(p.deleteFiles());
        dlqBase.putAll(p.deadLetters().baseOffsets());
        dlqNext.putAll(p.deadLetters().nextOffsets());
        dlqFiles.addAll(p.deadLetters().files());
        rows += p.rows();
        skipped += p.skipped();
        more |= p.moreData();
      }
      return new PreparedRound(commitId, base, next, List.copyOf(files), List.copyOf(deletes), rows, skipped, more,
          new DeadLetters(dlqBase, dlqNext, List.copyOf(dlqFiles)));
    }
  }

  /** The dead-letter table's share of a round (empty when the DLQ is off). */
  public record DeadLetters(Map<Integer, Long> baseOffsets, Map<Integer, Long> nextOffsets, List<DataFile> files) {
    static final DeadLetters NONE = new DeadLetters(Map.of(), Map.of(), List.of());
  }

  /** The outcome of a round; {@code committed} is false when there was nothing to commit. */
  public record RoundResult(boolean committed, String commitId, long rows, long skipped, int dataFiles,
      Map<Integer, Long> nextOffsets, boolean moreData) {}

  private final String topic;
  private final Catalog catalog;
  private final Map<Integer, PartitionRecordSource> sources;
  private final Supplier<String> commitIds;
  private final AvroSchemaSource schemas;
  private final int maxBytesPerPartitionRound;
  private final long targetFileBytes;
  private final Map<Integer, PartitionStatus> statuses = new java.util.concurrent.ConcurrentSkipListMap<>();
  /** Bad records are logged at most 10 lines a minute per table topic; all are counted in the status. */
  private final BadRecordLog badRecordLog = new BadRecordLog(System::nanoTime, java.util.concurrent.TimeUnit.MINUTES.toNanos(1), 10);
  private TableTopicConfig config;
  private RecordConverter converter;
  private Table table;
  private TableCommitter committer;
  private Table dlqTable;
  private TableCommitter dlqCommitter;
  private LongSupplier remainingMs = () -> Long.MAX_VALUE;
  private LongSupplier nanoTime = System::nanoTime;
  private BackfillThrottle throttle;
  /** Per partition: where conversion started when the table held no offset of it (kept until committed). */
  private final Map<Integer, Long> chosenStarts = new HashMap<>();
  /** Per partition: the offset this instance began converting at (the backfill's progress is measured from it). */
  private final Map<Integer, Long> firstOffsets = new HashMap<>();
  /** Per partition: the high watermark when this instance first saw it; records below it are the backfill. */
  private final Map<Integer, Long> backfillEnds = new HashMap<>();

  /**
   * @param commitIds source of unique commit ids (injected randomness; also names the data files)
   */
  public TableSync(String topic, TableTopicConfig config, Catalog catalog, Map<Integer, PartitionRecordSource> sources,
      Supplier<String> commitIds, int maxBytesPerPartitionRound, long targetFileBytes) {
    this(topic, config, catalog, sources, null, commitIds, maxBytesPerPartitionRound, targetFileBytes);
  }

  /**
   * @param schemas schemas for {@code by_schema_id} and {@code by_latest_schema}: a {@link SchemaSource}
   *     (such as {@code RegistrySchemas}) serves Avro, JSON Schema and Protobuf; any other source
   *     Avro by id only; null when no registry is available
   */
  public TableSync(String topic, TableTopicConfig config, Catalog catalog, Map<Integer, PartitionRecordSource> sources,
      AvroSchemaSource schemas, Supplier<String> commitIds, int maxBytesPerPartitionRound, long targetFileBytes) {
    this.schemas = schemas;
    this.topic = topic;
    this.catalog = catalog;
    this.sources = new TreeMap<>(sources);
    this.commitIds = commitIds;
    this.maxBytesPerPartitionRound = maxBytesPerPartitionRound;
    this.targetFileBytes = targetFileBytes;
    this.config = config;
    this.converter = converterFor(config);
    this.throttle = new BackfillThrottle(config.backfill().maxBytesPerSec(), nanoTime);
    for (Integer p : this.sources.keySet()) {
      statuses.put(p, new PartitionStatus(PartitionState.RUNNING, -1, 0, "", -1, -1));
    }
  }

  /** Replaces the clock of the backfill rate (tests). */
  synchronized void useNanoClock(LongSupplier clock) {
    this.nanoTime = clock;
    this.throttle = new BackfillThrottle(config.backfill().maxBytesPerSec(), clock);
  }

  private RecordConverter converterFor(TableTopicConfig c) {
    return schemas instanceof SchemaSource full ? new RecordConverter(topic, c, full) : new RecordConverter(c, schemas);
  }

  public TableIdentifier tableIdentifier() {
    return TableIdentifier.of(Namespace.of(config.namespace()), config.tableNameFor(topic));
  }

  /** The table, created from the converter's starting schema on first use. */
  public Table table() {
    if (table == null) {
      TableIdentifier id = tableIdentifier();
      if (catalog instanceof SupportsNamespaces ns && !ns.namespaceExists(id.namespace())) {
        try {
          ns.createNamespace(id.namespace());
        } catch (RuntimeException raced) {
          // created meanwhile by another group or broker (the JDBC catalog on SQLite reports the race as a
          // constraint violation, not AlreadyExists): fine if the namespace is there now
          if (!ns.namespaceExists(id.namespace())) {
            throw raced;
          }
        }
      }
      createIfAbsent(id, config.upsert().enabled() ? UpsertRows.initialSchema(converter.initialSchema(), config.upsert())
          : converter.initialSchema());
      table = catalog.loadTable(id);
      committer = new TableCommitter(table);
    }
    return table;
  }

  /** Creates table {@code id} unless it exists, also when another group or broker creates it at the same moment. */
  private void createIfAbsent(TableIdentifier id, Schema schema) {
    if (catalog.tableExists(id)) {
      return;
    }
    try {
      catalog.createTable(id, schema, PartitionSpec.unpartitioned(),
          Map.of(TableProperties.FORMAT_VERSION, String.valueOf(config.formatVersion())));
    } catch (RuntimeException raced) {
      if (!catalog.tableExists(id)) {
        throw raced;
      }
    }
  }

  /** The dead-letter table {@code <table>_dlq}: skipped records with the reason, created on first use. */
  public TableIdentifier dlqIdentifier() {
    TableIdentifier id = tableIdentifier();
    return TableIdentifier.of(id.namespace(), id.name() + "_dlq");
  }

  private Table dlqTable() {
    if (dlqTable == null) {
      table();
      TableIdentifier id = dlqIdentifier();
      createIfAbsent(id, DeadLetterRows.SCHEMA);
      dlqTable = catalog.loadTable(id);
      dlqCommitter = new TableCommitter(dlqTable);
    }
    return dlqTable;
  }

  /** May be called from any thread, also while a round runs. */
  public PartitionStatus status(int partition) {
    return statuses.get(partition);
  }

  /** Applies a new config; paused partitions resume from where they stopped. */
  public synchronized void updateConfig(TableTopicConfig newConfig) {
    RecordConverter newConverter = converterFor(newConfig);
    this.config = newConfig;
    this.converter = newConverter;
    this.throttle = new BackfillThrottle(newConfig.backfill().maxBytesPerSec(), nanoTime);
    statuses.replaceAll((p, s) -> s.with(PartitionState.RUNNING, s.nextOffset(), s.skippedRecords(), ""));
  }

  private TableCommitter dlqCommitter() {
    dlqTable();
    return dlqCommitter;
  }

  /** Prepares and commits one round. */
  public RoundResult runRound() {
    return commit(prepare());
  }

  /** Reads, converts and writes the records of every RUNNING partition; nothing is committed yet. */
  public synchronized PreparedRound prepare() {
    return prepare(() -> Long.MAX_VALUE);
  }

  /**
   * {@link #prepare()} within a time budget: once {@code remainingMs} reaches 0, or while a read
   * does not answer within it, a partition stops where it is (reporting more data) and the round
   * goes on with the others; the stopped partitions join the next round.
   */
  public synchronized PreparedRound prepare(LongSupplier remainingMs) {
    this.remainingMs = remainingMs;
    try {
      return prepareRound();
    } finally {
      this.remainingMs = () -> Long.MAX_VALUE;
    }
  }

  private PreparedRound prepareRound() {
    table();
    TableCommitter.Committed committed = committer.committed();
    try {
      alignSpec();
    } catch (CommitFailedException raced) { // another sync of the topic changed the table meanwhile
      table.refresh();
      alignSpec();
    }
    String commitId = commitIds.get();
    Map<Integer, TableWriter> writers = new HashMap<>();
    Map<Integer, UpsertWriter> upsertWriters = new HashMap<>();
    Map<Integer, TableWriter> dlqWriters = new HashMap<>();
    boolean dlq = config.dlqEnabled();
    Map<Integer, Long> dlqCommitted = dlq ? dlqCommitter().committed().nextOffsets() : Map.of();
    Map<Integer, Long> dlqNext = new TreeMap<>();
    Map<Integer, Long> base = new TreeMap<>();
    Map<Integer, Long> next = new TreeMap<>();
    long rows = 0;
    long skipped = 0;
    boolean moreData = false;
    try {
      for (Map.Entry<Integer, PartitionRecordSource> e : sources.entrySet()) {
        int partition = e.getKey();
        PartitionStatus status = statuses.get(partition);
        Long inTable = committed.nextOffsets().get(partition);
        if (status.state() == PartitionState.PAUSED) {
          continue;
        }
        long backfillEnd = backfillEnds.computeIfAbsent(partition, p -> e.getValue().highWatermark());
        Long chosen = inTable != null ? inTable : chosenStart(partition, e.getValue());
        if (chosen == null) { // the search by timestamp did not answer within the round's budget
          moreData = true;
          continue;
        }
        long start = chosen;
        if (start < e.getValue().logStartOffset()) {
          log.warn("{}-{}: records [{}, {}) were deleted by retention before reaching the table", topic, partition, start,
              e.getValue().logStartOffset());
          start = e.getValue().logStartOffset();
        }
        PartitionPass pass = new PartitionPass(partition, e.getValue(), start, writers, commitId);
        pass.backfillEnd = backfillEnd;
        pass.upsertWriters = upsertWriters;
        if (dlq) {
          pass.dlqWriters = dlqWriters;
          pass.dlqFrom = dlqCommitted.getOrDefault(partition, -1L);
        }
        pass.run();
        rows += pass.rows;
        skipped += pass.skipped;
        moreData |= pass.moreData;
        if (inTable != null) {
          base.put(partition, inTable);
        }
        // a start other than the log start is committed at once, so that a restart does not choose again
        boolean moved = inTable == null
            ? pass.offset != start || config.backfill().start() != TableTopicConfig.BackfillStart.EARLIEST
            : pass.offset != inTable;
        if (moved) {
          next.put(partition, pass.offset);
        }
        if (dlq && pass.offset > dlqCommitted.getOrDefault(partition, -1L)) {
          dlqNext.put(partition, pass.offset);
        }
        statuses.put(partition, new PartitionStatus(pass.pauseReason == null ? PartitionState.RUNNING : PartitionState.PAUSED,
            pass.offset, status.skippedRecords() + pass.skipped, pass.pauseReason == null ? "" : pass.pauseReason,
            firstOffsets.computeIfAbsent(partition, p -> pass.firstOffset), backfillEnd));
      }
      List<DataFile> files = new ArrayList<>();
      List<DeleteFile> deletes = new ArrayList<>();
      for (TableWriter w : writers.values()) {
        files.addAll(w.drain());
      }
      for (UpsertWriter w : upsertWriters.values()) {
        UpsertWriter.Drained d = w.drain();
        files.addAll(d.dataFiles());
        deletes.addAll(d.deleteFiles());
      }
      DeadLetters deadLetters = DeadLetters.NONE;
      if (dlq) {
        List<DataFile> dlqFiles = new ArrayList<>();
        for (TableWriter w : dlqWriters.values()) {
          dlqFiles.addAll(w.drain());
        }
        deadLetters = new DeadLetters(dlqCommitted, dlqNext, List.copyOf(dlqFiles));
      }
      return new PreparedRound(commitId, base, next, List.copyOf(files), List.copyOf(deletes), rows, skipped, moreData,
          deadLetters);
    } catch (RuntimeException ex) {
      writers.values().forEach(TableWriter::abort);
      upsertWriters.values().forEach(UpsertWriter::abort);
      dlqWriters.values().forEach(TableWriter::abort);
      throw ex;
    }
  }

  /** Records converted again ({@link #reconvert}): the data files written, and the records that still fail, by offset. */
  public record Reconverted(List<DataFile> files, long rows, Map<Long, String> stillFailing) {}

  /**
   * Converts {@code records} of {@code partition} again with the current config (dead-letter reprocessing) into data
   * files of the table, evolving its schema as the rows need; nothing is committed and no offset moves. A record
   * that is still bad is returned with the reason; a failure that is not the record's fault (an unreachable
   * registry) fails the whole call and leaves no file behind. Append tables only (upsert tables:
   * {@link UpsertDeadLetters}).
   */
  public synchronized Reconverted reconvert(int partition, List<Record> records, String filePrefix) {
    if (config.upsert().enabled()) {
      throw new UnsupportedOperationException("upsert tables reprocess their dead letters through UpsertDeadLetters");
    }
    table();
    Map<Integer, TableWriter> writers = new HashMap<>();
    PartitionPass pass = new PartitionPass(partition, null, -1, writers, filePrefix);
    Map<Long, String> failing = new TreeMap<>();
    long rows = 0;
    try {
      for (Record record : records) {
        try {
          Map<String, FieldValue> row = converter.convert(partition, record);
          Schema schema = pass.fitTableTo(row);
          TableWriter writer = writers.computeIfAbsent(partition,
              p -> new TableWriter(table, schema, p, filePrefix, targetFileBytes));
          writer.useSchema(schema);
          writer.write(ColumnBinder.bind(schema, row));
          rows++;
        } catch (InvalidRecordException e) {
          failing.put(record.offset(), e.getMessage());
        }
      }
      List<DataFile> files = new ArrayList<>();
      for (TableWriter w : writers.values()) {
        files.addAll(w.drain());
      }
      return new Reconverted(List.copyOf(files), rows, failing);
    } catch (ConversionFailedException e) {
      writers.values().forEach(TableWriter::abort);
      throw new IllegalStateException("reprocessing stopped, nothing changed: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      writers.values().forEach(TableWriter::abort);
      throw e;
    }
  }

  /** The topic's current settings. */
  synchronized TableTopicConfig config() {
    return config;
  }

  /** The change {@code record} makes to this upsert table with the current settings (dead-letter reprocessing). */
  synchronized RecordConverter.Change change(int partition, Record record)
      throws InvalidRecordException, ConversionFailedException {
    return converter.change(partition, record);
  }

  /** Evolves the table until it takes {@code row}; the schema that does (dead-letter reprocessing). */
  synchronized Schema fitTable(Map<String, FieldValue> row) throws InvalidRecordException {
    table();
    return new PartitionPass(-1, null, -1, new HashMap<>(), "").fitTableTo(row);
  }

  long targetFileBytes() {
    return targetFileBytes;
  }

  /** Where a partition new to the table starts ({@code table.topic.backfill.start}); null when a search timed out. */
  private Long chosenStart(int partition, PartitionRecordSource source) {
    Long chosen = chosenStarts.get(partition);
    if (chosen != null) {
      return chosen;
    }
    TableTopicConfig.Backfill backfill = config.backfill();
    Long start = switch (backfill.start()) {
      case EARLIEST -> source.logStartOffset();
      case LATEST -> source.highWatermark();
      case TIMESTAMP -> await(source.offsetForTimestamp(backfill.timestampMs()), remainingMs.getAsLong());
    };
    if (start != null && backfill.start() != TableTopicConfig.BackfillStart.EARLIEST) {
      chosenStarts.put(partition, start); // the log start moves with retention; the others are fixed once chosen
      log.info("{}-{}: the table starts at offset {} ({} {})", topic, partition, start, TableTopicConfig.BACKFILL_START,
          backfill.start() == TableTopicConfig.BackfillStart.TIMESTAMP ? backfill.timestampMs() : backfill.start());
    }
    return start;
  }

  /** Commits a prepared round in one snapshot (no snapshot when no offset moved). */
  public synchronized RoundResult commit(PreparedRound round) {
    DeadLetters dl = round.deadLetters();
    if (!dl.files().isEmpty()) {
      // dead letters land first, with their own offsets: a crash before the main commit replays the
      // round, and records below these offsets are not written to the DLQ again (rounds without
      // dead letters leave the DLQ table alone)
      dlqCommitter().commit(round.commitId(), dl.baseOffsets(), dl.nextOffsets(), dl.files());
    }
    if (round.nextOffsets().isEmpty() && round.files().isEmpty() && round.deleteFiles().isEmpty()) {
      return new RoundResult(false, round.commitId(), 0, round.skipped(), 0, Map.of(), round.moreData());
    }
    table();
    committer.commit(round.commitId(), round.baseOffsets(), round.nextOffsets(), round.files(), round.deleteFiles());
    return new RoundResult(true, round.commitId(), round.rows(), round.skipped(), round.files().size(),
        round.nextOffsets(), round.moreData());
  }

  /** One partition's share of a round. */
  private final class PartitionPass {
    final int partition;
    final PartitionRecordSource source;
    final Map<Integer, TableWriter> writers;
    Map<Integer, UpsertWriter> upsertWriters;
    final String commitId;
    Map<Integer, TableWriter> dlqWriters;
    long dlqFrom = Long.MAX_VALUE;
    long backfillEnd = -1;
    final long firstOffset;
    long offset;
    long rows;
    long skipped;
    boolean moreData;
    String pauseReason;

    PartitionPass(int partition, PartitionRecordSource source, long start, Map<Integer, TableWriter> writers, String commitId) {
      this.partition = partition;
      this.source = source;
      this.offset = start;
      this.firstOffset = start;
      this.writers = writers;
      this.commitId = commitId;
    }

    void run() {
      boolean throttled = throttle.bounded() && offset < backfillEnd;
      long limit = throttled ? Math.min(maxBytesPerPartitionRound, throttle.allowance(partition)) : maxBytesPerPartitionRound;
      try {
        copy(limit);
      } finally {
        if (throttled) {
          throttle.spent(partition, bytesRead);
        }
      }
    }

    long bytesRead;

    private void copy(long limit) {
      long end = source.highWatermark();
      while (offset < end && pauseReason == null) {
        if (bytesRead >= limit || remainingMs.getAsLong() <= 0) {
          moreData = true;
          return;
        }
        PartitionRecordSource.Batches read;
        try {
          read = await(source.read(offset, (int) Math.min(maxBytesPerPartitionRound, Math.max(1, limit - bytesRead))),
              remainingMs.getAsLong());
        } catch (DamagedRangeException e) {
          if (!skipDamaged(e)) {
            return;
          }
          continue;
        }
        if (read == null) {
          log.info("{}-{}: read at offset {} did not answer within the round's budget; the partition joins the next round",
              topic, partition, offset);
          moreData = true;
          return;
        }
        if (read.batches().isEmpty()) {
          return;
        }
        boolean first = true;
        for (ByteBuffer buf : read.batches()) {
          if (!first && remainingMs.getAsLong() <= 0) {
            // the budget ran out while converting this read (a slow or starved converter): stop at a batch
            // boundary, the rest joins the next round, so a round overruns its budget by one batch at most
            moreData = true;
            return;
          }
          first = false;
          bytesRead += buf.remaining();
          for (RecordBatch batch : MemoryRecords.readableRecords(buf.duplicate()).batches()) {
            if (batch.lastOffset() < offset) {
              continue;
            }
            if (!batch.isControlBatch()) {
              for (Record record : batch) {
                if (record.offset() < offset) {
                  continue;
                }
                if (!write(record)) {
                  return;
                }
                offset = record.offset() + 1;
              }
            }
            offset = Math.max(offset, batch.nextOffset());
          }
        }
      }
    }

    /** Writes one record; false when the partition pauses on it. */
    private boolean write(Record record) {
      try {
        if (config.upsert().enabled()) {
          writeChange(record);
          return true;
        }
        Map<String, FieldValue> row = converter.convert(partition, record);
        Schema schema = fitTableTo(row);
        TableWriter writer = writers.computeIfAbsent(partition,
            p -> new TableWriter(table, schema, p, commitId, targetFileBytes));
        // the partition's open file may be of an older schema (this group's view before another group or
        // broker evolved the table): the row goes into a new file of the schema it was fitted to
        writer.useSchema(schema);
        writer.write(ColumnBinder.bind(schema, row));
        rows++;
        return true;
      } catch (SchemaMismatchException e) {
        throw e; // a bug, never bad data: the round fails and is redone, nothing is skipped
      } catch (SchemaRaceLostException e) {
        // the table kept changing under this record: not its fault; the partition retries from it next round
        log.warn("{}-{} offset {}: {}; retrying next round", topic, partition, record.offset(), e.getMessage());
        moreData = true;
        return false;
      } catch (InvalidRecordException e) {
        return skipOrPause(record, e.getMessage(), config.errorTolerance() != ErrorTolerance.NONE);
      } catch (ConversionFailedException e) {
        if (config.errorTolerance() == ErrorTolerance.ALL) {
          return skipOrPause(record, e.getMessage(), true);
        }
        // not the record's fault: the partition stops here for this round and retries next round
        log.warn("{}-{} offset {}: conversion failed, retrying next round: {}", topic, partition, record.offset(),
            e.getMessage());
        moreData = true;
        return false;
      } catch (RuntimeException e) {
        if (config.errorTolerance() == ErrorTolerance.ALL) {
          return skipOrPause(record, e.toString(), true);
        }
        throw e;
      }
    }

    /** Writes one record of an upsert table: its id's new row, or the delete of its id. */
    private void writeChange(Record record) throws InvalidRecordException, ConversionFailedException {
      RecordConverter.Change change = converter.change(partition, record);
      if (change.kind() == RecordConverter.ChangeKind.IGNORE) {
        return;
      }
      boolean delete = change.kind() == RecordConverter.ChangeKind.DELETE;
      Map<String, FieldValue> row = UpsertRows.checked(change.row(), config.upsert(), delete);
      Schema schema = fitTableTo(row);
      UpsertWriter writer = upsertWriters.computeIfAbsent(partition,
          p -> new UpsertWriter(table, schema, p, commitId, targetFileBytes, UpsertRows.idColumns(config.upsert())));
      writer.useSchema(schema);
      org.apache.iceberg.data.GenericRecord bound = ColumnBinder.bind(schema, row);
      if (delete) {
        writer.delete(bound);
      } else {
        writer.upsert(bound);
        rows++;
      }
    }

    /**
     * Evolves the table until it takes {@code row} and returns the schema that does. Other groups of
     * this broker and the workers of other brokers evolve the same table: a change that lost the race
     * is recomputed against the table as it is now (the other one may already have made it), so the
     * schema returned may be newer than the one this group's open files were opened with.
     */
    private Schema fitTableTo(Map<String, FieldValue> row) throws InvalidRecordException {
      for (int attempt = 1; ; attempt++) {
        List<ColumnChange> changes = ColumnBinder.changesNeeded(table.schema(), row, converter.lenientStrings(),
            config.upsert().enabled() ? java.util.Set.copyOf(UpsertRows.idColumns(config.upsert())) : java.util.Set.of());
        if (changes.isEmpty()) {
          return table.schema();
        }
        try {
          evolve(changes);
          return table.schema();
        } catch (CommitFailedException raced) {
          if (attempt >= SCHEMA_UPDATE_ATTEMPTS) {
            throw new SchemaRaceLostException(changes, attempt, raced);
          }
          table.refresh();
        } catch (IllegalArgumentException | ValidationException refused) {
          // Iceberg refuses the change (e.g. a name clash): the record's data does not fit, the table is unchanged
          throw new InvalidRecordException("the table cannot take " + changes + ": " + refused.getMessage(), refused);
        }
      }
    }

    /**
     * Damaged stored data (no record to convert or dead-letter) goes by the error tolerance like a bad
     * record: skipped and counted (every offset of the range) unless errors.tolerance=none pauses here.
     */
    private boolean skipDamaged(DamagedRangeException e) {
      if (config.errorTolerance() == ErrorTolerance.NONE) {
        pauseReason = "paused at offset " + offset + " (errors.tolerance=none): " + e.getMessage();
        log.warn("{}-{}: {}", topic, partition, pauseReason);
        return false;
      }
      skipped += e.toOffset() - offset;
      log.warn("{}-{}: skipped damaged offsets {}..{}: {}", topic, partition, offset, e.toOffset() - 1, e.getMessage());
      offset = e.toOffset();
      return true;
    }

    private boolean skipOrPause(Record record, String reason, boolean skip) {
      if (skip) {
        skipped++;
        if (dlqWriters != null && record.offset() >= dlqFrom) {
          TableWriter dlqWriter = dlqWriters.computeIfAbsent(partition,
              p -> new TableWriter(dlqTable, dlqTable.schema(), p, commitId, targetFileBytes));
          dlqWriter.write(DeadLetterRows.row(dlqWriter.schema(), partition, record, reason));
        }
        long leftOut = badRecordLog.admit();
        if (leftOut >= 0) {
          log.warn("{}-{} offset {}: skipped bad record{}: {}", topic, partition, record.offset(),
              leftOut > 0 ? " (" + leftOut + " more since the last such line)" : "", reason);
        }
        return true;
      }
      pauseReason = "paused at offset " + record.offset() + " (errors.tolerance=none): " + reason;
      log.warn("{}-{}: {}", topic, partition, pauseReason);
      return false;
    }
  }

  /** Brings the spec in step with {@code partition.by} (see {@link PartitionSpecAlignment}). */
  private void alignSpec() {
    PartitionSpecAlignment.align(table, config.partitionFields(), topic + ": table " + tableIdentifier());
  }

  /**
   * Applies the column changes to the table in one schema update. Open files keep their schema until
   * their partition's next row, which moves its writer to the new schema ({@link TableWriter#useSchema}).
   */
  private void evolve(List<ColumnChange> changes) {
    UpdateSchema update = table.updateSchema();
    boolean upsert = config.upsert().enabled();
    List<String> ids = UpsertRows.idColumns(config.upsert());
    boolean empty = upsert && UpsertRows.holdsNoRows(table);
    for (ColumnChange c : changes) {
      switch (c.kind()) {
        case ADD_COLUMN -> {
          if (empty && c.parent() == null && ids.contains(c.name()) && c.type().isPrimitiveType()) {
            // an id column of a table with no rows yet: required, so that it can be an identifier field
            update.allowIncompatibleChanges().addRequiredColumn(c.name(), c.type());
          } else {
            update.addColumn(c.parent(), c.name(), c.type());
          }
        }
        case WIDEN_TYPE -> update.updateColumn(c.column(), (org.apache.iceberg.types.Type.PrimitiveType) c.type());
        case MAKE_OPTIONAL -> update.makeColumnOptional(c.column());
      }
    }
    if (upsert) {
      UpsertRows.identifierFieldsAfter(update, table.schema(), changes, ids, empty);
    }
    update.commit();
    table.refresh();
    alignSpec();
    log.info("{}: table {} schema evolved: {}", topic, tableIdentifier(), changes);
  }

  /** A schema change lost {@link #SCHEMA_UPDATE_ATTEMPTS} races in a row; the record is retried next round. */
  private static final class SchemaRaceLostException extends RuntimeException {
    SchemaRaceLostException(List<ColumnChange> changes, int attempts, CommitFailedException last) {
      super("schema change " + changes + " lost " + attempts + " races with other writers of the table: "
          + last.getMessage(), last);
    }
  }

  /** The future's value, or null when it does not complete within {@code waitMs}. */
  private static <T> T await(java.util.concurrent.CompletableFuture<T> f, long waitMs) {
    try {
      return waitMs == Long.MAX_VALUE ? f.get() : f.get(Math.max(0, waitMs), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted reading the partition", e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause() instanceof CompletionException ce && ce.getCause() != null ? ce.getCause() : e.getCause();
      if (c instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(c);
    }
  }
}
