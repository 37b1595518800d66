package io.tidemark.broker.security;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The SCRAM mechanisms (RFC 5802, RFC 7677) with Kafka's wire type bytes (1, 2, as in
 * AlterUserScramCredentials) and the derivations a credential is made of: SaltedPassword =
 * Hi(password, salt, i), StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey =
 * HMAC(SaltedPassword, "Server Key").
 */
public enum ScramAlgorithm {
  SCRAM_SHA_256("SCRAM-SHA-256", (byte) 1, "SHA-256", "HmacSHA256"),
  SCRAM_SHA_512("SCRAM-SHA-512", (byte) 2, "SHA-512", "HmacSHA512");

  /** Kafka's bounds on iterations (ScramMechanism.minIterations / 16384). */
  public static final int MIN_ITERATIONS = 4096;
  public static final int MAX_ITERATIONS = 16384;

  private final String mechanismName;
  private final byte type;
  private final String digest;
  private final String hmac;

  ScramAlgorithm(String mechanismName, byte type, String digest, String hmac) {
    this.mechanismName = mechanismName;
    this.type = type;
    this.digest = digest;
    this.hmac = hmac;
  }

  public String mechanismName() {
    return mechanismName;
  }

  public byte type() {
    return type;
  }

  public static Optional<ScramAlgorithm> ofName(String name) {
    for (ScramAlgorithm a : values()) {
      if (a.mechanismName.equalsIgnoreCase(name)) {
        return Optional.of(a);
      }
    }
    return Optional.empty();
  }

  public static Optional<ScramAlgorithm> ofType(byte type) {
    for (ScramAlgorithm a : values()) {
      if (a.type == type) {
        return Optional.of(a);
      }
    }
    return Optional.empty();
  }

  /** A stored credential from a salted password (what AlterUserScramCredentials carries). */
  public ScramCredential credential(byte[] salt, byte[] saltedPassword, int iterations) {
    return new ScramCredential(this, salt, hash(hmac(saltedPassword, "Client Key")), hmac(saltedPassword, "Server Key"),
        iterations);
  }

  /** A stored credential from a clear password. */
  public ScramCredential credential(String password, byte[] salt, int iterations) {
    return credential(salt, saltedPassword(password, salt, iterations), iterations);
  }

  /** Hi(password, salt, i) of RFC 5802 (PBKDF2 with this HMAC). */
  public byte[] saltedPassword(String password, byte[] salt, int iterations) {
    Mac mac = mac(password.getBytes(StandardCharsets.UTF_8));
    mac.update(salt);
    mac.update(new byte[] {0, 0, 0, 1});
    byte[] u = mac.doFinal();
    byte[] result = u.clone();
    for (int i = 1; i < iterations; i++) {
      u = mac.doFinal(u);
      for (int j = 0; j < result.length; j++) {
        result[j] ^= u[j];
      }
    }
    return result;
  }

  /** Whether {@code password} is the one {@code credential} was made from (PLAIN and HTTP basic against SCRAM users). */
  public boolean matches(ScramCredential credential, String password) {
    byte[] salted = saltedPassword(password, credential.salt(), credential.iterations());
    return MessageDigest.isEqual(hash(hmac(salted, "Client Key")), credential.storedKey());
  }

  public byte[] hmac(byte[] key, String text) {
    return hmac(key, text.getBytes(StandardCharsets.UTF_8));
  }

  public byte[] hmac(byte[] key, byte[] data) {
    return mac(key).doFinal(data);
  }

  public byte[] hash(byte[] data) {
    try {
      return MessageDigest.getInstance(digest).digest(data);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(digest + " is not available in this JDK", e);
    }
  }

  private Mac mac(byte[] key) {
    try {
      Mac mac = Mac.getInstance(hmac);
      mac.init(new SecretKeySpec(key, hmac));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(hmac + " is not available in this JDK", e);
    }
  }
}
