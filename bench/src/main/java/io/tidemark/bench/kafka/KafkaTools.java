package io.tidemark.bench.kafka;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs Kafka's own performance tools from kafka-tools (ProducerPerformance, ConsumerPerformance,
 * EndToEndLatency) as child JVMs against one bootstrap address, 1 KiB records and acks=all, and
 * parses their summaries. A tool that fails, times out or acknowledges fewer records than asked
 * throws {@link ToolFailure} with the end of its log. Owned by the benchmark's main thread.
 */
final class KafkaTools {

  static final int RECORD_BYTES = 1024;
  static final String ACKS = "all";

  private final Setup setup;
  private final Duration timeout;
  private final AtomicInteger runs = new AtomicInteger();

  KafkaTools(Setup setup, Duration timeout) {
    this.setup = setup;
    this.timeout = timeout;
  }

  /** A run of a tool that did not produce a usable result. */
  static final class ToolFailure extends Exception {
    ToolFailure(String message) {
      super(message);
    }
  }

  /** ProducerPerformance: {@code records} records; {@code recordsPerSecond} -1 for as fast as the broker takes them. */
  ToolOutput.Producer produce(BrokerNode node, String topic, long records, int recordsPerSecond) throws Exception {
    return produce(node, node.bootstrap(), null, topic, records, recordsPerSecond);
  }

  /**
   * ProducerPerformance against {@code bootstrap} (a listener of {@code node}) with the client settings of
   * {@code commandConfig} (a properties file, e.g. SASL_SSL; null: none).
   */
  ToolOutput.Producer produce(BrokerNode node, String bootstrap, Path commandConfig, String topic, long records,
      int recordsPerSecond) throws Exception {
    return produce(node, bootstrap, commandConfig, topic, records, recordsPerSecond, 0);
  }

  /**
   * As above; the first {@code warmupRecords} records (0: none) are left out of a second, steady-state
   * summary ({@link ToolOutput.Producer#steadyP99Ms()}).
   */
  ToolOutput.Producer produce(BrokerNode node, String bootstrap, Path commandConfig, String topic, long records,
      int recordsPerSecond, long warmupRecords) throws Exception {
    List<String> args = new ArrayList<>(List.of(
        "--bootstrap-server", bootstrap, "--topic", topic, "--num-records", Long.toString(records),
        "--record-size", Integer.toString(RECORD_BYTES), "--throughput", Integer.toString(recordsPerSecond),
        "--command-property", "acks=" + ACKS));
    if (commandConfig != null) {
      args.addAll(List.of("--command-config", commandConfig.toString()));
    }
    if (warmupRecords > 0) {
      args.addAll(List.of("--warmup-records", Long.toString(warmupRecords)));
    }
    String output = run(node.name() + "-" + topic, "ProducerPerformance", "org.apache.kafka.tools.ProducerPerformance", args);
    ToolOutput.Producer result = parse(output, ToolOutput::producer);
    if (result.records() < records) {
      throw new ToolFailure("ProducerPerformance: only " + result.records() + " of " + records
          + " records were acknowledged (see the errors in its log)");
    }
    return result;
  }

  /** ConsumerPerformance: reads {@code records} records from the start of {@code topic} in a new group. */
  ToolOutput.Consumer consume(BrokerNode node, String topic, long records) throws Exception {
    String output = run(node.name() + "-" + topic, "ConsumerPerformance", "org.apache.kafka.tools.ConsumerPerformance", List.of(
        "--bootstrap-server", node.bootstrap(), "--topic", topic, "--num-records", Long.toString(records),
        "--group", "bench-" + topic, "--timeout", Long.toString(Duration.ofSeconds(60).toMillis())));
    ToolOutput.Consumer result = parse(output, ToolOutput::consumer);
    if (result.records() < records) {
      throw new ToolFailure("ConsumerPerformance: read " + result.records() + " of " + records + " records");
    }
    return result;
  }

  /** EndToEndLatency: {@code records} records one at a time, each produced and then consumed. */
  ToolOutput.EndToEnd endToEnd(BrokerNode node, String topic, long records) throws Exception {
    String output = run(node.name() + "-" + topic, "EndToEndLatency", "org.apache.kafka.tools.EndToEndLatency", List.of(
        "--bootstrap-server", node.bootstrap(), "--topic", topic, "--num-records", Long.toString(records),
        "--producer-acks", ACKS, "--record-size", Integer.toString(RECORD_BYTES)));
    return parse(output, ToolOutput::endToEnd);
  }

  private String run(String context, String tool, String mainClass, List<String> args) throws Exception {
    String name = String.format("%03d-%s-%s", runs.incrementAndGet(), context, tool);
    ChildJvm child = ChildJvm.start(name, setup.java(), setup.toolJvmOptions(), setup.kafkaClasspath(), mainClass,
        new ArrayList<>(args), setup.logDir().resolve("tools").resolve(name + ".log"));
    OptionalInt exit = child.waitFor(timeout);
    if (exit.isEmpty()) {
      throw new ToolFailure(tool + " timed out after " + timeout + "; " + child.log() + " ends with:\n" + child.tail(15));
    }
    if (exit.getAsInt() != 0) {
      throw new ToolFailure(tool + " exited with " + exit.getAsInt() + "; " + child.log() + " ends with:\n" + child.tail(15));
    }
    return child.output();
  }

  private static <T> T parse(String output, java.util.function.Function<String, T> parser) throws ToolFailure {
    try {
      return parser.apply(output);
    } catch (IllegalArgumentException e) {
      throw new ToolFailure(e.getMessage());
    }
  }
}
