package io.tidemark.broker.acl;

import static io.tidemark.broker.acl.RequestAuthorizer.denied;
import static io.tidemark.broker.acl.RequestAuthorizer.partial;

import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.DescribeTopicPartitionsRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Authorization of the topic APIs, with Kafka's operations: Produce WRITE (and WRITE on the
 * transactional id of a transactional produce), Fetch READ, ListOffsets / OffsetForLeaderEpoch /
 * Metadata / DescribeTopicPartitions DESCRIBE, DeleteRecords DELETE, CreateTopics CREATE on the
 * cluster or the topic, DeleteTopics DELETE, CreatePartitions ALTER, DescribeProducers READ; a
 * denied topic is answered TOPIC_AUTHORIZATION_FAILED. Metadata also needs CREATE (cluster or
 * topic) to auto-create a missing topic, and without explicit topics lists only the topics the
 * principal may describe. Stateless.
 */
final class TopicRequests {
  private static final short DENIED = Errors.TOPIC_AUTHORIZATION_FAILED.code();
  private final Authorizer authorizer;
  private final RequestAuthorizer.Topics topics;

  TopicRequests(Authorizer authorizer, RequestAuthorizer.Topics topics) {
    this.authorizer = authorizer;
    this.topics = topics;
  }

  void addTo(Map<ApiKeys, RequestAuthorizer.Rule> rules) {
    rules.put(ApiKeys.PRODUCE, this::produce);
    rules.put(ApiKeys.FETCH, this::fetch);
    rules.put(ApiKeys.LIST_OFFSETS, (c, r, inner) -> inner.handle(c, r).thenApply(b -> listOffsets(c, b)));
    rules.put(ApiKeys.OFFSET_FOR_LEADER_EPOCH, (c, r, inner) -> inner.handle(c, r).thenApply(b -> leaderEpochs(c, b)));
    rules.put(ApiKeys.DESCRIBE_PRODUCERS, (c, r, inner) -> inner.handle(c, r).thenApply(b -> producers(c, b)));
    rules.put(ApiKeys.DELETE_RECORDS, this::deleteRecords);
    rules.put(ApiKeys.METADATA, this::metadata);
    rules.put(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, this::describeTopicPartitions);
    rules.put(ApiKeys.CREATE_TOPICS, this::createTopics);
    rules.put(ApiKeys.DELETE_TOPICS, this::deleteTopics);
    rules.put(ApiKeys.CREATE_PARTITIONS, this::createPartitions);
  }

  private boolean allowed(RequestContext c, AclOperation op, String topic) {
    return authorizer.allowed(c, op, ResourceType.TOPIC, topic);
  }

  private String name(String name, Uuid id) {
    return name != null && !name.isEmpty() ? name : id == null || id.equals(Uuid.ZERO_UUID) ? null : topics.nameOf(id);
  }

  private CompletableFuture<ApiMessage> produce(RequestContext c, AbstractRequest r, io.tidemark.broker.protocol.ApiHandler inner) {
    ProduceRequestData data = ((ProduceRequest) r).data();
    if (data.transactionalId() != null && !authorizer.allowed(c, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
        data.transactionalId())) {
      return CompletableFuture.failedFuture(new TransactionalIdAuthorizationException(
          "WRITE on transactional id " + data.transactionalId() + " is needed"));
    }
    List<ProduceRequestData.TopicProduceData> denied = new ArrayList<>();
    for (ProduceRequestData.TopicProduceData t : data.topicData()) {
      String n = name(t.name(), t.topicId());
      if (n != null && !allowed(c, AclOperation.WRITE, n)) {
        denied.add(t);
      }
    }
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    ProduceRequestData kept = data.duplicate();
    kept.topicData().removeIf(t -> denied.stream().anyMatch(d -> d.name().equals(t.name()) && d.topicId().equals(t.topicId())));
    return partial(c, r, inner, kept, kept.topicData().isEmpty(), ProduceResponseData::new, response -> {
      for (ProduceRequestData.TopicProduceData t : denied) {
        ProduceResponseData.TopicProduceResponse tr = new ProduceResponseData.TopicProduceResponse().setName(t.name())
            .setTopicId(t.topicId());
        for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
          tr.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse().setIndex(p.index())
              .setErrorCode(DENIED).setBaseOffset(-1));
        }
        response.responses().add(tr);
      }
    });
  }

  private CompletableFuture<ApiMessage> fetch(RequestContext c, AbstractRequest r, io.tidemark.broker.protocol.ApiHandler inner) {
    FetchRequestData data = ((FetchRequest) r).data();
    List<FetchRequestData.FetchTopic> denied = new ArrayList<>();
    for (FetchRequestData.FetchTopic t : data.topics()) {
      String n = name(t.topic(), t.topicId());
      if (n != null && !allowed(c, AclOperation.READ, n)) {
        denied.add(t);
      }
    }
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    FetchRequestData kept = data.duplicate();
    kept.topics().removeIf(t -> denied.stream().anyMatch(d -> d.topic().equals(t.topic()) && d.topicId().equals(t.topicId())));
    // a fetch with nothing left still goes to the handler: it keeps the session and the long-poll rules
    return partial(c, r, inner, kept, false, FetchResponseData::new, response -> {
      for (FetchRequestData.FetchTopic t : denied) {
        FetchResponseData.FetchableTopicResponse tr = new FetchResponseData.FetchableTopicResponse().setTopic(t.topic())
            .setTopicId(t.topicId());
        for (FetchRequestData.FetchPartition p : t.partitions()) {
          tr.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(p.partition()).setErrorCode(DENIED)
              .setHighWatermark(-1).setLastStableOffset(-1).setLogStartOffset(-1)
              .setRecords(org.apache.kafka.common.record.internal.MemoryRecords.EMPTY));
        }
        response.responses().add(tr);
      }
    });
  }

  private ApiMessage listOffsets(RequestContext c, ApiMessage body) {
    for (ListOffsetsResponseData.ListOffsetsTopicResponse t : ((ListOffsetsResponseData) body).topics()) {
      if (!allowed(c, AclOperation.DESCRIBE, t.name())) {
        t.partitions().forEach(p -> p.setErrorCode(DENIED).setOffset(-1).setTimestamp(-1).setLeaderEpoch(-1));
      }
    }
    return body;
  }

  private ApiMessage leaderEpochs(RequestContext c, ApiMessage body) {
    for (OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult t : ((OffsetForLeaderEpochResponseData) body).topics()) {
      if (!allowed(c, AclOperation.DESCRIBE, t.topic())) {
        t.partitions().forEach(p -> p.setErrorCode(DENIED).setLeaderEpoch(-1).setEndOffset(-1));
      }
    }
    return body;
  }

  private ApiMessage producers(RequestContext c, ApiMessage body) {
    for (DescribeProducersResponseData.TopicResponse t : ((DescribeProducersResponseData) body).topics()) {
      if (!allowed(c, AclOperation.READ, t.name())) {
        t.partitions().forEach(p -> p.setErrorCode(DENIED).setErrorMessage(null).setActiveProducers(new ArrayList<>()));
      }
    }
    return body;
  }

  private CompletableFuture<ApiMessage> deleteRecords(RequestContext c, AbstractRequest r, io.tidemark.broker.protocol.ApiHandler inner) {
    DeleteRecordsRequestData data = ((DeleteRecordsRequest) r).data();
    Set<String> denied = denied(authorizer, c, AclOperation.DELETE, ResourceType.TOPIC,
        data.topics().stream().map(DeleteRecordsRequestData.DeleteRecordsTopic::name).toList());
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    DeleteRecordsRequestData kept = data.duplicate();
    kept.topics().removeIf(t -> denied.contains(t.name()));
    return partial(c, r, inner, kept, kept.topics().isEmpty(), DeleteRecordsResponseData::new, response -> {
      for (DeleteRecordsRequestData.DeleteRecordsTopic t : data.topics()) {
        if (denied.contains(t.name())) {
          DeleteRecordsResponseData.DeleteRecordsTopicResult tr = new DeleteRecordsResponseData.DeleteRecordsTopicResult()
              .setName(t.name());
          t.partitions().forEach(p -> tr.partitions().add(new DeleteRecordsResponseData.DeleteRecordsPartitionResult()
              .setPartitionIndex(p.partitionIndex()).setErrorCode(DENIED).setLowWatermark(-1)));
          response.topics().add(tr);
        }
      }
    });
  }

  private CompletableFuture<ApiMessage> metadata(RequestContext c, AbstractRequest r, io.tidemark.broker.protocol.ApiHandler inner) {
    MetadataRequestData data = ((MetadataRequest) r).data();
    if (data.topics() == null || (r.version() == 0 && data.topics().isEmpty())) { // every topic: only the describable ones
      return inner.handle(c, r).thenApply(body -> {
        ((MetadataResponseData) body).topics().removeIf(t -> !allowed(c, AclOperation.DESCRIBE, t.name()));
        return body;
      });
    }
    boolean mayCreateAny = authorizer.allowedOnCluster(c, AclOperation.CREATE);
    List<MetadataRequestData.MetadataRequestTopic> denied = new ArrayList<>();
    for (MetadataRequestData.MetadataRequestTopic t : data.topics()) {
      String n = name(t.name(), t.topicId());
      if (n == null) {
        continue;
      }
      boolean missingAndCreating = data.allowAutoTopicCreation() && !topics.exists(n);
      if (!allowed(c, AclOperation.DESCRIBE, n)
          || (missingAndCreating && !mayCreateAny && !allowed(c, AclOperation.CREATE, n))) {
        denied.add(t);
      }
    }
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    MetadataRequestData kept = data.duplicate();
    kept.topics().removeIf(t -> denied.stream().anyMatch(d -> java.util.Objects.equals(d.name(), t.name())
        && java.util.Objects.equals(d.topicId(), t.topicId())));
    // from v1 an empty topic list means "no topics" (brokers only); in v0 it would mean every topic
    return partial(c, r, inner, kept, r.version() == 0 && kept.topics().isEmpty(), MetadataResponseData::new, response -> {
      for (MetadataRequestData.MetadataRequestTopic t : denied) {
        response.topics().add(new MetadataResponseData.MetadataResponseTopic().setName(t.name())
            .setTopicId(t.topicId() == null ? Uuid.ZERO_UUID : t.topicId()).setErrorCode(DENIED));
      }
    });
  }

  private CompletableFuture<ApiMessage> describeTopicPartitions(RequestContext c, AbstractRequest r,
      io.tidemark.broker.protocol.ApiHandler inner) {
    DescribeTopicPartitionsRequestData data = ((DescribeTopicPartitionsRequest) r).data();
    boolean explicit = !data.topics().isEmpty();
    return inner.handle(c, r).thenApply(body -> {
      var response = (DescribeTopicPartitionsResponseData) body;
      if (!explicit) {
        response.topics().removeIf(t -> !allowed(c, AclOperation.DESCRIBE, t.name()));
      }
      for (DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic t : response.topics()) {
        if (!allowed(c, AclOperation.DESCRIBE, t.name())) {
          t.setErrorCode(DENIED).setTopicId(Uuid.ZERO_UUID).setIsInternal(false).setPartitions(new ArrayList<>())
              .setTopicAuthorizedOperations(Integer.MIN_VALUE);
        }
      }
      response.topics().stream().filter(t -> t.errorCode() != DENIED).forEach(t -> t.setTopicAuthorizedOperations(
          org.apache.kafka.common.utils.Utils.to32BitField(io.tidemark.broker.cluster.DescribeTopicPartitionsHandler.TOPIC_OPERATIONS
              .stream().filter(op -> allowed(c, op, t.name())).map(AclOperation::code).collect(java.util.stream.Collectors.toSet()))));
      return body;
    });
  }

  private CompletableFuture<ApiMessage> createTopics(RequestContext c, AbstractRequest r, io.tidemark.broker.protocol.ApiHandler inner) {
    CreateTopicsRequestData data = ((CreateTopicsRequest) r).data();
    if (authorizer.allowedOnCluster(c, AclOperation.CREATE)) {
      return inner.handle(c, r);
    }
    Set<String> denied = denied(authorizer, c, AclOperation.CREATE, ResourceType.TOPIC,
        data.topics().stream().map(CreateTopicsRequestData.CreatableTopic::name).toList());
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    CreateTopicsRequestData kept = data.duplicate();
    kept.topics().removeIf(t -> denied.contains(t.name()));
    return partial(c, r, inner, kept, kept.topics().isEmpty(), CreateTopicsResponseData::new, response -> {
      for (String n : new java.util.TreeSet<>(denied)) {
        response.topics().add(new CreateTopicsResponseData.CreatableTopicResult().setName(n).setErrorCode(DENIED)
            .setErrorMessage("CREATE on the cluster or on topic " + n + " is needed"));
      }
    });
  }

  private CompletableFuture<ApiMessage> deleteTopics(RequestContext c, AbstractRequest r, io.tidemark.broker.protocol.ApiHandler inner) {
    DeleteTopicsRequestData data = ((DeleteTopicsRequest) r).data();
    Set<String> deniedNames = denied(authorizer, c, AclOperation.DELETE, ResourceType.TOPIC, data.topicNames());
    List<DeleteTopicsRequestData.DeleteTopicState> deniedStates = new ArrayList<>();
    for (DeleteTopicsRequestData.DeleteTopicState s : data.topics()) {
      String n = name(s.name(), s.topicId());
      if (n != null && !allowed(c, AclOperation.DELETE, n)) {
        deniedStates.add(s);
      }
    }
    if (deniedNames.isEmpty() && deniedStates.isEmpty()) {
      return inner.handle(c, r);
    }
    DeleteTopicsRequestData kept = data.duplicate();
    kept.topicNames().removeIf(deniedNames::contains);
    kept.topics().removeIf(t -> deniedStates.stream().anyMatch(d -> java.util.Objects.equals(d.name(), t.name())
        && java.util.Objects.equals(d.topicId(), t.topicId())));
    return partial(c, r, inner, kept, kept.topicNames().isEmpty() && kept.topics().isEmpty(),
        DeleteTopicsResponseData::new, response -> {
          Set<String> added = new HashSet<>();
          for (String n : deniedNames) {
            if (added.add(n)) {
              response.responses().add(new DeleteTopicsResponseData.DeletableTopicResult().setName(n).setErrorCode(DENIED));
            }
          }
          for (DeleteTopicsRequestData.DeleteTopicState s : deniedStates) {
            response.responses().add(new DeleteTopicsResponseData.DeletableTopicResult().setName(s.name())
                .setTopicId(s.topicId()).setErrorCode(DENIED));
          }
        });
  }

  private CompletableFuture<ApiMessage> createPartitions(RequestContext c, AbstractRequest r,
      io.tidemark.broker.protocol.ApiHandler inner) {
    CreatePartitionsRequestData data = ((CreatePartitionsRequest) r).data();
    Set<String> denied = denied(authorizer, c, AclOperation.ALTER, ResourceType.TOPIC,
        data.topics().stream().map(CreatePartitionsRequestData.CreatePartitionsTopic::name).toList());
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    CreatePartitionsRequestData kept = data.duplicate();
    kept.topics().removeIf(t -> denied.contains(t.name()));
    return partial(c, r, inner, kept, kept.topics().isEmpty(), CreatePartitionsResponseData::new, response -> {
      for (String n : new java.util.TreeSet<>(denied)) {
        response.results().add(new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(n)
            .setErrorCode(DENIED).setErrorMessage("ALTER on topic " + n + " is needed"));
      }
    });
  }
}
