package io.tidemark.bench.storage;

import io.tidemark.stream.testing.S3ProxyFixture;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The storage-engine benchmark of issue 2: in one run, on one filesystem, the raw O_DIRECT +
 * fdatasync baseline, WAL appends (sizes × appenders, then an open loop at half the maximum
 * throughput), upload to S3Proxy with many streams (PUTs per GiB) and cold reads from S3Proxy.
 * Every cell is repeated and the median reported; the targets of the issue are checked against
 * the baseline measured in the same run. Parts of the engine that are not in this build are
 * reported as "not measured" with the reason.
 */
public final class StorageBenchmark {

  /** Quick: seconds, for the smoke test; full: the real figures. */
  public enum Mode {
    QUICK(1, 100, 30, 8L << 20, 100, 2L << 20, 4096, 64L << 20, 30),
    FULL(3, 3_000, 1_000, 256L << 20, 1_000, 1L << 30, 16 * 1024, 1L << 30, 90);

    final int repetitions;
    final long cellMillis;
    final long warmupMillis;
    final long rawFileBytes;
    final int streams;
    final long uploadBytes;
    final int uploadBatchBytes;
    final long walCapacityBytes;
    final long coldReadMaxSeconds;

    Mode(int repetitions, long cellMillis, long warmupMillis, long rawFileBytes, int streams, long uploadBytes,
         int uploadBatchBytes, long walCapacityBytes, long coldReadMaxSeconds) {
      this.coldReadMaxSeconds = coldReadMaxSeconds;
      this.walCapacityBytes = walCapacityBytes;
      this.repetitions = repetitions;
      this.cellMillis = cellMillis;
      this.warmupMillis = warmupMillis;
      this.rawFileBytes = rawFileBytes;
      this.streams = streams;
      this.uploadBytes = uploadBytes;
      this.uploadBatchBytes = uploadBatchBytes;
    }
  }

  static final int[] WAL_SIZES = {1024, 16 * 1024, 256 * 1024};
  static final int[] WAL_APPENDERS = {1, 16, 64};
  static final int HALF_LOAD_SIZE = 16 * 1024;
  static final int UPLOAD_APPENDERS = 16;
  static final int COLD_READERS = 8;

  private final Mode mode;
  private final Path dir;
  private final int repetitions;
  private final BenchWiring wiring;
  private final String command;

  public StorageBenchmark(Mode mode, Path dir, Optional<Integer> repetitions, String command) {
    this(mode, dir, repetitions, command, new BenchWiring(mode.walCapacityBytes));
  }

  StorageBenchmark(Mode mode, Path dir, Optional<Integer> repetitions, String command, BenchWiring wiring) {
    this.mode = mode;
    this.dir = dir.toAbsolutePath().normalize();
    this.repetitions = repetitions.orElse(mode.repetitions);
    this.wiring = wiring;
    this.command = command;
  }

  /** Runs every part and returns the markdown section "Storage engine". */
  public String run() throws Exception {
    return run("");
  }

  /**
   * Runs every part and returns the markdown section "Storage engine", keeping the tables of
   * {@code previousSection} (the section this one replaces; may be empty) under "Earlier runs".
   */
  public String run(String previousSection) throws Exception {
    Files.createDirectories(dir);
    StorageReport report = new StorageReport(mode.name().toLowerCase(java.util.Locale.ROOT), repetitions,
        mode.cellMillis, environment(), command, mode.streams, mode.uploadBytes, mode.uploadBatchBytes);
    String loadAtStart = loadAverage();
    try {
      runRaw(report);
      runWal(report);
      runUpload(report);
    } finally {
      deleteTree(dir.resolve("run"));
    }
    report.loadAverage(loadAtStart + " at the start, " + loadAverage() + " at the end");
    report.keepEarlierRuns(StorageReport.earlierRuns(previousSection));
    return report.render();
  }

  /** The 1-minute load average from {@code /proc/loadavg}, or "unknown". */
  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  /** The "Storage engine" section of a benchmarks page, or "" when it has none. */
  public static String section(String page) {
    int start = page.startsWith(StorageReport.SECTION_TITLE + "\n") ? 0
        : page.indexOf("\n" + StorageReport.SECTION_TITLE + "\n");
    if (start < 0) {
      return "";
    }
    if (start > 0) {
      start++;
    }
    int end = page.indexOf("\n## ", start + StorageReport.SECTION_TITLE.length());
    return page.substring(start, end < 0 ? page.length() : end + 1);
  }

  private void runRaw(StorageReport report) throws IOException {
    for (int size : new int[] {4096, 1 << 20}) {
      List<Measurement> runs = new ArrayList<>();
      boolean direct = true;
      for (int r = 0; r < repetitions; r++) {
        RawDirectWrites.Result result = RawDirectWrites.run(dir.resolve("run"), size, mode.rawFileBytes,
            mode.warmupMillis * 1_000_000, mode.cellMillis * 1_000_000);
        runs.add(result.measurement());
        direct &= result.direct();
      }
      report.raw(size, Measurement.median(runs), direct);
      log("raw " + size + " B: " + Measurement.median(runs) + (direct ? "" : " (buffered: O_DIRECT refused)"));
    }
  }

  private void runWal(StorageReport report) throws Exception {
    Availability<WalFactory> wal = wiring.blockWal();
    if (wal.value().isEmpty()) {
      report.walMissing(wal.reason());
      log("WAL: not measured: " + wal.reason());
      return;
    }
    WalFactory factory = wal.value().get();
    Map<String, List<Measurement>> cells = new LinkedHashMap<>();
    List<Measurement> halfLoad = new ArrayList<>();
    for (int r = 0; r < repetitions; r++) {
      Path walDir = dir.resolve("run").resolve("wal-" + r);
      try (var walLog = factory.open(walDir)) {
        WalAppends appends = new WalAppends(walLog);
        for (int size : WAL_SIZES) {
          for (int appenders : WAL_APPENDERS) {
            Measurement m = appends.closedLoop(size, appenders, mode.warmupMillis * 1_000_000, mode.cellMillis * 1_000_000);
            cells.computeIfAbsent(size + "x" + appenders, k -> new ArrayList<>()).add(m);
            log("WAL " + size + " B x " + appenders + ": " + m);
          }
        }
        double max16k = 0;
        for (int appenders : WAL_APPENDERS) {
          List<Measurement> ms = cells.get(HALF_LOAD_SIZE + "x" + appenders);
          max16k = Math.max(max16k, ms.get(ms.size() - 1).opsPerSecond());
        }
        Measurement half = appends.openLoop(HALF_LOAD_SIZE, max16k / 2, mode.cellMillis * 1_000_000, 4096);
        halfLoad.add(half);
        log("WAL open loop 16 KiB at " + Math.round(max16k / 2) + " appends/s: " + half);
      } finally {
        deleteTree(walDir);
      }
    }
    report.walDescription(factory.description());
    for (int size : WAL_SIZES) {
      for (int appenders : WAL_APPENDERS) {
        report.wal(size, appenders, Measurement.median(cells.get(size + "x" + appenders)));
      }
    }
    report.halfLoad(HALF_LOAD_SIZE, Measurement.median(halfLoad));
  }

  private void runUpload(StorageReport report) throws Exception {
    if (wiring.s3Engine().value().isEmpty()) {
      Availability<EngineFactory> engine = wiring.s3Engine();
      report.uploadMissing(engine.reason());
      log("upload and cold reads: not measured: " + engine.reason());
      return;
    }
    // A fresh engine factory (and metadata) per repetition: each repetition has its own bucket.
    List<UploadAndColdRead.Result> results = new ArrayList<>();
    for (int r = 0; r < repetitions; r++) {
      Path runDir = dir.resolve("run").resolve("upload-" + r);
      java.nio.file.Files.createDirectories(runDir.resolve("s3"));
      log("starting S3Proxy");
      try (S3ProxyFixture s3 = S3ProxyFixture.start(runDir.resolve("s3"));
           CountingObjectStorage storage = new CountingObjectStorage(wiring.s3Storage(s3))) {
        log("S3Proxy and the S3 client are up");
        UploadAndColdRead.Result result = UploadAndColdRead.run(wiring.s3Engine().value().orElseThrow(), storage,
            runDir.resolve("node"),
            mode.streams, mode.uploadBatchBytes, mode.uploadBytes, UPLOAD_APPENDERS, COLD_READERS,
            mode.coldReadMaxSeconds * 1_000_000_000L, mode == Mode.FULL ? 2 : 1);
        results.add(result);
        log(String.format("upload: %.1f MB/s, %d write requests for %d bytes (%.1f per GiB); cold reads %.1f MB/s, %d GETs;"
            + " one object at a time %.1f MB/s", result.uploadBytesPerSecond() / 1e6, result.writeRequests(),
            result.uploadedBytes(), result.putsPerGib(), result.coldReadBytesPerSecond() / 1e6, result.getRequests(),
            result.coldReadOneObjectBytesPerSecond() / 1e6));
      } finally {
        deleteTree(runDir);
      }
    }
    report.upload(results);
  }

  private String environment() throws IOException {
    FileStore store = Files.getFileStore(dir);
    return String.format("%s, %d CPUs, JDK %s, filesystem %s (%s) at `%s`, %s UTC",
        System.getProperty("os.name") + " " + System.getProperty("os.arch"),
        Runtime.getRuntime().availableProcessors(), Runtime.version(), store.type(), store.name(), dir,
        Instant.now().truncatedTo(ChronoUnit.MINUTES));
  }

  private static final long STARTED_NANOS = System.nanoTime();

  private static void log(String line) {
    System.out.printf("bench [%6.1f s]: %s%n", (System.nanoTime() - STARTED_NANOS) / 1e9, line);
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    Files.walkFileTree(root, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        Files.delete(file);
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
        Files.delete(d);
        return FileVisitResult.CONTINUE;
      }
    });
  }

  /** Replaces (or appends) the "Storage engine" section of a benchmarks page. */
  public static String replaceSection(String page, String section) {
    return StorageReport.replaceSection(page, section);
  }
}
