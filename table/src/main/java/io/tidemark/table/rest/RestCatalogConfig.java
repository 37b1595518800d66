package io.tidemark.table.rest;

import io.tidemark.registry.http.HttpSecurity;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Settings of the built-in Iceberg REST catalog endpoint. Immutable; read from {@link Settings} at start-up.
 *
 * @param enabled whether a node with the broker role serves the endpoint
 * @param host address the endpoint binds
 * @param port endpoint port; 0 picks a free port (tests)
 * @param maxRequestBytes largest accepted request body; larger ones get HTTP 413
 * @param basicAuthUsers {@code user:password} pairs; empty disables authentication
 * @param tlsKeystorePath PKCS12/JKS keystore enabling HTTPS; empty serves plain HTTP
 * @param tlsKeystorePassword password of that keystore
 * @param tlsKeystoreType keystore type (PKCS12 or JKS)
 * @param clientOverrides {@code table.rest.client.*} without the prefix: catalog properties every
 *     client is told to use through {@code GET /v1/config} (its FileIO, S3 endpoint, ...)
 */
public record RestCatalogConfig(
    boolean enabled,
    String host,
    int port,
    int maxRequestBytes,
    Map<String, String> basicAuthUsers,
    String tlsKeystorePath,
    String tlsKeystorePassword,
    String tlsKeystoreType,
    Map<String, String> clientOverrides) {

  /** Keys under this prefix are handed to REST clients as catalog property overrides. */
  public static final String CLIENT_PREFIX = "table.rest.client.";

  public static final ConfigKey<Boolean> ENABLE = ConfigKey.bool("table.rest.enable", true,
      "Serve the configured Iceberg catalog over the Iceberg REST catalog API on nodes with the broker role, so that "
          + "Spark, Trino, Flink or PyIceberg can query table topics with no other service.");
  public static final ConfigKey<String> HOST =
      ConfigKey.string("table.rest.host", "0.0.0.0", "Address the Iceberg REST catalog binds.");
  public static final ConfigKey<Integer> PORT =
      ConfigKey.integer("table.rest.port", 8181, "Port of the Iceberg REST catalog (paths under /v1); 0 picks a free port.")
          .validate(ConfigKey.between(0, 65535));
  public static final ConfigKey<Integer> MAX_REQUEST_BYTES =
      ConfigKey.integer("table.rest.max.request.bytes", 16 * 1024 * 1024,
              "Largest request body the Iceberg REST catalog accepts (commits carry schemas and snapshot lists); "
                  + "larger requests are refused with HTTP 413.")
          .validate(ConfigKey.between(1024, 1024 * 1024 * 1024));
  public static final ConfigKey<String> BASIC_AUTH_USERS = ConfigKey.password("table.rest.auth.basic.users", "",
      "HTTP basic authentication users of the Iceberg REST catalog as user:password pairs separated by commas; "
          + "empty disables authentication. Clients set rest.auth.type=basic.");
  public static final ConfigKey<String> TLS_KEYSTORE_PATH = ConfigKey.string("table.rest.tls.keystore.path", "",
      "Keystore with the server certificate; set to serve the Iceberg REST catalog over HTTPS.");
  public static final ConfigKey<String> TLS_KEYSTORE_PASSWORD =
      ConfigKey.password("table.rest.tls.keystore.password", "", "Password of the REST catalog's TLS keystore.");
  public static final ConfigKey<String> TLS_KEYSTORE_TYPE =
      ConfigKey.string("table.rest.tls.keystore.type", "PKCS12", "Type of the REST catalog's TLS keystore: PKCS12 or JKS.");

  public static final List<ConfigKey<?>> KEYS = List.of(ENABLE, HOST, PORT, MAX_REQUEST_BYTES, BASIC_AUTH_USERS,
      TLS_KEYSTORE_PATH, TLS_KEYSTORE_PASSWORD, TLS_KEYSTORE_TYPE);

  public RestCatalogConfig {
    basicAuthUsers = Map.copyOf(basicAuthUsers);
    clientOverrides = Map.copyOf(clientOverrides);
  }

  public static RestCatalogConfig from(Settings settings) {
    return new RestCatalogConfig(
        settings.get(ENABLE),
        settings.get(HOST),
        settings.get(PORT),
        settings.get(MAX_REQUEST_BYTES),
        HttpSecurity.parseBasicUsers(BASIC_AUTH_USERS.name(), settings.get(BASIC_AUTH_USERS)),
        settings.get(TLS_KEYSTORE_PATH),
        settings.get(TLS_KEYSTORE_PASSWORD),
        settings.get(TLS_KEYSTORE_TYPE),
        settings.withPrefix(CLIENT_PREFIX));
  }

  /** Defaults everywhere except the port (tests pass 0). */
  public static RestCatalogConfig defaults(int port) {
    return from(Settings.empty().with(PORT.name(), Integer.toString(port)));
  }

  public boolean tlsEnabled() {
    return !tlsKeystorePath.isEmpty();
  }

  /** This config with {@code overrides} added to the client overrides (configured ones win). */
  public RestCatalogConfig withClientDefaults(Map<String, String> overrides) {
    Map<String, String> merged = new LinkedHashMap<>(overrides);
    merged.putAll(clientOverrides);
    return new RestCatalogConfig(enabled, host, port, maxRequestBytes, basicAuthUsers, tlsKeystorePath,
        tlsKeystorePassword, tlsKeystoreType, merged);
  }

}
