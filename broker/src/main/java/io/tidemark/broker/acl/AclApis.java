package io.tidemark.broker.acl;

import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.message.CreateAclsRequestData.AclCreation;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.CreateAclsResponseData.AclCreationResult;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsResponseData.DeleteAclsFilterResult;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;

/**
 * CreateAcls, DescribeAcls and DeleteAcls over an {@link AclStore}, as Kafka answers them: with
 * the authorizer off every one answers SECURITY_DISABLED ("no authorizer is configured"); creating
 * and deleting need ALTER on the cluster, describing DESCRIBE on the cluster
 * (CLUSTER_AUTHORIZATION_FAILED otherwise); a binding Kafka would refuse (ANY or UNKNOWN types,
 * a MATCH pattern, an unparsable principal, a cluster resource not named {@code kafka-cluster})
 * gets INVALID_REQUEST and is not stored. DeleteAcls matches its filters against this broker's
 * current ACLs and removes exactly the bindings found, reporting those the store still held.
 * Stateless; callable from any thread.
 */
public final class AclApis {
  private final Authorizer authorizer;
  private final AclStore store;

  public AclApis(Authorizer authorizer, AclStore store) {
    this.authorizer = authorizer;
    this.store = store;
  }

  public CompletableFuture<ApiMessage> createAcls(RequestContext context, AbstractRequest request) {
    List<AclCreation> creations = ((CreateAclsRequest) request).aclCreations();
    CreateAclsResponseData response = new CreateAclsResponseData();
    Errors refused = refusal(context, AclOperation.ALTER);
    if (refused != Errors.NONE) {
      for (int i = 0; i < creations.size(); i++) {
        response.results().add(new AclCreationResult().setErrorCode(refused.code()).setErrorMessage(message(refused)));
      }
      return CompletableFuture.completedFuture(response);
    }
    List<AclBinding> valid = new ArrayList<>();
    for (AclCreation c : creations) {
      AclCreationResult result = new AclCreationResult();
      try {
        AclBinding b = CreateAclsRequest.aclBinding(c);
        String invalid = invalid(b);
        if (invalid != null) {
          result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(invalid);
        } else {
          valid.add(b);
        }
      } catch (RuntimeException e) {
        result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("invalid ACL: " + e.getMessage());
      }
      response.results().add(result);
    }
    if (valid.isEmpty()) {
      return CompletableFuture.completedFuture(response);
    }
    return store.create(valid).handle((ok, error) -> {
      if (error != null) {
        for (AclCreationResult r : response.results()) {
          if (r.errorCode() == Errors.NONE.code()) {
            r.setErrorCode(Errors.UNKNOWN_SERVER_ERROR.code()).setErrorMessage("storing the ACLs failed: "
                + io.tidemark.broker.protocol.ErrorMapping.message(error));
          }
        }
      }
      return response;
    });
  }

  public CompletableFuture<ApiMessage> describeAcls(RequestContext context, AbstractRequest request) {
    DescribeAclsResponseData response = new DescribeAclsResponseData();
    Errors refused = refusal(context, AclOperation.DESCRIBE);
    if (refused != Errors.NONE) {
      return CompletableFuture.completedFuture(response.setErrorCode(refused.code()).setErrorMessage(message(refused)));
    }
    AclBindingFilter filter = ((DescribeAclsRequest) request).filter();
    return CompletableFuture.completedFuture(
        response.setResources(DescribeAclsResponse.aclsResources(store.acls().matching(filter))));
  }

  public CompletableFuture<ApiMessage> deleteAcls(RequestContext context, AbstractRequest request) {
    List<AclBindingFilter> filters = ((DeleteAclsRequest) request).filters();
    DeleteAclsResponseData response = new DeleteAclsResponseData();
    Errors refused = refusal(context, AclOperation.ALTER);
    if (refused != Errors.NONE) {
      for (int i = 0; i < filters.size(); i++) {
        response.filterResults().add(new DeleteAclsFilterResult().setErrorCode(refused.code()).setErrorMessage(message(refused)));
      }
      return CompletableFuture.completedFuture(response);
    }
    Acls current = store.acls();
    List<List<AclBinding>> matched = new ArrayList<>(filters.size());
    Set<AclBinding> toDelete = new LinkedHashSet<>();
    for (AclBindingFilter f : filters) {
      List<AclBinding> m = current.matching(f);
      matched.add(m);
      toDelete.addAll(m);
    }
    List<AclBinding> ordered = List.copyOf(toDelete);
    CompletableFuture<List<Boolean>> deleted = ordered.isEmpty() ? CompletableFuture.completedFuture(List.of())
        : store.delete(ordered);
    return deleted.thenApply(present -> {
      Set<AclBinding> removed = new java.util.HashSet<>();
      for (int i = 0; i < ordered.size(); i++) {
        if (present.get(i)) {
          removed.add(ordered.get(i));
        }
      }
      for (List<AclBinding> m : matched) {
        DeleteAclsFilterResult r = new DeleteAclsFilterResult();
        for (AclBinding b : m) {
          if (removed.contains(b)) {
            r.matchingAcls().add(DeleteAclsResponse.matchingAcl(b, ApiError.NONE));
          }
        }
        response.filterResults().add(r);
      }
      return response;
    });
  }

  /** SECURITY_DISABLED without an authorizer, CLUSTER_AUTHORIZATION_FAILED without {@code op} on the cluster, else NONE. */
  private Errors refusal(RequestContext context, AclOperation op) {
    if (!authorizer.enabled()) {
      return Errors.SECURITY_DISABLED;
    }
    return authorizer.allowedOnCluster(context, op) ? Errors.NONE : Errors.CLUSTER_AUTHORIZATION_FAILED;
  }

  private static String message(Errors refused) {
    return refused == Errors.SECURITY_DISABLED ? "No authorizer is configured (kafka.authorizer.class.name)"
        : "this operation on ACLs needs its permission on the cluster resource kafka-cluster";
  }

  /** Why Kafka would refuse to store {@code b}, or null. */
  static String invalid(AclBinding b) {
    ResourceType type = b.pattern().resourceType();
    if (type == ResourceType.ANY || type == ResourceType.UNKNOWN) {
      return "invalid resource type " + type;
    }
    PatternType pattern = b.pattern().patternType();
    if (pattern != PatternType.LITERAL && pattern != PatternType.PREFIXED) {
      return "invalid pattern type " + pattern + "; ACLs are LITERAL or PREFIXED";
    }
    if (b.pattern().name() == null || b.pattern().name().isEmpty()) {
      return "the resource name is empty";
    }
    if (type == ResourceType.CLUSTER && !b.pattern().name().equals(Authorizer.CLUSTER_NAME)) {
      return "the only valid name for the CLUSTER resource is " + Authorizer.CLUSTER_NAME;
    }
    AclOperation op = b.entry().operation();
    if (op == AclOperation.ANY || op == AclOperation.UNKNOWN) {
      return "invalid operation " + op;
    }
    AclPermissionType permission = b.entry().permissionType();
    if (permission != AclPermissionType.ALLOW && permission != AclPermissionType.DENY) {
      return "invalid permission type " + permission;
    }
    if (b.entry().host() == null || b.entry().host().isEmpty()) {
      return "the host is empty (use * for every host)";
    }
    String principal = b.entry().principal();
    int colon = principal == null ? -1 : principal.indexOf(':');
    if (colon <= 0 || colon == principal.length() - 1) {
      return "invalid principal " + principal + ": expected PrincipalType:name, such as User:alice";
    }
    return null;
  }
}
