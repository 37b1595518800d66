package io.tidemark.broker.acl;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * An immutable set of ACL bindings indexed for authorization: per resource type, literal bindings
 * by name (the wildcard {@code *} among them) and prefixed bindings by prefix. The decision
 * follows Kafka's {@code StandardAuthorizer}:
 *
 * <ol>
 *   <li>only bindings whose pattern matches the resource count: literal with the same name,
 *       literal {@code *}, prefixed with a prefix of the name;</li>
 *   <li>among those whose principal ({@code User:*} matches every user) and host ({@code *}
 *       matches every host) match, a DENY for the operation or for ALL denies;</li>
 *   <li>otherwise an ALLOW for the operation, for ALL, or for an operation that implies it
 *       (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS)
 *       allows;</li>
 *   <li>otherwise: denied when any binding matched the resource, and the no-ACL rule
 *       ({@code allow.everyone.if.no.acl.found}) when none did.</li>
 * </ol>
 *
 * Super users are decided before this (see {@link Authorizer}). Immutable; thread-safe.
 */
public final class Acls {
  public static final Acls EMPTY = new Acls(List.of());

  private final List<AclBinding> all;
  private final Map<ResourceType, Map<String, List<AclBinding>>> literal = new EnumMap<>(ResourceType.class);
  private final Map<ResourceType, TreeMap<String, List<AclBinding>>> prefixed = new EnumMap<>(ResourceType.class);

  public Acls(Collection<AclBinding> bindings) {
    this.all = List.copyOf(bindings);
    for (AclBinding b : all) {
      ResourcePattern p = b.pattern();
      Map<String, List<AclBinding>> byName = p.patternType() == PatternType.PREFIXED
          ? prefixed.computeIfAbsent(p.resourceType(), t -> new TreeMap<>())
          : literal.computeIfAbsent(p.resourceType(), t -> new TreeMap<>());
      byName.computeIfAbsent(p.name(), n -> new ArrayList<>()).add(b);
    }
  }

  /** Every binding, in no particular order. */
  public List<AclBinding> all() {
    return all;
  }

  public int size() {
    return all.size();
  }

  /** The bindings a DescribeAcls / DeleteAcls filter matches (Kafka's filter semantics, MATCH included). */
  public List<AclBinding> matching(AclBindingFilter filter) {
    List<AclBinding> out = new ArrayList<>();
    for (AclBinding b : all) {
      if (filter.matches(b)) {
        out.add(b);
      }
    }
    return out;
  }

  /** What the bindings alone decide for this request; {@code null} when no binding names the resource. */
  Boolean decide(String principal, String host, AclOperation op, ResourceType type, String name) {
    boolean found = false;
    boolean allowed = false;
    for (List<AclBinding> candidates : candidates(type, name)) {
      for (AclBinding b : candidates) {
        found = true;
        AccessControlEntry e = b.entry();
        if (!matches(e.principal(), principal, "User:*") || !matches(e.host(), host, "*")) {
          continue;
        }
        if (e.permissionType() == AclPermissionType.DENY) {
          if (e.operation() == AclOperation.ALL || e.operation() == op) {
            return false;
          }
        } else if (e.permissionType() == AclPermissionType.ALLOW && grants(e.operation(), op)) {
          allowed = true;
        }
      }
    }
    return found ? allowed : null;
  }

  private List<List<AclBinding>> candidates(ResourceType type, String name) {
    List<List<AclBinding>> out = new ArrayList<>();
    Map<String, List<AclBinding>> lit = literal.get(type);
    if (lit != null) {
      addIfPresent(out, lit.get(name));
      if (!name.equals(ResourcePattern.WILDCARD_RESOURCE)) {
        addIfPresent(out, lit.get(ResourcePattern.WILDCARD_RESOURCE));
      }
    }
    TreeMap<String, List<AclBinding>> pre = prefixed.get(type);
    if (pre != null) {
      for (int len = 1; len <= name.length(); len++) {
        addIfPresent(out, pre.get(name.substring(0, len)));
      }
    }
    return out;
  }

  private static void addIfPresent(List<List<AclBinding>> out, List<AclBinding> list) {
    if (list != null) {
      out.add(list);
    }
  }

  private static boolean matches(String aclValue, String actual, String wildcard) {
    return aclValue.equals(actual) || aclValue.equals(wildcard);
  }

  /** Whether an ALLOW for {@code granted} allows {@code wanted}. */
  static boolean grants(AclOperation granted, AclOperation wanted) {
    if (granted == AclOperation.ALL || granted == wanted) {
      return true;
    }
    return switch (wanted) {
      case DESCRIBE -> granted == AclOperation.READ || granted == AclOperation.WRITE || granted == AclOperation.DELETE
          || granted == AclOperation.ALTER;
      case DESCRIBE_CONFIGS -> granted == AclOperation.ALTER_CONFIGS;
      default -> false;
    };
  }
}
