package io.tidemark.registry;

import io.tidemark.registry.http.HttpSecurity;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.List;
import java.util.Map;

/**
 * The schema registry's settings, declared once. Immutable; read from {@link Settings} at start-up.
 *
 * @param host address the REST API binds
 * @param port REST API port; 0 picks a free port (tests)
 * @param maxRequestBytes largest accepted request body; larger ones get HTTP 413
 * @param defaultCompatibility global compatibility level until {@code PUT /config} changes it
 * @param writerQueueMax writes waiting for the single writer before new ones are refused (429)
 * @param writeTimeoutMs how long a request waits for its write to be applied (then 50002)
 * @param basicAuthUsers {@code user:password} pairs separated by commas; empty disables auth
 * @param tlsKeystorePath PKCS12/JKS keystore enabling HTTPS; empty serves plain HTTP
 * @param tlsKeystorePassword password of that keystore
 * @param tlsKeystoreType keystore type (PKCS12 or JKS)
 */
public record RegistryConfig(
    String host,
    int port,
    int maxRequestBytes,
    String defaultCompatibility,
    int writerQueueMax,
    long writeTimeoutMs,
    Map<String, String> basicAuthUsers,
    String tlsKeystorePath,
    String tlsKeystorePassword,
    String tlsKeystoreType) {

  public static final ConfigKey<String> HOST =
      ConfigKey.string("registry.host", "0.0.0.0", "Address the schema registry REST API binds.");
  public static final ConfigKey<Integer> PORT =
      ConfigKey.integer("registry.port", 8081, "Port of the schema registry REST API (Confluent API v1); 0 picks a free port.")
          .validate(ConfigKey.between(0, 65535));
  public static final ConfigKey<Integer> MAX_REQUEST_BYTES =
      ConfigKey.integer("registry.max.request.bytes", 4 * 1024 * 1024,
              "Largest request body the registry accepts; larger requests are refused with HTTP 413.")
          .validate(ConfigKey.between(1024, 256 * 1024 * 1024));
  public static final ConfigKey<String> DEFAULT_COMPATIBILITY =
      ConfigKey.string("registry.compatibility.default", "BACKWARD",
              "Global compatibility level used until PUT /config sets one: NONE, BACKWARD, BACKWARD_TRANSITIVE, "
                  + "FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE.")
          .validate(v -> io.tidemark.registry.compatibility.CompatibilityLevel.parse(v) == null
              ? "is not a compatibility level" : null);
  public static final ConfigKey<Integer> WRITER_QUEUE_MAX =
      ConfigKey.integer("registry.writer.queue.max", 1024,
              "Registry writes (register, delete, config, mode) queued for the single writer; more are refused with HTTP 429.")
          .validate(ConfigKey.between(1, 1_000_000));
  public static final ConfigKey<Long> WRITE_TIMEOUT_MS =
      ConfigKey.longKey("registry.write.timeout.ms", 30_000,
              "How long a write request waits to be applied before it fails with error 50002.")
          .validate(ConfigKey.between(1L, 3_600_000L));
  public static final ConfigKey<String> BASIC_AUTH_USERS =
      ConfigKey.password("registry.auth.basic.users", "",
          "HTTP basic authentication users as user:password pairs separated by commas; empty disables authentication.");
  public static final ConfigKey<String> TLS_KEYSTORE_PATH =
      ConfigKey.string("registry.tls.keystore.path", "", "Keystore with the server certificate; set to serve HTTPS instead of HTTP.");
  public static final ConfigKey<String> TLS_KEYSTORE_PASSWORD =
      ConfigKey.password("registry.tls.keystore.password", "", "Password of the TLS keystore.");
  public static final ConfigKey<String> TLS_KEYSTORE_TYPE =
      ConfigKey.string("registry.tls.keystore.type", "PKCS12", "Type of the TLS keystore: PKCS12 or JKS.");

  public static final List<ConfigKey<?>> KEYS = List.of(HOST, PORT, MAX_REQUEST_BYTES, DEFAULT_COMPATIBILITY,
      WRITER_QUEUE_MAX, WRITE_TIMEOUT_MS, BASIC_AUTH_USERS, TLS_KEYSTORE_PATH, TLS_KEYSTORE_PASSWORD, TLS_KEYSTORE_TYPE);

  public RegistryConfig {
    basicAuthUsers = Map.copyOf(basicAuthUsers);
  }

  public static RegistryConfig from(Settings settings) {
    return new RegistryConfig(
        settings.get(HOST),
        settings.get(PORT),
        settings.get(MAX_REQUEST_BYTES),
        settings.get(DEFAULT_COMPATIBILITY).trim().toUpperCase(java.util.Locale.ROOT),
        settings.get(WRITER_QUEUE_MAX),
        settings.get(WRITE_TIMEOUT_MS),
        HttpSecurity.parseBasicUsers(BASIC_AUTH_USERS.name(), settings.get(BASIC_AUTH_USERS)),
        settings.get(TLS_KEYSTORE_PATH),
        settings.get(TLS_KEYSTORE_PASSWORD),
        settings.get(TLS_KEYSTORE_TYPE));
  }

  /** Defaults everywhere except the port (tests pass 0). */
  public static RegistryConfig defaults(int port) {
    return from(Settings.empty().with(PORT.name(), Integer.toString(port)));
  }

  public boolean tlsEnabled() {
    return !tlsKeystorePath.isEmpty();
  }

  public RegistryConfig withBasicAuthUsers(Map<String, String> users) {
    return new RegistryConfig(host, port, maxRequestBytes, defaultCompatibility, writerQueueMax, writeTimeoutMs,
        users, tlsKeystorePath, tlsKeystorePassword, tlsKeystoreType);
  }

  public RegistryConfig withTls(String keystorePath, String password, String type) {
    return new RegistryConfig(host, port, maxRequestBytes, defaultCompatibility, writerQueueMax, writeTimeoutMs,
        basicAuthUsers, keystorePath, password, type);
  }

  public RegistryConfig withMaxRequestBytes(int bytes) {
    return new RegistryConfig(host, port, bytes, defaultCompatibility, writerQueueMax, writeTimeoutMs,
        basicAuthUsers, tlsKeystorePath, tlsKeystorePassword, tlsKeystoreType);
  }

}
