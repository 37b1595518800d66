package io.tidemark.broker.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.auth.SaslExtensionsCallback;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback;

/**
 * A Kafka client login callback handler (sasl.login.callback.handler.class) handing out the JWT
 * of its JAAS option {@code token}, as a custom handler of an application would: the broker
 * alone decides whether it is valid.
 */
public final class StaticTokenLoginHandler implements AuthenticateCallbackHandler {

  private String token;

  @Override
  public void configure(Map<String, ?> configs, String mechanism, List<AppConfigurationEntry> entries) {
    token = (String) entries.get(0).getOptions().get("token");
  }

  @Override
  public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
    for (Callback c : callbacks) {
      if (c instanceof OAuthBearerTokenCallback tc) {
        tc.token(parsed(token));
      } else if (!(c instanceof SaslExtensionsCallback)) {
        throw new UnsupportedCallbackException(c);
      }
    }
  }

  private static OAuthBearerToken parsed(String jwt) {
    JsonNode claims;
    try {
      claims = new ObjectMapper().readTree(Base64.getUrlDecoder().decode(jwt.split("\\.")[1]));
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
    long exp = claims.path("exp").asLong() * 1000;
    String sub = claims.path("sub").asText();
    return new OAuthBearerToken() {
      @Override
      public String value() {
        return jwt;
      }

      @Override
      public Set<String> scope() {
        return Set.of();
      }

      @Override
      public long lifetimeMs() {
        return exp;
      }

      @Override
      public String principalName() {
        return sub;
      }

      @Override
      public Long startTimeMs() {
        return null;
      }
    };
  }

  @Override
  public void close() {}
}
