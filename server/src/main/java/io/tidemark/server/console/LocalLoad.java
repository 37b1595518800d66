package io.tidemark.server.console;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Statistic;
import io.tidemark.metadata.controller.NodeLoad;
import io.tidemark.server.metrics.NodeMeters;
import java.util.Collection;
import java.util.function.LongSupplier;

/**
 * This node's load, measured from its own meters: process and system CPU, and per second the Kafka
 * bytes in ({@value #BYTES_IN}) and out ({@value #BYTES_OUT}), Kafka requests ({@value #REQUESTS})
 * and WAL bytes written ({@value #WAL_BYTES}), each summed over all tags. The same measurement feeds
 * the console's cluster page and the reports every node sends to the controller leader, from which
 * the other nodes' consoles show it. A rate covers the time since the previous measurement (see
 * {@link Rates}), so it is unknown ({@link Double#NaN}) until the second one.
 *
 * <p>Thread-safe: {@link Rates} is the only mutable state.
 */
public final class LocalLoad {

  static final String BYTES_IN = "tidemark.kafka.produced.bytes";
  static final String BYTES_OUT = "tidemark.kafka.fetched.bytes";
  static final String REQUESTS = "tidemark.kafka.requests";
  static final String WAL_BYTES = "tidemark.wal.appended.bytes";

  private final MeterRegistry meters;
  private final LongSupplier clockMs;
  private final Rates rates = new Rates(16, 10 * 60_000L);

  LocalLoad(MeterRegistry meters, LongSupplier clockMs) {
    this.meters = meters;
    this.clockMs = clockMs;
  }

  /** Measures now. */
  public NodeLoad measure() {
    long now = clockMs.getAsLong();
    return new NodeLoad(gauge(NodeMeters.PREFIX + "process.cpu.usage"), gauge(NodeMeters.PREFIX + "system.cpu.usage"),
        rate(BYTES_IN, now), rate(BYTES_OUT, now), rate(REQUESTS, now), rate(WAL_BYTES, now));
  }

  private double gauge(String name) {
    Gauge g = meters.find(name).gauge();
    return g == null ? Double.NaN : g.value();
  }

  /** The per-second rate of the sum of every meter named {@code name} (all tags), or NaN while unknown. */
  private double rate(String name, long nowMs) {
    Double total = total(meters.find(name).meters());
    Double rate = total == null ? null : rates.sample(name, total, nowMs);
    return rate == null ? Double.NaN : rate;
  }

  static Double total(Collection<Meter> found) {
    if (found.isEmpty()) {
      return null;
    }
    double sum = 0;
    for (Meter m : found) {
      for (Measurement measurement : m.measure()) {
        if (measurement.getStatistic() == Statistic.COUNT || measurement.getStatistic() == Statistic.TOTAL) {
          sum += measurement.getValue();
          break;
        }
      }
    }
    return sum;
  }
}
