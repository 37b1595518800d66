package io.tidemark.bench;

import io.tidemark.bench.kafka.Setup;
import io.tidemark.bench.table.FreshnessRun;
import io.tidemark.bench.table.FreshnessRun.Kind;
import io.tidemark.bench.table.FreshnessRun.Result;
import io.tidemark.bench.table.FreshnessRun.StoreUse;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Table topics from produce to queryable, and what landing costs in object-store requests: for each
 * table kind (append, upsert, CDC) and commit interval (1 s and 10 s by default), the time from
 * produce to visible in a fresh Iceberg scan (p50, p99), whether the table ended exactly as produced,
 * and (on S3Proxy) the object-store requests and bytes of the table path and of the log per GiB
 * produced. Prints the Markdown section and writes it to {@code docs/benchmarks.md} (section
 * {@value #TITLE}) unless {@code --no-docs}.
 *
 * <pre>
 *   bench/run-table-freshness.sh [--seconds N] [--rate RECORDS_PER_SECOND] [--record-bytes N] [--ids N]
 *       [--kinds append,upsert,cdc] [--intervals 1,10] [--warmup-seconds N] [--maintenance-interval-seconds N]
 *       [--delete-files-trigger N]
 *       [--storage s3proxy|local] [--dir DIR] [--no-docs]
 * </pre>
 */
public final class TableFreshnessBench {

  static final String TITLE = "## Table topics: produce-to-queryable and object-store cost (issue 14)";
  private static final double GIB = 1L << 30;
  private static final double MIB = 1L << 20;

  private TableFreshnessBench() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
    long seconds = 60;
    int rate = 1000;
    int recordBytes = 1024;
    int ids = 2000;
    long warmupSeconds = 15;
    long maintenanceSeconds = 30;
    int deleteFilesTrigger = 32;
    List<Kind> kinds = List.of(Kind.APPEND, Kind.UPSERT, Kind.CDC);
    List<Long> intervals = List.of(1L, 10L);
    FreshnessRun.Storage storage = FreshnessRun.Storage.S3PROXY;
    Path dir = Path.of("data", "bench-table");
    boolean docs = true;
    String usage = "usage: [--seconds N] [--rate RECORDS_PER_SECOND] [--record-bytes N] [--ids N] [--kinds append,upsert,cdc]"
        + " [--intervals 1,10] [--warmup-seconds N] [--maintenance-interval-seconds N] [--delete-files-trigger N]"
        + " [--storage s3proxy|local]"
        + " [--dir DIR] [--no-docs]";
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--seconds" -> { seconds = Long.parseLong(value); i++; }
        case "--rate" -> { rate = Integer.parseInt(value); i++; }
        case "--record-bytes" -> { recordBytes = Integer.parseInt(value); i++; }
        case "--ids" -> { ids = Integer.parseInt(value); i++; }
        case "--kinds" -> {
          kinds = Arrays.stream(value.split(",")).map(k -> Kind.valueOf(k.trim().toUpperCase(Locale.ROOT))).toList();
          i++;
        }
        case "--intervals" -> { intervals = Arrays.stream(value.split(",")).map(v -> Long.parseLong(v.trim())).toList(); i++; }
        case "--warmup-seconds" -> { warmupSeconds = Long.parseLong(value); i++; }
        case "--maintenance-interval-seconds" -> { maintenanceSeconds = Long.parseLong(value); i++; }
        case "--delete-files-trigger" -> { deleteFilesTrigger = Integer.parseInt(value); i++; }
        case "--storage" -> { storage = FreshnessRun.Storage.valueOf(value.toUpperCase(Locale.ROOT)); i++; }
        case "--dir" -> { dir = Path.of(value); i++; }
        case "--no-docs" -> docs = false;
        default -> throw new IllegalArgumentException("unknown argument " + args[i] + "; " + usage);
      }
    }
    double loadBefore = loadAverage();
    List<Result> results = new ArrayList<>();
    for (Kind kind : kinds) {
      for (long interval : intervals) {
        Path runDir = dir.resolve(kind.name().toLowerCase(Locale.ROOT) + "-" + interval + "s");
        Setup.deleteRecursively(runDir);
        FreshnessRun.Plan plan = new FreshnessRun.Plan(kind, storage, interval * 1000, seconds * 1000, rate, recordBytes,
            ids, warmupSeconds * 1000, maintenanceSeconds * 1000, deleteFilesTrigger);
        Result r = new FreshnessRun(runDir, plan).run();
        System.err.printf("%s %d s: %d produced, %d seen, table %s; scans p50 %.0f ms p99 %.0f ms max %.0f ms;"
            + " delete-file loads per scan p50 %.0f max %.0f; table requests %s, log requests %s%n", kind, interval,
            r.produced(), r.freshnessMs().length, r.tableCheck(), Result.percentile(r.scanMs(), 0.5),
            Result.percentile(r.scanMs(), 0.99), Result.percentile(r.scanMs(), 1.0),
            Result.percentile(r.deleteLoadsPerScan(), 0.5), Result.percentile(r.deleteLoadsPerScan(), 1.0),
            r.table().requests(), r.log().requests());
        results.add(r);
        Setup.deleteRecursively(runDir);
      }
    }
    String command = "bench/run-table-freshness.sh --seconds " + seconds + " --rate " + rate + " --record-bytes "
        + recordBytes + " --ids " + ids + " --kinds " + String.join(",", kinds.stream()
        .map(k -> k.name().toLowerCase(Locale.ROOT)).toList()) + " --intervals " + String.join(",",
        intervals.stream().map(String::valueOf).toList()) + " --warmup-seconds " + warmupSeconds
        + " --maintenance-interval-seconds " + maintenanceSeconds + " --delete-files-trigger " + deleteFilesTrigger
        + " --storage " + storage.name().toLowerCase(Locale.ROOT);
    String section = section(results, command, storage, loadBefore, loadAverage());
    System.out.println();
    System.out.println(section);
    if (docs) {
      BenchmarksPage.writeSection(Path.of("docs", "benchmarks.md"), TITLE, section);
    }
  }

  static String section(List<Result> results, String command, FreshnessRun.Storage storage, double loadBefore,
      double loadAfter) {
    StringBuilder s = new StringBuilder(TITLE).append("\n\n");
    s.append(String.format(Locale.ROOT, "Generated %s by the command below (load average %.1f before, %.1f after; "
        + "the machine has %d cores). One in-process server, a 4-partition table topic of JSON values per row, "
        + "storage %s. Freshness is from the producer's send time (in the value) to the first fresh catalog load and "
        + "scan (every %d ms) that shows the record: every row appended for append tables; for upsert and CDC tables "
        + "the row must be its id's latest in a snapshot, so records replaced within one round are never seen "
        + "(\"seen\" < produced). \"Table\" says whether the table ended exactly as produced (append: every record once; "
        + "upsert and CDC: the latest record per id, deleted ids absent). \"Scan\" is how long the reader took per new "
        + "snapshot (catalog load, planning, reading every row of an upsert or CDC table, only the new rows of an "
        + "append table): a record committed while a scan runs is seen by the next one.%n%n", Instant.now().truncatedTo(ChronoUnit.SECONDS),
        loadBefore, loadAfter, Runtime.getRuntime().availableProcessors(),
        storage == FreshnessRun.Storage.S3PROXY ? "S3Proxy on this machine (filesystem backend), the table warehouse in it"
            : "local files", 100));
    s.append("```\n").append(command).append("\n```\n\n");
    s.append("| table | commit interval | records produced | seen | p50 ms | p99 ms | max ms | p50 ms after warm-up"
        + " | p99 ms after warm-up | target p99 ms (interval + 1 s) | scan p50 ms | scan p99 ms | table |\n");
    s.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (Result r : results) {
      s.append(String.format(Locale.ROOT, "| %s | %d s | %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %d | %.0f | %.0f | %s |%n",
          r.plan().kind().name().toLowerCase(Locale.ROOT), r.plan().commitIntervalMs() / 1000, r.produced(),
          r.freshnessMs().length, Result.percentile(r.freshnessMs(), 0.5), Result.percentile(r.freshnessMs(), 0.99),
          Result.percentile(r.freshnessMs(), 1.0), Result.percentile(r.afterWarmupMs(), 0.5),
          Result.percentile(r.afterWarmupMs(), 0.99), r.plan().commitIntervalMs() + 1000, Result.percentile(r.scanMs(), 0.5),
          Result.percentile(r.scanMs(), 0.99), r.tableCheck()));
    }
    if (storage == FreshnessRun.Storage.S3PROXY) {
      s.append("\nObject-store requests and bytes per GiB produced (record keys and values), from the server's meters: "
          + "the table path (`tidemark_table_objectstore_*`: conversion, commits, maintenance every "
          + "`table.maintenance.interval.ms` as in the command) beside the log (`tidemark_objectstore_*`: WAL uploads, "
          + "compaction, controller). Extrapolated from the run's volume, so per-commit costs weigh more at a low rate. "
          + "The embedded SQLite catalog's commits are local, not object-store requests.\n\n");
      s.append("| table | commit interval | MiB produced | table PUTs / GiB | table GETs / GiB | table LISTs / GiB"
          + " | table DELETEs / GiB | table MiB written / GiB | table MiB read / GiB | log PUTs / GiB | log requests / GiB |\n");
      s.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
      for (Result r : results) {
        double perGib = GIB / Math.max(1, r.producedBytes());
        StoreUse t = r.table();
        StoreUse l = r.log();
        s.append(String.format(Locale.ROOT, "| %s | %d s | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |%n",
            r.plan().kind().name().toLowerCase(Locale.ROOT), r.plan().commitIntervalMs() / 1000,
            r.producedBytes() / MIB, t.writes() * perGib, op(t, "get") * perGib, op(t, "list") * perGib,
            op(t, "delete") * perGib, t.writtenBytes() / MIB * perGib, t.readBytes() / MIB * perGib,
            l.writes() * perGib, l.total() * perGib));
      }
    }
    return s.toString();
  }

  private static long op(StoreUse use, String operation) {
    return use.requests().getOrDefault(operation, 0L);
  }

  private static double loadAverage() {
    return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }
}
