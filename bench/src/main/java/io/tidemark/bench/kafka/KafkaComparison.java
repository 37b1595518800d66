package io.tidemark.bench.kafka;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs the plan against every {@link Contender}. The three nodes are started first and stay up for
 * the whole run, idle while another is measured; measurements never overlap. Each node first runs
 * the workload once unmeasured (JIT warm-up for every JVM alike). Each repetition
 * measures every contender at every partition count, in an order rotated per repetition, so that
 * load changes on a shared machine fall on all of them alike. A measurement creates fresh topics
 * and runs ProducerPerformance (no rate limit), ConsumerPerformance on what it wrote,
 * ProducerPerformance at the plan's fixed rate, and EndToEndLatency. A failed tool run is recorded
 * in its {@link Cell} and the run goes on; a node that dies or never gets ready fails its cells
 * and is left out from then on. Runs on the caller's thread.
 */
final class KafkaComparison {

  private static final Duration READY_TIMEOUT = Duration.ofMinutes(3);

  private final Setup setup;
  private final Plan plan;
  private final KafkaTools tools;

  KafkaComparison(Setup setup, Plan plan, KafkaTools tools) {
    this.setup = setup;
    this.plan = plan;
    this.tools = tools;
  }

  /** Measures every contender; the cells are keyed by contender, then partition count. */
  Map<Contender, Map<Integer, Cell>> run() throws Exception {
    Map<Contender, Map<Integer, Cell>> results = new EnumMap<>(Contender.class);
    Map<Contender, BrokerNode> nodes = new EnumMap<>(Contender.class);
    try {
      for (Contender contender : Contender.values()) {
        Map<Integer, Cell> cells = new LinkedHashMap<>();
        plan.partitions().forEach(p -> cells.put(p, new Cell()));
        results.put(contender, cells);
        progress("starting " + contender.label());
        BrokerNode node = null;
        try {
          node = contender.start(setup);
          nodes.put(contender, node);
          node.awaitReady(READY_TIMEOUT);
        } catch (InterruptedException e) {
          throw e;
        } catch (Exception e) {
          leaveOut(contender, e, nodes, results);
        }
      }
      // every JVM first runs the workload once unmeasured, so that no repetition pays another's JIT warm-up
      for (Contender contender : Contender.values()) {
        BrokerNode node = nodes.get(contender);
        if (node == null) {
          continue;
        }
        try {
          warmUp(node);
        } catch (InterruptedException e) {
          throw e;
        } catch (Exception e) {
          leaveOut(contender, e, nodes, results);
        }
      }
      for (int repetition = 1; repetition <= plan.repetitions(); repetition++) {
        for (int partitions : plan.partitions()) {
          for (Contender contender : order(repetition)) {
            BrokerNode node = nodes.get(contender);
            if (node == null) {
              continue;
            }
            try {
              measure(node, partitions, repetition, results.get(contender).get(partitions));
            } catch (InterruptedException e) {
              throw e;
            } catch (Exception e) {
              leaveOut(contender, e, nodes, results);
            }
          }
        }
      }
    } finally {
      for (BrokerNode node : nodes.values()) {
        node.close();
      }
    }
    return results;
  }

  /** The contenders in their order for one repetition: rotated by one per repetition. */
  static List<Contender> order(int repetition) {
    List<Contender> order = new ArrayList<>(List.of(Contender.values()));
    Collections.rotate(order, -(repetition - 1));
    return order;
  }

  private static void leaveOut(Contender contender, Exception e, Map<Contender, BrokerNode> nodes,
                               Map<Contender, Map<Integer, Cell>> results) throws InterruptedException, IOException {
    progress(contender.label() + " failed and is left out: " + e.getMessage());
    results.get(contender).values().forEach(cell -> cell.fail(e.getMessage()));
    BrokerNode node = nodes.remove(contender);
    if (node != null) {
      node.close();
    }
  }

  /** One unmeasured produce and consume of the throughput run's size at every partition count. */
  private void warmUp(BrokerNode node) throws Exception {
    for (int partitions : plan.partitions()) {
      progress(node.label() + ", " + partitions + " partition(s), warm-up (not measured)");
      String topic = "warm-up-p" + partitions;
      node.createTopic(topic, partitions);
      tools.produce(node, topic, plan.throughputRecords(), -1);
      tools.consume(node, topic, plan.throughputRecords());
      node.requireAlive();
    }
  }

  private void measure(BrokerNode node, int partitions, int repetition, Cell cell) throws Exception {
    String suffix = "-p" + partitions + "-r" + repetition;
        progress(node.label() + ", " + partitions + " partition(s), repetition " + repetition);
    try {
      node.createTopic("throughput" + suffix, partitions);
      ToolOutput.Producer max = tools.produce(node, "throughput" + suffix, plan.throughputRecords(), -1);
      cell.add(Figure.PRODUCE_MIB_PER_S, max.mibPerSecond());
      cell.add(Figure.PRODUCE_P99_AT_MAX_MS, max.p99Ms());
      ToolOutput.Consumer consumed = tools.consume(node, "throughput" + suffix, plan.throughputRecords());
      cell.add(Figure.CONSUME_MIB_PER_S, consumed.fetchMibPerSecond());
    } catch (KafkaTools.ToolFailure e) {
      cell.fail(e.getMessage());
    }
    node.requireAlive();
    try {
      node.createTopic("latency" + suffix, partitions);
      ToolOutput.Producer fixed = tools.produce(node, "latency" + suffix, plan.latencyRecords(),
          plan.latencyRecordsPerSecond());
      cell.add(Figure.PRODUCE_P50_MS, fixed.p50Ms());
      cell.add(Figure.PRODUCE_P99_MS, fixed.p99Ms());
      cell.add(Figure.PRODUCE_P999_MS, fixed.p999Ms());
    } catch (KafkaTools.ToolFailure e) {
      cell.fail(e.getMessage());
    }
    node.requireAlive();
    try {
      node.createTopic("end-to-end" + suffix, partitions);
      ToolOutput.EndToEnd e2e = tools.endToEnd(node, "end-to-end" + suffix, plan.endToEndRecords());
      cell.add(Figure.END_TO_END_P50_MS, e2e.p50Ms());
      cell.add(Figure.END_TO_END_P99_MS, e2e.p99Ms());
      cell.add(Figure.END_TO_END_P999_MS, e2e.p999Ms());
    } catch (KafkaTools.ToolFailure e) {
      cell.fail(e.getMessage());
    }
    node.requireAlive();
  }

  static void progress(String message) {
    System.err.println("run-kafka: " + message);
  }
}
