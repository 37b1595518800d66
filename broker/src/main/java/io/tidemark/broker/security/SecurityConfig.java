package io.tidemark.broker.security;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * Listener and authentication settings under Kafka's own names, so that a broker's
 * {@code server.properties} security lines carry over unchanged: {@code listeners},
 * {@code advertised.listeners}, {@code listener.security.protocol.map},
 * {@code inter.broker.listener.name}, the {@code ssl.*} keystore and truststore keys,
 * {@code sasl.enabled.mechanisms}, {@code connections.max.reauth.ms}. Every {@code ssl.*} and
 * {@code sasl.*} key may be given per listener as {@code listener.name.<listener>.<key>}
 * (lower-case listener name), which wins over the global key, as in Kafka; PLAIN users come
 * from {@code listener.name.<listener>.plain.sasl.jaas.config} (Kafka's {@code user_<name>="<password>"}
 * options) or the global {@code plain.sasl.jaas.config}.
 *
 * <p>Without {@code listeners} the broker has one PLAINTEXT listener on
 * {@code kafka.listener.host}:{@code kafka.listener.port} advertised as
 * {@code kafka.advertised.host}:{@code kafka.advertised.port}, as before. Immutable.
 */
public final class SecurityConfig {

  /** Settings under this prefix are per-listener overrides ({@code listener.name.<l>.<key>}). */
  public static final String LISTENER_PREFIX = "listener.name.";

  public static final ConfigKey<String> LISTENERS = ConfigKey.string("listeners", "",
      "Kafka listeners as NAME://host:port, comma separated (e.g. PLAINTEXT://:9092,SASL_SSL://:9094); an empty host "
          + "binds every address. Empty: one PLAINTEXT listener on kafka.listener.host:kafka.listener.port.");
  public static final ConfigKey<String> ADVERTISED_LISTENERS = ConfigKey.string("advertised.listeners", "",
      "What clients connected to each listener are told (Metadata, FindCoordinator, DescribeCluster), as NAME://host:port. "
          + "A listener not named here advertises its bound address (or kafka.advertised.host when it binds every address).");
  public static final ConfigKey<String> PROTOCOL_MAP = ConfigKey.string("listener.security.protocol.map",
      "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
      "Security protocol of each listener name, as NAME:PROTOCOL pairs (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).");
  public static final ConfigKey<String> INTER_BROKER_LISTENER = ConfigKey.string("inter.broker.listener.name", "",
      "The listener Tidemark's own Kafka clients use (table topic control log, schema registry followers) and brokers "
          + "register under for one another. Empty: the first listener.");
  public static final ConfigKey<String> SASL_ENABLED_MECHANISMS = ConfigKey.string("sasl.enabled.mechanisms",
      "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN", "SASL mechanisms offered on SASL listeners: any of PLAIN, SCRAM-SHA-256, "
          + "SCRAM-SHA-512, OAUTHBEARER (JWTs checked against sasl.oauthbearer.jwks.endpoint.url).");
  public static final ConfigKey<String> INTER_BROKER_MECHANISM = ConfigKey.string("sasl.mechanism.inter.broker.protocol", "",
      "SASL mechanism of Tidemark's own clients on a SASL inter-broker listener; they log in with the username and password "
          + "options of listener.name.<listener>.<mechanism>.sasl.jaas.config, as Kafka's brokers do. Empty: the first "
          + "enabled mechanism.");
  public static final ConfigKey<Long> REAUTH_MS = ConfigKey.longKey("connections.max.reauth.ms", 0L,
      "KIP-368: a SASL session lasts at most this long; the client must re-authenticate on the same connection before it "
          + "ends or the connection is closed at its next request. 0: sessions do not expire.")
      .validate(ConfigKey.between(0L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> SASL_MAX_RECEIVE_BYTES = ConfigKey.integer("sasl.server.max.receive.size", 524288,
      "Largest request frame accepted before a SASL connection has authenticated; a larger one closes the connection.")
      .validate(ConfigKey.between(1024, Integer.MAX_VALUE));
  public static final ConfigKey<String> PLAIN_JAAS = ConfigKey.password("plain.sasl.jaas.config", "",
      "PLAIN users for every SASL listener, in Kafka's JAAS form: org.apache.kafka.common.security.plain.PlainLoginModule "
          + "required user_alice=\"alice-secret\"; (per listener: listener.name.<l>.plain.sasl.jaas.config). PLAIN also "
          + "accepts the password of a SCRAM user.");
  public static final ConfigKey<String> SCRAM_BOOTSTRAP = ConfigKey.password("sasl.scram.bootstrap.credentials", "",
      "SCRAM users created at start when they have no credential for that mechanism yet, in kafka-storage's --add-scram "
          + "form separated by ';': SCRAM-SHA-256=[name=admin,password=admin-secret];SCRAM-SHA-512=[name=admin,password=...]. "
          + "Existing credentials are never overwritten.");
  public static final ConfigKey<String> SSL_KEYSTORE_LOCATION = ConfigKey.string("ssl.keystore.location", "",
      "Key store of TLS listeners (this broker's key and certificate chain).");
  public static final ConfigKey<String> SSL_KEYSTORE_TYPE = ConfigKey.string("ssl.keystore.type", "PKCS12",
      "PKCS12, JKS or PEM (a file holding the PKCS#8 private key and the certificate chain).");
  public static final ConfigKey<String> SSL_KEYSTORE_PASSWORD = ConfigKey.password("ssl.keystore.password", "",
      "Password of the key store (PKCS12, JKS).");
  public static final ConfigKey<String> SSL_KEY_PASSWORD = ConfigKey.password("ssl.key.password", "",
      "Password of the private key; empty: the key store password (PEM: the key is not encrypted).");
  public static final ConfigKey<String> SSL_TRUSTSTORE_LOCATION = ConfigKey.string("ssl.truststore.location", "",
      "Trust store for client certificates (mutual TLS). Empty: the JDK's default trust.");
  public static final ConfigKey<String> SSL_TRUSTSTORE_TYPE = ConfigKey.string("ssl.truststore.type", "PKCS12",
      "PKCS12, JKS or PEM (a file of certificates).");
  public static final ConfigKey<String> SSL_TRUSTSTORE_PASSWORD = ConfigKey.password("ssl.truststore.password", "",
      "Password of the trust store (PKCS12, JKS; may be empty).");
  public static final ConfigKey<String> SSL_CLIENT_AUTH = ConfigKey.choice("ssl.client.auth", "none",
      "Client certificates on TLS listeners: required, requested or none. With a certificate on an SSL listener, the "
          + "principal is User:<ssl.principal.mapping.rules applied to the subject DN>.", "none", "requested", "required");
  public static final ConfigKey<String> SSL_PRINCIPAL_MAPPING_RULES = ConfigKey.string("ssl.principal.mapping.rules",
      "DEFAULT", "Kafka's rules mapping a certificate's subject DN (RFC 2253) to a user name: "
          + "RULE:pattern/replacement/[LU], comma separated, first match wins; DEFAULT keeps the whole DN.");
  public static final ConfigKey<String> SSL_ENABLED_PROTOCOLS = ConfigKey.string("ssl.enabled.protocols", "TLSv1.2,TLSv1.3",
      "TLS versions accepted.");
  public static final ConfigKey<String> SSL_PROVIDER = ConfigKey.choice("ssl.provider", "auto",
      "TLS engine of the listeners: openssl (netty-tcnative with BoringSSL; the node does not start when its native "
          + "library does not load), jdk (the JDK's SSLEngine), or auto (openssl when its library loads on this machine, "
          + "jdk otherwise). Each TLS listener logs the engine it uses at start.", "auto", "openssl", "jdk");
  public static final ConfigKey<Long> SSL_RELOAD_CHECK_MS = ConfigKey.longKey("ssl.keystore.reload.check.interval.ms",
      10_000L, "How often the key store and trust store files are checked for changes; a changed file is loaded for new "
          + "connections without a restart (a file that does not load keeps the previous one, with a warning). 0: never.")
      .validate(ConfigKey.between(0L, Long.MAX_VALUE));

  public static final List<ConfigKey<?>> KEYS = List.of(LISTENERS, ADVERTISED_LISTENERS, PROTOCOL_MAP,
      INTER_BROKER_LISTENER, SASL_ENABLED_MECHANISMS, INTER_BROKER_MECHANISM, REAUTH_MS, SASL_MAX_RECEIVE_BYTES, PLAIN_JAAS, SCRAM_BOOTSTRAP,
      SSL_KEYSTORE_LOCATION, SSL_KEYSTORE_TYPE, SSL_KEYSTORE_PASSWORD, SSL_KEY_PASSWORD, SSL_TRUSTSTORE_LOCATION,
      SSL_TRUSTSTORE_TYPE, SSL_TRUSTSTORE_PASSWORD, SSL_CLIENT_AUTH, SSL_PRINCIPAL_MAPPING_RULES, SSL_ENABLED_PROTOCOLS,
      SSL_PROVIDER, SSL_RELOAD_CHECK_MS);

  private final Settings settings;
  private final List<Listener> listeners;
  private final String interBrokerListener;

  /**
   * Parses the listeners; {@code legacyHost}/{@code legacyPort} and the advertised pair are the
   * single-listener settings used when {@code listeners} is empty.
   */
  public SecurityConfig(Settings settings, String legacyHost, int legacyPort, String legacyAdvertisedHost,
      int legacyAdvertisedPort) {
    this.settings = settings;
    String raw = settings.get(LISTENERS).trim();
    if (raw.isEmpty()) {
      listeners = List.of(new Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, legacyHost, legacyPort,
          legacyAdvertisedHost, legacyAdvertisedPort));
    } else {
      listeners = parseListeners(settings, raw, legacyAdvertisedHost);
    }
    String inter = settings.get(INTER_BROKER_LISTENER).trim().toUpperCase(Locale.ROOT);
    if (inter.isEmpty()) {
      inter = listeners.get(0).name();
    } else if (listeners.stream().noneMatch(l -> l.name().equals(settings.get(INTER_BROKER_LISTENER).trim()
        .toUpperCase(Locale.ROOT)))) {
      throw new ConfigException(INTER_BROKER_LISTENER.name(), "names no listener of " + settings.get(LISTENERS));
    }
    interBrokerListener = inter;
    settings.get(SSL_PROVIDER); // a bad value fails here, TLS listeners or not
    for (Listener l : listeners) {
      if (l.sasl()) {
        for (String m : mechanisms(l.name())) {
          if (!List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", ListenerSecurity.OAUTHBEARER).contains(m)) {
            throw new ConfigException(SASL_ENABLED_MECHANISMS.name(), "mechanism " + m + " is not supported (PLAIN, "
                + "SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)");
          }
          if (m.equals(ListenerSecurity.OAUTHBEARER)) {
            new OAuthBearerConfig(settings).checkListener(l.name());
          }
        }
      }
      if (l.tls() && value(l.name(), SSL_KEYSTORE_LOCATION).isBlank()) {
        throw new ConfigException(SSL_KEYSTORE_LOCATION.name(), "is required by the " + l.protocol() + " listener "
            + l.name());
      }
      if (l.tls() && !List.of("auto", "openssl", "jdk").contains(value(l.name(), SSL_PROVIDER).trim().toLowerCase(Locale.ROOT))) {
        throw new ConfigException(SSL_PROVIDER.name(), "of listener " + l.name() + " must be one of auto, openssl, jdk");
      }
    }
  }

  public static SecurityConfig plaintext(String host, int port) {
    return new SecurityConfig(Settings.empty(), host, port, host, 0);
  }

  private static List<Listener> parseListeners(Settings settings, String raw, String defaultAdvertisedHost) {
    Map<String, SecurityProtocol> protocols = protocolMap(settings.get(PROTOCOL_MAP));
    Map<String, String[]> advertised = new LinkedHashMap<>();
    for (String entry : split(settings.get(ADVERTISED_LISTENERS))) {
      String[] p = parseEndpoint(ADVERTISED_LISTENERS.name(), entry);
      advertised.put(p[0], p);
    }
    List<Listener> out = new ArrayList<>();
    for (String entry : split(raw)) {
      String[] p = parseEndpoint(LISTENERS.name(), entry);
      String name = p[0];
      if (out.stream().anyMatch(l -> l.name().equals(name))) {
        throw new ConfigException(LISTENERS.name(), "names listener " + name + " twice");
      }
      SecurityProtocol protocol = protocols.get(name);
      if (protocol == null) {
        throw new ConfigException(PROTOCOL_MAP.name(), "has no security protocol for listener " + name);
      }
      String host = p[1].isEmpty() ? "0.0.0.0" : p[1];
      int port = Integer.parseInt(p[2]);
      String[] adv = advertised.get(name);
      String advHost = adv != null && !adv[1].isEmpty() ? adv[1]
          : p[1].isEmpty() || p[1].equals("0.0.0.0") ? defaultAdvertisedHost : p[1];
      int advPort = adv != null ? Integer.parseInt(adv[2]) : 0;
      out.add(new Listener(name, protocol, host, port, advHost, advPort));
    }
    for (String name : advertised.keySet()) {
      if (out.stream().noneMatch(l -> l.name().equals(name))) {
        throw new ConfigException(ADVERTISED_LISTENERS.name(), "names " + name + ", which is not in listeners");
      }
    }
    if (out.isEmpty()) {
      throw new ConfigException(LISTENERS.name(), "names no listener");
    }
    return List.copyOf(out);
  }

  private static Map<String, SecurityProtocol> protocolMap(String raw) {
    Map<String, SecurityProtocol> out = new LinkedHashMap<>();
    for (String entry : split(raw)) {
      int colon = entry.indexOf(':');
      if (colon <= 0) {
        throw new ConfigException(PROTOCOL_MAP.name(), "entry '" + entry + "' is not NAME:PROTOCOL");
      }
      String protocol = entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT);
      try {
        out.put(entry.substring(0, colon).trim().toUpperCase(Locale.ROOT), SecurityProtocol.forName(protocol));
      } catch (IllegalArgumentException e) {
        throw new ConfigException(PROTOCOL_MAP.name(), "protocol " + protocol + " is not one of PLAINTEXT, SSL, "
            + "SASL_PLAINTEXT, SASL_SSL");
      }
    }
    return out;
  }

  /** NAME://host:port → {NAME, host, port}; the host may be empty or a bracketed IPv6 address. */
  private static String[] parseEndpoint(String key, String entry) {
    int sep = entry.indexOf("://");
    int colon = entry.lastIndexOf(':');
    if (sep <= 0 || colon < sep + 3) {
      throw new ConfigException(key, "entry '" + entry + "' is not NAME://host:port");
    }
    String host = entry.substring(sep + 3, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    String port = entry.substring(colon + 1).trim();
    try {
      int p = Integer.parseInt(port);
      if (p < 0 || p > 65535) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      throw new ConfigException(key, "entry '" + entry + "' has no valid port");
    }
    return new String[] {entry.substring(0, sep).trim().toUpperCase(Locale.ROOT), host, port};
  }

  private static List<String> split(String raw) {
    List<String> out = new ArrayList<>();
    for (String s : raw.split(",")) {
      if (!s.isBlank()) {
        out.add(s.trim());
      }
    }
    return out;
  }

  public List<Listener> listeners() {
    return listeners;
  }

  /**
   * Whether some listener authenticates its clients: a SASL listener, or an SSL listener requiring
   * client certificates (the HTTP endpoints then require credentials by default).
   */
  public boolean authenticatesClients() {
    return listeners.stream().anyMatch(l -> l.sasl()
        || (l.tls() && value(l.name(), SSL_CLIENT_AUTH).trim().equalsIgnoreCase("required")));
  }

  public String interBrokerListenerName() {
    return interBrokerListener;
  }

  public Listener interBrokerListener() {
    return listeners.stream().filter(l -> l.name().equals(interBrokerListener)).findFirst().orElseThrow();
  }

  /** The listener's own value of a key ({@code listener.name.<l>.<key>}), else the global one. */
  public String value(String listener, ConfigKey<String> key) {
    return override(listener, key.name()).orElseGet(() -> settings.get(key));
  }

  private Optional<String> override(String listener, String key) {
    String v = settings.asMap().get(LISTENER_PREFIX + listener.toLowerCase(Locale.ROOT) + "." + key);
    return Optional.ofNullable(v);
  }

  /** SASL mechanisms enabled on a listener, upper case. */
  public List<String> mechanisms(String listener) {
    return split(value(listener, SASL_ENABLED_MECHANISMS)).stream().map(s -> s.toUpperCase(Locale.ROOT)).toList();
  }

  /** The JAAS text naming PLAIN users for a listener (Kafka's listener-and-mechanism prefixed key first). */
  public String plainJaas(String listener) {
    return override(listener, "plain.sasl.jaas.config").orElseGet(() -> settings.get(PLAIN_JAAS));
  }

  /**
   * The kafka-clients properties Tidemark's own clients (table topic control log, registry
   * followers) need to reach the inter-broker listener: its security protocol, the listener's
   * TLS trust (and key store when it asks for client certificates), and for SASL the mechanism
   * with the username and password of {@code listener.name.<l>.<mechanism>.sasl.jaas.config}.
   */
  public Map<String, Object> internalClientConfigs() {
    Listener l = interBrokerListener();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("security.protocol", l.protocol().name);
    if (l.tls()) {
      putIfSet(out, "ssl.truststore.location", value(l.name(), SSL_TRUSTSTORE_LOCATION));
      putIfSet(out, "ssl.truststore.password", value(l.name(), SSL_TRUSTSTORE_PASSWORD));
      out.put("ssl.truststore.type", value(l.name(), SSL_TRUSTSTORE_TYPE));
      if (!value(l.name(), SSL_CLIENT_AUTH).trim().equalsIgnoreCase("none")) {
        out.put("ssl.keystore.location", value(l.name(), SSL_KEYSTORE_LOCATION));
        out.put("ssl.keystore.type", value(l.name(), SSL_KEYSTORE_TYPE));
        putIfSet(out, "ssl.keystore.password", value(l.name(), SSL_KEYSTORE_PASSWORD));
        putIfSet(out, "ssl.key.password", value(l.name(), SSL_KEY_PASSWORD));
      }
      // brokers are reached by the advertised name, which a test certificate need not carry
      out.put("ssl.endpoint.identification.algorithm", "");
    }
    if (l.sasl()) {
      String mechanism = settings.get(INTER_BROKER_MECHANISM).trim().toUpperCase(Locale.ROOT);
      if (mechanism.isEmpty()) {
        mechanism = mechanisms(l.name()).stream().filter(m -> !m.equals(ListenerSecurity.OAUTHBEARER)).findFirst()
            .orElse(ListenerSecurity.OAUTHBEARER);
      }
      if (mechanism.equals(ListenerSecurity.OAUTHBEARER)) {
        throw new ConfigException(INTER_BROKER_MECHANISM.name(), "OAUTHBEARER is not supported for Tidemark's own "
            + "clients; enable a SCRAM mechanism or PLAIN on the inter-broker listener " + l.name() + " for them");
      }
      String jaasKey = LISTENER_PREFIX + l.name().toLowerCase(Locale.ROOT) + "." + mechanism.toLowerCase(Locale.ROOT)
          + ".sasl.jaas.config";
      Map<String, String> options = JaasUsers.options(settings.asMap().getOrDefault(jaasKey, ""), jaasKey);
      if (!options.containsKey("username") || !options.containsKey("password")) {
        throw new ConfigException(jaasKey, "needs username=\"...\" password=\"...\" for Tidemark's own clients on the "
            + l.protocol() + " inter-broker listener " + l.name());
      }
      String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
          : "org.apache.kafka.common.security.scram.ScramLoginModule";
      out.put("sasl.mechanism", mechanism);
      out.put("sasl.jaas.config", module + " required username=\"" + escape(options.get("username")) + "\" password=\""
          + escape(options.get("password")) + "\";");
    }
    return out;
  }

  private static void putIfSet(Map<String, Object> out, String key, String value) {
    if (value != null && !value.isBlank()) {
      out.put(key, value);
    }
  }

  private static String escape(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  public long reauthMs(String listener) {
    return override(listener, REAUTH_MS.name()).map(REAUTH_MS::parse).orElseGet(() -> settings.get(REAUTH_MS));
  }

  public int saslMaxReceiveBytes() {
    return settings.get(SASL_MAX_RECEIVE_BYTES);
  }

  public String scramBootstrap() {
    return settings.get(SCRAM_BOOTSTRAP);
  }

  public long sslReloadCheckMs() {
    return settings.get(SSL_RELOAD_CHECK_MS);
  }

  public Settings settings() {
    return settings;
  }
}
