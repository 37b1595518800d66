package io.tidemark.bench.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.bench.BenchmarksPage;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ComparisonReportTest {

  private static final ComparisonReport.Environment ENV = new ComparisonReport.Environment("4.4.0", 2, "3.10, 2.00, 1.00",
      "4.00, 3.00, 2.00", "25", "-Xmx2g", "ext4 (/dev/vda)", "2026-12-02T16:00:00Z");

  @Test
  void targetsAreJudgedFromTheMediansAgainstTheRightKafka() {
    // Goal: each target compares Tidemark's median with the Kafka run it names, and says met or not met.
    Plan plan = new Plan("full", 3, List.of(1), 1000, 100, 1000, 10);
    Map<Contender, Map<Integer, Cell>> results = results(plan);
    fill(results.get(Contender.TIDEMARK).get(1), 90, 80, 100);     // median produce 90 MiB/s, p99 12 ms
    fill(results.get(Contender.KAFKA_DURABLE).get(1), 60, 70, 80);  // median 70, p99 12 ms
    fill(results.get(Contender.KAFKA_DEFAULT).get(1), 150, 100, 120); // median 120
    String section = ComparisonReport.render(plan, results, ENV, "bench/run-kafka.sh");
    assertThat(section).startsWith("## Kafka comparison\n").contains("```\nbench/run-kafka.sh\n```")
        .contains("load average 3.10, 2.00, 1.00 at the start").contains("median of 3 repetition(s)");
    assertThat(section).contains("| throughput ≥ 1.0× durable Kafka | 1 | 90.0 vs 70.0 MiB/s = 1.29× | met |");
    assertThat(section).contains("| throughput ≥ 0.8× default Kafka | 1 | 90.0 vs 120.0 MiB/s = 0.75× | not met |");
    assertThat(section).contains("| produce p99 ≤ durable Kafka's | 1 | 12 vs 12 ms = 1.00× | met |");
    assertThat(section).contains("| Tidemark | 1 | 90.0 (80.0–100.0) | 12 | 12 / 12 (12–12) / 12 |")
        .doesNotContain("### Failures");
    assertThat(ComparisonReport.anyFailure(results)).isFalse();
  }

  @Test
  void failedMeasurementsAreListedAndTheirTargetsNotJudged() {
    // Goal: a contender without figures leaves its targets "not measured" and the failure is in the section.
    Plan plan = Plan.quick(Optional.empty());
    Map<Contender, Map<Integer, Cell>> results = results(plan);
    results.values().forEach(cells -> cells.values().forEach(cell -> fill(cell, 10, 10, 10)));
    Cell empty = new Cell();
    empty.fail("ProducerPerformance exited with 1; log ends with:\nTimeoutException");
    results.get(Contender.TIDEMARK).put(16, empty);
    String section = ComparisonReport.render(plan, results, ENV, "bench/run-kafka.sh --quick");
    assertThat(section).contains("| throughput ≥ 1.0× durable Kafka | 16 | — | not measured (see failures) |");
    assertThat(section).contains("| throughput ≥ 1.0× durable Kafka | 1 | 10.0 vs 10.0 MiB/s = 1.00× | met |");
    assertThat(section).contains("### Failures\n\n- Tidemark, 16 partition(s): ProducerPerformance exited with 1; log ends with:\n");
    assertThat(ComparisonReport.anyFailure(results)).isTrue();
  }

  @Test
  void theSectionReplacesOnlyItselfInTheBenchmarksPage() {
    // Goal: writing the Kafka section keeps the storage and other sections as they were.
    String page = "# Benchmarks\n\nintro\n\n## Storage engine\n\ns\n\n## Kafka comparison\n\nold\n\n## Tables\n\nt\n";
    String updated = BenchmarksPage.replaceSection(page, ComparisonReport.SECTION_TITLE, "## Kafka comparison\n\nnew\n");
    assertThat(updated).isEqualTo("# Benchmarks\n\nintro\n\n## Storage engine\n\ns\n\n## Kafka comparison\n\nnew\n\n## Tables\n\nt\n");
    assertThat(BenchmarksPage.replaceSection("# B\n\n## Storage engine\n\ns\n", ComparisonReport.SECTION_TITLE, "## Kafka comparison\n\nk\n"))
        .isEqualTo("# B\n\n## Storage engine\n\ns\n\n## Kafka comparison\n\nk\n");
  }

  @Test
  void cellMediansAndRotatedOrder() {
    // Goal: medians handle even counts and ignore NaN; every contender leads one repetition in turn.
    assertThat(Cell.median(List.of(4.0, 1.0, Double.NaN, 3.0, 2.0))).isEqualTo(2.5);
    assertThat(Cell.median(List.of())).isNaN();
    assertThat(KafkaComparison.order(1)).containsExactly(Contender.TIDEMARK, Contender.KAFKA_DURABLE, Contender.KAFKA_DEFAULT);
    assertThat(KafkaComparison.order(2)).containsExactly(Contender.KAFKA_DURABLE, Contender.KAFKA_DEFAULT, Contender.TIDEMARK);
    assertThat(KafkaComparison.order(4)).isEqualTo(KafkaComparison.order(1));
  }

  @Test
  void onlyTheDurableKafkaFsyncsEveryAppend() {
    // Goal: the two Kafka runs differ in the flush setting only, and every port is the one given.
    String durable = ApacheKafka.serverProperties(40001, 40002, Path.of("/tmp/x"), true);
    String fast = ApacheKafka.serverProperties(40001, 40002, Path.of("/tmp/x"), false);
    assertThat(durable).contains("\nlog.flush.interval.messages=1\n").contains("listeners=PLAINTEXT://127.0.0.1:40001,"
        + "CONTROLLER://127.0.0.1:40002").contains("controller.quorum.voters=1@127.0.0.1:40002");
    assertThat(fast).doesNotContain("log.flush").isEqualTo(durable.substring(0, durable.indexOf("# Durable")));
    assertThat(TidemarkNode.properties(Path.of("/tmp/d"), 40003, 40004, 40005)).contains("kafka.listener.port=40003\n")
        .contains("admin.port=40004\n").contains("registry.port=40005\n").contains("data.dir=/tmp/d\n");
  }

  private static Map<Contender, Map<Integer, Cell>> results(Plan plan) {
    Map<Contender, Map<Integer, Cell>> results = new EnumMap<>(Contender.class);
    for (Contender contender : Contender.values()) {
      Map<Integer, Cell> cells = new LinkedHashMap<>();
      plan.partitions().forEach(p -> cells.put(p, new Cell()));
      results.put(contender, cells);
    }
    return results;
  }

  /** Three repetitions with the given produce rates; every other figure is 12 (ms) or 50 (MiB/s). */
  private static void fill(Cell cell, double... produceMibPerSecond) {
    for (double rate : produceMibPerSecond) {
      cell.add(Figure.PRODUCE_MIB_PER_S, rate);
      for (Figure figure : Figure.values()) {
        if (figure != Figure.PRODUCE_MIB_PER_S) {
          cell.add(figure, figure == Figure.CONSUME_MIB_PER_S ? 50 : 12);
        }
      }
    }
  }
}
