package io.tidemark.broker.telemetry;

import io.tidemark.broker.cluster.ResourceConfigStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;

/**
 * Client-metrics subscriptions (KIP-714; {@code kafka-client-metrics}, {@code kafka-configs
 * --entity-type client-metrics}): config resources of type CLIENT_METRICS, each naming the metrics
 * it wants ({@code metrics}, name prefixes, {@code *} for all), how often ({@code interval.ms}) and
 * which clients ({@code match}: {@code client_id}, {@code client_instance_id},
 * {@code client_source_address} and the other selectors, each a regular expression that must match
 * the whole value). Kept in the cluster's {@link ResourceConfigStore} (controller config records of
 * resource type 16), so every broker hands out the same subscription and they survive restarts.
 *
 * <p>A client is known by its instance id, client id, source address and port, and the software
 * name and version it sent in its connection's last valid ApiVersions request ({@code unknown}
 * for both when it sent none, as Kafka). Stateless apart from the store; thread-safe.
 */
public final class ClientMetricsSubscriptions {

  public static final String METRICS = "metrics";
  public static final String INTERVAL_MS = "interval.ms";
  public static final String MATCH = "match";
  /** Kafka's default and bounds of {@code interval.ms}. */
  public static final int DEFAULT_INTERVAL_MS = 300_000;
  static final int MIN_INTERVAL_MS = 100;
  static final int MAX_INTERVAL_MS = 3_600_000;
  static final List<String> SELECTORS = List.of("client_instance_id", "client_id", "client_software_name", "client_software_version",
      "client_source_address", "client_source_port");

  /** What one client asks with: the values the {@code match} selectors compare against. */
  public record Client(String instanceId, String clientId, String softwareName, String softwareVersion, String sourceAddress,
      String sourcePort) {}

  /** The subscription a client gets: the union of the metrics of every matching resource, the shortest interval. */
  public record Subscription(List<String> metrics, int intervalMs, List<String> resources) {}

  private final ResourceConfigStore store;

  public ClientMetricsSubscriptions(ResourceConfigStore store) {
    this.store = store;
  }

  private static byte type() {
    return ConfigResource.Type.CLIENT_METRICS.id();
  }

  /** Every subscription resource with its values, by name. */
  public Map<String, Map<String, String>> all() {
    return new TreeMap<>(store.configs(type()));
  }

  /** The declared keys with their defaults, in Kafka's order. */
  public static Map<String, String> defaults() {
    Map<String, String> d = new LinkedHashMap<>();
    d.put(METRICS, "");
    d.put(INTERVAL_MS, Integer.toString(DEFAULT_INTERVAL_MS));
    d.put(MATCH, "");
    return d;
  }

  /**
   * Replaces one resource's values by {@code next} after checking them (as Kafka answers: INVALID_REQUEST
   * for an unknown key or a bad interval, INVALID_CONFIG for a bad {@code match}; nothing is written
   * then); an empty map removes the
   * resource. With {@code validateOnly} stops after the checks.
   */
  public CompletableFuture<Void> replace(String name, Map<String, String> next, boolean validateOnly) {
    if (name == null || name.isEmpty()) {
      return CompletableFuture.failedFuture(new InvalidRequestException("a client-metrics resource needs a name"));
    }
    try {
      validate(next);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (validateOnly) {
      return CompletableFuture.completedFuture(null);
    }
    Map<String, String> current = store.configs(type()).getOrDefault(name, Map.of());
    List<ResourceConfigStore.Change> changes = new ArrayList<>();
    next.forEach((k, v) -> {
      if (!v.equals(current.get(k))) {
        changes.add(new ResourceConfigStore.Change(type(), name, k, v));
      }
    });
    current.keySet().stream().filter(k -> !next.containsKey(k)).forEach(k -> changes.add(new ResourceConfigStore.Change(type(), name, k,
        null)));
    return changes.isEmpty() ? CompletableFuture.completedFuture(null) : store.alter(changes);
  }

  /** The values of one resource as stored (empty when it has none). */
  public Map<String, String> stored(String name) {
    return store.configs(type()).getOrDefault(name, Map.of());
  }

  static void validate(Map<String, String> values) {
    for (Map.Entry<String, String> e : values.entrySet()) {
      String v = e.getValue() == null ? "" : e.getValue().trim();
      switch (e.getKey()) {
        case METRICS -> { }
        case INTERVAL_MS -> {
          int ms;
          try {
            ms = Integer.parseInt(v);
          } catch (NumberFormatException x) {
            throw new InvalidRequestException("Invalid value " + v + " for configuration interval.ms: Not a number of type INT");
          }
          if (ms < MIN_INTERVAL_MS || ms > MAX_INTERVAL_MS) {
            throw new InvalidRequestException("Invalid value " + ms + " for configuration interval.ms: must be between "
                + MIN_INTERVAL_MS + " and " + MAX_INTERVAL_MS);
          }
        }
        case MATCH -> selectors(v);
        default -> throw new InvalidRequestException("Unknown client metrics configuration: " + e.getKey());
      }
    }
  }

  /** The {@code match} list as selector → pattern; throws INVALID_CONFIG for an unknown selector or a bad expression. */
  static Map<String, Pattern> selectors(String match) {
    Map<String, Pattern> out = new LinkedHashMap<>();
    for (String item : match.split(",")) {
      if (item.isBlank()) {
        continue;
      }
      int eq = item.indexOf('=');
      String key = eq < 0 ? item.trim() : item.substring(0, eq).trim();
      if (eq < 0 || !SELECTORS.contains(key)) {
        throw new InvalidConfigurationException("Illegal client matching pattern: " + item.trim());
      }
      try {
        out.put(key, Pattern.compile(item.substring(eq + 1).trim()));
      } catch (PatternSyntaxException x) {
        throw new InvalidConfigurationException("Illegal regex pattern in client matching pattern: " + item.trim());
      }
    }
    return out;
  }

  /** The subscription of {@code client}: every resource whose selectors all match it. */
  public Subscription subscriptionOf(Client client) {
    java.util.LinkedHashSet<String> metrics = new java.util.LinkedHashSet<>(); // in the order given, as Kafka hands them out
    int interval = Integer.MAX_VALUE;
    List<String> matched = new ArrayList<>();
    for (Map.Entry<String, Map<String, String>> r : all().entrySet()) {
      Map<String, String> values = r.getValue();
      Map<String, Pattern> selectors;
      try {
        selectors = selectors(values.getOrDefault(MATCH, ""));
      } catch (RuntimeException stored) {
        continue; // validated before it was stored; never fail a client for it
      }
      if (!matches(selectors, client)) {
        continue;
      }
      matched.add(r.getKey());
      for (String m : values.getOrDefault(METRICS, "").split(",")) {
        if (!m.isBlank()) {
          metrics.add(m.trim());
        }
      }
      interval = Math.min(interval, Integer.parseInt(values.getOrDefault(INTERVAL_MS, Integer.toString(DEFAULT_INTERVAL_MS)).trim()));
    }
    List<String> requested = metrics.contains("*") ? List.of("*") : List.copyOf(metrics);
    return new Subscription(requested, interval == Integer.MAX_VALUE ? DEFAULT_INTERVAL_MS : interval, matched);
  }

  private static boolean matches(Map<String, Pattern> selectors, Client client) {
    for (Map.Entry<String, Pattern> s : selectors.entrySet()) {
      String value = switch (s.getKey()) {
        case "client_instance_id" -> client.instanceId();
        case "client_id" -> client.clientId();
        case "client_source_address" -> client.sourceAddress();
        case "client_source_port" -> client.sourcePort();
        case "client_software_name" -> client.softwareName();
        case "client_software_version" -> client.softwareVersion();
        default -> null;
      };
      if (value == null || !s.getValue().matcher(value).matches()) {
        return false;
      }
    }
    return true;
  }
}
