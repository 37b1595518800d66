package io.tidemark.broker.acl;

import io.tidemark.broker.protocol.RequestContext;
import java.util.function.Supplier;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Decides whether a request's principal, from its host, may do an operation on a resource: off
 * (everything allowed) unless {@code kafka.authorizer.class.name} names it; super users may do
 * everything; otherwise the current {@link Acls} decide with Kafka's rules (see there), and a
 * resource no ACL names follows {@code kafka.allow.everyone.if.no.acl.found}. The ACLs are read
 * from the supplier on every decision (the store's current, immutable set), so a change applies to
 * the next request. Stateless apart from its settings; thread-safe.
 */
public final class Authorizer {
  /** The one name of the cluster resource. */
  public static final String CLUSTER_NAME = "kafka-cluster";

  private final AuthorizerConfig config;
  private final Supplier<Acls> acls;

  public Authorizer(AuthorizerConfig config, Supplier<Acls> acls) {
    this.config = config;
    this.acls = acls;
  }

  /** An authorizer that allows everything (authorization off). */
  public static Authorizer off() {
    return new Authorizer(new AuthorizerConfig(false, java.util.Set.of(), true), () -> Acls.EMPTY);
  }

  public boolean enabled() {
    return config.enabled;
  }

  public boolean allowed(RequestContext context, AclOperation op, ResourceType type, String name) {
    return allowed(context.principal().toString(), host(context), op, type, name);
  }

  /** For callers outside the Kafka protocol (HTTP endpoints) that know the principal and host. */
  public boolean allowed(String principal, String host, AclOperation op, ResourceType type, String name) {
    if (!config.enabled || config.superUsers.contains(principal)) {
      return true;
    }
    Boolean decided = acls.get().decide(principal, host, op, type, name);
    return decided == null ? config.allowIfNoAclFound : decided;
  }

  /** Whether the principal is a super user (or authorization is off). */
  public boolean superUser(RequestContext context) {
    return !config.enabled || config.superUsers.contains(context.principal().toString());
  }

  public boolean allowedOnCluster(RequestContext context, AclOperation op) {
    return allowed(context, op, ResourceType.CLUSTER, CLUSTER_NAME);
  }

  /**
   * Whether the principal may do {@code op} on at least one resource of {@code type} (Kafka's
   * {@code authorizeByResourceType}, KIP-679: an idempotent producer needs WRITE on some topic):
   * some ALLOW binding of that type grants it and no DENY for every resource of the type (literal
   * {@code *} or the empty prefix) takes it away; with no binding of the type at all, the no-ACL rule.
   */
  public boolean allowedOnAny(RequestContext context, AclOperation op, ResourceType type) {
    String principal = context.principal().toString();
    String host = host(context);
    if (!config.enabled || config.superUsers.contains(principal)) {
      return true;
    }
    boolean anyOfType = false;
    boolean allowed = false;
    for (AclBinding b : acls.get().all()) {
      if (b.pattern().resourceType() != type) {
        continue;
      }
      anyOfType = true;
      var e = b.entry();
      boolean applies = (e.principal().equals(principal) || e.principal().equals("User:*"))
          && (e.host().equals(host) || e.host().equals("*"));
      if (!applies) {
        continue;
      }
      if (e.permissionType() == AclPermissionType.DENY && (e.operation() == op || e.operation() == AclOperation.ALL)
          && coversEverything(b.pattern())) {
        return false;
      }
      if (e.permissionType() == AclPermissionType.ALLOW && Acls.grants(e.operation(), op)) {
        allowed = true;
      }
    }
    return anyOfType ? allowed : config.allowIfNoAclFound;
  }

  private static boolean coversEverything(ResourcePattern p) {
    return (p.patternType() == PatternType.LITERAL && p.name().equals(ResourcePattern.WILDCARD_RESOURCE))
        || (p.patternType() == PatternType.PREFIXED && p.name().isEmpty());
  }

  private static String host(RequestContext context) {
    return context.clientAddress() == null ? "" : context.clientAddress().getHostAddress();
  }
}
