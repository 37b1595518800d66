package io.tidemark.broker.acl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

/** The authorizer's decisions follow Kafka's StandardAuthorizer rules. */
class AclsTest {

  private static AclBinding acl(String name, PatternType pattern, String principal, String host, AclOperation op,
      AclPermissionType permission) {
    return new AclBinding(new ResourcePattern(ResourceType.TOPIC, name, pattern),
        new AccessControlEntry(principal, host, op, permission));
  }

  private static Authorizer authorizer(boolean allowIfNoAcl, Set<String> superUsers, AclBinding... bindings) {
    Acls acls = new Acls(List.of(bindings));
    return new Authorizer(new AuthorizerConfig(true, superUsers, allowIfNoAcl), () -> acls);
  }

  private static boolean may(Authorizer a, String principal, String host, AclOperation op, String topic) {
    return a.allowed(principal, host, op, ResourceType.TOPIC, topic);
  }

  @Test
  void literalPrefixedAndWildcardPatternsMatchAsInKafka() {
    // Goal: a literal names one topic, a prefix every topic starting with it, the literal * every topic.
    Authorizer a = authorizer(false, Set.of(),
        acl("orders", PatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW),
        acl("logs-", PatternType.PREFIXED, "User:bob", "*", AclOperation.WRITE, AclPermissionType.ALLOW),
        acl("*", PatternType.LITERAL, "User:carol", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW));
    assertThat(may(a, "User:alice", "1.2.3.4", AclOperation.READ, "orders")).isTrue();
    assertThat(may(a, "User:alice", "1.2.3.4", AclOperation.READ, "orders2")).isFalse();
    assertThat(may(a, "User:bob", "1.2.3.4", AclOperation.WRITE, "logs-app")).isTrue();
    assertThat(may(a, "User:bob", "1.2.3.4", AclOperation.WRITE, "logs")).isFalse();
    assertThat(may(a, "User:carol", "1.2.3.4", AclOperation.DESCRIBE, "anything")).isTrue();
    assertThat(may(a, "User:carol", "1.2.3.4", AclOperation.READ, "anything")).isFalse();
  }

  @Test
  void denyWinsAndOnlyAllowsImplyOtherOperations() {
    // Goal: a matching DENY beats any ALLOW; READ/WRITE/DELETE/ALTER imply DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS; a DENY implies nothing.
    Authorizer a = authorizer(false, Set.of(),
        acl("t", PatternType.LITERAL, "User:*", "*", AclOperation.ALL, AclPermissionType.ALLOW),
        acl("t", PatternType.PREFIXED, "User:eve", "*", AclOperation.WRITE, AclPermissionType.DENY),
        acl("u", PatternType.LITERAL, "User:dan", "*", AclOperation.ALTER_CONFIGS, AclPermissionType.ALLOW),
        acl("u", PatternType.LITERAL, "User:dan", "*", AclOperation.DELETE, AclPermissionType.ALLOW),
        acl("u", PatternType.LITERAL, "User:dan", "*", AclOperation.READ, AclPermissionType.DENY));
    assertThat(may(a, "User:eve", "h", AclOperation.READ, "t")).isTrue();
    assertThat(may(a, "User:eve", "h", AclOperation.WRITE, "t")).isFalse();
    assertThat(may(a, "User:dan", "h", AclOperation.DESCRIBE_CONFIGS, "u")).isTrue();
    assertThat(may(a, "User:dan", "h", AclOperation.DESCRIBE, "u")).isTrue();
    assertThat(may(a, "User:dan", "h", AclOperation.READ, "u")).isFalse();
    assertThat(may(a, "User:dan", "h", AclOperation.ALTER, "u")).isFalse();
  }

  @Test
  void hostsSuperUsersAndTheNoAclRule() {
    // Goal: an ACL for one host does not apply to another; super users pass; a resource no ACL names follows allow.everyone.if.no.acl.found.
    AclBinding fromOneHost = acl("t", PatternType.LITERAL, "User:alice", "10.0.0.1", AclOperation.READ,
        AclPermissionType.ALLOW);
    Authorizer closed = authorizer(false, Set.of("User:admin"), fromOneHost);
    assertThat(may(closed, "User:alice", "10.0.0.1", AclOperation.READ, "t")).isTrue();
    assertThat(may(closed, "User:alice", "10.0.0.2", AclOperation.READ, "t")).isFalse();
    assertThat(may(closed, "User:admin", "10.0.0.2", AclOperation.DELETE, "t")).isTrue();
    assertThat(may(closed, "User:alice", "10.0.0.1", AclOperation.READ, "unnamed")).isFalse();
    Authorizer open = authorizer(true, Set.of(), fromOneHost);
    assertThat(may(open, "User:bob", "10.0.0.1", AclOperation.READ, "unnamed")).isTrue();
    assertThat(may(open, "User:bob", "10.0.0.1", AclOperation.READ, "t")).isFalse(); // t has an ACL, just not for bob
    Authorizer off = new Authorizer(new AuthorizerConfig(false, Set.of(), false), () -> new Acls(List.of(fromOneHost)));
    assertThat(may(off, "User:bob", "h", AclOperation.DELETE, "t")).isTrue();
  }

  @Test
  void invalidBindingsAreRefusedAsKafkaRefusesThem() {
    // Goal: CreateAcls refuses UNKNOWN operations, bad principals and a misnamed cluster.
    AclBinding ok = acl("t", PatternType.LITERAL, "User:a", "*", AclOperation.READ, AclPermissionType.ALLOW);
    assertThat(AclApis.invalid(ok)).isNull();
    assertThat(AclApis.invalid(acl("t", PatternType.LITERAL, "alice", "*", AclOperation.READ, AclPermissionType.ALLOW)))
        .contains("principal");
    assertThat(AclApis.invalid(acl("t", PatternType.LITERAL, "User:a", "*", AclOperation.UNKNOWN, AclPermissionType.ALLOW)))
        .contains("operation");
    assertThat(AclApis.invalid(new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "other", PatternType.LITERAL),
        new AccessControlEntry("User:a", "*", AclOperation.ALTER, AclPermissionType.ALLOW)))).contains("kafka-cluster");
  }
}
