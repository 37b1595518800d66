package io.tidemark.broker.protocol;

import java.util.Collection;
import java.util.EnumMap;
import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The APIs this broker implements, with the version ranges it advertises in ApiVersions: only
 * what is registered here is advertised, and a request for anything else closes the connection.
 * Filled at start-up, read-only afterwards.
 */
public final class ApiRegistry {

  /** One implemented API: advertised range, and the lowest version actually parsed. */
  public record Registration(ApiKeys key, short advertisedMin, short minVersion, short maxVersion, ApiHandler handler) {}

  private final Map<ApiKeys, Registration> apis = new EnumMap<>(ApiKeys.class);

  public ApiRegistry register(ApiKeys key, int minVersion, int maxVersion, ApiHandler handler) {
    return register(key, minVersion, minVersion, maxVersion, handler);
  }

  /**
   * Registers with an advertised minimum below what is served (Produce is advertised from v0 so
   * that librdkafka compresses, KAFKA-18659; v0–2 requests are still refused).
   */
  public ApiRegistry register(ApiKeys key, int advertisedMin, int minVersion, int maxVersion, ApiHandler handler) {
    if (minVersion < key.oldestVersion() || maxVersion > key.latestVersion() || minVersion > maxVersion) {
      throw new IllegalArgumentException(key + " versions " + minVersion + ".." + maxVersion + " are outside what kafka-clients "
          + "can parse (" + key.oldestVersion() + ".." + key.latestVersion() + ")");
    }
    apis.put(key, new Registration(key, (short) advertisedMin, (short) minVersion, (short) maxVersion, handler));
    return this;
  }

  public Registration lookup(ApiKeys key) {
    return apis.get(key);
  }

  public boolean serves(ApiKeys key, short version) {
    Registration r = apis.get(key);
    return r != null && version >= r.minVersion() && version <= r.maxVersion();
  }

  public Collection<Registration> all() {
    return apis.values();
  }
}
