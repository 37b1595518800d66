package io.tidemark.bench.table;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tidemark.bench.kafka.Setup;
import io.tidemark.server.Main;
import io.tidemark.server.TidemarkServer;
import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorages;
import io.tidemark.stream.testing.S3ProxyFixture;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.warehouse.Warehouse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.FileScanTask;
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
 * One produce-to-queryable measurement of one table kind at one commit interval: a Tidemark server
 * in this process with a 4-partition table topic of JSON values; a producer sends
 * {@code recordsPerSecond} records of about {@code recordBytes} whose value carries a sequence
 * number, an id, the send time and random text filler; a reader loads the table through a fresh catalog every
 * {@value #POLL_MS} ms and, for every new snapshot, reads what it shows. A record's freshness is the
 * time it was first seen in such a scan minus its send time (so it includes up to one poll period
 * and the scan itself).
 *
 * <p>Kinds: {@link Kind#APPEND} reads the rows each snapshot appended, and every record must show
 * up exactly once. {@link Kind#UPSERT} ({@code upsert.enable}, {@code id.columns=[id]}) and
 * {@link Kind#CDC} ({@code cdc.field=op}: every fifth write of an id deletes it) read the whole
 * current state: a record is seen when its row is the latest of its id in a snapshot, so records
 * replaced within one round are never seen, and the final state must equal the reference model
 * (latest record per id, deleted ids absent). Ids map to partitions so each id's order is kept.
 *
 * <p>On {@link Storage#S3PROXY} (the default) the server's storage is S3Proxy on this machine
 * (filesystem backend), the table warehouse lives in it as objects, and the server's own meters give
 * the object-store requests and bytes of the log ({@code tidemark.objectstore.*}) and of the table
 * path ({@code tidemark.table.objectstore.*}: writers, commits and maintenance; the reader here uses
 * its own client and is not counted). Single-threaded apart from the server and the producer's sender.
 */
public final class FreshnessRun {

  static final long POLL_MS = 100;
  private static final int PARTITIONS = 4;
  /** In CDC runs every this-many-th write of an id deletes it. */
  private static final int CDC_DELETE_EVERY = 5;
  /** The filler of each value: random letters and digits (about 6 bits of entropy per byte, as text data compresses). */
  private static final String PAD_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

  /** The table's kind. */
  public enum Kind { APPEND, UPSERT, CDC }

  /** Where the server keeps its objects and the table warehouse. */
  public enum Storage { S3PROXY, LOCAL }

  /** What one run is: kind, commit interval, load, and the maintenance interval of the server. */
  public record Plan(Kind kind, Storage storage, long commitIntervalMs, long produceMs, int recordsPerSecond,
      int recordBytes, int ids, long warmupMs, long maintenanceIntervalMs, int deleteFilesTrigger) {}

  /** Object-store requests by operation (successes and errors) and bytes written and read, of one meter family. */
  public record StoreUse(Map<String, Long> requests, long writtenBytes, long readBytes) {

    public long total() {
      return requests.values().stream().mapToLong(Long::longValue).sum();
    }

    public long writes() {
      return requests.entrySet().stream().filter(e -> e.getKey().equals("put") || e.getKey().startsWith("multipart."))
          .mapToLong(Map.Entry::getValue).sum();
    }

    static StoreUse of(MeterRegistry meters, String name) {
      Map<String, Long> requests = new HashMap<>();
      for (Timer t : meters.find(name + ".requests").timers()) {
        requests.merge(t.getId().getTag("operation"), t.count(), Long::sum);
      }
      return new StoreUse(requests, bytes(meters, name, "written"), bytes(meters, name, "read"));
    }

    private static long bytes(MeterRegistry meters, String name, String direction) {
      Counter c = meters.find(name + ".bytes").tag("direction", direction).counter();
      return c == null ? 0 : (long) c.count();
    }
  }

  /**
   * The samples of one run, in ms: every record seen, and those sent after the warm-up (the first
   * round creates the table and runs on a cold JVM); the payload bytes produced (keys and values);
   * whether the table ended exactly as produced; the object-store use of the log and the table path;
   * {@code scanMs}: how long each scan of a new snapshot took (catalog load, planning and reading), a
   * part of the freshness that is the reader's, not the commit cycle's.
   */
  public record Result(Plan plan, long produced, long producedBytes, long sendErrors, long[] freshnessMs,
      long[] afterWarmupMs, boolean tableExact, String tableCheck, StoreUse log, StoreUse table, long[] scanMs,
      long[] deleteLoadsPerScan) {

    public static double percentile(long[] samples, double q) {
      long[] sorted = samples.clone();
      Arrays.sort(sorted);
      return sorted.length == 0 ? Double.NaN : sorted[(int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
    }
  }

  private final Path dataDir;
  private final Plan plan;
  private final List<Long> samples = new ArrayList<>();
  private final List<Long> afterWarmup = new ArrayList<>();
  private final List<Long> scans = new ArrayList<>();
  /** Per scan of an upsert or CDC table: delete files the reader loads (each once per data file it applies to). */
  private final List<Long> deleteLoads = new ArrayList<>();
  /** Sequence numbers already seen (a row stays visible across snapshots). */
  private final Set<Long> seen = new HashSet<>();
  /** The reference model of upsert and CDC tables: id to the sequence number of its latest record, absent when deleted. */
  private final Map<Long, Long> latest = new HashMap<>();
  private final int[] writesPerId;
  private final AtomicLong sendErrors = new AtomicLong();
  private long warmupEndMs;
  private long appendRowsSeen;
  private boolean duplicateSeen;
  private Map<Long, Long> lastState = Map.of();

  public FreshnessRun(Path dataDir, Plan plan) {
    this.dataDir = dataDir;
    this.plan = plan;
    this.writesPerId = new int[plan.ids()];
  }

  public Result run() throws Exception {
    String topic = "fresh-" + plan.kind().name().toLowerCase(java.util.Locale.ROOT) + "-" + plan.commitIntervalMs();
    S3ProxyFixture s3 = plan.storage() == Storage.S3PROXY ? S3ProxyFixture.start(dataDir.resolve("s3")) : null;
    List<String> args = new ArrayList<>(List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.listener.port=0",
        "--set", "registry.host=127.0.0.1", "--set", "registry.port=0", "--set", "wal.capacity.bytes=" + (256L << 20),
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "controller.voters=0@127.0.0.1:" + Setup.freePort(),
        "--set", "table.maintenance.interval.ms=" + plan.maintenanceIntervalMs(),
        "--set", "table.maintenance.delete.files.trigger=" + plan.deleteFilesTrigger()));
    if (s3 != null) {
      s3.settings().asMap().forEach((k, v) -> args.addAll(List.of("--set", k + "=" + v)));
    }
    try (TidemarkServer server = Main.start(args, Map.of(), new EmbeddedStorage());
        ObjectStorage readerStorage = s3 == null ? null : ObjectStorages.create(s3.settings())) {
      String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1).configs(topicConfigs())))
            .all().get(60, TimeUnit.SECONDS);
      }
      Warehouse warehouse = s3 == null
          ? Warehouse.inDirectory(dataDir.resolve("objects").resolve(Warehouse.ROOT_NAME), null)
          : Warehouse.inObjectStorage(readerStorage, "s3://" + s3.bucket() + "/");
      Catalog catalog = TableCatalogConfig.parse(Map.of()).open(dataDir, warehouse);
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        return measure(topic, producer, catalog, server.meters());
      } finally {
        if (catalog instanceof AutoCloseable c) {
          c.close();
        }
      }
    } finally {
      if (s3 != null) {
        s3.close();
      }
    }
  }

  private Map<String, String> topicConfigs() {
    Map<String, String> c = new HashMap<>(Map.of("table.topic.enable", "true",
        "table.topic.commit.interval.ms", Long.toString(plan.commitIntervalMs()), "table.topic.convert.value.type", "json"));
    switch (plan.kind()) {
      case APPEND -> { }
      case UPSERT -> {
        c.put("table.topic.upsert.enable", "true");
        c.put("table.topic.id.columns", "[id]");
      }
      case CDC -> {
        c.put("table.topic.cdc.field", "op");
        c.put("table.topic.id.columns", "[id]");
      }
    }
    return c;
  }

  private Result measure(String topic, KafkaProducer<String, String> producer, Catalog catalog, MeterRegistry meters)
      throws Exception {
    TableIdentifier id = TableIdentifier.of("default", topic);
    java.util.Random random = new java.util.Random(42);
    char[] padChars = new char[Math.max(0, plan.recordBytes() - 90)];
    long start = System.currentTimeMillis();
    warmupEndMs = start + plan.warmupMs();
    long produceEnd = start + plan.produceMs();
    long sent = 0;
    long bytes = 0;
    Long lastSnapshot = null;
    // after the last send, wait up to three commit intervals (plus slack) for the rest to appear
    long stop = produceEnd + 3 * plan.commitIntervalMs() + 20_000;
    while (System.currentTimeMillis() < stop && (System.currentTimeMillis() < produceEnd || !complete(sent))) {
      long now = System.currentTimeMillis();
      long due = Math.min(now, produceEnd) - start;
      while (sent < due * plan.recordsPerSecond() / 1000) {
        long key = sent % plan.ids();
        for (int i = 0; i < padChars.length; i++) {
          padChars[i] = PAD_ALPHABET.charAt(random.nextInt(PAD_ALPHABET.length()));
        }
        String value = value(key, sent, new String(padChars));
        String k = Long.toString(key);
        producer.send(new ProducerRecord<>(topic, (int) (key % PARTITIONS), k, value), (md, err) -> {
          if (err != null) {
            sendErrors.incrementAndGet();
          }
        });
        bytes += k.length() + value.getBytes(StandardCharsets.UTF_8).length;
        sent++;
      }
      lastSnapshot = scanNew(catalog, id, lastSnapshot);
      Thread.sleep(POLL_MS);
    }
    String check = check(sent);
    return new Result(plan, sent, bytes, sendErrors.get(), samples.stream().mapToLong(Long::longValue).toArray(),
        afterWarmup.stream().mapToLong(Long::longValue).toArray(), check.isEmpty(), check.isEmpty() ? "exact" : check,
        StoreUse.of(meters, "tidemark.objectstore"), StoreUse.of(meters, "tidemark.table.objectstore"),
        scans.stream().mapToLong(Long::longValue).toArray(), deleteLoads.stream().mapToLong(Long::longValue).toArray());
  }

  /** The JSON value of record {@code seq} for id {@code key}, updating the reference model. */
  private String value(long key, long seq, String pad) {
    int writes = writesPerId[(int) key]++;
    String op = "u";
    if (plan.kind() == Kind.CDC) {
      boolean delete = writes % CDC_DELETE_EVERY == CDC_DELETE_EVERY - 1;
      op = delete ? "d" : latest.containsKey(key) ? "u" : "c";
    }
    if (op.equals("d")) {
      latest.remove(key);
    } else {
      latest.put(key, seq);
    }
    return "{\"id\":" + key + ",\"seq\":" + seq + ",\"sent\":" + System.currentTimeMillis() + ",\"op\":\"" + op
        + "\",\"pad\":\"" + pad + "\"}";
  }

  private boolean complete(long sent) {
    return plan.kind() == Kind.APPEND ? appendRowsSeen >= sent : lastState.equals(latest);
  }

  /** Empty when the table holds exactly what was produced, else what differs. */
  private String check(long sent) {
    if (sendErrors.get() > 0) {
      return sendErrors.get() + " sends failed";
    }
    if (plan.kind() == Kind.APPEND) {
      return duplicateSeen ? "a record appeared twice" : appendRowsSeen == sent ? "" : appendRowsSeen + " rows of " + sent;
    }
    if (duplicateSeen) {
      return "an id had two rows in one snapshot";
    }
    if (lastState.equals(latest)) {
      return "";
    }
    long wrong = latest.entrySet().stream().filter(e -> !e.getValue().equals(lastState.get(e.getKey()))).count()
        + lastState.keySet().stream().filter(k -> !latest.containsKey(k)).count();
    return wrong + " ids differ from the reference model";
  }

  /** Reads what the newest snapshot shows, if it is new; returns the newest snapshot id. */
  private Long scanNew(Catalog catalog, TableIdentifier id, Long lastSnapshot) throws IOException {
    if (!catalog.tableExists(id)) {
      return lastSnapshot;
    }
    long scanStart = System.nanoTime();
    Table table = catalog.loadTable(id);
    Snapshot current = table.currentSnapshot();
    if (current == null || Long.valueOf(current.snapshotId()).equals(lastSnapshot)) {
      return lastSnapshot;
    }
    IcebergGenerics.ScanBuilder scan = IcebergGenerics.read(table).select("id", "seq", "sent");
    boolean append = plan.kind() == Kind.APPEND;
    if (append && lastSnapshot != null) {
      scan = scan.appendsAfter(lastSnapshot);
    }
    Map<Long, Long> state = new HashMap<>();
    try (CloseableIterable<Record> rows = scan.build()) {
      long seenAt = System.currentTimeMillis();
      for (Record r : rows) {
        long seq = ((Number) r.getField("seq")).longValue();
        if (append) {
          appendRowsSeen++;
        } else if (state.put(((Number) r.getField("id")).longValue(), seq) != null) {
          duplicateSeen = true;
        }
        if (seen.add(seq)) {
          long sentAt = ((Number) r.getField("sent")).longValue();
          samples.add(seenAt - sentAt);
          if (sentAt >= warmupEndMs) {
            afterWarmup.add(seenAt - sentAt);
          }
        } else if (append) {
          duplicateSeen = true;
        }
      }
    }
    if (!append) {
      lastState = state;
    }
    scans.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - scanStart));
    if (!append) {
      // after the timed scan: how many delete-file loads it took (the generic reader loads each per data file)
      long loads = 0;
      try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(current.snapshotId()).planFiles()) {
        for (FileScanTask t : tasks) {
          loads += t.deletes().size();
        }
      }
      deleteLoads.add(loads);
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
