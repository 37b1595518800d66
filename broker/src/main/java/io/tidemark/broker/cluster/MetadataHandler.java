package io.tidemark.broker.cluster;

import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.TopicException;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicLifecycle;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.MetadataRequest;

/**
 * Metadata (v0–13): the live brokers (advertised addresses), cluster id, controller, and per
 * topic its id, internal flag and partitions with leader and leader epoch. Unknown topics are
 * created when the request allows it and {@code kafka.auto.create.topics} is on; the answer waits
 * for the creation. A partition whose leader is not live (or, led here, not open yet, unless it is
 * opening and produce requests wait for it: {@code kafka.produce.opening.wait.ms}) is reported
 * LEADER_NOT_AVAILABLE.
 */
public final class MetadataHandler implements ApiHandler {

  private final ClusterView cluster;
  private final TopicRegistry registry;
  private final TopicLifecycle lifecycle;
  private final Leaders leaders;
  private final boolean autoCreate;
  private final int defaultPartitions;

  public MetadataHandler(ClusterView cluster, TopicRegistry registry, TopicLifecycle lifecycle, Partitions partitions,
      boolean autoCreate, int defaultPartitions) {
    this.cluster = cluster;
    this.registry = registry;
    this.lifecycle = lifecycle;
    this.leaders = new Leaders(cluster, partitions);
    this.autoCreate = autoCreate;
    this.defaultPartitions = defaultPartitions;
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    MetadataRequestData req = ((MetadataRequest) request).data();
    short v = request.version();
    boolean all = req.topics() == null || (v == 0 && req.topics().isEmpty());
    // name -> error for the topics asked; null value: look up
    Map<String, CompletableFuture<Errors>> asked = new LinkedHashMap<>();
    List<MetadataResponseData.MetadataResponseTopic> unknownIds = new ArrayList<>();
    if (all) {
      registry.state().topics().keySet().forEach(n -> asked.put(n, CompletableFuture.completedFuture(Errors.NONE)));
    } else {
      boolean allowCreate = autoCreate && (v < 4 || req.allowAutoTopicCreation());
      for (MetadataRequestData.MetadataRequestTopic t : req.topics()) {
        String name = t.name();
        if (name == null || (name.isEmpty() && !Uuid.ZERO_UUID.equals(t.topicId()))) { // by id: the client leaves the name empty
          Optional<TopicInfo> byId = registry.topic(t.topicId());
          if (byId.isEmpty()) {
            unknownIds.add(new MetadataResponseData.MetadataResponseTopic().setTopicId(t.topicId()).setName(null)
                .setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()));
            continue;
          }
          name = byId.get().name();
        }
        asked.put(name, lookupOrCreate(name, allowCreate));
      }
    }
    return CompletableFuture.allOf(asked.values().toArray(CompletableFuture[]::new)).thenApply(x -> {
      MetadataResponseData body = new MetadataResponseData();
      for (ClusterView.Node node : cluster.brokers(context.listenerName())) {
        body.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(node.id()).setHost(node.host())
            .setPort(node.port()).setRack(null));
      }
      body.setClusterId(cluster.clusterId()).setControllerId(cluster.controllerId());
      asked.forEach((name, f) -> body.topics().add(describe(name, f.join())));
      unknownIds.forEach(body.topics()::add);
      return body;
    });
  }

  private CompletableFuture<Errors> lookupOrCreate(String name, boolean allowCreate) {
    if (registry.topic(name).isPresent()) {
      return CompletableFuture.completedFuture(Errors.NONE);
    }
    try {
      TopicLifecycle.validateName(name);
    } catch (TopicException e) {
      return CompletableFuture.completedFuture(Errors.INVALID_TOPIC_EXCEPTION);
    }
    if (!allowCreate) {
      return CompletableFuture.completedFuture(Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }
    return lifecycle.create(name, defaultPartitions, Map.of(), false).handle((t, e) -> {
      if (e == null) {
        return Errors.NONE;
      }
      Errors err = ErrorMapping.toErrors(e);
      return err == Errors.TOPIC_ALREADY_EXISTS ? Errors.NONE : err == Errors.UNKNOWN_SERVER_ERROR ? Errors.LEADER_NOT_AVAILABLE : err;
    });
  }

  private MetadataResponseData.MetadataResponseTopic describe(String name, Errors error) {
    MetadataResponseData.MetadataResponseTopic out = new MetadataResponseData.MetadataResponseTopic().setName(name);
    Optional<TopicInfo> topic = registry.topic(name);
    if (error != Errors.NONE || topic.isEmpty()) {
      return out.setErrorCode((error == Errors.NONE ? Errors.UNKNOWN_TOPIC_OR_PARTITION : error).code());
    }
    TopicInfo t = topic.get();
    out.setTopicId(t.id()).setIsInternal(t.internal());
    for (TopicInfo.PartitionInfo p : t.partitions()) {
      boolean led = leaders.available(name, p);
      out.partitions().add(new MetadataResponseData.MetadataResponsePartition()
          .setPartitionIndex(p.partition())
          .setErrorCode(led ? Errors.NONE.code() : Errors.LEADER_NOT_AVAILABLE.code())
          .setLeaderId(led ? p.leader() : -1)
          .setLeaderEpoch(p.leaderEpoch())
          .setReplicaNodes(leaders.replicas(p))
          .setIsrNodes(leaders.isr(p, led))
          .setOfflineReplicas(List.of()));
    }
    return out;
  }

}
