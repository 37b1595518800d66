package io.tidemark.broker.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigInteger;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The signature keys of a JSON Web Key Set (RFC 7517): RSA ({@code kty=RSA}, {@code n}, {@code e})
 * and EC P-256/P-384/P-521 ({@code kty=EC}, {@code crv}, {@code x}, {@code y}) public keys. A key
 * whose {@code use} is not {@code sig}, or of another type, is skipped; a set of more than
 * {@link #MAX_KEYS} keys is refused. Immutable.
 */
public final class JsonWebKeySet {

  /** At most this many keys are kept; a larger set is refused (an identity provider publishes a handful). */
  public static final int MAX_KEYS = 100;

  /** One verification key: its id (may be null), type (RSA or EC) and optional algorithm. */
  public record Key(String kid, String kty, String alg, PublicKey publicKey) {}

  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<Key> keys;

  private JsonWebKeySet(List<Key> keys) {
    this.keys = List.copyOf(keys);
  }

  public static JsonWebKeySet of(List<Key> keys) {
    return new JsonWebKeySet(keys);
  }

  /** Parses a {@code {"keys":[...]}} document; fails naming what is wrong. */
  public static JsonWebKeySet parse(byte[] json) throws IOException {
    JsonNode root = JSON.readTree(json);
    JsonNode array = root == null ? null : root.get("keys");
    if (array == null || !array.isArray()) {
      throw new IOException("not a JSON Web Key Set: no \"keys\" array");
    }
    if (array.size() > MAX_KEYS) {
      throw new IOException("the key set has " + array.size() + " keys, more than " + MAX_KEYS);
    }
    List<Key> keys = new ArrayList<>();
    for (JsonNode k : array) {
      String use = text(k, "use");
      if (use != null && !use.equals("sig")) {
        continue;
      }
      String kty = text(k, "kty");
      try {
        if ("RSA".equals(kty)) {
          RSAPublicKeySpec spec = new RSAPublicKeySpec(unsigned(k, "n"), unsigned(k, "e"));
          keys.add(new Key(text(k, "kid"), kty, text(k, "alg"), KeyFactory.getInstance("RSA").generatePublic(spec)));
        } else if ("EC".equals(kty)) {
          ECParameterSpec curve = curve(text(k, "crv"));
          ECPublicKeySpec spec = new ECPublicKeySpec(new ECPoint(unsigned(k, "x"), unsigned(k, "y")), curve);
          keys.add(new Key(text(k, "kid"), kty, text(k, "alg"), KeyFactory.getInstance("EC").generatePublic(spec)));
        }
      } catch (GeneralSecurityException | IllegalArgumentException e) {
        throw new IOException("key " + text(k, "kid") + " is not a valid " + kty + " public key: " + e.getMessage());
      }
    }
    return new JsonWebKeySet(keys);
  }

  public List<Key> keys() {
    return keys;
  }

  /** The candidate keys for a token header: the key with its {@code kid}, else (no kid) every key of the type. */
  List<Key> candidates(String kid, String kty) {
    if (kid != null) {
      return keys.stream().filter(k -> kid.equals(k.kid()) && k.kty().equals(kty)).toList();
    }
    return keys.stream().filter(k -> k.kty().equals(kty)).toList();
  }

  Optional<Key> byId(String kid) {
    return keys.stream().filter(k -> kid.equals(k.kid())).findFirst();
  }

  private static final Map<String, String> CURVES = Map.of("P-256", "secp256r1", "P-384", "secp384r1", "P-521", "secp521r1");

  static ECParameterSpec curve(String crv) throws GeneralSecurityException {
    String name = crv == null ? null : CURVES.get(crv);
    if (name == null) {
      throw new GeneralSecurityException("unsupported curve " + crv + " (P-256, P-384, P-521)");
    }
    AlgorithmParameters params = AlgorithmParameters.getInstance("EC");
    params.init(new ECGenParameterSpec(name));
    return params.getParameterSpec(ECParameterSpec.class);
  }

  private static String text(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || !v.isTextual() ? null : v.asText();
  }

  private static BigInteger unsigned(JsonNode node, String field) {
    String v = text(node, field);
    if (v == null) {
      throw new IllegalArgumentException("no \"" + field + "\"");
    }
    return new BigInteger(1, Base64.getUrlDecoder().decode(v));
  }
}
