package io.tidemark.registry.http;

import io.javalin.http.Context;
import io.tidemark.broker.security.PrincipalMappingRules;
import io.tidemark.broker.security.SecurityConfig;
import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * Mutual TLS on the HTTPS endpoints (schema registry, Iceberg REST catalog): whether their TLS
 * connectors ask for client certificates ({@link #CLIENT_AUTH}, Kafka's {@code ssl.client.auth}
 * values), the trust store that verifies them, and the principal a verified certificate names:
 * {@code User:<ssl.principal.mapping.rules applied to the subject DN>}, the same rules and the same
 * {@link PrincipalMappingRules} as the Kafka listeners. The admin endpoint serves plain HTTP only,
 * so it has no client certificates.
 *
 * <p>{@code none}: no certificate is asked for. {@code requested}: a client may present one; one
 * that does not verify fails the handshake, no certificate leaves the request to the other
 * credentials. {@code required}: the handshake fails without a verified certificate. Immutable.
 */
public final class ClientCertificates {

  /** Jetty's request attribute holding the verified client chain (servlet API). */
  private static final String CHAIN_ATTRIBUTE = "jakarta.servlet.request.X509Certificate";

  public static final ConfigKey<String> CLIENT_AUTH = ConfigKey.choice("http.ssl.client.auth", "none",
      "Client certificates (mutual TLS) on the HTTPS schema registry, Iceberg REST catalog and admin endpoint (those with "
          + "registry.tls.keystore.path / table.rest.tls.keystore.path / admin.tls.keystore.path set): required, requested or none, as Kafka's "
          + "ssl.client.auth. A request with a verified certificate and no Authorization header runs as "
          + "User:<ssl.principal.mapping.rules applied to the certificate's subject DN>.",
      "none", "requested", "required");
  public static final ConfigKey<String> TRUSTSTORE_LOCATION = ConfigKey.string("http.ssl.truststore.location", "",
      "Trust store verifying the HTTP endpoints' client certificates; required when http.ssl.client.auth is not none.");
  public static final ConfigKey<String> TRUSTSTORE_PASSWORD = ConfigKey.password("http.ssl.truststore.password", "",
      "Password of http.ssl.truststore.location.");
  public static final ConfigKey<String> TRUSTSTORE_TYPE = ConfigKey.string("http.ssl.truststore.type", "PKCS12",
      "Type of http.ssl.truststore.location: PKCS12 or JKS.");

  public static final List<ConfigKey<?>> KEYS = List.of(CLIENT_AUTH, TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD,
      TRUSTSTORE_TYPE);

  /** No client certificates: the endpoints' TLS authenticates only the server. */
  public static final ClientCertificates NONE = new ClientCertificates("none", "", "", "PKCS12",
      PrincipalMappingRules.parse("DEFAULT"));

  private final String mode;
  private final String truststorePath;
  private final String truststorePassword;
  private final String truststoreType;
  private final PrincipalMappingRules rules;

  /**
   * @param mode none, requested or required
   * @param rules maps a verified certificate's subject DN to a user
   */
  public ClientCertificates(String mode, String truststorePath, String truststorePassword, String truststoreType,
      PrincipalMappingRules rules) {
    this.mode = mode.trim();
    if (!List.of("none", "requested", "required").contains(this.mode)) {
      throw new ConfigException(CLIENT_AUTH.name(), mode, "must be none, requested or required");
    }
    if (!"none".equals(this.mode) && truststorePath.isBlank()) {
      throw new ConfigException(TRUSTSTORE_LOCATION.name(), truststorePath,
          "must name the trust store verifying client certificates when http.ssl.client.auth is " + this.mode);
    }
    this.truststorePath = truststorePath;
    this.truststorePassword = truststorePassword;
    this.truststoreType = truststoreType;
    this.rules = rules;
  }

  /** The node's setting ({@link #KEYS} and the unprefixed {@code ssl.principal.mapping.rules}). */
  public static ClientCertificates from(Settings settings) {
    return new ClientCertificates(settings.get(CLIENT_AUTH), settings.get(TRUSTSTORE_LOCATION),
        settings.get(TRUSTSTORE_PASSWORD), settings.get(TRUSTSTORE_TYPE),
        PrincipalMappingRules.parse(settings.get(SecurityConfig.SSL_PRINCIPAL_MAPPING_RULES)));
  }

  /** none, requested or required. */
  public String mode() {
    return mode;
  }

  /** Makes a TLS connector ask for, and verify, client certificates as {@link #mode()} says. */
  void configure(SslContextFactory.Server ssl) {
    if ("none".equals(mode)) {
      return;
    }
    ssl.setTrustStorePath(truststorePath);
    ssl.setTrustStorePassword(truststorePassword);
    ssl.setTrustStoreType(truststoreType);
    if ("required".equals(mode)) {
      ssl.setNeedClientAuth(true);
    } else {
      ssl.setWantClientAuth(true);
    }
  }

  /**
   * The principal of the request's verified client certificate, if it presented one.
   *
   * @throws HttpAccess.Unauthenticated when no mapping rule matches the certificate's subject DN
   */
  Optional<String> principal(Context ctx) {
    if ("none".equals(mode) || !(ctx.req().getAttribute(CHAIN_ATTRIBUTE) instanceof X509Certificate[] chain)
        || chain.length == 0) {
      return Optional.empty();
    }
    String dn = chain[0].getSubjectX500Principal().getName();
    return Optional.of("User:" + rules.map(dn).orElseThrow(() -> new HttpAccess.Unauthenticated(
        "the client certificate's subject maps to no user (ssl.principal.mapping.rules)")));
  }
}
