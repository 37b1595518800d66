package io.tidemark.broker.security;

import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * What one listener needs to secure its connections: its TLS context (SSL, SASL_SSL), its SASL
 * mechanisms and the credentials they check (passwords, SCRAM credentials, OAUTHBEARER tokens), the mTLS principal mapping, the re-authentication
 * period and the pre-authentication frame bound. Creates one {@link Authenticator} per
 * connection. Immutable apart from the TLS context's reload; thread-safe.
 */
public final class ListenerSecurity {

  private final Listener listener;
  private final List<String> mechanisms;
  private final PasswordCheck passwords;
  private final Map<String, String> plainUsers;
  private final ScramCredentialStore scram;
  private final PrincipalMappingRules mappingRules;
  private final Optional<TlsContexts> tls;
  private final long reauthMs;
  private final int saslMaxReceiveBytes;
  private final LongSupplier clockMs;
  private final SecureRandom random = new SecureRandom();
  private final Optional<JwtValidator> tokens;

  static final String OAUTHBEARER = "OAUTHBEARER";

  public ListenerSecurity(Listener listener, SecurityConfig config, ScramCredentialStore scram, LongSupplier clockMs,
      LongSupplier nanoClock) {
    this(listener, config, scram, Optional.empty(), clockMs, nanoClock);
  }

  /** @param tokens the OAUTHBEARER token validator (required when the listener enables OAUTHBEARER) */
  public ListenerSecurity(Listener listener, SecurityConfig config, ScramCredentialStore scram,
      Optional<JwtValidator> tokens, LongSupplier clockMs, LongSupplier nanoClock) {
    this.listener = listener;
    this.mechanisms = listener.sasl() ? config.mechanisms(listener.name()) : List.of();
    this.scram = scram;
    Map<String, String> plainUsers = listener.sasl() && mechanisms.contains("PLAIN")
        ? JaasUsers.users(config.plainJaas(listener.name()), SecurityConfig.PLAIN_JAAS.name()) : Map.of();
    this.plainUsers = Map.copyOf(plainUsers);
    this.passwords = new PasswordCheck(plainUsers, scram);
    this.mappingRules = PrincipalMappingRules.parse(config.value(listener.name(), SecurityConfig.SSL_PRINCIPAL_MAPPING_RULES));
    this.tls = listener.tls() ? Optional.of(new TlsContexts(config, listener.name(), nanoClock)) : Optional.empty();
    this.reauthMs = config.reauthMs(listener.name());
    this.saslMaxReceiveBytes = config.saslMaxReceiveBytes();
    this.clockMs = clockMs;
    if (mechanisms.contains(OAUTHBEARER) && tokens.isEmpty()) {
      throw new IllegalArgumentException("listener " + listener.name() + " enables OAUTHBEARER without a token validator");
    }
    this.tokens = tokens;
  }

  /** A PLAINTEXT listener's security: everyone is {@code User:ANONYMOUS}. */
  public static ListenerSecurity plaintext(Listener listener) {
    return new ListenerSecurity(listener, SecurityConfig.plaintext(listener.host(), listener.port()),
        ScramCredentialStore.memory(), System::currentTimeMillis, System::nanoTime);
  }

  public Listener listener() {
    return listener;
  }

  public Optional<TlsContexts> tls() {
    return tls;
  }

  /** The PLAIN users of this listener's JAAS config (empty unless it offers PLAIN). */
  public Map<String, String> plainUsers() {
    return plainUsers;
  }

  public Authenticator newAuthenticator() {
    return new Authenticator(this);
  }

  List<String> mechanisms() {
    return mechanisms;
  }

  SaslExchange exchange(String mechanism) {
    if (mechanism.equals("PLAIN")) {
      return new PlainExchange(passwords);
    }
    if (mechanism.equals(OAUTHBEARER)) {
      return new OAuthBearerExchange(tokens.orElseThrow());
    }
    ScramAlgorithm algorithm = ScramAlgorithm.ofName(mechanism).orElseThrow();
    return new ScramExchange(algorithm, scram, () -> {
      byte[] b = new byte[18];
      random.nextBytes(b);
      return b;
    });
  }

  long reauthMs() {
    return reauthMs;
  }

  int saslMaxReceiveBytes() {
    return saslMaxReceiveBytes;
  }

  long nowMs() {
    return clockMs.getAsLong();
  }

  /**
   * The principal of a TLS peer: {@code User:<mapped subject DN>} when it presented a certificate,
   * ANONYMOUS when it did not; empty when no mapping rule matches its DN (the connection is refused).
   */
  Optional<KafkaPrincipal> tlsPrincipal(SSLSession session) {
    try {
      String dn = session.getPeerPrincipal().getName();
      return mappingRules.map(dn).map(name -> new KafkaPrincipal(KafkaPrincipal.USER_TYPE, name));
    } catch (SSLPeerUnverifiedException e) {
      return Optional.of(KafkaPrincipal.ANONYMOUS);
    }
  }
}
