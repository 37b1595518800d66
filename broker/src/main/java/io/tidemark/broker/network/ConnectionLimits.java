package io.tidemark.broker.network;

import io.tidemark.broker.quota.ClientQuotaManager.Rate;
import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * Kafka's connection limits (its {@code ConnectionQuotas}), under Kafka's names:
 *
 * <ul>
 *   <li>{@code max.connections.per.ip} and {@code max.connections.per.ip.overrides}: a connection
 *       from an address that already holds its limit is closed at once ({@link Admission#REFUSED_PER_IP}).
 *   <li>{@code max.connections} (broker-wide) and {@code listener.name.<l>.max.connections}: at the
 *       limit the listener stops accepting ({@link #accepting}); new connections wait in the TCP
 *       backlog, as Kafka's acceptor blocks, and are accepted when a connection closes. One
 *       accepted before the pause took effect ({@link Admission#REFUSED_MAX}) waits unread until it
 *       fits (the server parks it).
 *   <li>{@code max.connection.creation.rate} (broker-wide) and
 *       {@code listener.name.<l>.max.connection.creation.rate}: connections accepted per second,
 *       measured as Kafka's quotas are ({@code kafka.quota.window.num} samples of
 *       {@code kafka.quota.window.size.seconds}); above it the listener stops accepting for the
 *       throttle time {@code (rate - limit) / limit * window}, as Kafka's acceptor is throttled.
 *   <li>{@code connection_creation_rate} of an ip quota entity ({@code kafka-configs --entity-type ips},
 *       per address or the default for all addresses; Kafka's KIP-612 per-IP rate), read from the quota
 *       store on every new connection: an address over its rate gets its connection accepted
 *       but not served and closed after the throttle time ({@link #ipThrottleMs}, at most one
 *       quota sample, {@code kafka.quota.window.size.seconds}), as Kafka's
 *       acceptor delays closing it; a throttled connection does not count in the rate, so a
 *       client that backs off is served again. Rates of addresses are dropped when idle for two
 *       windows once more than {@value #MAX_IP_RATES} are kept.
 * </ul>
 *
 * Kafka's protection of the inter-broker listener at {@code max.connections} (closing the least
 * recently used client connection) is not done: the inter-broker listener counts like any other.
 *
 * <p>Called from every event loop (accepts and closes); all state is guarded by this object's
 * monitor. Time is the injected clock's.
 */
public final class ConnectionLimits {

  public static final ConfigKey<Integer> MAX_PER_IP = ConfigKey.integer("max.connections.per.ip", Integer.MAX_VALUE,
      "Connections one client address may hold on the Kafka listeners (all listeners together); a connection over it is "
          + "closed at once, as Kafka does.").validate(ConfigKey.between(0, Integer.MAX_VALUE));
  public static final ConfigKey<String> MAX_PER_IP_OVERRIDES = ConfigKey.string("max.connections.per.ip.overrides", "",
      "Per-address exceptions to max.connections.per.ip, as host-or-ip:count pairs separated by commas "
          + "(127.0.0.1:200,clients.example.com:50).");
  public static final ConfigKey<Integer> MAX_CONNECTIONS = ConfigKey.integer("max.connections", Integer.MAX_VALUE,
      "Connections the broker holds on all Kafka listeners together (per listener: listener.name.<l>.max.connections); "
          + "at the limit the listener stops accepting until a connection closes (new ones wait in the TCP backlog), as "
          + "Kafka's acceptor blocks.").validate(ConfigKey.between(1, Integer.MAX_VALUE));
  public static final ConfigKey<Integer> MAX_CREATION_RATE = ConfigKey.integer("max.connection.creation.rate",
      Integer.MAX_VALUE, "Connections per second the broker accepts on all Kafka listeners together (per listener: "
          + "listener.name.<l>.max.connection.creation.rate), measured over the quota window; above it accepting pauses "
          + "for the throttle time, as Kafka's acceptor is throttled.").validate(ConfigKey.between(1, Integer.MAX_VALUE));

  public static final List<ConfigKey<?>> KEYS = List.of(MAX_PER_IP, MAX_PER_IP_OVERRIDES, MAX_CONNECTIONS, MAX_CREATION_RATE);

  static final String CONNECTION_CREATION_RATE = "connection_creation_rate";
  static final int MAX_IP_RATES = 10_000;

  /** What happens to a new connection. */
  public enum Admission { ACCEPTED, REFUSED_PER_IP, REFUSED_MAX }

  private final int maxPerIp;
  private final Map<InetAddress, Integer> perIpOverrides;
  private final int maxTotal;
  private final Map<String, Integer> maxPerListener;
  private final Rate totalRate;
  private final double maxTotalRate;
  private final Map<String, Rate> listenerRates = new HashMap<>();
  private final Map<String, Double> maxListenerRate;
  private final java.util.function.LongSupplier nowMs;
  private final Supplier<Map<ClientQuotaEntity, Map<String, Double>>> quotas;
  private final int windowNum;
  private final long windowMs;
  private final Map<InetAddress, Rate> ipRates = new HashMap<>();

  private final Map<InetAddress, Integer> perIp = new HashMap<>();
  private final Map<String, Integer> perListener = new HashMap<>();
  private int total;
  private long totalThrottledUntilMs;
  private final Map<String, Long> listenerThrottledUntilMs = new HashMap<>();

  /**
   * @param listeners the listener names (upper case), for their {@code listener.name.<l>.*} limits
   * @param windowNum samples of the creation rate
   * @param windowMs length of one sample
   */
  public ConnectionLimits(Settings settings, List<String> listeners, int windowNum, long windowMs,
      java.util.function.LongSupplier nowMs) {
    this(settings, listeners, windowNum, windowMs, nowMs, Map::of);
  }

  /** @param quotas the client quotas now (their ip entities' {@code connection_creation_rate}) */
  public ConnectionLimits(Settings settings, List<String> listeners, int windowNum, long windowMs,
      java.util.function.LongSupplier nowMs, Supplier<Map<ClientQuotaEntity, Map<String, Double>>> quotas) {
    this.quotas = quotas;
    this.windowNum = windowNum;
    this.windowMs = windowMs;
    this.maxPerIp = settings.get(MAX_PER_IP);
    this.perIpOverrides = parseOverrides(settings.get(MAX_PER_IP_OVERRIDES));
    this.maxTotal = settings.get(MAX_CONNECTIONS);
    this.maxTotalRate = settings.get(MAX_CREATION_RATE);
    this.totalRate = new Rate(windowNum, windowMs);
    this.nowMs = nowMs;
    Map<String, Integer> max = new HashMap<>();
    Map<String, Double> rate = new HashMap<>();
    for (String l : listeners) {
      String prefix = "listener.name." + l.toLowerCase(Locale.ROOT) + ".";
      String m = settings.asMap().get(prefix + MAX_CONNECTIONS.name());
      if (m != null) {
        max.put(l, MAX_CONNECTIONS.parse(m));
      }
      String r = settings.asMap().get(prefix + MAX_CREATION_RATE.name());
      if (r != null) {
        rate.put(l, (double) MAX_CREATION_RATE.parse(r));
        listenerRates.put(l, new Rate(windowNum, windowMs));
      }
    }
    this.maxPerListener = Map.copyOf(max);
    this.maxListenerRate = Map.copyOf(rate);
  }

  /** No limits (tests, listeners built without settings). */
  public static ConnectionLimits none() {
    return new ConnectionLimits(Settings.empty(), List.of(), 11, 1000, System::currentTimeMillis);
  }

  static Map<InetAddress, Integer> parseOverrides(String raw) {
    Map<InetAddress, Integer> out = new LinkedHashMap<>();
    for (String entry : raw.split(",")) {
      if (entry.isBlank()) {
        continue;
      }
      int colon = entry.lastIndexOf(':');
      try {
        if (colon <= 0) {
          throw new NumberFormatException();
        }
        int count = Integer.parseInt(entry.substring(colon + 1).trim());
        if (count < 0) {
          throw new NumberFormatException();
        }
        out.put(InetAddress.getByName(entry.substring(0, colon).trim()), count);
      } catch (NumberFormatException e) {
        throw new ConfigException(MAX_PER_IP_OVERRIDES.name(), "entry '" + entry.trim() + "' is not host:count");
      } catch (UnknownHostException e) {
        throw new ConfigException(MAX_PER_IP_OVERRIDES.name(), "host of entry '" + entry.trim() + "' does not resolve");
      }
    }
    return out;
  }

  /**
   * Records a new connection from {@code address} against its ip quota's
   * {@code connection_creation_rate}; how long to hold it unserved before closing it (0: within the
   * rate or no quota; at most one quota sample; a throttled connection is taken back out of the rate).
   */
  public synchronized long ipThrottleMs(InetAddress address) {
    Map<ClientQuotaEntity, Map<String, Double>> all = quotas.get();
    if (all.isEmpty()) {
      return 0;
    }
    Double limit = rateOf(all, address.getHostAddress());
    if (limit == null) {
      limit = rateOf(all, null);
    }
    if (limit == null || !(limit > 0)) {
      ipRates.remove(address);
      return 0;
    }
    long now = nowMs.getAsLong();
    if (ipRates.size() > MAX_IP_RATES) {
      ipRates.values().removeIf(r -> r.idleMs(now) > 2L * windowMs * windowNum);
    }
    Rate rate = ipRates.computeIfAbsent(address, a -> new Rate(windowNum, windowMs));
    long throttle = rate.recordAndThrottle(now, 1, limit);
    if (throttle > 0) {
      rate.recordAndThrottle(now, -1, limit);
    }
    // bounded by one quota sample, as Kafka's ConnectionQuotas bounds it: a tiny rate must not hold a
    // socket unserved for minutes (the client retries; a throttled connection does not count)
    return Math.min(windowMs, throttle);
  }

  private static Double rateOf(Map<ClientQuotaEntity, Map<String, Double>> all, String ip) {
    Map<String, String> entries = new HashMap<>();
    entries.put(ClientQuotaEntity.IP, ip);
    Map<String, Double> values = all.get(new ClientQuotaEntity(entries));
    return values == null ? null : values.get(CONNECTION_CREATION_RATE);
  }

  /** Counts a new connection of {@code listener} from {@code address}, or says why it is refused (and counts nothing). */
  public synchronized Admission admit(String listener, InetAddress address) {
    int ipCount = perIp.getOrDefault(address, 0);
    if (ipCount >= perIpOverrides.getOrDefault(address, maxPerIp)) {
      return Admission.REFUSED_PER_IP;
    }
    int listenerCount = perListener.getOrDefault(listener, 0);
    if (total >= maxTotal || listenerCount >= maxPerListener.getOrDefault(listener, Integer.MAX_VALUE)) {
      return Admission.REFUSED_MAX;
    }
    perIp.put(address, ipCount + 1);
    perListener.put(listener, listenerCount + 1);
    total++;
    long now = nowMs.getAsLong();
    if (maxTotalRate < Integer.MAX_VALUE) {
      long throttle = totalRate.recordAndThrottle(now, 1, maxTotalRate);
      totalThrottledUntilMs = Math.max(totalThrottledUntilMs, now + throttle);
    }
    Rate rate = listenerRates.get(listener);
    if (rate != null) {
      long throttle = rate.recordAndThrottle(now, 1, maxListenerRate.get(listener));
      listenerThrottledUntilMs.merge(listener, now + throttle, Math::max);
    }
    return Admission.ACCEPTED;
  }

  /** Uncounts a closed connection that {@link #admit} accepted. */
  public synchronized void release(String listener, InetAddress address) {
    perIp.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
    perListener.computeIfPresent(listener, (l, n) -> n <= 1 ? null : n - 1);
    total--;
  }

  /**
   * Whether {@code listener} may accept now; when not because of a rate, {@link #retryInMs} says
   * when to ask again (a count limit is asked again when a connection closes).
   */
  public synchronized boolean accepting(String listener) {
    return total < maxTotal && perListener.getOrDefault(listener, 0) < maxPerListener.getOrDefault(listener, Integer.MAX_VALUE)
        && retryInMs(listener) == 0;
  }

  /** Milliseconds until the creation-rate throttle of {@code listener} ends (0: not throttled). */
  public synchronized long retryInMs(String listener) {
    long until = Math.max(totalThrottledUntilMs, listenerThrottledUntilMs.getOrDefault(listener, 0L));
    return Math.max(0, until - nowMs.getAsLong());
  }

  /** Open connections on all listeners (metrics, tests). */
  public synchronized int total() {
    return total;
  }
}
