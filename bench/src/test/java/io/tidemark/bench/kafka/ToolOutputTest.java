package io.tidemark.bench.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ToolOutputTest {

  // Outputs captured from kafka-tools 4.4.0 runs of bench/run-kafka.sh --quick.
  private static final String PRODUCER = """
      # java -Xmx512m -cp kafka-lib/* org.apache.kafka.tools.ProducerPerformance --topic t --num-records 10000
      4812 records sent, 961.8 records/sec (0.94 MB/sec), 1204.3 ms avg latency, 2100.0 ms max latency.
      10000 records sent, 2116.402116 records/sec (2.07 MB/sec), 1807.00 ms avg latency, 2541.00 ms max latency, \
      1857 ms 50th, 2503 ms 95th, 2534 ms 99th, 2541 ms 99.9th.
      """;
  private static final String CONSUMER = """
      start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, \
      fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
      2026-12-02 15:28:03:236, 2026-12-02 15:28:08:358, 9.7656, 1.9066, 10000, 1952.3624, 4665, 457, 21.3690, 21881.8381
      """;
  private static final String END_TO_END = """
      0\t149.184605
      Avg latency: 6.3609 ms
      Percentiles: 50th = 4, 99th = 18, 99.9th = 149
      """;

  @Test
  void producerSummaryIsTheFinalLineWithPercentiles() {
    // Goal: the interim progress lines are skipped and every figure of the summary is read.
    ToolOutput.Producer p = ToolOutput.producer(PRODUCER);
    assertThat(p.records()).isEqualTo(10_000);
    assertThat(p.recordsPerSecond()).isEqualTo(2116.402116);
    assertThat(p.mibPerSecond()).isEqualTo(2.07);
    assertThat(p.p50Ms()).isEqualTo(1857);
    assertThat(p.p95Ms()).isEqualTo(2503);
    assertThat(p.p99Ms()).isEqualTo(2534);
    assertThat(p.p999Ms()).isEqualTo(2541);
    assertThat(p.steadyP99Ms()).isNaN();
  }

  @Test
  void steadyStateSummaryOfAWarmedUpRunIsReadApart() {
    // Goal: with --warmup-records the whole-run figures stay those of the whole run, and the steady-state p99 is read.
    ToolOutput.Producer p = ToolOutput.producer(PRODUCER + """
        8500 steady state records sent, 499.941180 records/sec (0.49 MB/sec), 5.20 ms avg latency, 31.00 ms max \
        latency, 5 ms 50th, 9 ms 95th, 17 ms 99th, 29 ms 99.9th.
        """);
    assertThat(p.records()).isEqualTo(10_000);
    assertThat(p.p99Ms()).isEqualTo(2534);
    assertThat(p.steadyP99Ms()).isEqualTo(17);
  }

  @Test
  void consumerRowIsReadByColumnName() {
    // Goal: the fetch-phase rate and the record count come from the columns of that name.
    ToolOutput.Consumer c = ToolOutput.consumer("noise\n" + CONSUMER);
    assertThat(c.records()).isEqualTo(10_000);
    assertThat(c.mibPerSecond()).isEqualTo(1.9066);
    assertThat(c.fetchMibPerSecond()).isEqualTo(21.3690);
  }

  @Test
  void endToEndSummaryIsRead() {
    // Goal: average and the three percentiles of EndToEndLatency are read.
    ToolOutput.EndToEnd e = ToolOutput.endToEnd(END_TO_END);
    assertThat(e.averageMs()).isEqualTo(6.3609);
    assertThat(e.p50Ms()).isEqualTo(4);
    assertThat(e.p99Ms()).isEqualTo(18);
    assertThat(e.p999Ms()).isEqualTo(149);
  }

  @Test
  void missingSummariesFailWithWhatWasExpected() {
    // Goal: a tool that died before its summary fails the measurement instead of giving an empty cell.
    String crashed = "org.apache.kafka.common.errors.TimeoutException: Topic t not present in metadata after 60000 ms.";
    assertThatThrownBy(() -> ToolOutput.producer(crashed)).hasMessageContaining("ProducerPerformance summary");
    assertThatThrownBy(() -> ToolOutput.consumer(crashed)).hasMessageContaining("ConsumerPerformance header");
    assertThatThrownBy(() -> ToolOutput.endToEnd("Avg latency: 1.0 ms")).hasMessageContaining("EndToEndLatency summary");
    assertThatThrownBy(() -> ToolOutput.consumer("start.time, end.time, MB.sec\n1, 2\n"))
        .hasMessageContaining("does not match its header");
  }
}
