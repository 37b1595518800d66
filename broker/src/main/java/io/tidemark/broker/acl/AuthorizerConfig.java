package io.tidemark.broker.acl;

import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The authorizer's settings, with Kafka's names under the broker's {@code kafka.} prefix. Off by
 * default, so nothing changes for existing users: every request is allowed, as on a Kafka broker
 * without {@code authorizer.class.name}. Immutable.
 */
public final class AuthorizerConfig {

  /** Kafka's class names that turn the built-in ACL authorizer on (configs written for Kafka work unchanged). */
  static final Set<String> ACCEPTED_CLASS_NAMES = Set.of("org.apache.kafka.metadata.authorizer.StandardAuthorizer",
      "kafka.security.authorizer.AclAuthorizer", "io.tidemark.broker.acl.Authorizer");

  public static final ConfigKey<String> AUTHORIZER_CLASS_NAME = ConfigKey.string("kafka.authorizer.class.name", "",
      "Turns ACL authorization on: org.apache.kafka.metadata.authorizer.StandardAuthorizer (Kafka's name; "
          + "kafka.security.authorizer.AclAuthorizer and io.tidemark.broker.acl.Authorizer are accepted too) selects "
          + "the built-in authorizer with Kafka's semantics over the ACLs stored in the controller. Empty (default): "
          + "no authorization, every principal may do everything (docs/authorization.md).")
      .validate(v -> v.isEmpty() || ACCEPTED_CLASS_NAMES.contains(v.trim()) ? null
          : "must be empty or one of " + new TreeSet<>(ACCEPTED_CLASS_NAMES));
  public static final ConfigKey<String> SUPER_USERS = ConfigKey.string("kafka.super.users", "",
      "Principals allowed everything whatever the ACLs say, separated by semicolons (User:admin;User:tidemark).");
  public static final ConfigKey<Boolean> ALLOW_EVERYONE_IF_NO_ACL_FOUND = ConfigKey.bool(
      "kafka.allow.everyone.if.no.acl.found", false,
      "With the authorizer on: whether a resource that no ACL names is open to every principal (Kafka's rule; "
          + "false denies it to everyone but super users).");

  public static final List<ConfigKey<?>> KEYS = List.of(AUTHORIZER_CLASS_NAME, SUPER_USERS, ALLOW_EVERYONE_IF_NO_ACL_FOUND);

  public final boolean enabled;
  public final Set<String> superUsers;
  public final boolean allowIfNoAclFound;

  public AuthorizerConfig(Settings s) {
    this(!s.get(AUTHORIZER_CLASS_NAME).trim().isEmpty(), parseSuperUsers(s.get(SUPER_USERS)),
        s.get(ALLOW_EVERYONE_IF_NO_ACL_FOUND));
  }

  public AuthorizerConfig(boolean enabled, Set<String> superUsers, boolean allowIfNoAclFound) {
    this.enabled = enabled;
    this.superUsers = Set.copyOf(superUsers);
    this.allowIfNoAclFound = allowIfNoAclFound;
  }

  static Set<String> parseSuperUsers(String value) {
    Set<String> out = new TreeSet<>();
    for (String s : value.split(";")) {
      if (!s.isBlank()) {
        out.add(s.trim());
      }
    }
    return out;
  }
}
