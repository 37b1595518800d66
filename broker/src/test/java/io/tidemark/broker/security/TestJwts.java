package io.tidemark.broker.security;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * An identity provider for tests: RSA signing keys with ids, their JSON Web Key Set, and RS256
 * JWTs signed with the JDK's own crypto. Not thread-safe.
 */
public final class TestJwts {

  private final Map<String, KeyPair> keys = new LinkedHashMap<>();

  /** Adds (or rotates in) an RSA key with this id; returns this. */
  public TestJwts addKey(String kid) {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
      g.initialize(2048);
      keys.put(kid, g.generateKeyPair());
      return this;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The public keys as a JSON Web Key Set document. */
  public String jwks() {
    return keys.entrySet().stream().map(e -> {
      RSAPublicKey pub = (RSAPublicKey) e.getValue().getPublic();
      return "{\"kty\":\"RSA\",\"use\":\"sig\",\"alg\":\"RS256\",\"kid\":\"" + e.getKey() + "\",\"n\":\""
          + b64(unsigned(pub.getModulus())) + "\",\"e\":\"" + b64(unsigned(pub.getPublicExponent())) + "\"}";
    }).collect(Collectors.joining(",", "{\"keys\":[", "]}"));
  }

  /** A token with the usual claims: sub, iss, aud, iat now, exp now + lifetime. */
  public String token(String kid, String subject, String issuer, String audience, long lifetimeMs) {
    long now = System.currentTimeMillis() / 1000;
    String claims = "{\"sub\":\"" + subject + "\",\"iss\":\"" + issuer + "\",\"aud\":\"" + audience + "\",\"iat\":" + now
        + ",\"exp\":" + (now + lifetimeMs / 1000) + ",\"scope\":\"kafka\"}";
    return sign(kid, claims);
  }

  /** Signs any claims JSON with the key {@code kid} (RS256). */
  public String sign(String kid, String claimsJson) {
    String header = "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"" + kid + "\"}";
    String signingInput = b64(header.getBytes(StandardCharsets.UTF_8)) + "." + b64(claimsJson.getBytes(StandardCharsets.UTF_8));
    try {
      Signature s = Signature.getInstance("SHA256withRSA");
      s.initSign(keys.get(kid).getPrivate());
      s.update(signingInput.getBytes(StandardCharsets.US_ASCII));
      return signingInput + "." + b64(s.sign());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The OAUTHBEARER client first message carrying {@code token}. */
  public static byte[] clientFirstMessage(String token) {
    return ("n,,\u0001auth=Bearer " + token + "\u0001\u0001").getBytes(StandardCharsets.UTF_8);
  }

  private static String b64(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  private static byte[] unsigned(BigInteger v) {
    byte[] b = v.toByteArray();
    return b[0] == 0 ? java.util.Arrays.copyOfRange(b, 1, b.length) : b;
  }
}
