package io.tidemark.broker.admin;

import java.util.Map;
import java.util.function.IntConsumer;
import java.util.function.IntSupplier;

/**
 * One thread count that Kafka changes at run time ({@code num.network.threads},
 * {@code log.cleaner.threads}), as a {@link BrokerReconfigurable}: settable per broker or as the
 * cluster default, checked as Kafka checks it (an int, at least 1, at least half and at most double
 * the current count, in the words of the Kafka component that owns it) and within Tidemark's own
 * bound, then handed to the component that resizes. Stateless apart from what it is given.
 */
public final class DynamicThreadCount implements BrokerReconfigurable {

  /** Whose words a refusal uses. */
  public enum Wording {
    /** Kafka's thread pools and acceptors ({@code DynamicThreadPool}). */
    POOL,
    /** Kafka's {@code LogCleaner}. */
    LOG_CLEANER
  }

  private final String key;
  private final String staticKey;
  private final int configured;
  private final int max;
  private final String maxReason;
  private final Wording wording;
  private final IntSupplier current;
  private final IntConsumer resize;

  /**
   * @param staticKey the Tidemark setting giving the static count {@code configured}
   * @param max the most threads allowed here, {@code maxReason} saying why
   * @param current the count in force now
   * @param resize applies a count already checked
   */
  public DynamicThreadCount(String key, String staticKey, int configured, int max, String maxReason, Wording wording,
      IntSupplier current, IntConsumer resize) {
    this.key = key;
    this.staticKey = staticKey;
    this.configured = configured;
    this.max = max;
    this.maxReason = maxReason;
    this.wording = wording;
    this.current = current;
    this.resize = resize;
  }

  @Override
  public boolean owns(String name) {
    return name.equals(key);
  }

  @Override
  public boolean perBrokerOnly(String name) {
    return false;
  }

  @Override
  public boolean sensitive(String name) {
    return false;
  }

  @Override
  public String type(String name) {
    return "int";
  }

  @Override
  public Map<String, String> staticValues() {
    return Map.of(key, Integer.toString(configured));
  }

  @Override
  public String staticKey(String name) {
    return staticKey;
  }

  @Override
  public String check(Map<String, String> values) {
    String value = values.get(key);
    int n;
    try {
      n = value == null ? configured : Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      return "Invalid value " + value + " for configuration " + key + ": Not a number of type INT";
    }
    int now = current.getAsInt();
    if (n == now) {
      return null;
    }
    String problem = wording == Wording.POOL ? poolProblem(n, now) : cleanerProblem(n, now);
    if (problem == null && n > max) {
      problem = "Dynamic thread count update validation failed for " + key + "=" + n + ", value should be at most " + max
          + " (" + maxReason + ")";
    }
    return problem;
  }

  /** Kafka's {@code DynamicThreadPool} and acceptor wording. Pure. */
  private String poolProblem(int n, int now) {
    String failed = "Dynamic thread count update validation failed for " + key + "=" + n;
    if (n <= 0) {
      return failed + ", value should be at least 1";
    }
    if (n < now / 2) {
      return failed + ", value should be at least half the current value " + now;
    }
    if (n > now * 2) {
      return failed + ", value should not be greater than double the current value " + now;
    }
    return null;
  }

  /** Kafka's {@code LogCleaner.validateReconfiguration} wording. Pure. */
  private static String cleanerProblem(int n, int now) {
    if (n < 1) {
      return "Log cleaner threads should be at least 1";
    }
    if (n < now / 2) {
      return "Log cleaner threads cannot be reduced to less than half the current value " + now;
    }
    if (n > now * 2) {
      return "Log cleaner threads cannot be increased to more than double the current value " + now;
    }
    return null;
  }

  @Override
  public void apply(Map<String, String> values) {
    String value = values.get(key);
    resize.accept(Math.max(1, Math.min(max, value == null ? configured : Integer.parseInt(value.trim()))));
  }
}
