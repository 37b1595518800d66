package io.tidemark.broker.security;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The broker side of SASL OAUTHBEARER under Kafka's names ({@code sasl.oauthbearer.*}, the settings
 * of Kafka's {@code OAuthBearerValidatorCallbackHandler}): where the JSON Web Key Set is, how
 * often it is refreshed, and what a token must say. They are broker-wide: the Kafka listeners
 * offering OAUTHBEARER and the HTTP endpoints' bearer tokens check tokens the same way. Immutable.
 */
public final class OAuthBearerConfig {

  /** The server callback handler Kafka brokers name for JWKS validation; the only one accepted. */
  public static final String VALIDATOR_HANDLER =
      "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler";

  public static final ConfigKey<String> JWKS_URL = ConfigKey.string("sasl.oauthbearer.jwks.endpoint.url", "",
      "Where the identity provider's JSON Web Key Set is: an https:// (or http://) URL, or a file: URL. Required when a "
          + "listener enables OAUTHBEARER; also validates bearer tokens on the HTTP endpoints.");
  public static final ConfigKey<Long> JWKS_REFRESH_MS = ConfigKey.longKey("sasl.oauthbearer.jwks.endpoint.refresh.ms",
      3_600_000L, "How often the key set is fetched again; a token naming an unknown key id also triggers a fetch "
          + "(at most once per sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms).")
      .validate(ConfigKey.between(1_000L, Long.MAX_VALUE));
  public static final ConfigKey<Long> JWKS_BACKOFF_MS = ConfigKey.longKey(
      "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", 100L, "First wait before retrying a failed key set fetch; "
          + "doubled after each failure.").validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Long> JWKS_BACKOFF_MAX_MS = ConfigKey.longKey(
      "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", 10_000L, "Longest wait between retries of a failed key set "
          + "fetch.").validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> CLOCK_SKEW_SECONDS = ConfigKey.integer("sasl.oauthbearer.clock.skew.seconds", 30,
      "Seconds of clock difference with the identity provider tolerated when checking exp, nbf and iat.")
      .validate(ConfigKey.between(0, 3600));
  public static final ConfigKey<String> EXPECTED_AUDIENCE = ConfigKey.string("sasl.oauthbearer.expected.audience", "",
      "Comma-separated audiences; when set, a token's aud claim must hold one of them.");
  public static final ConfigKey<String> EXPECTED_ISSUER = ConfigKey.string("sasl.oauthbearer.expected.issuer", "",
      "When set, a token's iss claim must equal it.");
  public static final ConfigKey<String> SUB_CLAIM = ConfigKey.string("sasl.oauthbearer.sub.claim.name", "sub",
      "The claim naming the token's principal (the principal is User:<its value>).");
  public static final ConfigKey<String> SCOPE_CLAIM = ConfigKey.string("sasl.oauthbearer.scope.claim.name", "scope",
      "The claim holding the token's scopes.");

  public static final List<ConfigKey<?>> KEYS = List.of(JWKS_URL, JWKS_REFRESH_MS, JWKS_BACKOFF_MS, JWKS_BACKOFF_MAX_MS,
      CLOCK_SKEW_SECONDS, EXPECTED_AUDIENCE, EXPECTED_ISSUER, SUB_CLAIM, SCOPE_CLAIM);

  private final Settings settings;

  public OAuthBearerConfig(Settings settings) {
    this.settings = settings;
  }

  /** Whether tokens can be validated (a key set is configured). */
  public boolean configured() {
    return !settings.get(JWKS_URL).isBlank();
  }

  /**
   * Checks Kafka's per-listener callback handler setting, when given: only the JWKS validator is
   * served (Kafka's default, unsecured tokens, is refused: it trusts any token).
   */
  public void checkListener(String listener) {
    String key = SecurityConfig.LISTENER_PREFIX + listener.toLowerCase(Locale.ROOT)
        + ".oauthbearer.sasl.server.callback.handler.class";
    String handler = settings.asMap().getOrDefault(key, VALIDATOR_HANDLER).trim();
    if (!handler.equals(VALIDATOR_HANDLER)) {
      throw new ConfigException(key, "names " + handler + "; Tidemark validates OAUTHBEARER tokens only against "
          + JWKS_URL.name() + " (" + VALIDATOR_HANDLER + ")");
    }
    if (!configured()) {
      throw new ConfigException(JWKS_URL.name(), "is required: listener " + listener + " enables OAUTHBEARER (unsecured "
          + "tokens are not accepted)");
    }
  }

  /** The key set source and validator; empty when no key set is configured. The caller closes the source. */
  public Optional<BearerTokens> open(LongSupplier clockMs, long initialLoadWaitMs) {
    if (!configured()) {
      return Optional.empty();
    }
    JwksSource source = new JwksSource(settings.get(JWKS_URL), settings.get(JWKS_REFRESH_MS),
        settings.get(JWKS_BACKOFF_MS), settings.get(JWKS_BACKOFF_MAX_MS), clockMs).start(initialLoadWaitMs);
    List<String> audiences = Arrays.stream(settings.get(EXPECTED_AUDIENCE).split(",")).map(String::trim)
        .filter(s -> !s.isEmpty()).toList();
    JwtValidator validator = new JwtValidator(source::current, source::refreshSoon, new JwtValidator.Expectations(
        settings.get(EXPECTED_ISSUER).trim(), audiences, settings.get(SUB_CLAIM).trim(), settings.get(SCOPE_CLAIM).trim(),
        settings.get(CLOCK_SKEW_SECONDS) * 1000L), clockMs);
    return Optional.of(new BearerTokens(source, validator));
  }

  /** The validator of configured tokens with the source it reads keys from (closing it stops the refreshes). */
  public record BearerTokens(JwksSource source, JwtValidator validator) implements AutoCloseable {
    @Override
    public void close() {
      source.close();
    }
  }
}
