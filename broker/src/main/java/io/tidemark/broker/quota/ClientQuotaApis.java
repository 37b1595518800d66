package io.tidemark.broker.quota;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.ApiRegistry;
import io.tidemark.broker.protocol.ChannelThrottles;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.protocol.RequestTimeQuota;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterClientQuotasRequest;
import org.apache.kafka.common.requests.AlterClientQuotasResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.DescribeClientQuotasResponse;
import org.apache.kafka.common.requests.ProduceRequest;

/**
 * DescribeClientQuotas and AlterClientQuotas over a {@link QuotaStore} (Kafka's filter semantics:
 * exact name, default entity, any specified name; strict filters match entities of exactly the
 * named types), and the enforcement of the byte-rate quotas on Produce and Fetch: the bytes of a
 * request (produce) or response (fetch) count against the client's quota, the response carries the
 * throttle time, and the connection is muted for that long (Kafka's KIP-219 behaviour; the
 * client also waits on its own). Accepted quota keys: {@code producer_byte_rate},
 * {@code consumer_byte_rate}, {@code request_percentage} (enforced: {@link #requestTimeQuota()},
 * timed by the {@link io.tidemark.broker.protocol.RequestDispatcher}) and
 * {@code controller_mutation_rate} (enforced on CreateTopics, CreatePartitions and DeleteTopics:
 * {@link ControllerMutationQuota}) for users and client ids;
 * {@code connection_creation_rate} for ips (enforced by
 * {@link io.tidemark.broker.network.ConnectionLimits}). Stateless apart from the manager's rates;
 * callable from any thread.
 */
public final class ClientQuotaApis {
  static final Set<String> USER_CLIENT_KEYS = Set.of(ClientQuotaManager.PRODUCER_BYTE_RATE,
      ClientQuotaManager.CONSUMER_BYTE_RATE, ClientQuotaManager.REQUEST_PERCENTAGE, "controller_mutation_rate");
  static final Set<String> IP_KEYS = Set.of("connection_creation_rate");

  private final QuotaStore store;
  private final ClientQuotaManager manager;

  public ClientQuotaApis(QuotaStore store, ClientQuotaManager manager) {
    this.store = store;
    this.manager = manager;
  }

  public CompletableFuture<ApiMessage> describe(RequestContext context, AbstractRequest request) {
    ClientQuotaFilter filter = ((DescribeClientQuotasRequest) request).filter();
    Map<ClientQuotaEntity, Map<String, Double>> out = new HashMap<>();
    store.quotas().forEach((entity, values) -> {
      if (matches(filter, entity)) {
        out.put(entity, values);
      }
    });
    return CompletableFuture.completedFuture(DescribeClientQuotasResponse.fromQuotaEntities(out, 0).data());
  }

  static boolean matches(ClientQuotaFilter filter, ClientQuotaEntity entity) {
    Map<String, String> entries = entity.entries();
    for (ClientQuotaFilterComponent c : filter.components()) {
      if (!entries.containsKey(c.entityType())) {
        return false;
      }
      String name = entries.get(c.entityType());
      Optional<String> match = c.match();
      if (match == null) { // any specified (non-default) name
        if (name == null) {
          return false;
        }
      } else if (match.isEmpty() ? name != null : !match.get().equals(name)) {
        return false;
      }
    }
    return !filter.strict() || entries.size() == filter.components().size();
  }

  public CompletableFuture<ApiMessage> alter(RequestContext context, AbstractRequest request) {
    AlterClientQuotasRequest r = (AlterClientQuotasRequest) request;
    Map<ClientQuotaEntity, ApiError> results = new HashMap<>();
    List<QuotaStore.Change> changes = new ArrayList<>();
    for (ClientQuotaAlteration a : r.entries()) {
      String invalid = invalid(a);
      if (invalid != null) {
        results.put(a.entity(), new ApiError(Errors.INVALID_REQUEST, invalid));
        continue;
      }
      results.put(a.entity(), ApiError.NONE);
      a.ops().forEach(op -> changes.add(new QuotaStore.Change(a.entity(), op.key(), op.value())));
    }
    if (r.validateOnly() || changes.isEmpty()) {
      return CompletableFuture.completedFuture(AlterClientQuotasResponse.fromQuotaEntities(results, 0).data());
    }
    return store.alter(changes).handle((ok, error) -> {
      if (error != null) {
        results.replaceAll((e, v) -> v.isSuccess() ? new ApiError(Errors.UNKNOWN_SERVER_ERROR,
            "storing the quotas failed: " + ErrorMapping.message(error)) : v);
      }
      return AlterClientQuotasResponse.fromQuotaEntities(results, 0).data();
    });
  }

  /** Why Kafka would refuse the alteration, or null. */
  static String invalid(ClientQuotaAlteration a) {
    Map<String, String> entries = a.entity().entries();
    if (entries.isEmpty()) {
      return "the quota entity is empty";
    }
    for (String type : entries.keySet()) {
      if (!ClientQuotaEntity.isValidEntityType(type)) {
        return "unknown quota entity type " + type;
      }
    }
    boolean ip = entries.containsKey(ClientQuotaEntity.IP);
    if (ip && entries.size() > 1) {
      return "an ip quota entity cannot be combined with user or client-id";
    }
    for (ClientQuotaAlteration.Op op : a.ops()) {
      Set<String> allowed = ip ? IP_KEYS : USER_CLIENT_KEYS;
      if (!allowed.contains(op.key())) {
        return "unknown quota key " + op.key() + " for " + (ip ? "ip" : "user/client-id") + " entities; one of "
            + new java.util.TreeSet<>(allowed);
      }
      if (op.value() != null && !(op.value() > 0)) {
        return "quota " + op.key() + " must be positive, not " + op.value();
      }
    }
    return null;
  }

  /** The {@code request_percentage} quota of each request's user and client id. */
  public RequestTimeQuota requestTimeQuota() {
    return new RequestTimeQuota() {
      @Override
      public boolean applies(RequestContext context) {
        return manager.anySet(ClientQuotaManager.REQUEST_PERCENTAGE)
            && manager.quota(ClientQuotaManager.REQUEST_PERCENTAGE, user(context), context.clientId()) != null;
      }

      @Override
      public long record(RequestContext context, long nanos) {
        return manager.recordRequestTime(user(context), context.clientId(), nanos);
      }
    };
  }

  /** Wraps Produce and Fetch with the byte-rate quotas; call after they are registered. */
  public void enforce(ApiRegistry apis, ChannelThrottles throttles) {
    wrap(apis, ApiKeys.PRODUCE, (context, request, inner) -> {
      long bytes = 0;
      for (ProduceRequestData.TopicProduceData t : ((ProduceRequest) request).data().topicData()) {
        for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
          bytes += p.records() == null ? 0 : p.records().sizeInBytes();
        }
      }
      long throttleMs = manager.record(ClientQuotaManager.PRODUCER_BYTE_RATE, user(context), context.clientId(), bytes);
      throttles.mute(context.connectionId(), throttleMs);
      return inner.handle(context, request).thenApply(body -> {
        if (body instanceof ProduceResponseData r && throttleMs > 0) {
          r.setThrottleTimeMs((int) throttleMs);
        }
        return body;
      });
    });
    wrap(apis, ApiKeys.FETCH, (context, request, inner) -> inner.handle(context, request).thenApply(body -> {
      if (body instanceof FetchResponseData r) {
        long bytes = 0;
        for (FetchResponseData.FetchableTopicResponse t : r.responses()) {
          for (FetchResponseData.PartitionData p : t.partitions()) {
            bytes += p.records() == null ? 0 : p.records().sizeInBytes();
          }
        }
        long throttleMs = manager.record(ClientQuotaManager.CONSUMER_BYTE_RATE, user(context), context.clientId(), bytes);
        if (throttleMs > 0) {
          throttles.mute(context.connectionId(), throttleMs);
          r.setThrottleTimeMs((int) throttleMs);
        }
      }
      return body;
    }));
  }

  /** Wraps CreateTopics, CreatePartitions and DeleteTopics with the controller mutation quota; call after they are registered. */
  public void enforceMutations(ApiRegistry apis, ChannelThrottles throttles, io.tidemark.broker.topic.TopicRegistry topics) {
    new ControllerMutationQuota(manager, topics, throttles).install(apis);
  }

  private static String user(RequestContext context) {
    return context.principal().getName();
  }

  @FunctionalInterface
  interface Around {
    CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request, ApiHandler inner);
  }

  static void wrap(ApiRegistry apis, ApiKeys key, Around around) {
    ApiRegistry.Registration r = apis.lookup(key);
    if (r == null) {
      return;
    }
    ApiHandler inner = r.handler();
    apis.register(key, r.advertisedMin(), r.minVersion(), r.maxVersion(), (c, q) -> around.handle(c, q, inner));
  }
}
