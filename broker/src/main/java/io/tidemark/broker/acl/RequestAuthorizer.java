package io.tidemark.broker.acl;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.ApiRegistry;
import io.tidemark.broker.protocol.RequestContext;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts authorization in front of every registered API: one rule per API, grouped in one class per
 * family ({@link TopicRequests}, {@link GroupRequests}, {@link ShareRequests}, {@link TransactionRequests}, {@link ConfigRequests}, the cluster-wide
 * rules here), each checking the resource and operation Kafka's documentation names for the API
 * and answering Kafka's error (TOPIC_, GROUP_, CLUSTER_, TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
 * A request whose resources are all allowed reaches its handler unchanged; one with denied
 * resources reaches it without them (rebuilt from its data) and the denied ones are answered
 * with the error, so nothing happens to them; read-only APIs are answered by the handler and then
 * stripped of what the principal may not see (Metadata without explicit topics omits unauthorized
 * ones, as Kafka does). An API without a rule is denied to everyone but super users (fail closed),
 * and {@link #missingRules} names it for the test that keeps the table complete. Installed only
 * when the authorizer is on; stateless; callable from any thread.
 */
public final class RequestAuthorizer {

  private static final Logger log = LoggerFactory.getLogger(RequestAuthorizer.class);

  /** What a rule needs to know about topics: names of topic ids (null when unknown) and existence. */
  public interface Topics {
    String nameOf(Uuid topicId);

    boolean exists(String name);
  }

  /** One API's check around its handler. */
  @FunctionalInterface
  interface Rule {
    CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request, ApiHandler inner);
  }

  /** APIs any principal may call (their handlers check what they need themselves, or nothing is needed). */
  static final Set<ApiKeys> OPEN = EnumSet.of(ApiKeys.API_VERSIONS, ApiKeys.DESCRIBE_CLUSTER,
      ApiKeys.GET_TELEMETRY_SUBSCRIPTIONS, ApiKeys.PUSH_TELEMETRY, ApiKeys.SASL_HANDSHAKE, ApiKeys.SASL_AUTHENTICATE,
      ApiKeys.CREATE_ACLS, ApiKeys.DESCRIBE_ACLS, ApiKeys.DELETE_ACLS);

  private final Authorizer authorizer;
  private final Map<ApiKeys, Rule> rules = new EnumMap<>(ApiKeys.class);

  public RequestAuthorizer(Authorizer authorizer, Topics topics) {
    this.authorizer = authorizer;
    cluster(ApiKeys.ELECT_LEADERS, AclOperation.ALTER);
    cluster(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, AclOperation.ALTER);
    cluster(ApiKeys.LIST_PARTITION_REASSIGNMENTS, AclOperation.DESCRIBE);
    cluster(ApiKeys.UPDATE_FEATURES, AclOperation.ALTER);
    cluster(ApiKeys.DESCRIBE_QUORUM, AclOperation.DESCRIBE);
    cluster(ApiKeys.DESCRIBE_LOG_DIRS, AclOperation.DESCRIBE);
    cluster(ApiKeys.LIST_CONFIG_RESOURCES, AclOperation.DESCRIBE_CONFIGS);
    rules.put(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, (context, request, inner) ->
        authorizer.allowedOnCluster(context, AclOperation.DESCRIBE) ? inner.handle(context, request)
            : CompletableFuture.completedFuture(deniedScramDescribe(
                (org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest) request)));
    cluster(ApiKeys.DESCRIBE_CLIENT_QUOTAS, AclOperation.DESCRIBE_CONFIGS);
    cluster(ApiKeys.ALTER_CLIENT_QUOTAS, AclOperation.ALTER_CONFIGS);
    cluster(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, AclOperation.ALTER);
    new TopicRequests(authorizer, topics).addTo(rules);
    new GroupRequests(authorizer).addTo(rules);
    new ConfigRequests(authorizer).addTo(rules);
    new ShareRequests(authorizer, topics).addTo(rules);
    new TransactionRequests(authorizer).addTo(rules);
  }

  /** Wraps every API registered in {@code apis} with its rule. Call once, after every API is registered. */
  public void install(ApiRegistry apis) {
    for (ApiRegistry.Registration r : List.copyOf(apis.all())) {
      if (OPEN.contains(r.key())) {
        continue;
      }
      Rule rule = rules.get(r.key());
      if (rule == null) {
        log.warn("{} has no authorization rule: only super users may call it", r.key());
        rule = failClosed(r.key());
      }
      Rule chosen = rule;
      ApiHandler inner = r.handler();
      apis.register(r.key(), r.advertisedMin(), r.minVersion(), r.maxVersion(),
          (context, request) -> chosen.handle(context, request, inner));
    }
  }

  /** Registered APIs that are neither open nor covered by a rule (the completeness test expects none). */
  public List<ApiKeys> missingRules(ApiRegistry apis) {
    return apis.all().stream().map(ApiRegistry.Registration::key).filter(k -> !OPEN.contains(k) && !rules.containsKey(k))
        .toList();
  }

  private void cluster(ApiKeys key, AclOperation op) {
    rules.put(key, (context, request, inner) -> authorizer.allowedOnCluster(context, op) ? inner.handle(context, request)
        : CompletableFuture.failedFuture(new ClusterAuthorizationException(op + " on the cluster is needed for " + key)));
  }

  /**
   * The denied answer of DescribeUserScramCredentials: the error at the top (what the Admin client reads) and on each
   * named user. Built here because the request's own error response walks the user list, which is null when every
   * user is asked for.
   */
  private static ApiMessage deniedScramDescribe(org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest request) {
    short code = org.apache.kafka.common.protocol.Errors.CLUSTER_AUTHORIZATION_FAILED.code();
    String message = "DESCRIBE on the cluster is needed for DESCRIBE_USER_SCRAM_CREDENTIALS";
    var body = new org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData().setErrorCode(code)
        .setErrorMessage(message);
    if (request.data().users() != null) {
      request.data().users().forEach(u -> body.results().add(
          new org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult()
              .setUser(u.name()).setErrorCode(code).setErrorMessage(message)));
    }
    return body;
  }

  private Rule failClosed(ApiKeys key) {
    return (context, request, inner) -> authorizer.superUser(context) ? inner.handle(context, request)
        : CompletableFuture.failedFuture(new ClusterAuthorizationException(key + " has no authorization rule yet; "
            + "only super users may call it"));
  }

  /** The request of {@code key} at {@code version} carrying {@code data} (after a rule removed denied entries). */
  static AbstractRequest rebuild(ApiKeys key, short version, ApiMessage data) {
    return AbstractRequest.parseRequest(key, version, MessageUtil.toByteBufferAccessor(data, version)).request;
  }

  /** Runs {@code inner} on the rebuilt request, or skips it when nothing is left, then adds the denied answers. */
  static <R extends ApiMessage> CompletableFuture<ApiMessage> partial(RequestContext context, AbstractRequest request,
      ApiHandler inner, ApiMessage kept, boolean nothingLeft, java.util.function.Supplier<R> emptyResponse,
      java.util.function.Consumer<R> addDenied) {
    CompletableFuture<ApiMessage> answered = nothingLeft ? CompletableFuture.completedFuture(emptyResponse.get())
        : inner.handle(context, rebuild(request.apiKey(), request.version(), kept));
    return answered.thenApply(body -> {
      if (body != null) {
        @SuppressWarnings("unchecked")
        R response = (R) body;
        addDenied.accept(response);
      }
      return body;
    });
  }

  /** The names in {@code names} the principal may not do {@code op} on. */
  static Set<String> denied(Authorizer authorizer, RequestContext context, AclOperation op,
      org.apache.kafka.common.resource.ResourceType type, Iterable<String> names) {
    Set<String> out = new java.util.HashSet<>();
    for (String n : names) {
      if (n != null && !authorizer.allowed(context, op, type, n)) {
        out.add(n);
      }
    }
    return out;
  }
}
