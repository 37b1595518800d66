package io.tidemark.broker.quota;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * Byte-rate quotas per user and client id, as Kafka enforces them: the quota of a request is the
 * first entity that sets the quota key, in Kafka's order (user + client id, user + default client,
 * user, default user + client id, default user + default client, default user, client id, default
 * client); clients that resolve to the same entity share its rate. A rate is measured over
 * {@code kafka.quota.window.num} samples of {@code kafka.quota.window.size.seconds} (never over less
 * than all but one sample, as Kafka's {@code Rate}); above the quota the throttle time is
 * {@code (rate - quota) / quota * window}, which is how long the client must stay silent for its
 * rate over the window to come back to the quota (capped at {@code kafka.quota.max.throttle.ms}).
 *
 * <p>Sensors are created on use and dropped when idle for two full windows once more than
 * {@link #MAX_SENSORS} exist. Time comes from the injected clock. Thread-safe (each rate has its
 * own monitor).
 */
public final class ClientQuotaManager {
  public static final String PRODUCER_BYTE_RATE = "producer_byte_rate";
  public static final String CONSUMER_BYTE_RATE = "consumer_byte_rate";
  /** Percent of one thread's time (Kafka's request quota); recorded in nanoseconds of handling. */
  public static final String REQUEST_PERCENTAGE = "request_percentage";
  /** KIP-599: partitions created or deleted per second (CreateTopics, CreatePartitions, DeleteTopics). */
  public static final String CONTROLLER_MUTATION_RATE = "controller_mutation_rate";
  private static final double NANOS_PER_PERCENT_SECOND = 1e9 / 100;
  static final int MAX_SENSORS = 10_000;

  private final QuotaConfig config;
  private final Supplier<Map<ClientQuotaEntity, Map<String, Double>>> quotas;
  private final LongSupplier nowMs;
  private final ConcurrentHashMap<String, Rate> rates = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, TokenBucket> buckets = new ConcurrentHashMap<>();

  public ClientQuotaManager(QuotaConfig config, Supplier<Map<ClientQuotaEntity, Map<String, Double>>> quotas,
      LongSupplier nowMs) {
    this.config = config;
    this.quotas = quotas;
    this.nowMs = nowMs;
  }

  /** Whether any entity sets {@code key} now (a cheap check before timing or counting anything). */
  public boolean anySet(String key) {
    Map<ClientQuotaEntity, Map<String, Double>> all = quotas.get();
    if (all.isEmpty()) {
      return false;
    }
    KeyIndex index = keyIndex;
    if (index.quotas != all) {
      Map<String, Boolean> set = new HashMap<>();
      all.values().forEach(values -> values.keySet().forEach(k -> set.put(k, true)));
      index = new KeyIndex(all, Map.copyOf(set));
      keyIndex = index;
    }
    return index.keys.containsKey(key);
  }

  /** Which keys the quotas of one snapshot set (the store hands out a new map on every change). */
  private record KeyIndex(Map<ClientQuotaEntity, Map<String, Double>> quotas, Map<String, Boolean> keys) {}

  private volatile KeyIndex keyIndex = new KeyIndex(Map.of(), Map.of());

  /** The quota that applies, with the entity it comes from, or null. */
  record Applied(ClientQuotaEntity entity, double bytesPerSecond) {}

  Applied quota(String key, String user, String clientId) {
    Map<ClientQuotaEntity, Map<String, Double>> all = quotas.get();
    if (all.isEmpty()) {
      return null;
    }
    for (ClientQuotaEntity candidate : candidates(user, clientId)) {
      Map<String, Double> values = all.get(candidate);
      if (values != null && values.get(key) != null) {
        return new Applied(candidate, values.get(key));
      }
    }
    return null;
  }

  private static List<ClientQuotaEntity> candidates(String user, String clientId) {
    List<ClientQuotaEntity> out = new ArrayList<>(8);
    out.add(entity(user, clientId, true, true));
    out.add(entity(user, null, true, true));
    out.add(entity(user, null, true, false));
    out.add(entity(null, clientId, true, true));
    out.add(entity(null, null, true, true));
    out.add(entity(null, null, true, false));
    out.add(entity(null, clientId, false, true));
    out.add(entity(null, null, false, true));
    return out;
  }

  private static ClientQuotaEntity entity(String user, String clientId, boolean hasUser, boolean hasClient) {
    Map<String, String> entries = new HashMap<>();
    if (hasUser) {
      entries.put(ClientQuotaEntity.USER, user);
    }
    if (hasClient) {
      entries.put(ClientQuotaEntity.CLIENT_ID, clientId);
    }
    return new ClientQuotaEntity(entries);
  }

  /**
   * Records {@code bytes} of the client against quota {@code key} and returns how long it must be
   * throttled, in ms (0 when it is within its quota or has none).
   */
  public long record(String key, String user, String clientId, long bytes) {
    return record(key, user, clientId, bytes, 1);
  }

  /**
   * Records {@code nanos} of request handling of the client against its {@code request_percentage}
   * (percent of one thread over the window: 100 is one thread busy all the time) and returns how
   * long it must be throttled, in ms.
   */
  public long recordRequestTime(String user, String clientId, long nanos) {
    return record(REQUEST_PERCENTAGE, user, clientId, nanos, NANOS_PER_PERCENT_SECOND);
  }

  /**
   * KIP-599: how long the client must wait before its next partition mutation is accepted, in ms: 0
   * while its {@code controller_mutation_rate} bucket holds tokens (or no such quota applies), else
   * the time the bucket needs to refill to zero (capped at {@code kafka.quota.max.throttle.ms}).
   */
  public long mutationThrottleMs(String user, String clientId) {
    Applied q = quota(CONTROLLER_MUTATION_RATE, user, clientId);
    if (q == null || q.bytesPerSecond() <= 0) {
      return 0;
    }
    return Math.min(config.maxThrottleMs, bucket(q, user, clientId).throttleMs(nowMs.getAsLong(), q.bytesPerSecond()));
  }

  /**
   * Takes {@code partitions} tokens from the client's mutation bucket (it may go below zero: a request
   * admitted while the bucket held tokens is served whole, as Kafka's strict quota does); a negative
   * count gives tokens back (a mutation admitted but then refused). No quota: nothing.
   */
  public void recordMutations(String user, String clientId, int partitions) {
    Applied q = quota(CONTROLLER_MUTATION_RATE, user, clientId);
    if (q == null || q.bytesPerSecond() <= 0 || partitions == 0) {
      return;
    }
    bucket(q, user, clientId).take(nowMs.getAsLong(), partitions, q.bytesPerSecond());
  }

  /** Whether a {@code controller_mutation_rate} quota applies to the client. */
  public boolean mutationQuotaApplies(String user, String clientId) {
    Applied q = quota(CONTROLLER_MUTATION_RATE, user, clientId);
    return q != null && q.bytesPerSecond() > 0;
  }

  private TokenBucket bucket(Applied q, String user, String clientId) {
    String sensor = sensorName(CONTROLLER_MUTATION_RATE, q, user, clientId);
    long now = nowMs.getAsLong();
    if (buckets.size() > MAX_SENSORS) {
      buckets.values().removeIf(b -> b.idleMs(now) > 2 * config.windowMs * config.windowNum);
    }
    // Kafka's burst: the quota over the whole window (controller.quota.window.num x size), here the quota window
    return buckets.computeIfAbsent(sensor, k -> new TokenBucket(config.windowNum * config.windowMs, now));
  }

  private static String sensorName(String key, Applied q, String user, String clientId) {
    Map<String, String> e = q.entity().entries();
    return key + "\u0000" + (e.containsKey(ClientQuotaEntity.USER) ? user : "") + "\u0000"
        + (e.containsKey(ClientQuotaEntity.CLIENT_ID) ? clientId : "");
  }

  /** Records {@code amount} against quota {@code key}, whose value times {@code unitsPerQuota} is the amount per second allowed. */
  private long record(String key, String user, String clientId, long amount, double unitsPerQuota) {
    Applied q = quota(key, user, clientId);
    if (q == null || q.bytesPerSecond() <= 0) {
      return 0;
    }
    // clients resolving to a default entity get their own rate; to a named one, they share it
    String sensor = sensorName(key, q, user, clientId);
    long now = nowMs.getAsLong();
    if (rates.size() > MAX_SENSORS) {
      rates.values().removeIf(r -> r.idleMs(now) > 2 * config.windowMs * config.windowNum);
    }
    Rate rate = rates.computeIfAbsent(sensor, s -> new Rate(config.windowNum, config.windowMs));
    return Math.min(config.maxThrottleMs, rate.recordAndThrottle(now, amount, q.bytesPerSecond() * unitsPerQuota));
  }

  /** Samples of an amount (bytes, connections) over time, as Kafka's {@code Rate}. Guarded by its monitor. */
  public static final class Rate {
    private final long[] starts;
    private final long[] bytes;
    private final long windowMs;
    private int current;
    private long lastMs;

    public Rate(int samples, long windowMs) {
      this.starts = new long[samples];
      this.bytes = new long[samples];
      this.windowMs = windowMs;
      java.util.Arrays.fill(starts, Long.MIN_VALUE);
    }

    /** Milliseconds since the last record. */
    public synchronized long idleMs(long now) {
      return now - lastMs;
    }

    /** Records {@code amount} at {@code now}; how long to stay silent for the rate to come back to the quota (0: within). */
    public synchronized long recordAndThrottle(long now, long amount, double quotaPerSecond) {
      lastMs = now;
      if (starts[current] == Long.MIN_VALUE || now >= starts[current] + windowMs) {
        current = (current + 1) % starts.length;
        starts[current] = now;
        bytes[current] = 0;
      }
      bytes[current] += amount;
      long oldest = now;
      long total = 0;
      long horizon = now - (long) starts.length * windowMs;
      for (int i = 0; i < starts.length; i++) {
        if (starts[i] != Long.MIN_VALUE && starts[i] > horizon) {
          total += bytes[i];
          oldest = Math.min(oldest, starts[i]);
        }
      }
      long elapsedMs = Math.max(now - oldest, (starts.length - 1) * windowMs);
      double rate = total * 1000.0 / elapsedMs;
      if (rate <= quotaPerSecond) {
        return 0;
      }
      return (long) ((rate - quotaPerSecond) / quotaPerSecond * elapsedMs);
    }
  }

  /**
   * Kafka's {@code TokenBucket} of KIP-599: it holds at most {@code quota x burstMs / 1000} tokens,
   * refills at {@code quota} tokens a second, and each mutated partition takes one; below zero the
   * client is throttled for as long as the refill to zero takes. Starts full. Guarded by its monitor.
   */
  static final class TokenBucket {
    private final long burstMs;
    private double tokens = Double.NaN;
    private long lastMs;

    TokenBucket(long burstMs, long now) {
      this.burstMs = burstMs;
      this.lastMs = now;
    }

    synchronized long idleMs(long now) {
      return now - lastMs;
    }

    private void refill(long now, double quotaPerSecond) {
      double burst = quotaPerSecond * burstMs / 1000.0;
      if (Double.isNaN(tokens)) {
        tokens = burst;
      }
      tokens = Math.min(burst, tokens + quotaPerSecond * Math.max(0, now - lastMs) / 1000.0);
      lastMs = Math.max(lastMs, now);
    }

    synchronized void take(long now, int permits, double quotaPerSecond) {
      refill(now, quotaPerSecond);
      tokens -= permits;
    }

    synchronized long throttleMs(long now, double quotaPerSecond) {
      refill(now, quotaPerSecond);
      return tokens >= 0 ? 0 : (long) Math.ceil(-tokens / quotaPerSecond * 1000.0);
    }
  }
}
