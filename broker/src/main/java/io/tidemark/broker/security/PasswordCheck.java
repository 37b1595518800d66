package io.tidemark.broker.security;

import java.security.MessageDigest;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * Checks a user's clear password (SASL PLAIN, HTTP basic): against the configured PLAIN users
 * first (Kafka's JAAS {@code user_<name>="<password>"} options), then against the user's SCRAM
 * credentials (by deriving the stored key from the password). Thread-safe.
 */
public final class PasswordCheck {

  private final Map<String, String> plainUsers;
  private final ScramCredentialStore scram;

  public PasswordCheck(Map<String, String> plainUsers, ScramCredentialStore scram) {
    this.plainUsers = Map.copyOf(plainUsers);
    this.scram = scram;
  }

  public boolean verify(String user, String password) {
    String configured = plainUsers.get(user);
    if (configured != null) {
      return MessageDigest.isEqual(configured.getBytes(StandardCharsets.UTF_8), password.getBytes(StandardCharsets.UTF_8));
    }
    for (ScramAlgorithm a : ScramAlgorithm.values()) {
      Optional<ScramCredential> c = scram.credential(user, a);
      if (c.isPresent()) {
        return a.matches(c.get(), password);
      }
    }
    return false;
  }
}
