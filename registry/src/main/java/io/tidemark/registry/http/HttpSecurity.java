package io.tidemark.registry.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import io.tidemark.stream.config.ConfigException;
import java.util.Base64;
import java.util.LinkedHashMap;
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
 * shares: the users setting, a basic-authentication check in constant time and a Jetty HTTPS
 * connector from a keystore.
 * Stateless.
 */
public final class HttpSecurity {

  private HttpSecurity() {}

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

  /** Whether {@code header} (the Authorization header, may be null) carries a user and password of {@code users}. */
  public static boolean basicAuthorized(String header, Map<String, String> users) {
    if (header == null || !header.regionMatches(true, 0, "Basic ", 0, 6)) {
      return false;
    }
    String decoded;
    try {
      decoded = new String(Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return false;
    }
    int colon = decoded.indexOf(':');
    String expected = colon < 0 ? null : users.get(decoded.substring(0, colon));
    return expected != null && MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8),
        decoded.substring(colon + 1).getBytes(StandardCharsets.UTF_8));
  }

  /** An HTTPS connector on {@code host:port} serving the certificate of the given keystore. */
  public static ServerConnector tlsConnector(Server server, HttpConfiguration httpConfig, String host, int port,
      String keystorePath, String keystorePassword, String keystoreType) {
    SslContextFactory.Server ssl = new SslContextFactory.Server();
    ssl.setKeyStorePath(keystorePath);
    ssl.setKeyStorePassword(keystorePassword);
    ssl.setKeyStoreType(keystoreType);
    HttpConfiguration https = new HttpConfiguration(httpConfig);
    https.addCustomizer(new SecureRequestCustomizer(false));
    ServerConnector connector = new ServerConnector(server,
        new SslConnectionFactory(ssl, "http/1.1"), new HttpConnectionFactory(https));
    connector.setHost(host);
    connector.setPort(port);
    return connector;
  }
}
