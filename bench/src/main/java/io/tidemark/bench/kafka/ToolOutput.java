package io.tidemark.bench.kafka;

import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the summaries that Kafka's performance tools print (kafka-tools 4.4). Each parser throws
 * {@link IllegalArgumentException} naming what it looked for when the summary is missing, so a
 * changed tool output fails the run instead of producing empty cells. Stateless.
 */
final class ToolOutput {

  /** ProducerPerformance's final line; the tool counts only acknowledged records. MB means 2^20 bytes. */
  record Producer(long records, double recordsPerSecond, double mibPerSecond, double p50Ms, double p95Ms,
                  double p99Ms, double p999Ms, double steadyP99Ms) {}

  /** ConsumerPerformance's result row; {@code fetchMibPerSecond} leaves out the group join. */
  record Consumer(long records, double mibPerSecond, double fetchMibPerSecond) {}

  /** EndToEndLatency's summary: produce (acks as given) until the consumer sees the record, one at a time. */
  record EndToEnd(double averageMs, double p50Ms, double p99Ms, double p999Ms) {}

  private static final Pattern PRODUCER = Pattern.compile(
      "(\\d+) records sent, ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), [\\d.]+ ms avg latency, [\\d.]+ ms max latency, "
          + "(\\d+) ms 50th, (\\d+) ms 95th, (\\d+) ms 99th, (\\d+) ms 99\\.9th");
  /** The summary of the records after {@code --warmup-records} ("N steady state records sent, ..."). */
  private static final Pattern STEADY = Pattern.compile(
      "\\d+ steady state records sent, .*?, (\\d+) ms 99th, \\d+ ms 99\\.9th");
  private static final Pattern END_TO_END_AVERAGE = Pattern.compile("Avg latency: ([\\d.]+) ms");
  private static final Pattern END_TO_END_PERCENTILES =
      Pattern.compile("Percentiles: 50th = (\\d+), 99th = (\\d+), 99\\.9th = (\\d+)");
  private static final String CONSUMER_HEADER_START = "start.time, end.time,";

  private ToolOutput() {}

  static Producer producer(String output) {
    String summary = null;
    Matcher m = PRODUCER.matcher(output);
    while (m.find()) {
      summary = m.group();
    }
    if (summary == null) {
      throw new IllegalArgumentException("no ProducerPerformance summary ('N records sent, ... ms 99.9th') in the output");
    }
    Matcher last = PRODUCER.matcher(summary);
    last.find();
    return new Producer(Long.parseLong(last.group(1)), Double.parseDouble(last.group(2)), Double.parseDouble(last.group(3)),
        Double.parseDouble(last.group(4)), Double.parseDouble(last.group(5)), Double.parseDouble(last.group(6)),
        Double.parseDouble(last.group(7)), steadyP99(output));
  }

  /** The p99 of the steady-state summary (records after {@code --warmup-records}); NaN when the run had none. */
  private static double steadyP99(String output) {
    Matcher m = STEADY.matcher(output);
    double p99 = Double.NaN;
    while (m.find()) {
      p99 = Double.parseDouble(m.group(1));
    }
    return p99;
  }

  static Consumer consumer(String output) {
    List<String> lines = output.lines().toList();
    for (int i = 0; i + 1 < lines.size(); i++) {
      if (lines.get(i).startsWith(CONSUMER_HEADER_START)) {
        List<String> header = Arrays.stream(lines.get(i).split(",")).map(String::trim).toList();
        String[] row = lines.get(i + 1).split(",");
        if (row.length != header.size()) {
          throw new IllegalArgumentException("ConsumerPerformance row does not match its header: " + lines.get(i + 1));
        }
        return new Consumer(Long.parseLong(column(header, row, "data.consumed.in.nMsg")),
            Double.parseDouble(column(header, row, "MB.sec")), Double.parseDouble(column(header, row, "fetch.MB.sec")));
      }
    }
    throw new IllegalArgumentException("no ConsumerPerformance header ('" + CONSUMER_HEADER_START + " ...') in the output");
  }

  static EndToEnd endToEnd(String output) {
    Matcher average = END_TO_END_AVERAGE.matcher(output);
    Matcher percentiles = END_TO_END_PERCENTILES.matcher(output);
    if (!average.find() || !percentiles.find()) {
      throw new IllegalArgumentException("no EndToEndLatency summary ('Avg latency:' and 'Percentiles: 50th = ...') in the output");
    }
    return new EndToEnd(Double.parseDouble(average.group(1)), Double.parseDouble(percentiles.group(1)),
        Double.parseDouble(percentiles.group(2)), Double.parseDouble(percentiles.group(3)));
  }

  private static String column(List<String> header, String[] row, String name) {
    int index = header.indexOf(name);
    if (index < 0) {
      throw new IllegalArgumentException("ConsumerPerformance header has no column " + name + ": " + header);
    }
    return row[index].trim();
  }
}
