package io.tidemark.bench.table;

import io.tidemark.server.Main;
import io.tidemark.server.TidemarkServer;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.warehouse.Warehouse;
import io.tidemark.table.convert.KafkaColumns;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One freshness measurement: a Tidemark server in this process with a 4-partition table topic
 * committing every {@code commitIntervalMs}; a producer sends {@code recordsPerSecond} records whose
 * value is their send time; a reader opens the table through a fresh catalog every
 * {@value #POLL_MS} ms and, for every new snapshot, reads the rows it appended. A record's freshness
 * is the time it was first seen in such a scan minus its send time (so it includes up to one poll
 * period and the scan itself). Single-threaded apart from the server and the producer's sender.
 */
public final class FreshnessRun {

  static final long POLL_MS = 100;
  private static final int PARTITIONS = 4;

  /**
   * The samples of one run, in ms: every record, and those sent after the warm-up (the first round
   * creates the table and runs on a cold JVM).
   */
  public record Result(long commitIntervalMs, long produced, long[] freshnessMs, long[] afterWarmupMs) {

    public static double percentile(long[] samples, double q) {
      long[] sorted = samples.clone();
      Arrays.sort(sorted);
      return sorted.length == 0 ? Double.NaN : sorted[(int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
    }
  }

  private final Path dataDir;
  private final long commitIntervalMs;
  private final long produceMs;
  private final int recordsPerSecond;
  private final long warmupMs;
  private final List<Long> afterWarmup = new ArrayList<>();
  private long warmupEndMs;

  public FreshnessRun(Path dataDir, long commitIntervalMs, long produceMs, int recordsPerSecond, long warmupMs) {
    this.warmupMs = warmupMs;
    this.dataDir = dataDir;
    this.commitIntervalMs = commitIntervalMs;
    this.produceMs = produceMs;
    this.recordsPerSecond = recordsPerSecond;
  }

  public Result run() throws Exception {
    String topic = "fresh-" + commitIntervalMs;
    try (TidemarkServer server = Main.start(List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.listener.port=0",
        "--set", "registry.host=127.0.0.1", "--set", "registry.port=0", "--set", "wal.capacity.bytes=" + (256L << 20)),
        Map.of(), new EmbeddedStorage())) {
      String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1).configs(Map.of("table.topic.enable", "true",
            "table.topic.commit.interval.ms", Long.toString(commitIntervalMs), "table.topic.convert.value.type", "string"))))
            .all().get(60, TimeUnit.SECONDS);
      }
      Catalog catalog = TableCatalogConfig.parse(Map.of()).open(dataDir,
          Warehouse.inDirectory(dataDir.resolve("objects").resolve(Warehouse.ROOT_NAME), null));
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        return measure(topic, producer, catalog);
      } finally {
        if (catalog instanceof AutoCloseable c) {
          c.close();
        }
      }
    }
  }

  private Result measure(String topic, KafkaProducer<String, String> producer, Catalog catalog) throws Exception {
    TableIdentifier id = TableIdentifier.of("default", topic);
    List<Long> samples = new ArrayList<>();
    long start = System.currentTimeMillis();
    warmupEndMs = start + warmupMs;
    long produceEnd = start + produceMs;
    long sent = 0;
    Long lastSnapshot = null;
    // after the last send, wait up to three commit intervals (plus slack) for the rest to appear
    long stop = produceEnd + 3 * commitIntervalMs + 10_000;
    while (System.currentTimeMillis() < stop && (System.currentTimeMillis() < produceEnd || samples.size() < sent)) {
      long now = System.currentTimeMillis();
      long due = Math.min(now, produceEnd) - start;
      while (sent < due * recordsPerSecond / 1000) {
        producer.send(new ProducerRecord<>(topic, (int) (sent % PARTITIONS), null, Long.toString(System.currentTimeMillis())));
        sent++;
      }
      lastSnapshot = scanNew(catalog, id, lastSnapshot, samples);
      Thread.sleep(POLL_MS);
    }
    return new Result(commitIntervalMs, sent, samples.stream().mapToLong(Long::longValue).toArray(),
        afterWarmup.stream().mapToLong(Long::longValue).toArray());
  }

  /** Reads the rows appended after {@code lastSnapshot} (all rows when null); returns the newest snapshot id. */
  private Long scanNew(Catalog catalog, TableIdentifier id, Long lastSnapshot, List<Long> samples) throws IOException {
    if (!catalog.tableExists(id)) {
      return lastSnapshot;
    }
    Table table = catalog.loadTable(id);
    Snapshot current = table.currentSnapshot();
    if (current == null || Long.valueOf(current.snapshotId()).equals(lastSnapshot)) {
      return lastSnapshot;
    }
    IcebergGenerics.ScanBuilder scan = IcebergGenerics.read(table).select(KafkaColumns.VALUE);
    if (lastSnapshot != null) {
      scan = scan.appendsAfter(lastSnapshot);
    }
    try (CloseableIterable<Record> rows = scan.build()) {
      long seenAt = System.currentTimeMillis();
      for (Record r : rows) {
        long sentAt = Long.parseLong((String) r.getField(KafkaColumns.VALUE));
        samples.add(seenAt - sentAt);
        if (sentAt >= warmupEndMs) {
          afterWarmup.add(seenAt - sentAt);
        }
      }
    }
    return current.snapshotId();
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }
}
