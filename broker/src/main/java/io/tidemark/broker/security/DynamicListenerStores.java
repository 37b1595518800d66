package io.tidemark.broker.security;

import io.tidemark.broker.admin.BrokerReconfigurable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The key and trust stores of this broker's TLS listeners (SSL, SASL_SSL) as Kafka's dynamic broker
 * configs {@code listener.name.<listener>.ssl.keystore.location}, {@code .ssl.keystore.type},
 * {@code .ssl.keystore.password}, {@code .ssl.key.password} and the three {@code ssl.truststore.*}
 * keys: set per broker only (Kafka refuses them at the cluster default), checked before anything is
 * written (the stores must load, and the key store must name the same subject and alternative names
 * as the one in use, as Kafka checks), then applied to the listener's {@link TlsContexts} so that new
 * connections get the new certificate while established ones keep their session. A key missing
 * falls back to the listener's static value ({@code listener.name.<l>.ssl.*}, then {@code ssl.*}).
 * Listener names in the keys are lower case, as Kafka writes them. The unprefixed {@code ssl.*} keys
 * are not dynamic here (Kafka applies them to listeners without their own value; name the listener).
 *
 * <p>Threading: {@link #check} on request threads reads files only; {@link #apply} runs on the
 * dynamic configs' refresh, one at a time; {@link TlsContexts} publishes what it applies.
 */
public final class DynamicListenerStores implements BrokerReconfigurable {

  /** Kafka's dynamic listener store keys, after {@code listener.name.<l>.}. */
  static final List<String> SUFFIXES = List.of("ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password",
      "ssl.key.password", "ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password");
  private static final String PREFIX = "listener.name.";

  /** Lower-case listener name → its TLS contexts and the stores of its static configuration. */
  private final Map<String, TlsContexts> contexts = new LinkedHashMap<>();
  private final Map<String, TlsContexts.Stores> statics = new LinkedHashMap<>();

  public DynamicListenerStores(List<ListenerSecurity> listeners) {
    for (ListenerSecurity l : listeners) {
      l.tls().ifPresent(tls -> {
        String name = l.listener().name().toLowerCase(Locale.ROOT);
        contexts.put(name, tls);
        statics.put(name, tls.stores());
      });
    }
  }

  /** The listener a key belongs to, or null when it is not one of these keys. */
  private String listenerOf(String key) {
    if (!key.startsWith(PREFIX)) {
      return null;
    }
    for (String listener : contexts.keySet()) {
      String head = PREFIX + listener + ".";
      if (key.startsWith(head) && SUFFIXES.contains(key.substring(head.length()))) {
        return listener;
      }
    }
    return null;
  }

  @Override
  public boolean owns(String key) {
    return listenerOf(key) != null;
  }

  @Override
  public boolean perBrokerOnly(String key) {
    return true;
  }

  @Override
  public boolean sensitive(String key) {
    return key.endsWith("password");
  }

  @Override
  public String type(String key) {
    return sensitive(key) ? "password" : "string";
  }

  @Override
  public Map<String, String> staticValues() {
    return Map.of();
  }

  /** Each listener's stores with {@code values} over its static ones. Pure. */
  private Map<String, TlsContexts.Stores> storesOf(Map<String, String> values) {
    Map<String, TlsContexts.Stores> out = new LinkedHashMap<>();
    statics.forEach((listener, s) -> {
      String head = PREFIX + listener + ".";
      java.util.function.BiFunction<String, String, String> v = (suffix, fallback) -> values.getOrDefault(head + suffix, fallback);
      out.put(listener, new TlsContexts.Stores(v.apply("ssl.keystore.location", s.keystore()),
          v.apply("ssl.keystore.type", s.keystoreType()), v.apply("ssl.keystore.password", s.keystorePassword()),
          v.apply("ssl.key.password", s.keyPassword()), v.apply("ssl.truststore.location", s.truststore()),
          v.apply("ssl.truststore.type", s.truststoreType()), v.apply("ssl.truststore.password", s.truststorePassword()),
          s.clientAuth(), s.protocols(), s.provider()));
    });
    return out;
  }

  @Override
  public String check(Map<String, String> values) {
    for (Map.Entry<String, TlsContexts.Stores> e : storesOf(values).entrySet()) {
      TlsContexts current = contexts.get(e.getKey());
      if (e.getValue().equals(current.stores())) {
        continue;
      }
      try {
        TlsContexts.build(e.getValue());
        TlsContexts.ensureSameIdentity(current.stores(), e.getValue());
      } catch (RuntimeException failure) {
        return "Validation of dynamic config update of SSLFactory failed for listener " + e.getKey() + ": " + failure.getMessage();
      }
    }
    return null;
  }

  @Override
  public void apply(Map<String, String> values) {
    StringBuilder failed = new StringBuilder();
    storesOf(values).forEach((listener, stores) -> {
      TlsContexts tls = contexts.get(listener);
      if (stores.equals(tls.stores())) {
        return;
      }
      try {
        tls.reconfigure(stores);
      } catch (RuntimeException e) {
        failed.append(listener).append(": ").append(e.getMessage()).append("; ");
      }
    });
    if (!failed.isEmpty()) {
      throw new IllegalStateException("listener stores kept as they were: " + failed);
    }
  }
}
