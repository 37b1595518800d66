package io.tidemark.server.cluster;

import io.tidemark.broker.cluster.ClusterMetadata;
import io.tidemark.broker.cluster.ClusterView;
import io.tidemark.broker.topic.RegistryState;
import io.tidemark.broker.topic.TopicException;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.ControllerRequest;
import io.tidemark.metadata.controller.ErrorCode;
import io.tidemark.metadata.controller.PartitionControl;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.image.MetadataListener;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadata;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/**
 * The broker's {@link ClusterMetadata} on the replicated controller: topics are controller topic
 * records, each partition's leader, leader epoch and stream ids (data, meta) a partition record,
 * (with its replica assignment and a running reassignment), and each topic's internal flag and
 * configs one {@link TopicDescriptor} in the key-value space; reassignments and leader elections
 * are controller writes;
 * the cluster id is the key-value entry {@code kafka/cluster.id}, written once by the first
 * broker. Reads come from the local replica's image (this process is a voter); writes go through
 * the {@link ControllerClient} and return once the local image has applied them.
 *
 * <p>Thread-safe: the converted state is cached per image content (topic, partition, key-value
 * and broker maps are persistent, so an image that changed only streams or objects reuses it).
 */
public final class ControllerClusterMetadata implements ClusterMetadata {

  static final String KAFKA_NAMESPACE = "kafka";
  static final String CLUSTER_ID_KEY = "cluster.id";
  /** Longest wait for one metadata write (the client's own retries are bounded below this). */
  static final long WRITE_TIMEOUT_SECONDS = 120;

  private final ControllerClient client;
  private final java.util.function.Supplier<String> lease;
  private final java.util.Optional<io.tidemark.broker.cluster.QuorumView> quorum;
  private final MetadataReplica replica;
  private final NodeRef self;
  private final String clusterId;
  private volatile Converted converted;
  private final ControllerAclStore acls;
  private final ControllerQuotaStore quotas;
  private final ControllerResourceConfigStore resourceConfigs;
  /** Set when a partition led here found its streams held by another broker; stream changes then call the listener. */
  private volatile boolean waitingForStreams;

  /** One conversion of an image's topics and brokers. */
  private record Converted(Object topics, Object partitions, Object keyValues, Object brokers, RegistryState state,
      List<ClusterView.Node> live) {}

  /**
   * Connects to the metadata; the cluster id is the one already agreed, or {@code configuredClusterId}
   * (a fresh one when empty) for the first broker. Throws {@link IllegalStateException} when a
   * configured id differs from the agreed one.
   */
  public ControllerClusterMetadata(ControllerClient client, MetadataReplica replica, NodeRef self,
      String configuredClusterId) {
    this(client, replica, self, configuredClusterId, java.util.Optional.empty());
  }

  /**
   * With the local controller voter, when this node has the controller role (kept for the callers; DescribeQuorum
   * asks the Raft leader through the client on every node).
   */
  public ControllerClusterMetadata(ControllerClient client, MetadataReplica replica, NodeRef self,
      String configuredClusterId, java.util.Optional<io.tidemark.metadata.raft.ControllerNode> voter) {
    this(client, replica, self, configuredClusterId, voter, () -> null);
  }

  /** With the node's controller lease ({@link ControllerLink#leaseLost}): writes are acknowledged only while it holds. */
  public ControllerClusterMetadata(ControllerClient client, MetadataReplica replica, NodeRef self,
      String configuredClusterId, java.util.Optional<io.tidemark.metadata.raft.ControllerNode> voter,
      java.util.function.Supplier<String> lease) {
    this.lease = lease;
    this.quorum = java.util.Optional.of(new RatisQuorumView(client)); // every node asks the Raft leader, voter or not
    this.client = client;
    this.replica = replica;
    this.self = self;
    this.acls = new ControllerAclStore(client, replica);
    this.quotas = new ControllerQuotaStore(client, replica);
    this.resourceConfigs = new ControllerResourceConfigStore(client, replica);
    String proposed = configuredClusterId.isEmpty() ? Uuid.randomUuid().toString() : configuredClusterId;
    byte[] agreed = await(client.putKeyValue(KAFKA_NAMESPACE, CLUSTER_ID_KEY, proposed.getBytes(StandardCharsets.UTF_8),
        true), "agreeing on the cluster id");
    this.clusterId = new String(agreed, StandardCharsets.UTF_8);
    if (!configuredClusterId.isEmpty() && !configuredClusterId.equals(clusterId)) {
      throw new IllegalStateException("kafka.cluster.id=" + configuredClusterId + " but the controller quorum belongs to "
          + "cluster " + clusterId + "; use the matching quorum or remove the setting");
    }
    waitForOwnWrites();
  }

  @Override
  public RegistryState state() {
    return convert(replica.image()).state();
  }

  @Override
  public java.util.Optional<io.tidemark.broker.security.ScramCredentialStore> scramCredentials() {
    return java.util.Optional.of(new ControllerScramCredentials(client, replica));
  }

  @Override
  public List<ClusterView.Node> liveBrokers() {
    return convert(replica.image()).live();
  }

  @Override
  public void onChange(Runnable listener) {
    replica.addListener(new MetadataListener() {
      private List<Object> seen = List.of();
      private Object seenStreams;

      @Override
      public void onImage(MetadataImage image, List<MetadataRecord> records) {
        List<Object> now = Arrays.asList(image.topics(), image.partitions(), image.keyValues(), image.brokers());
        if (!identical(seen, now)) {
          seen = now;
          listener.run();
        } else if (waitingForStreams && image.streams() != seenStreams) {
          listener.run(); // a partition led here waits for its previous holder to close its streams
        }
        seenStreams = image.streams();
      }
    });
  }

  private static boolean identical(List<Object> a, List<Object> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (a.get(i) != b.get(i)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public synchronized RegistryState apply(RegistryState from, RegistryState to) {
    List<CompletableFuture<?>> writes = new ArrayList<>();
    List<CompletableFuture<?>> creations = new ArrayList<>();
    for (TopicInfo old : from.topics().values()) {
      TopicInfo now = to.topics().get(old.name());
      if (now != null && now.id().equals(old.id()) && now.partitions().size() < old.partitions().size()) {
        throw new TopicException(TopicException.Outcome.INVALID_PARTITIONS, "topic '" + old.name()
            + "' cannot shrink from " + old.partitions().size() + " to " + now.partitions().size() + " partitions");
      }
      if (now != null && now.id().equals(old.id()) && now.partitions().size() > old.partitions().size()) {
        // submitted before the new partitions' placements below: one client's writes apply in order
        creations.add(client.growTopic(uuid(now.id()), now.partitions().size()));
      }
    }
    for (TopicInfo old : from.topics().values()) {
      TopicInfo now = to.topics().get(old.name());
      if (now != null && !now.id().equals(old.id())) {
        // a deletion and a creation are separate changes; one that swaps ids comes from a racing creation
        throw new TopicException(TopicException.Outcome.ALREADY_EXISTS, "topic '" + old.name() + "' already exists");
      }
      if (now == null) {
        writes.add(client.deleteTopic(uuid(old.id())));
        writes.add(client.putKeyValue(TopicDescriptor.NAMESPACE, uuid(old.id()).toString(), null, false));
      }
    }
    for (TopicInfo now : to.topics().values()) {
      TopicInfo old = from.topics().get(now.name());
      boolean created = old == null || !old.id().equals(now.id());
      TopicDescriptor descriptor = new TopicDescriptor(now.internal(), now.configs());
      if (created || old.internal() != now.internal() || !old.configs().equals(now.configs())) {
        writes.add(client.putKeyValue(TopicDescriptor.NAMESPACE, uuid(now.id()).toString(), descriptor.encode(), false));
      }
      if (created) {
        // one client's writes apply in order: the partitions below exist once the topic does
        creations.add(client.createTopic(uuid(now.id()), now.name(), now.partitions().size()));
      }
      for (TopicInfo.PartitionInfo p : now.partitions()) {
        TopicInfo.PartitionInfo before = created || p.partition() >= old.partitions().size() ? null
            : old.partitions().get(p.partition());
        if (!Objects.equals(before, p)) {
          writes.add(client.updatePartition(uuid(now.id()), p.partition(), p.leader(), p.leaderEpoch(),
              p.dataStreamId() < 0 ? List.of() : List.of(p.dataStreamId(), p.metaStreamId())));
        }
      }
    }
    // a refused creation (another broker created the name first) explains the failures of its partition writes
    await(CompletableFuture.allOf(creations.toArray(CompletableFuture[]::new)), "creating topics");
    await(CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)), "writing topic metadata");
    waitForOwnWrites();
    return state();
  }

  @Override
  public IdBlock allocateProducerIds() {
    ControllerClient.ProducerIdBlock block = await(client.allocateProducerIdBlock(self), "reserving producer ids");
    return new IdBlock(block.first(), block.size());
  }

  @Override
  public List<PartitionChange> reassign(List<Reassignment> reassignments) {
    List<ControllerRequest.Reassignment> asked = new ArrayList<>();
    for (Reassignment r : reassignments) {
      asked.add(new ControllerRequest.Reassignment(topicId(r.partition().topic()), r.partition().partition(),
          r.targetReplicas()));
    }
    List<PartitionControl.Result> results = await(client.reassignPartitions(asked), "reassigning partitions");
    waitForOwnWrites();
    return results.stream().map(ControllerClusterMetadata::change).toList();
  }

  @Override
  public List<PartitionChange> electLeaders(List<TopicPartition> partitions, boolean unclean) {
    List<ControllerRequest.PartitionRef> asked = partitions.stream()
        .map(tp -> new ControllerRequest.PartitionRef(topicId(tp.topic()), tp.partition())).toList();
    List<PartitionControl.Result> results = await(client.electLeaders(asked, unclean), "electing leaders");
    waitForOwnWrites();
    return results.stream().map(ControllerClusterMetadata::change).toList();
  }

  @Override
  public long drain(long timeoutMs) {
    if (liveBrokers().stream().noneMatch(n -> n.id() != self.nodeId())) {
      return 0; // nobody to hand partitions to (the last node of a cluster stopping)
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    long moved = await(client.drainBroker(self), "moving this broker's partitions away", timeoutMs);
    await(replica.awaitOffset(client.lastWriteOffset()), "waiting for the local metadata image",
        Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    return moved;
  }

  @Override
  public String leaseLost() {
    return lease.get();
  }

  @Override
  public boolean heldElsewhere(long dataStreamId, long metaStreamId) {
    MetadataImage image = replica.image();
    return heldElsewhere(image.stream(dataStreamId)) || heldElsewhere(image.stream(metaStreamId));
  }

  @Override
  public void awaitingStreams(boolean waiting) {
    waitingForStreams = waiting;
  }

  private boolean heldElsewhere(MetadataRecord.Stream s) {
    return s != null && s.state() == StreamMetadata.StreamState.OPEN && s.ownerNodeId() != self.nodeId();
  }

  private UUID topicId(String topic) {
    MetadataRecord.Topic t = replica.image().topicByName(topic);
    if (t == null) {
      throw new TopicException(TopicException.Outcome.UNKNOWN_TOPIC, "topic '" + topic + "' does not exist");
    }
    return t.topicId();
  }

  /** The one mapping of the controller's partition outcomes to Kafka's errors. */
  private static PartitionChange change(PartitionControl.Result r) {
    Errors error = switch (r.outcome()) {
      case NONE -> Errors.NONE;
      case UNKNOWN_PARTITION -> Errors.UNKNOWN_TOPIC_OR_PARTITION;
      case INVALID_ASSIGNMENT -> Errors.INVALID_REPLICA_ASSIGNMENT;
      case REASSIGNMENT_IN_PROGRESS -> Errors.REASSIGNMENT_IN_PROGRESS;
      case NO_REASSIGNMENT_IN_PROGRESS -> Errors.NO_REASSIGNMENT_IN_PROGRESS;
      case ELECTION_NOT_NEEDED -> Errors.ELECTION_NOT_NEEDED;
      case PREFERRED_LEADER_NOT_AVAILABLE -> Errors.PREFERRED_LEADER_NOT_AVAILABLE;
      case ELIGIBLE_LEADERS_NOT_AVAILABLE -> Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE;
    };
    return error == Errors.NONE ? PartitionChange.OK : new PartitionChange(error, r.message());
  }

  private void waitForOwnWrites() {
    await(replica.awaitOffset(client.lastWriteOffset()), "waiting for the local metadata image");
  }

  private Converted convert(MetadataImage image) {
    Converted c = converted;
    if (c != null && !changed(c, image)) {
      return c;
    }
    Map<String, TopicInfo> topics = new LinkedHashMap<>();
    for (Map.Entry<UUID, MetadataRecord.Topic> e : image.topics()) {
      MetadataRecord.Topic t = e.getValue();
      TopicDescriptor d = TopicDescriptor.decode(image.keyValue(TopicDescriptor.NAMESPACE, t.topicId().toString()));
      List<TopicInfo.PartitionInfo> parts = new ArrayList<>(t.partitionCount());
      for (int p = 0; p < t.partitionCount(); p++) {
        MetadataRecord.Partition r = image.partition(t.topicId(), p);
        boolean placed = r != null && r.streamIds().size() >= 2;
        parts.add(r == null ? new TopicInfo.PartitionInfo(p, -1, -1, 0, -1)
            : new TopicInfo.PartitionInfo(p, placed ? r.streamIds().get(0) : -1, placed ? r.streamIds().get(1) : -1,
                r.leaderEpoch(), r.leaderNodeId(), r.replicas(), r.previousReplicas()));
      }
      Uuid id = new Uuid(t.topicId().getMostSignificantBits(), t.topicId().getLeastSignificantBits());
      topics.put(t.name(), new TopicInfo(t.name(), id, d.internal(), d.configs(), parts));
    }
    List<ClusterView.Node> live = new ArrayList<>();
    for (Map.Entry<Integer, BrokerEntry> e : image.brokers()) {
      BrokerEntry b = e.getValue();
      if (b.fenced()) {
        continue;
      }
      Map<String, ClusterView.Endpoint> listeners = new LinkedHashMap<>();
      b.registration().endpoints().stream().filter(ep -> !ep.name().equals(ControllerLink.KAFKA_ENDPOINT))
          .forEach(ep -> listeners.put(ep.name(), new ClusterView.Endpoint(ep.host(), ep.port())));
      b.registration().endpoints().stream().filter(ep -> ep.name().equals(ControllerLink.KAFKA_ENDPOINT)).findFirst()
          .ifPresent(ep -> live.add(new ClusterView.Node(b.nodeId(), ep.host(), ep.port(), Map.copyOf(listeners))));
    }
    c = new Converted(image.topics(), image.partitions(), image.keyValues(), image.brokers(),
        new RegistryState(clusterId, 0, topics), List.copyOf(live));
    converted = c;
    return c;
  }

  private static boolean changed(Converted c, MetadataImage image) {
    return c.topics() != image.topics() || c.partitions() != image.partitions() || c.keyValues() != image.keyValues()
        || c.brokers() != image.brokers();
  }

  private static UUID uuid(Uuid id) {
    return new UUID(id.getMostSignificantBits(), id.getLeastSignificantBits());
  }

  /** The future's value; controller rejections become the broker's named errors. */
  private static <T> T await(CompletableFuture<T> future, String what) {
    return await(future, what, TimeUnit.SECONDS.toMillis(WRITE_TIMEOUT_SECONDS));
  }

  private static <T> T await(CompletableFuture<T> future, String what, long timeoutMs) {
    try {
      return future.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
          ? e.getCause().getCause() : e.getCause();
      if (cause instanceof ErrorCode.AlreadyExistsException) {
        throw new TopicException(TopicException.Outcome.ALREADY_EXISTS, cause.getMessage());
      }
      if (cause instanceof ErrorCode.NotFoundException) {
        throw new TopicException(TopicException.Outcome.UNKNOWN_TOPIC, cause.getMessage());
      }
      throw new IllegalStateException(what + " failed: " + cause.getMessage(), cause);
    } catch (TimeoutException e) {
      throw new IllegalStateException(what + " did not finish within " + timeoutMs + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while " + what, e);
    }
  }

  @Override
  public io.tidemark.broker.acl.AclStore aclStore() {
    return acls;
  }

  @Override
  public io.tidemark.broker.cluster.ResourceConfigStore resourceConfigs() {
    return resourceConfigs;
  }

  @Override
  public io.tidemark.broker.quota.QuotaStore quotaStore() {
    return quotas;
  }

  @Override
  public java.util.Optional<io.tidemark.broker.cluster.QuorumView> quorum() {
    return quorum;
  }
}
