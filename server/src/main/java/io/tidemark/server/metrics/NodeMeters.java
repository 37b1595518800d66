package io.tidemark.server.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.util.function.Consumer;

/**
 * The node's meter registry and the conventions every exported name follows (docs/metrics.md):
 * each meter is under the {@code tidemark_} prefix (the JVM and process meters of Micrometer's
 * binders too: {@code jvm.memory.used} is exported as {@code tidemark_jvm_memory_used_bytes}), in
 * base units (seconds, bytes), counters ending in {@code _total} (the Prometheus registry's own
 * naming). The one binder meter not in a base unit, {@code process.cpu.time} (nanoseconds), is
 * replaced by {@code tidemark_process_cpu_seconds_total}.
 *
 * <p>The filter is installed before any meter is registered, so no name escapes it. Stateless.
 */
public final class NodeMeters {

  /** The prefix of every exported meter (in Micrometer's dotted form). */
  public static final String PREFIX = "tidemark.";

  private NodeMeters() {}

  /** A Prometheus registry with the naming conventions installed. */
  public static PrometheusMeterRegistry registry() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry.config()
        // Micrometer maps a meter's id through every filter before asking them whether to accept it
        .meterFilter(MeterFilter.deny(id -> id.getName().equals(PREFIX + "process.cpu.time")))
        .meterFilter(new MeterFilter() {
          @Override
          public Meter.Id map(Meter.Id id) {
            return id.getName().startsWith(PREFIX) ? id : id.withName(PREFIX + id.getName());
          }
        });
    return registry;
  }

  /** Binds the JVM and process meters; {@code closeOnStop} receives what must be closed with the node. */
  public static void bindJvm(PrometheusMeterRegistry registry, Consumer<AutoCloseable> closeOnStop) {
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    closeOnStop.accept(gc);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      FunctionCounter.builder("tidemark.process.cpu", os, o -> o.getProcessCpuTime() / 1e9).baseUnit("seconds")
          .description("CPU time used by the process").register(registry);
    }
  }
}
