package io.tidemark.registry.http;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * The HTTP security every Tidemark HTTP endpoint (schema registry, Iceberg REST catalog, admin)
 * shares: whether credentials are required ({@link #AUTH_REQUIRED}), the endpoints' own users
 * setting and a Jetty HTTPS connector from a keystore (with client certificates as
 * {@link ClientCertificates} says). Who a request is and what it may do is
 * {@link HttpAccess}'s.
 * Stateless.
 */
public final class HttpSecurity {

  public static final ConfigKey<String> AUTH_REQUIRED = ConfigKey.choice("http.auth.required", "auto",
      "Whether the schema registry, the Iceberg REST catalog and the admin endpoint (all but /health and /ready) refuse "
          + "requests without credentials (HTTP 401). Credentials are HTTP basic with a Kafka user's name and password "
          + "(SCRAM users, PLAIN users of the listeners' JAAS config) or an endpoint's own *.auth.basic.users, or a bearer "
          + "token (a JWT checked against sasl.oauthbearer.jwks.endpoint.url, or one the REST catalog's /v1/oauth/tokens "
          + "issued). auto: "
          + "required when the Kafka port is secured (a SASL listener, an SSL listener requiring client certificates, or "
          + "the ACL authorizer on) or http.ssl.client.auth=required; true: always; false: never (an endpoint's own users, when set, are still required).",
      "auto", "true", "false");

  public static final ConfigKey<Long> TOKEN_LIFETIME_MS = ConfigKey.longKey("http.oauth.token.lifetime.ms", 3_600_000L,
      "Lifetime of the bearer tokens the Iceberg REST catalog's OAuth2 token endpoint (/v1/oauth/tokens) issues for a "
          + "Kafka user's name and password; they are valid on the issuing node until they expire or it restarts.")
      .validate(ConfigKey.between(1_000L, 86_400_000L));

  /** These keys and the client certificates' ({@link ClientCertificates#KEYS}). */
  public static final List<ConfigKey<?>> KEYS = java.util.stream.Stream.concat(
      java.util.stream.Stream.<ConfigKey<?>>of(AUTH_REQUIRED, TOKEN_LIFETIME_MS), ClientCertificates.KEYS.stream()).toList();

  private HttpSecurity() {}

  /** Whether {@link #AUTH_REQUIRED}'s value requires credentials, given whether the Kafka port is secured. */
  public static boolean authRequired(String mode, boolean kafkaSecured) {
    return switch (mode.trim()) {
      case "true" -> true;
      case "false" -> false;
      default -> kafkaSecured;
    };
  }

  /**
   * The users of a {@code *.auth.basic.users} setting ({@code user:password} pairs separated by
   * commas; blank means none); a malformed entry fails naming {@code key}.
   */
  public static Map<String, String> parseBasicUsers(String key, String raw) {
    Map<String, String> users = new LinkedHashMap<>();
    if (raw.isBlank()) {
      return users;
    }
    for (String pair : raw.split(",")) {
      int colon = pair.indexOf(':');
      if (colon <= 0) {
        throw new ConfigException(key, "entries must be user:password (an entry has no ':' or no user)");
      }
      users.put(pair.substring(0, colon).trim(), pair.substring(colon + 1));
    }
    return users;
  }

  /**
   * An HTTPS connector on {@code host:port} serving the certificate of the given keystore and asking
   * for the client certificates {@code clients} says.
   */
  public static ServerConnector tlsConnector(Server server, HttpConfiguration httpConfig, String host, int port,
      String keystorePath, String keystorePassword, String keystoreType, ClientCertificates clients) {
    SslContextFactory.Server ssl = new SslContextFactory.Server();
    ssl.setKeyStorePath(keystorePath);
    ssl.setKeyStorePassword(keystorePassword);
    ssl.setKeyStoreType(keystoreType);
    clients.configure(ssl);
    HttpConfiguration https = new HttpConfiguration(httpConfig);
    https.addCustomizer(new SecureRequestCustomizer(false));
    ServerConnector connector = new ServerConnector(server,
        new SslConnectionFactory(ssl, "http/1.1"), new HttpConnectionFactory(https));
    connector.setHost(host);
    connector.setPort(port);
    return connector;
  }
}
