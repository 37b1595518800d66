package io.tidemark.bench.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.wal.MemoryWriteAheadLog;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StorageBenchmarkTest {

  @Test
  void quickModeProducesTheWholeSectionWithMeasuredOrExplainedRows(@TempDir Path dir) throws Exception {
    // Goal: the quick mode runs in seconds and every part is either measured or says why it is not.
    String section = new StorageBenchmark(StorageBenchmark.Mode.QUICK, dir, Optional.empty(), "cmd --mode quick").run();
    assertThat(section).startsWith("## Storage engine\n").contains("cmd --mode quick");
    assertThat(section).containsPattern("\\| 4 KiB \\| [0-9.,]+ \\| [0-9,]+ \\| [0-9,]+ \\| [0-9,]+ \\|");
    assertThat(section).containsPattern("\\| 1 MiB \\| [0-9.,]+ \\|");
    assertThat(section).contains("### Targets (issue 2)");
    // Four targets, each met, not met, or not measured with a reason.
    assertThat(section.lines().filter(l -> l.matches("\\| .*\\| (met|not met|not measured: .+) \\|"))).hasSize(4);
    assertThat(dir.resolve("run")).doesNotExist();
  }

  @Test
  void walLoadGeneratorsMeasureAndTrimBehindDurableAppends() throws Exception {
    // Goal: the closed and open loops count what completed, report latencies, and trim so the log stays small.
    MemoryWriteAheadLog wal = new MemoryWriteAheadLog();
    wal.recover();
    wal.start();
    WalAppends appends = new WalAppends(wal);
    Measurement closed = appends.closedLoop(1024, 4, 20_000_000L, 100_000_000L);
    assertThat(closed.opsPerSecond()).isPositive();
    assertThat(closed.bytesPerSecond()).isEqualTo(closed.opsPerSecond() * 1024, org.assertj.core.data.Offset.offset(1.0));
    assertThat(closed.p99Micros()).isGreaterThanOrEqualTo(closed.p50Micros());
    Measurement open = appends.openLoop(1024, 2_000, 200_000_000L, 64);
    assertThat(open.opsPerSecond()).isBetween(1_000.0, 2_500.0);
    assertThat(wal.size()).isLessThan(2_000);
  }

  @Test
  void replacingTheSectionKeepsTheOtherSections() {
    // Goal: the benchmark rewrites only its own section of docs/benchmarks.md.
    String page = "# Benchmarks\n\nintro\n\n## Kafka\n\nk\n\n## Storage engine\n\nold\n\n## Tables\n\nt\n";
    String updated = StorageReport.replaceSection(page, "## Storage engine\n\nnew\n");
    assertThat(updated).contains("## Kafka\n\nk").contains("## Storage engine\n\nnew").contains("## Tables\n\nt")
        .doesNotContain("old");
    assertThat(StorageReport.replaceSection("", "## Storage engine\n\nx\n")).startsWith("# Benchmarks").endsWith("x\n");
    assertThat(StorageReport.replaceSection("# B\n\n## Kafka\n\nk\n", "## Storage engine\n\nx\n"))
        .isEqualTo("# B\n\n## Kafka\n\nk\n\n## Storage engine\n\nx\n");
  }

  @Test
  void medianIsTakenPerFigure() {
    // Goal: medians ignore NaN and handle even counts.
    Measurement m = Measurement.median(java.util.List.of(new Measurement(1, 10, 5, Double.NaN),
        new Measurement(3, 30, 1, Double.NaN), new Measurement(2, 20, 3, Double.NaN), new Measurement(4, 40, 7, Double.NaN)));
    assertThat(m.bytesPerSecond()).isEqualTo(2.5);
    assertThat(m.p50Micros()).isEqualTo(4);
    assertThat(m.p99Micros()).isNaN();
  }
}
