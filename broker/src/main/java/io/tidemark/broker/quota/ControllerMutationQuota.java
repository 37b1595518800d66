package io.tidemark.broker.quota;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.ApiRegistry;
import io.tidemark.broker.protocol.ChannelThrottles;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;

/**
 * Kafka's controller mutation quota (KIP-599, {@code controller_mutation_rate} of a user and/or
 * client id): CreateTopics, CreatePartitions and DeleteTopics cost one token per partition created
 * or deleted, from the client's {@link ClientQuotaManager.TokenBucket}.
 *
 * <p>As Kafka does, a request of a recent version (CreateTopics v6+, CreatePartitions v3+,
 * DeleteTopics v5+: the versions whose clients know {@code THROTTLING_QUOTA_EXCEEDED}) is
 * <em>strict</em>: its topics are looked at in order, a topic arriving while the bucket is below zero
 * is refused with {@code THROTTLING_QUOTA_EXCEEDED} and left untouched, and a topic arriving while it
 * holds tokens is served whole (the bucket may go below zero). Older versions are <em>permissive</em>:
 * everything is served and counted. Either way the response carries the throttle time the bucket
 * asks for and the connection is muted that long; Kafka's Admin client waits and retries the refused
 * topics on its own ({@code retryOnQuotaViolation}, default true). Tokens of a topic admitted and then
 * refused by the handler (already exists, invalid count...) are given back. {@code validateOnly}
 * requests cost nothing. Stateless apart from the manager's buckets; callable from any thread.
 */
final class ControllerMutationQuota {

  private static final String EXCEEDED = "the controller mutation quota (controller_mutation_rate) is exceeded";

  private final ClientQuotaManager manager;
  private final TopicRegistry topics;
  private final ChannelThrottles throttles;

  ControllerMutationQuota(ClientQuotaManager manager, TopicRegistry topics, ChannelThrottles throttles) {
    this.manager = manager;
    this.topics = topics;
    this.throttles = throttles;
  }

  /** Wraps the three APIs (when registered); call after they are. */
  void install(ApiRegistry apis) {
    ClientQuotaApis.wrap(apis, ApiKeys.CREATE_TOPICS, this::createTopics);
    ClientQuotaApis.wrap(apis, ApiKeys.CREATE_PARTITIONS, this::createPartitions);
    ClientQuotaApis.wrap(apis, ApiKeys.DELETE_TOPICS, this::deleteTopics);
  }

  /** One topic of a request: admitted (with the tokens it took) or refused for the quota. */
  private record Admission(boolean admitted, int taken) {}

  /** Admits one topic costing {@code partitions} (strict: only while the bucket holds tokens). */
  private Admission admit(RequestContext context, boolean strict, int partitions) {
    String user = context.principal().getName();
    if (strict && manager.mutationThrottleMs(user, context.clientId()) > 0) {
      return new Admission(false, 0);
    }
    manager.recordMutations(user, context.clientId(), partitions);
    return new Admission(true, partitions);
  }

  /** Gives back what {@code a} took beyond {@code actual} partitions mutated. */
  private void settle(RequestContext context, Admission a, int actual) {
    manager.recordMutations(context.principal().getName(), context.clientId(), actual - a.taken());
  }

  /** The throttle time to answer with, the connection muted for it. */
  private int throttle(RequestContext context) {
    long ms = manager.mutationThrottleMs(context.principal().getName(), context.clientId());
    if (ms > 0) {
      throttles.mute(context.connectionId(), ms);
    }
    return (int) ms;
  }

  private boolean applies(RequestContext context) {
    return manager.mutationQuotaApplies(context.principal().getName(), context.clientId());
  }

  private CompletableFuture<ApiMessage> createTopics(RequestContext context, AbstractRequest request, ApiHandler inner) {
    CreateTopicsRequestData data = ((CreateTopicsRequest) request).data();
    if (data.validateOnly() || !applies(context)) {
      return inner.handle(context, request);
    }
    boolean strict = request.version() >= 6;
    List<Admission> admissions = new ArrayList<>();
    List<String> names = new ArrayList<>();
    CreateTopicsRequestData admitted = data.duplicate();
    admitted.topics().clear();
    for (CreateTopicsRequestData.CreatableTopic t : data.topics()) {
      // the default partition count is known only from the answer: count one now, settle then
      int estimate = !t.assignments().isEmpty() ? t.assignments().size() : Math.max(1, t.numPartitions());
      Admission a = admit(context, strict, estimate);
      admissions.add(a);
      names.add(t.name());
      if (a.admitted()) {
        admitted.topics().add(t.duplicate());
      }
    }
    return inner.handle(context, new CreateTopicsRequest(admitted, request.version())).thenApply(body -> {
      CreateTopicsResponseData served = (CreateTopicsResponseData) body;
      Iterator<CreateTopicsResponseData.CreatableTopicResult> results = served.topics().iterator();
      CreateTopicsResponseData out = new CreateTopicsResponseData();
      for (int i = 0; i < admissions.size(); i++) {
        Admission a = admissions.get(i);
        if (a.admitted()) {
          CreateTopicsResponseData.CreatableTopicResult r = results.next();
          boolean created = r.errorCode() == Errors.NONE.code();
          settle(context, a, created ? (r.numPartitions() > 0 ? r.numPartitions() : a.taken()) : 0);
          out.topics().add(r.duplicate());
        } else {
          out.topics().add(new CreateTopicsResponseData.CreatableTopicResult().setName(names.get(i))
              .setErrorCode(Errors.THROTTLING_QUOTA_EXCEEDED.code()).setErrorMessage(EXCEEDED)
              .setNumPartitions(-1).setReplicationFactor((short) -1));
        }
      }
      return out.setThrottleTimeMs(throttle(context));
    });
  }

  private CompletableFuture<ApiMessage> createPartitions(RequestContext context, AbstractRequest request,
      ApiHandler inner) {
    CreatePartitionsRequestData data = ((CreatePartitionsRequest) request).data();
    if (data.validateOnly() || !applies(context)) {
      return inner.handle(context, request);
    }
    boolean strict = request.version() >= 3;
    List<Admission> admissions = new ArrayList<>();
    List<String> names = new ArrayList<>();
    CreatePartitionsRequestData admitted = data.duplicate();
    admitted.topics().clear();
    for (CreatePartitionsRequestData.CreatePartitionsTopic t : data.topics()) {
      int now = topics.topic(t.name()).map(ti -> ti.partitions().size()).orElse(t.count());
      Admission a = admit(context, strict, Math.max(0, t.count() - now));
      admissions.add(a);
      names.add(t.name());
      if (a.admitted()) {
        admitted.topics().add(t.duplicate());
      }
    }
    return inner.handle(context, new CreatePartitionsRequest.Builder(admitted).build(request.version())).thenApply(body -> {
      Iterator<CreatePartitionsResponseData.CreatePartitionsTopicResult> results =
          ((CreatePartitionsResponseData) body).results().iterator();
      CreatePartitionsResponseData out = new CreatePartitionsResponseData();
      for (int i = 0; i < admissions.size(); i++) {
        Admission a = admissions.get(i);
        if (a.admitted()) {
          CreatePartitionsResponseData.CreatePartitionsTopicResult r = results.next();
          settle(context, a, r.errorCode() == Errors.NONE.code() ? a.taken() : 0);
          out.results().add(r.duplicate());
        } else {
          out.results().add(new CreatePartitionsResponseData.CreatePartitionsTopicResult()
              .setName(names.get(i)).setErrorCode(Errors.THROTTLING_QUOTA_EXCEEDED.code())
              .setErrorMessage(EXCEEDED));
        }
      }
      return out.setThrottleTimeMs(throttle(context));
    });
  }

  private CompletableFuture<ApiMessage> deleteTopics(RequestContext context, AbstractRequest request, ApiHandler inner) {
    DeleteTopicsRequestData data = ((DeleteTopicsRequest) request).data();
    if (!applies(context)) {
      return inner.handle(context, request);
    }
    short v = request.version();
    boolean strict = v >= 5;
    List<DeleteTopicsRequestData.DeleteTopicState> targets = new ArrayList<>();
    if (v >= 6) {
      targets.addAll(data.topics());
    } else {
      data.topicNames().forEach(n -> targets.add(new DeleteTopicsRequestData.DeleteTopicState().setName(n)));
    }
    List<Admission> admissions = new ArrayList<>();
    DeleteTopicsRequestData admitted = data.duplicate();
    admitted.topics().clear();
    admitted.topicNames().clear();
    for (DeleteTopicsRequestData.DeleteTopicState t : targets) {
      Optional<TopicInfo> topic = t.name() != null ? topics.topic(t.name()) : topics.topic(t.topicId());
      Admission a = admit(context, strict, topic.map(ti -> ti.partitions().size()).orElse(0));
      admissions.add(a);
      if (a.admitted()) {
        if (v >= 6) {
          admitted.topics().add(t.duplicate());
        } else {
          admitted.topicNames().add(t.name());
        }
      }
    }
    return inner.handle(context, new DeleteTopicsRequest.Builder(admitted).build(v)).thenApply(body -> {
      Iterator<DeleteTopicsResponseData.DeletableTopicResult> results =
          ((DeleteTopicsResponseData) body).responses().iterator();
      DeleteTopicsResponseData out = new DeleteTopicsResponseData();
      for (int i = 0; i < admissions.size(); i++) {
        Admission a = admissions.get(i);
        if (a.admitted()) {
          DeleteTopicsResponseData.DeletableTopicResult r = results.next();
          settle(context, a, r.errorCode() == Errors.NONE.code() ? a.taken() : 0);
          out.responses().add(r.duplicate());
        } else {
          DeleteTopicsRequestData.DeleteTopicState t = targets.get(i);
          DeleteTopicsResponseData.DeletableTopicResult r = new DeleteTopicsResponseData.DeletableTopicResult()
              .setName(t.name()).setErrorCode(Errors.THROTTLING_QUOTA_EXCEEDED.code()).setErrorMessage(EXCEEDED);
          if (v >= 6 && t.topicId() != null) {
            r.setTopicId(t.topicId());
          }
          out.responses().add(r);
        }
      }
      return out.setThrottleTimeMs(throttle(context));
    });
  }
}
