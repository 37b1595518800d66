package io.tidemark.bench.restart;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.bench.restart.RestartBenchmark.Plan;
import io.tidemark.bench.restart.RestartBenchmark.Restart;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RestartReportTest {

  @Test
  void sectionStatesMedianAndP99OfBothTimesThePhasesAndTheTarget() {
    // Goal: the section shows nearest-rank median and p99 of what was measured, and judges the target by the median.
    List<Restart> restarts = new ArrayList<>();
    for (int i = 1; i <= 10; i++) {
      restarts.add(new Restart(i, 1000L + i, 2000L + 100L * i, 3000L + i, 1000L + 10L * i, "t1-7", Map.of("WAL read", 500L + i)));
    }
    String section = RestartReport.render(new Plan(10, 10, 100, 10), restarts,
        new RestartReport.Environment(2, "1.0, 1.0, 1.0", "2.0, 2.0, 2.0", "25", "-Xmx2g", "2026-12-03T14:00:00Z"),
        "bench/run-restart.sh");
    assertThat(section).startsWith(RestartReport.SECTION_TITLE + "\n").contains("bench/run-restart.sh");
    assertThat(section).contains("| to listening (Kafka port accepts connections) | 1,005 | 1,010 | 1,001 | 1,010 |");
    assertThat(section).contains("| to first acknowledged produce (acks=all) | 2,500 | 3,000 | 2,100 | 3,000 |");
    assertThat(section).contains("| WAL read | 505 | 510 |");
    assertThat(section).contains("| of it, the JIT compiler threads (C1, C2) | 1,050 | 1,100 | 1,010 | 1,100 |");
    assertThat(section).contains("| 3 | 1,003 | 2,300 | 3,003 | 1,030 | t1-7 |");
    assertThat(section).contains("| median 2,500 ms, p99 3,000 ms | met (median) |");
    for (int i = 0; i < 6; i++) {
      restarts.set(i, new Restart(i + 1, 1000, 9000, 3000, 1000, "t1-7", Map.of()));
    }
    assertThat(RestartReport.render(new Plan(10, 10, 100, 10), restarts,
        new RestartReport.Environment(2, "", "", "", "", ""), "c")).contains("| not met |");
  }

  @Test
  void phasesAreReadFromTheNodesLogRelativeToTheSpawn() {
    // Goal: each phase is the first matching line's log time minus the spawn time.
    long spawned = Instant.parse("2026-12-03T14:00:00.000Z").toEpochMilli();
    String log = """
        2026-12-03T14:00:00.900Z [main] INFO TidemarkServer - starting node 0 with data in /d (roles [CONTROLLER, BROKER])
        2026-12-03T14:00:01.200Z [main] INFO ControllerLink - node 0 registered with the controller quorum {0=x} at epoch 3
        2026-12-03T14:00:01.300Z [tidemark-engine-loop-0] INFO StreamEngine - node 0 recovered 10 WAL records of 5 streams
        2026-12-03T14:00:01.900Z [main] INFO KafkaServer - Kafka listener on 127.0.0.1:9092 (epoll)
        2026-12-03T14:00:02.500Z [main] INFO TidemarkServer - node 0 is running
        """;
    Map<String, Long> phases = RestartBenchmark.phases(log, spawned);
    assertThat(phases).containsEntry("JVM started, first log line", 900L)
        .containsEntry("registered with the controller", 1200L).containsEntry("WAL read", 1300L)
        .containsEntry("Kafka listener bound", 1900L).containsEntry("node running (registry, table topics)", 2500L)
        .doesNotContainKey("storage recovered");
  }
}
