package io.tidemark.broker.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Validates a signed JSON Web Token (RFC 7519, compact JWS) as Kafka's
 * {@code OAuthBearerValidatorCallbackHandler} does: the signature with a key of the configured key
 * set (by {@code kid}; without one, every key of the algorithm's type), RS256/RS384/RS512 or
 * ES256/ES384/ES512 only ({@code none} and HMAC are refused: they prove nothing against a public
 * key set); then the claims: {@code exp} required and not past, {@code nbf} and {@code iat} not in the
 * future (each with the clock skew), {@code iss} equal to the expected issuer and {@code aud}
 * holding an expected audience when those are configured, and the principal claim
 * ({@code sub} by default) a non-empty string.
 *
 * <p>A token signed with a key id the set does not hold asks the key source to refresh (it
 * rate-limits itself) and is refused: identity providers publish a new key before signing with it,
 * so a current set has it. Immutable apart from the key source; thread-safe.
 */
public final class JwtValidator {

  /** Tokens longer than this are refused before they are decoded. */
  public static final int MAX_TOKEN_CHARS = 64 * 1024;

  /** A token that passed: who it names, when it expires, its scopes. */
  public record ValidatedToken(String principal, long expiresAtMs, Set<String> scopes) {}

  /** What a token must say beyond its signature; blank or empty values are not checked. */
  public record Expectations(String issuer, List<String> audiences, String principalClaim, String scopeClaim,
      long clockSkewMs) {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Map<String, String[]> ALGORITHMS = Map.of(
      "RS256", new String[] {"RSA", "SHA256withRSA"},
      "RS384", new String[] {"RSA", "SHA384withRSA"},
      "RS512", new String[] {"RSA", "SHA512withRSA"},
      "ES256", new String[] {"EC", "SHA256withECDSAinP1363Format"},
      "ES384", new String[] {"EC", "SHA384withECDSAinP1363Format"},
      "ES512", new String[] {"EC", "SHA512withECDSAinP1363Format"});

  private final Supplier<JsonWebKeySet> keys;
  private final Consumer<String> unknownKeyId;
  private final Expectations expect;
  private final LongSupplier clockMs;

  /**
   * @param keys the current key set (null while none has loaded yet)
   * @param unknownKeyId told the key id of a token the set does not know (to refresh the set)
   */
  public JwtValidator(Supplier<JsonWebKeySet> keys, Consumer<String> unknownKeyId, Expectations expect,
      LongSupplier clockMs) {
    this.keys = keys;
    this.unknownKeyId = unknownKeyId;
    this.expect = expect;
    this.clockMs = clockMs;
  }

  public ValidatedToken validate(String token) throws InvalidTokenException {
    if (token == null || token.isEmpty()) {
      throw new InvalidTokenException("no token");
    }
    if (token.length() > MAX_TOKEN_CHARS) {
      throw new InvalidTokenException("the token has " + token.length() + " characters, more than " + MAX_TOKEN_CHARS);
    }
    String[] parts = token.split("\\.", -1);
    if (parts.length != 3) {
      throw new InvalidTokenException("not a signed JWT (expected 3 dot-separated parts, found " + parts.length + ")");
    }
    JsonNode header = json(parts[0], "header");
    JsonNode claims = json(parts[1], "payload");
    verifySignature(header, parts);
    return checkClaims(claims);
  }

  private void verifySignature(JsonNode header, String[] parts) throws InvalidTokenException {
    String alg = header.path("alg").asText("");
    String[] algorithm = ALGORITHMS.get(alg);
    if (algorithm == null) {
      throw new InvalidTokenException("signature algorithm '" + alg + "' is not accepted (RS256, RS384, RS512, ES256, "
          + "ES384, ES512)");
    }
    JsonWebKeySet set = keys.get();
    if (set == null) {
      throw new InvalidTokenException("the JSON Web Key Set has not been loaded yet");
    }
    String kid = header.hasNonNull("kid") ? header.get("kid").asText() : null;
    List<JsonWebKeySet.Key> candidates = set.candidates(kid, algorithm[0]);
    if (candidates.isEmpty()) {
      if (kid != null) {
        unknownKeyId.accept(kid);
      }
      throw new InvalidTokenException(kid == null ? "the key set holds no " + algorithm[0] + " key"
          : "no " + algorithm[0] + " key with id '" + kid + "' in the key set");
    }
    byte[] signed = (parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII);
    byte[] signature = decode(parts[2], "signature");
    for (JsonWebKeySet.Key key : candidates) {
      if (key.alg() != null && !key.alg().equals(alg)) {
        continue;
      }
      try {
        Signature verifier = Signature.getInstance(algorithm[1]);
        verifier.initVerify(key.publicKey());
        verifier.update(signed);
        if (verifier.verify(signature)) {
          return;
        }
      } catch (GeneralSecurityException e) {
        // a malformed signature for this key: try the next one, then refuse
      }
    }
    throw new InvalidTokenException("invalid signature");
  }

  private ValidatedToken checkClaims(JsonNode claims) throws InvalidTokenException {
    long now = clockMs.getAsLong();
    long skew = expect.clockSkewMs();
    JsonNode exp = claims.get("exp");
    if (exp == null || !exp.isNumber()) {
      throw new InvalidTokenException("the token has no numeric exp (expiration) claim");
    }
    long expiresAtMs = (long) (exp.asDouble() * 1000);
    if (expiresAtMs + skew <= now) {
      throw new InvalidTokenException("the token expired at " + java.time.Instant.ofEpochMilli(expiresAtMs));
    }
    for (String claim : List.of("nbf", "iat")) {
      JsonNode v = claims.get(claim);
      if (v != null && v.isNumber() && (long) (v.asDouble() * 1000) - skew > now) {
        throw new InvalidTokenException("the token's " + claim + " claim is in the future");
      }
    }
    if (expect.issuer() != null && !expect.issuer().isBlank()
        && !expect.issuer().equals(claims.path("iss").asText(null))) {
      throw new InvalidTokenException("the token's issuer '" + claims.path("iss").asText("") + "' is not the expected one");
    }
    if (!expect.audiences().isEmpty()) {
      Set<String> aud = strings(claims.get("aud"), false);
      if (aud.stream().noneMatch(expect.audiences()::contains)) {
        throw new InvalidTokenException("the token's audience " + aud + " holds none of the expected audiences");
      }
    }
    JsonNode principal = claims.get(expect.principalClaim());
    if (principal == null || !principal.isTextual() || principal.asText().isBlank()) {
      throw new InvalidTokenException("the token has no '" + expect.principalClaim() + "' claim naming its principal");
    }
    return new ValidatedToken(principal.asText(), expiresAtMs, strings(claims.get(expect.scopeClaim()), true));
  }

  /** A claim that is a string or an array of strings; a space-separated string when {@code spaced} (OAuth scope). */
  private static Set<String> strings(JsonNode node, boolean spaced) {
    Set<String> out = new LinkedHashSet<>();
    if (node == null) {
      return out;
    }
    List<JsonNode> items = new ArrayList<>();
    if (node.isArray()) {
      node.forEach(items::add);
    } else {
      items.add(node);
    }
    for (JsonNode item : items) {
      if (item.isTextual()) {
        for (String s : spaced ? item.asText().split(" ") : new String[] {item.asText()}) {
          if (!s.isEmpty()) {
            out.add(s);
          }
        }
      }
    }
    return out;
  }

  private static JsonNode json(String part, String what) throws InvalidTokenException {
    try {
      JsonNode node = JSON.readTree(decode(part, what));
      if (node == null || !node.isObject()) {
        throw new InvalidTokenException("the token's " + what + " is not a JSON object");
      }
      return node;
    } catch (IOException e) {
      throw new InvalidTokenException("the token's " + what + " is not valid JSON");
    }
  }

  private static byte[] decode(String part, String what) throws InvalidTokenException {
    try {
      return Base64.getUrlDecoder().decode(part);
    } catch (IllegalArgumentException e) {
      throw new InvalidTokenException("the token's " + what + " is not base64url");
    }
  }
}
