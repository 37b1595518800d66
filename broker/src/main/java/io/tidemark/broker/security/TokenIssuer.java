package io.tidemark.broker.security;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Issues this node's own short-lived bearer tokens (the Iceberg REST catalog's OAuth2 token
 * endpoint hands them to clients that logged in with a Kafka user's name and password): ES256 JWTs
 * with {@code iss=tidemark}, {@code sub=<user>}, {@code iat} and {@code exp}, signed with a P-256
 * key generated when the node starts and never written anywhere. So a token is valid only on the
 * node that issued it and only until it restarts; clients fetch a new one with their credential.
 * {@link #validator()} checks them like any other JWT. Immutable; thread-safe.
 */
public final class TokenIssuer {

  public static final String ISSUER = "tidemark";

  private final KeyPair keys;
  private final String kid;
  private final LongSupplier clockMs;
  private final long lifetimeMs;
  private final JwtValidator validator;

  /** @param lifetimeMs how long each token is valid (whole seconds, at least one) */
  public TokenIssuer(LongSupplier clockMs, long lifetimeMs) {
    this.lifetimeMs = Math.max(1000, lifetimeMs);
    SecureRandom random = new SecureRandom();
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"), random);
      this.keys = g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK offers no P-256 keys", e);
    }
    byte[] id = new byte[8];
    random.nextBytes(id);
    this.kid = "tidemark-" + HexFormat.of().formatHex(id);
    this.clockMs = clockMs;
    JsonWebKeySet own = JsonWebKeySet.of(List.of(new JsonWebKeySet.Key(kid, "EC", "ES256", keys.getPublic())));
    this.validator = new JwtValidator(() -> own, unknown -> { }, new JwtValidator.Expectations(ISSUER, List.of(), "sub",
        "scope", 0), clockMs);
  }

  public long lifetimeMs() {
    return lifetimeMs;
  }

  /** A token naming {@code user}, valid for the issuer's lifetime. */
  public String issue(String user) {
    long nowSeconds = clockMs.getAsLong() / 1000;
    String header = "{\"alg\":\"ES256\",\"typ\":\"JWT\",\"kid\":\"" + kid + "\"}";
    String claims = "{\"iss\":\"" + ISSUER + "\",\"sub\":" + jsonString(user) + ",\"iat\":" + nowSeconds + ",\"exp\":"
        + (nowSeconds + lifetimeMs / 1000) + ",\"scope\":\"catalog\"}";
    String input = b64(header.getBytes(StandardCharsets.UTF_8)) + "." + b64(claims.getBytes(StandardCharsets.UTF_8));
    try {
      Signature s = Signature.getInstance("SHA256withECDSAinP1363Format");
      s.initSign(keys.getPrivate());
      s.update(input.getBytes(StandardCharsets.US_ASCII));
      return input + "." + b64(s.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("signing a token failed", e);
    }
  }

  /** Checks a token this issuer made. */
  public JwtValidator validator() {
    return validator;
  }

  private static String jsonString(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  private static String b64(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }
}
