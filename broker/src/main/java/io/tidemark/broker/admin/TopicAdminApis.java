package io.tidemark.broker.admin;

import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.InvalidTopicConfigException;
import io.tidemark.broker.topic.TopicConfigs;
import io.tidemark.broker.topic.TopicException;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicLifecycle;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;

/**
 * CreateTopics (v2–7), DeleteTopics (v1–6) and CreatePartitions (v0–3). Any replication factor
 * of -1 or at least 1 is accepted and the topic gets one replica, this broker: durability comes
 * from the write-ahead log and object storage, not from replicas. Manual replica assignments
 * may name only this broker.
 */
public final class TopicAdminApis {

  private final TopicLifecycle lifecycle;
  private final TopicRegistry registry;
  private final int nodeId;
  private final int defaultPartitions;

  public TopicAdminApis(TopicLifecycle lifecycle, int nodeId, int defaultPartitions) {
    this.lifecycle = lifecycle;
    this.registry = lifecycle.registry();
    this.nodeId = nodeId;
    this.defaultPartitions = defaultPartitions;
  }

  public CompletableFuture<ApiMessage> createTopics(RequestContext context, AbstractRequest request) {
    CreateTopicsRequestData req = ((CreateTopicsRequest) request).data();
    short v = request.version();
    CreateTopicsResponseData body = new CreateTopicsResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (CreateTopicsRequestData.CreatableTopic t : req.topics()) {
      CreateTopicsResponseData.CreatableTopicResult r = new CreateTopicsResponseData.CreatableTopicResult().setName(t.name())
          .setNumPartitions(-1).setReplicationFactor((short) -1);
      body.topics().add(r);
      if (!seen.add(t.name())) {
        fail(r, Errors.INVALID_REQUEST, "topic '" + t.name() + "' appears twice in the request");
        continue;
      }
      int partitions;
      Map<String, String> configs = new LinkedHashMap<>();
      try {
        partitions = partitionCount(t);
        if (t.replicationFactor() != -1 && t.replicationFactor() < 1) {
          throw new TopicException(TopicException.Outcome.INVALID_REPLICATION_FACTOR,
              "replication factor must be -1 or at least 1, was " + t.replicationFactor());
        }
        t.configs().forEach(c -> configs.put(c.name(), c.value()));
        lifecycle.checkCreate(t.name(), partitions, configs);
      } catch (TopicException | InvalidTopicConfigException e) {
        fail(r, ErrorMapping.toErrors(e), e.getMessage());
        continue;
      }
      if (req.validateOnly()) {
        describeCreated(r, partitions, configs, v);
        continue;
      }
      int count = partitions;
      waits.add(lifecycle.create(t.name(), partitions, configs, false).handle((topic, e) -> {
        if (e != null) {
          fail(r, ErrorMapping.toErrors(e), ErrorMapping.message(e));
        } else {
          r.setTopicId(topic.id());
          describeCreated(r, count, configs, v);
        }
        return null;
      }));
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> body);
  }

  private int partitionCount(CreateTopicsRequestData.CreatableTopic t) {
    if (!t.assignments().isEmpty()) {
      if (t.numPartitions() != -1 || t.replicationFactor() != -1) {
        throw new TopicException(TopicException.Outcome.INVALID_PARTITIONS,
            "give either replica assignments or partition count and replication factor, not both");
      }
      for (CreateTopicsRequestData.CreatableReplicaAssignment a : t.assignments()) {
        if (a.brokerIds().isEmpty() || a.brokerIds().stream().anyMatch(b -> b != nodeId)) {
          throw new TopicException(TopicException.Outcome.INVALID_REPLICATION_FACTOR,
              "replica assignment " + a.brokerIds() + " names brokers other than " + nodeId);
        }
      }
      return t.assignments().size();
    }
    return t.numPartitions() == -1 ? defaultPartitions : t.numPartitions();
  }

  private void describeCreated(CreateTopicsResponseData.CreatableTopicResult r, int partitions, Map<String, String> configs, short v) {
    r.setNumPartitions(partitions).setReplicationFactor((short) 1);
    if (v < 5) {
      return;
    }
    TopicConfigs defs = lifecycle.configs();
    for (TopicConfigs.Definition d : defs.definitions()) {
      String value = configs.containsKey(d.name()) ? configs.get(d.name()) : d.defaultValue();
      if (value == null) {
        continue;
      }
      r.configs().add(new CreateTopicsResponseData.CreatableTopicConfigs().setName(d.name()).setValue(value)
          .setReadOnly(false).setIsSensitive(false)
          .setConfigSource(configs.containsKey(d.name()) ? DescribeConfigsResponse.ConfigSource.TOPIC_CONFIG.id()
              : DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG.id()));
    }
  }

  private static void fail(CreateTopicsResponseData.CreatableTopicResult r, Errors e, String message) {
    r.setErrorCode(e.code()).setErrorMessage(message).setNumPartitions(-1).setReplicationFactor((short) -1);
  }

  public CompletableFuture<ApiMessage> deleteTopics(RequestContext context, AbstractRequest request) {
    DeleteTopicsRequestData req = ((DeleteTopicsRequest) request).data();
    short v = request.version();
    DeleteTopicsResponseData body = new DeleteTopicsResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    List<DeleteTopicsRequestData.DeleteTopicState> targets = new ArrayList<>();
    if (v >= 6) {
      targets.addAll(req.topics());
    } else {
      req.topicNames().forEach(n -> targets.add(new DeleteTopicsRequestData.DeleteTopicState().setName(n)));
    }
    for (DeleteTopicsRequestData.DeleteTopicState t : targets) {
      DeleteTopicsResponseData.DeletableTopicResult r = new DeleteTopicsResponseData.DeletableTopicResult().setName(t.name());
      body.responses().add(r);
      Optional<TopicInfo> topic;
      if (t.name() != null) {
        topic = registry.topic(t.name());
      } else {
        topic = registry.topic(t.topicId());
      }
      if (v >= 6) {
        r.setTopicId(topic.map(TopicInfo::id).orElse(t.topicId() == null ? Uuid.ZERO_UUID : t.topicId()));
        topic.ifPresent(ti -> r.setName(ti.name()));
      }
      if (topic.isEmpty()) {
        Errors e = t.name() == null ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION;
        r.setErrorCode(e.code());
        if (v >= 5) {
          r.setErrorMessage("topic does not exist");
        }
        continue;
      }
      waits.add(lifecycle.delete(topic.get().name()).handle((x, e) -> {
        if (e != null) {
          r.setErrorCode(ErrorMapping.toErrors(e).code());
          if (v >= 5) {
            r.setErrorMessage(ErrorMapping.message(e));
          }
        }
        return null;
      }));
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> body);
  }

  /**
   * Why the explicit assignments of {@code t} are refused (INVALID_REPLICA_ASSIGNMENT), checked as
   * Kafka's controller does once the topic exists and grows: one assignment per new partition, each
   * naming one replica, this broker; null when there are none or they are good.
   */
  private String badAssignment(CreatePartitionsRequestData.CreatePartitionsTopic t) {
    Optional<TopicInfo> topic = registry.topic(t.name());
    if (t.assignments() == null || topic.isEmpty() || t.count() <= topic.get().partitions().size()) {
      return null; // no assignments, or the topic's own error comes first
    }
    int added = t.count() - topic.get().partitions().size();
    if (t.assignments().size() != added) {
      return "attempted to add " + added + " additional partition(s), but " + t.assignments().size() + " assignment(s) were specified";
    }
    for (CreatePartitionsRequestData.CreatePartitionsAssignment a : t.assignments()) {
      if (a.brokerIds().size() != 1 || a.brokerIds().get(0) != nodeId) {
        return "assignments may only name broker " + nodeId + " (replication factor 1): " + a.brokerIds();
      }
    }
    return null;
  }

  public CompletableFuture<ApiMessage> createPartitions(RequestContext context, AbstractRequest request) {
    CreatePartitionsRequestData req = ((CreatePartitionsRequest) request).data();
    CreatePartitionsResponseData body = new CreatePartitionsResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    for (CreatePartitionsRequestData.CreatePartitionsTopic t : req.topics()) {
      CreatePartitionsResponseData.CreatePartitionsTopicResult r = new CreatePartitionsResponseData.CreatePartitionsTopicResult()
          .setName(t.name());
      body.results().add(r);
      String badAssignment = badAssignment(t);
      if (badAssignment != null) {
        r.setErrorCode(Errors.INVALID_REPLICA_ASSIGNMENT.code()).setErrorMessage(badAssignment);
        continue;
      }
      waits.add(lifecycle.addPartitions(t.name(), t.count(), req.validateOnly()).handle((x, e) -> {
        if (e != null) {
          r.setErrorCode(ErrorMapping.toErrors(e).code()).setErrorMessage(ErrorMapping.message(e));
        }
        return null;
      }));
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> body);
  }
}
