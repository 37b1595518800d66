package io.tidemark.broker.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Goal: the JWT checks refuse every token that should not pass (unsigned, HMAC-signed with the
 * public key, no exp, not yet valid, unknown key id, wrong issuer/audience, no principal claim,
 * malformed) and accept a good one with its principal, scopes and expiry, at an injected time;
 * the node's own issuer's tokens pass only its own validator.
 */
class JwtValidatorTest {

  static final TestJwts IDP = new TestJwts().addKey("k1");
  final AtomicLong now = new AtomicLong(System.currentTimeMillis());
  final List<String> refreshRequests = new ArrayList<>();

  JwtValidator validator(String issuer, List<String> audiences) throws Exception {
    JsonWebKeySet set = JsonWebKeySet.parse(IDP.jwks().getBytes(StandardCharsets.UTF_8));
    return new JwtValidator(() -> set, refreshRequests::add,
        new JwtValidator.Expectations(issuer, audiences, "sub", "scope", 5_000), now::get);
  }

  static String b64(String s) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aGoodTokenPassesWithItsPrincipalScopesAndExpiry() throws Exception {
    long exp = now.get() / 1000 + 600;
    String token = IDP.sign("k1", "{\"sub\":\"alice\",\"exp\":" + exp + ",\"aud\":[\"x\",\"kafka\"],\"iss\":\"idp\","
        + "\"scope\":\"read write\"}");
    JwtValidator.ValidatedToken t = validator("idp", List.of("kafka")).validate(token);
    assertThat(t.principal()).isEqualTo("alice");
    assertThat(t.expiresAtMs()).isEqualTo(exp * 1000);
    assertThat(t.scopes()).containsExactly("read", "write");
  }

  @Test
  void tokensThatShouldNotPassAreRefusedWithTheReason() throws Exception {
    long exp = now.get() / 1000 + 600;
    String claims = "{\"sub\":\"alice\",\"exp\":" + exp + "}";
    JwtValidator v = validator("", List.of());
    String good = IDP.sign("k1", claims);
    String[] parts = good.split("\\.");
    List<String[]> cases = List.of(
        new String[] {b64("{\"alg\":\"none\"}") + "." + b64(claims) + ".", "'none' is not accepted"},
        new String[] {b64("{\"alg\":\"HS256\",\"kid\":\"k1\"}") + "." + b64(claims) + "." + parts[2], "'HS256'"},
        new String[] {IDP.sign("k1", "{\"sub\":\"alice\"}"), "no numeric exp"},
        new String[] {IDP.sign("k1", "{\"sub\":\"alice\",\"exp\":" + exp + ",\"nbf\":" + (exp - 10) + "}"), "nbf"},
        new String[] {IDP.sign("k1", "{\"exp\":" + exp + "}"), "'sub' claim"},
        new String[] {IDP.sign("k1", "{\"sub\":\"\",\"exp\":" + exp + "}"), "'sub' claim"},
        new String[] {parts[0] + "." + b64("{\"sub\":\"root\",\"exp\":" + exp + "}") + "." + parts[2], "invalid signature"},
        new String[] {b64("{\"alg\":\"RS256\",\"kid\":\"k9\"}") + "." + parts[1] + "." + parts[2], "id 'k9'"},
        new String[] {"a.b", "3 dot-separated parts"},
        new String[] {"!!!." + parts[1] + "." + parts[2], "base64url"},
        new String[] {b64("[1]") + "." + parts[1] + "." + parts[2], "not a JSON object"},
        new String[] {"x".repeat(JwtValidator.MAX_TOKEN_CHARS + 1), "more than"});
    for (String[] c : cases) {
      assertThatThrownBy(() -> v.validate(c[0])).as(c[1]).isInstanceOf(InvalidTokenException.class)
          .hasMessageContaining(c[1]);
    }
    assertThat(refreshRequests).containsExactly("k9");
    assertThat(v.validate(good).principal()).isEqualTo("alice");
  }

  @Test
  void expiryIssuerAndAudienceFollowTheClockAndTheExpectations() throws Exception {
    long exp = now.get() / 1000 + 60;
    String token = IDP.sign("k1", "{\"sub\":\"alice\",\"exp\":" + exp + ",\"iss\":\"idp\",\"aud\":\"kafka\"}");
    assertThat(validator("idp", List.of("kafka")).validate(token).principal()).isEqualTo("alice");
    assertThatThrownBy(() -> validator("other", List.of()).validate(token)).hasMessageContaining("issuer");
    assertThatThrownBy(() -> validator("", List.of("registry")).validate(token)).hasMessageContaining("audience");
    now.set(exp * 1000 + 4_000); // within the 5 s skew
    assertThat(validator("", List.of()).validate(token).principal()).isEqualTo("alice");
    now.set(exp * 1000 + 5_000);
    assertThatThrownBy(() -> validator("", List.of()).validate(token)).hasMessageContaining("expired");
  }

  @Test
  void theNodesOwnTokensPassOnlyItsOwnValidator() throws Exception {
    TokenIssuer issuer = new TokenIssuer(now::get, 60_000);
    String token = issuer.issue("bob\"quoted");
    JwtValidator.ValidatedToken t = issuer.validator().validate(token);
    assertThat(t.principal()).isEqualTo("bob\"quoted");
    assertThat(t.expiresAtMs()).isEqualTo((now.get() / 1000 + 60) * 1000);
    assertThatThrownBy(() -> new TokenIssuer(now::get, 60_000).validator().validate(token))
        .hasMessageContaining("no EC key");
    assertThatThrownBy(() -> validator("", List.of()).validate(token)).hasMessageContaining("EC key");
    now.addAndGet(61_000);
    assertThatThrownBy(() -> issuer.validator().validate(token)).hasMessageContaining("expired");
  }
}
