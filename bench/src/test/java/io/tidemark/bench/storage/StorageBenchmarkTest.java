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
    assertThat(section).contains("### Targets (issue 2)").contains("### Targets (issue 15)");
    assertThat(section).containsPattern("Load average \\(1 min\\) [0-9.]+ at the start, [0-9.]+ at the end\\.");
    // Four targets of issue 2 and three of issue 15, each met, not met, or not measured with a reason.
    assertThat(section.lines().filter(l -> l.matches("\\| .*\\| (met|not met|not measured: .+) \\|"))).hasSize(7);
    assertThat(dir.resolve("run")).doesNotExist();
  }

  @Test
  void walLoadGeneratorsMeasureAndTrimBehindDurableAppends() throws Exception {
    // Goal: the closed and open loops count what completed, report latencies, and trim so the log stays small.
    MemoryWriteAheadLog wal = new MemoryWriteAheadLog();
    wal.recover();
    wal.start();
    WalAppends appends = new WalAppends(wal);
    Measurement closed = appends.closedLoop(1024, 4, 20_000_000L, 1_000_000_000L); // long enough on a loaded machine
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

  @Test
  void aNewSectionKeepsThePreviousRunsTablesUnderEarlierRuns() {
    // Goal: rewriting the section keeps every earlier run's tables (one heading level down, under its date,
    // mode and load), newest first, so figures from before a change stay next to those after it.
    String first = "## Storage engine\n\nGenerated.\n\nMode `full`: every figure ... Machine: Linux, JDK 25.0.3+9-LTS, "
        + "2026-12-02T13:44:00Z UTC.\n\n### WAL appends\n\n| a | b |\n| 1 | 2 |\n\n### Targets (issue 2)\n\n| t | 58% |\n";
    String kept = StorageReport.earlierRuns(first);
    assertThat(kept).startsWith("#### Run of 2026-12-02T13:44:00Z (mode full)\n\n##### WAL appends\n\n| a | b |")
        .contains("##### Targets (issue 2)\n\n| t | 58% |").doesNotContain("Generated.");
    String second = "## Storage engine\n\nMode `quick`: x. Machine: y, 2026-12-04T14:00:00Z UTC. Load average (1 min) "
        + "3.5 at the start, 4.25 at the end.\n\n### Targets (issue 15)\n\n| t | 90% |\n\n"
        + StorageReport.EARLIER_RUNS + "\n\n" + kept;
    String both = StorageReport.earlierRuns(second);
    assertThat(both).startsWith("#### Run of 2026-12-04T14:00:00Z (mode quick, load average 3.5 at the start, 4.25 at"
        + " the end)\n\n##### Targets (issue 15)\n\n| t | 90% |\n\n#### Run of 2026-12-02T13:44:00Z (mode full)");
    assertThat(both).contains("| t | 58% |");
    assertThat(StorageBenchmark.section("# B\n\n## Kafka\n\nk\n\n" + second + "\n## Tables\n\nt\n"))
        .startsWith("## Storage engine\n").contains("| t | 58% |").doesNotContain("## Tables").doesNotContain("## Kafka");
  }
}
