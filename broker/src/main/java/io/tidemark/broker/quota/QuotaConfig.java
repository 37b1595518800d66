package io.tidemark.broker.quota;

import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.List;

/**
 * Settings of client quotas and connection limits, with Kafka's names under the broker's
 * {@code kafka.} prefix. Quota values themselves are set per user / client id with
 * AlterClientQuotas ({@code kafka-configs}); with none set nothing is throttled. Immutable.
 */
public final class QuotaConfig {
  public static final ConfigKey<Integer> WINDOW_NUM = ConfigKey.integer("kafka.quota.window.num", 11,
      "Samples kept to measure a client's byte rate (Kafka's quota.window.num); the rate is measured over at least "
          + "(samples - 1) sample windows, so a client may burst that long before it is throttled.")
      .validate(ConfigKey.between(2, 100));
  public static final ConfigKey<Integer> WINDOW_SIZE_SECONDS = ConfigKey.integer("kafka.quota.window.size.seconds", 1,
      "Length of one rate sample (Kafka's quota.window.size.seconds).").validate(ConfigKey.between(1, 3600));
  public static final ConfigKey<Integer> MAX_THROTTLE_MS = ConfigKey.integer("kafka.quota.max.throttle.ms", 30_000,
      "Upper bound on one throttle time (a connection is never muted longer than this at once).")
      .validate(ConfigKey.between(1, 3_600_000));

  public static final List<ConfigKey<?>> KEYS = List.of(WINDOW_NUM, WINDOW_SIZE_SECONDS, MAX_THROTTLE_MS);

  public final int windowNum;
  public final long windowMs;
  public final long maxThrottleMs;

  public QuotaConfig(Settings s) {
    this(s.get(WINDOW_NUM), s.get(WINDOW_SIZE_SECONDS) * 1000L, s.get(MAX_THROTTLE_MS));
  }

  public QuotaConfig(int windowNum, long windowMs, long maxThrottleMs) {
    this.windowNum = windowNum;
    this.windowMs = windowMs;
    this.maxThrottleMs = maxThrottleMs;
  }
}
