package io.tidemark.broker.share;

import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The share group coordinator (KIP-932): membership of share groups through ShareGroupHeartbeat,
 * the assignment of partitions to members, ShareGroupDescribe, and the group configs (config
 * resource type GROUP). It stands beside the classic/consumer {@code GroupCoordinator} and is
 * placed the same way: a group is coordinated by the leader of its {@code __consumer_offsets}
 * partition ({@code GroupCoordinators} gates every request), and its durable records live there.
 *
 * <p><b>Durable:</b> that a share group exists (key type 10) and its group configs (key type 11),
 * in the group's {@code __consumer_offsets} partition, written before the answer. An offsets
 * partition is replayed for share groups the first time a request needs it after it opened here
 * (start-up, or a move), so groups follow the partition. Members are not persisted: after a restart
 * or move a member's heartbeat gets UNKNOWN_MEMBER_ID and the client joins again (epoch 0).
 *
 * <p><b>Membership:</b> epoch 0 joins (the member id is the client's), -1 leaves; any other epoch
 * must be the member's current one (or the one before, when the answer that moved it was lost),
 * else FENCED_MEMBER_EPOCH. The group epoch moves on every join, leave, subscription change, and
 * when a subscribed topic appears, disappears or grows (checked at every heartbeat). A member
 * silent for {@code share.session.timeout.ms} is removed, and its acquired records are released.
 *
 * <p><b>Assignment</b> (Kafka's "simple" assignor, without stickiness): per subscribed topic, with
 * M subscribers and P partitions, partition p goes to subscriber p mod M when M ≤ P; otherwise
 * subscriber i gets partition i mod P, so several members share a partition. Share groups need no
 * revocation step: records are locked per delivery, not per partition.
 *
 * <p><b>Threading:</b> one owner thread ({@code tidemark-share-groups}); the group configs are
 * also published in a concurrent map that the share-partition side reads.
 */
public final class ShareGroupCoordinator implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ShareGroupCoordinator.class);
  private static final short SHARE_GROUP_KEY_TYPE = 10;
  private static final short GROUP_CONFIG_KEY_TYPE = 11;
  private static final short VALUE_VERSION = 1;
  public static final String ASSIGNOR = "simple";

  private static final class Member {
    final String memberId;
    String rackId;
    String clientId;
    String clientHost;
    List<String> subscribed = List.of();
    int epoch;
    int previousEpoch;
    Map<Uuid, SortedSet<Integer>> assignment = new TreeMap<>();
    long lastSeenMs;

    Member(String memberId) {
      this.memberId = memberId;
    }
  }

  private static final class Group {
    final String id;
    int groupEpoch;
    int assignmentEpoch;
    final Map<String, Member> members = new TreeMap<>();
    Map<String, Integer> topicShape = new TreeMap<>();

    Group(String id) {
      this.id = id;
    }

    String state() {
      return members.isEmpty() ? "Empty" : "Stable";
    }
  }

  /** A share group as listed. */
  public record Listed(String groupId, String state) {}

  private final ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "tidemark-share-groups");
    t.setDaemon(true);
    return t;
  });
  private final Partitions partitions;
  private final TopicRegistry registry;
  private final String offsetsTopic;
  private final Function<String, Integer> offsetsPartitionFor;
  private final ShareGroupConfigs configDefs;
  private final Time time;
  private final int maxSize;
  private final Function<String, CompletableFuture<Boolean>> otherGroupExists;
  private final Map<String, Group> groups = new HashMap<>();
  private final Map<String, Map<String, String>> configs = new ConcurrentHashMap<>();
  private final Map<Integer, PartitionLog> loadedFrom = new HashMap<>();
  private final Map<Integer, CompletableFuture<Void>> loads = new HashMap<>();
  private volatile SharePartitionManager partitionSide;
  private volatile RemoteConfigs remote;

  /** How the group configs of groups coordinated by another broker are reached. */
  private record RemoteConfigs(int selfId, io.tidemark.broker.cluster.InterBrokerClient network) {}

  /** Group configs of groups coordinated elsewhere, as last read from their coordinator. */
  private record Cached(Map<String, String> configs, long readAtMs) {}

  static final int MAX_CACHED_REMOTE_CONFIGS = 10_000;
  static final long REMOTE_CONFIGS_MAX_AGE_MS = 1_000;
  private final Map<String, Cached> remoteConfigs = new ConcurrentHashMap<>();
  private final Map<String, CompletableFuture<Map<String, String>>> remoteReads = new ConcurrentHashMap<>();

  /**
   * @param otherGroupExists whether a classic or consumer group of that id exists (share groups
   *     share the group namespace; a share member cannot join one of those)
   */
  public ShareGroupCoordinator(Partitions partitions, TopicRegistry registry, String offsetsTopic,
      Function<String, Integer> offsetsPartitionFor, ShareGroupConfigs configDefs, Time time, int maxSize,
      Function<String, CompletableFuture<Boolean>> otherGroupExists) {
    this.partitions = partitions;
    this.registry = registry;
    this.offsetsTopic = offsetsTopic;
    this.offsetsPartitionFor = offsetsPartitionFor;
    this.configDefs = configDefs;
    this.time = time;
    this.maxSize = maxSize;
    this.otherGroupExists = otherGroupExists;
    owner.scheduleWithFixedDelay(this::expireMembers, 500, 500, TimeUnit.MILLISECONDS);
  }

  /** The share-partition side told when members leave (to release what they hold). */
  public void partitionSide(SharePartitionManager side) {
    this.partitionSide = side;
  }

  /**
   * Lets group configs be read and changed through any broker: for a group coordinated by another
   * broker, they are read from it (DescribeConfigs) and changed there (AlterConfigs of the whole
   * set) over the inter-broker listener.
   */
  public void remoteConfigs(int selfId, io.tidemark.broker.cluster.InterBrokerClient network) {
    this.remote = new RemoteConfigs(selfId, network);
  }

  /**
   * The set group configs of {@code group} (empty when none); any thread. For a group coordinated
   * by another broker, the copy read from it last (at most {@value #REMOTE_CONFIGS_MAX_AGE_MS} ms
   * old when in use: an older one is read again in the background; empty before the first read).
   */
  public Map<String, String> configs(String group) {
    if (here(group) || remote == null) {
      return configs.getOrDefault(group, Map.of());
    }
    Cached c = remoteConfigs.get(group);
    if (c == null || time.milliseconds() - c.readAtMs() > REMOTE_CONFIGS_MAX_AGE_MS) {
      readRemote(group);
    }
    return c == null ? Map.of() : c.configs();
  }

  /** The set group configs of {@code group}, read from its coordinator now when that is another broker. */
  public CompletableFuture<Map<String, String>> freshConfigs(String group) {
    if (here(group) || remote == null) {
      return CompletableFuture.completedFuture(configs.getOrDefault(group, Map.of()));
    }
    return readRemote(group);
  }

  /** The broker coordinating {@code group} as the metadata says (-1: none). */
  private int coordinatorOf(String group) {
    int p = offsetsPartitionFor.apply(group);
    return registry.topic(offsetsTopic).filter(t -> p < t.partitions().size()).map(t -> t.partitions().get(p).leader()).orElse(-1);
  }

  private CompletableFuture<Map<String, String>> readRemote(String group) {
    CompletableFuture<Map<String, String>> pending = remoteReads.get(group);
    if (pending != null) {
      return pending;
    }
    CompletableFuture<Map<String, String>> f = new CompletableFuture<>();
    if (remoteReads.putIfAbsent(group, f) != null) {
      return remoteReads.get(group);
    }
    describeRemote(group).whenComplete((set, e) -> {
      remoteReads.remove(group, f);
      if (e != null) {
        f.completeExceptionally(e);
        return;
      }
      if (remoteConfigs.size() >= MAX_CACHED_REMOTE_CONFIGS) {
        remoteConfigs.clear();
      }
      remoteConfigs.put(group, new Cached(set, time.milliseconds()));
      f.complete(set);
    });
    return f;
  }

  private CompletableFuture<Map<String, String>> describeRemote(String group) {
    int broker = coordinatorOf(group);
    if (broker < 0 || broker == remote.selfId()) {
      return CompletableFuture.failedFuture(Errors.COORDINATOR_NOT_AVAILABLE.exception("group " + group + " has no coordinator now"));
    }
    org.apache.kafka.common.message.DescribeConfigsRequestData d = new org.apache.kafka.common.message.DescribeConfigsRequestData();
    d.resources().add(new org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource()
        .setResourceType(org.apache.kafka.common.config.ConfigResource.Type.GROUP.id()).setResourceName(group).setConfigurationKeys(null));
    return remote.network().send(broker, new org.apache.kafka.common.requests.DescribeConfigsRequest.Builder(d)).thenCompose(r -> {
      var result = ((org.apache.kafka.common.requests.DescribeConfigsResponse) r).data().results().get(0);
      if (result.errorCode() != Errors.NONE.code()) {
        return CompletableFuture.failedFuture(Errors.forCode(result.errorCode()).exception(result.errorMessage()));
      }
      Map<String, String> set = new TreeMap<>();
      result.configs().stream().filter(c -> c.configSource()
          == org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource.GROUP_CONFIG.id()).forEach(c -> set.put(c.name(), c.value()));
      return CompletableFuture.completedFuture(Map.copyOf(set));
    });
  }

  /** Changes the group configs at the group's coordinator on another broker: the whole new set, after validating it here. */
  private CompletableFuture<Void> alterRemote(String group, UnaryOperator<Map<String, String>> change, boolean validateOnly) {
    return describeRemote(group).thenCompose(current -> {
      Map<String, String> next = new TreeMap<>(change.apply(current));
      next.values().removeIf(v -> v == null);
      configDefs.validate(next);
      List<org.apache.kafka.common.requests.AlterConfigsRequest.ConfigEntry> entries = new ArrayList<>();
      next.forEach((k, v) -> entries.add(new org.apache.kafka.common.requests.AlterConfigsRequest.ConfigEntry(k, v)));
      return remote.network().send(coordinatorOf(group), new org.apache.kafka.common.requests.AlterConfigsRequest.Builder(Map.of(
          new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.GROUP, group),
          new org.apache.kafka.common.requests.AlterConfigsRequest.Config(entries)), validateOnly));
    }).thenCompose(r -> {
      var out = ((org.apache.kafka.common.requests.AlterConfigsResponse) r).data().responses().get(0);
      if (out.errorCode() != Errors.NONE.code()) {
        return CompletableFuture.failedFuture(Errors.forCode(out.errorCode()).exception(out.errorMessage()));
      }
      remoteConfigs.remove(group);
      return CompletableFuture.completedFuture(null);
    });
  }

  public ShareGroupConfigs configDefinitions() {
    return configDefs;
  }

  private <T> CompletableFuture<T> call(String group, Supplier<CompletableFuture<T>> task) {
    return CompletableFuture.supplyAsync(() -> ensureLoaded(group), owner).thenCompose(f -> f)
        .thenComposeAsync(x -> task.get(), owner);
  }

  // ---------------------------------------------------------------- heartbeat

  /** ShareGroupHeartbeat (v1), answered once what it changed durably is written. */
  public CompletableFuture<ShareGroupHeartbeatResponseData> heartbeat(ShareGroupHeartbeatRequestData d, String clientId, String clientHost) {
    ShareGroupHeartbeatResponseData resp = new ShareGroupHeartbeatResponseData().setMemberId(d.memberId());
    Errors invalid = d.groupId() == null || d.groupId().isEmpty() ? Errors.INVALID_REQUEST
        : d.memberId() == null || d.memberId().isEmpty() || d.memberEpoch() < -1
            || (d.memberEpoch() == 0 && (d.subscribedTopicNames() == null || d.subscribedTopicNames().isEmpty())) ? Errors.INVALID_REQUEST
            : Errors.NONE;
    if (invalid != Errors.NONE) {
      return CompletableFuture.completedFuture(resp.setErrorCode(invalid.code()).setErrorMessage(d.groupId() == null || d.groupId().isEmpty()
          ? "GroupId can't be empty." : "MemberId must be set, MemberEpoch >= -1, and SubscribedTopicNames set when joining (epoch 0)."));
    }
    String id = d.groupId();
    return call(id, () -> {
      Group g = groups.get(id);
      if (g == null && d.memberEpoch() == 0) {
        return otherGroupExists.apply(id).thenComposeAsync(other -> other
            ? CompletableFuture.completedFuture(resp.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code())
                .setErrorMessage("Group " + id + " is not a share group."))
            : create(id).thenComposeAsync(x -> CompletableFuture.completedFuture(beat(d, clientId, clientHost, resp)), owner), owner);
      }
      return CompletableFuture.completedFuture(beat(d, clientId, clientHost, resp));
    });
  }

  private ShareGroupHeartbeatResponseData beat(ShareGroupHeartbeatRequestData d, String clientId, String clientHost,
      ShareGroupHeartbeatResponseData resp) {
    Group g = groups.get(d.groupId());
    if (g == null) { // the group's existence is durable: a member of a group that never existed (or was deleted), as Kafka answers
      return resp.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("Group " + d.groupId() + " not found.");
    }
    Member m = g.members.get(d.memberId());
    if (d.memberEpoch() == -1) {
      if (m != null) {
        remove(g, m);
      }
      return resp.setMemberEpoch(-1);
    }
    if (d.memberEpoch() == 0) {
      if (m == null && g.members.size() >= maxSize) {
        return resp.setErrorCode(Errors.GROUP_MAX_SIZE_REACHED.code()).setErrorMessage("share group " + g.id + " has its maximum of "
            + maxSize + " members");
      }
      if (m == null) {
        m = new Member(d.memberId());
        g.members.put(m.memberId, m);
      }
      m.epoch = 0;
      m.subscribed = List.copyOf(d.subscribedTopicNames());
      g.groupEpoch++;
    } else {
      if (m == null) {
        return resp.setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()).setErrorMessage("group " + g.id + " has no member " + d.memberId());
      }
      if (d.memberEpoch() != m.epoch && d.memberEpoch() != m.previousEpoch) {
        return resp.setErrorCode(Errors.FENCED_MEMBER_EPOCH.code()).setErrorMessage("member " + m.memberId + " is at epoch " + m.epoch
            + ", not " + d.memberEpoch());
      }
      if (d.subscribedTopicNames() != null && !new TreeSet<>(d.subscribedTopicNames()).equals(new TreeSet<>(m.subscribed))) {
        m.subscribed = List.copyOf(d.subscribedTopicNames());
        g.groupEpoch++;
      }
    }
    if (d.rackId() != null) {
      m.rackId = d.rackId();
    }
    m.clientId = clientId;
    m.clientHost = clientHost;
    m.lastSeenMs = time.milliseconds();
    if (!shape(g).equals(g.topicShape)) {
      g.groupEpoch++;
    }
    if (g.assignmentEpoch != g.groupEpoch) {
      assign(g);
    }
    boolean send = m.epoch != g.groupEpoch || d.memberEpoch() == 0 || d.memberEpoch() != m.epoch;
    if (m.epoch != g.groupEpoch) {
      m.previousEpoch = m.epoch;
      m.epoch = g.groupEpoch;
    }
    resp.setMemberEpoch(m.epoch).setHeartbeatIntervalMs(configDefs.intValue(configs(g.id), ShareGroupConfigs.HEARTBEAT_INTERVAL_MS));
    if (send) {
      ShareGroupHeartbeatResponseData.Assignment a = new ShareGroupHeartbeatResponseData.Assignment();
      m.assignment.forEach((topicId, ps) -> a.topicPartitions().add(new ShareGroupHeartbeatResponseData.TopicPartitions()
          .setTopicId(topicId).setPartitions(new ArrayList<>(ps))));
      resp.setAssignment(a);
    }
    return resp;
  }

  private void remove(Group g, Member m) {
    g.members.remove(m.memberId);
    g.groupEpoch++;
    assign(g);
    SharePartitionManager side = partitionSide;
    if (side != null) {
      side.memberLeft(g.id, m.memberId);
    }
  }

  /** Subscribed topic name → partition count, as the registry knows them now (internal topics excluded). */
  private Map<String, Integer> shape(Group g) {
    Map<String, Integer> out = new TreeMap<>();
    for (Member m : g.members.values()) {
      for (String t : m.subscribed) {
        registry.topic(t).filter(x -> !x.internal()).ifPresent(x -> out.put(t, x.partitions().size()));
      }
    }
    return out;
  }

  private void assign(Group g) {
    g.topicShape = shape(g);
    g.members.values().forEach(m -> m.assignment = new TreeMap<>());
    for (Map.Entry<String, Integer> t : g.topicShape.entrySet()) {
      Optional<TopicInfo> topic = registry.topic(t.getKey());
      if (topic.isEmpty()) {
        continue;
      }
      List<Member> subs = g.members.values().stream().filter(m -> m.subscribed.contains(t.getKey())).toList();
      int p = t.getValue();
      int n = subs.size();
      if (n == 0 || p == 0) {
        continue;
      }
      Uuid id = topic.get().id();
      if (n <= p) {
        for (int i = 0; i < p; i++) {
          subs.get(i % n).assignment.computeIfAbsent(id, x -> new TreeSet<>()).add(i);
        }
      } else {
        for (int i = 0; i < n; i++) {
          subs.get(i).assignment.computeIfAbsent(id, x -> new TreeSet<>()).add(i % p);
        }
      }
    }
    g.assignmentEpoch = g.groupEpoch;
  }

  private void expireMembers() {
    long now = time.milliseconds();
    for (Group g : List.copyOf(groups.values())) {
      int timeout = configDefs.intValue(configs(g.id), ShareGroupConfigs.SESSION_TIMEOUT_MS);
      for (Member m : List.copyOf(g.members.values())) {
        if (now - m.lastSeenMs > timeout) {
          LOG.info("share group {}: member {} sent no heartbeat for {} ms; removed", g.id, m.memberId, timeout);
          remove(g, m);
        }
      }
    }
  }

  // ---------------------------------------------------------------- describe, list, delete

  /** ShareGroupDescribe (v1) for groups coordinated here. */
  public CompletableFuture<List<ShareGroupDescribeResponseData.DescribedGroup>> describe(List<String> ids) {
    List<CompletableFuture<ShareGroupDescribeResponseData.DescribedGroup>> each = new ArrayList<>();
    for (String id : ids) {
      each.add(call(id, () -> CompletableFuture.completedFuture(describeOne(id))));
    }
    return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(x -> each.stream().map(CompletableFuture::join).toList());
  }

  private ShareGroupDescribeResponseData.DescribedGroup describeOne(String id) {
    ShareGroupDescribeResponseData.DescribedGroup out = new ShareGroupDescribeResponseData.DescribedGroup().setGroupId(id);
    Group g = groups.get(id);
    if (g == null) {
      return out.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage("Group " + id + " not found.");
    }
    out.setGroupState(g.state()).setGroupEpoch(g.groupEpoch).setAssignmentEpoch(g.assignmentEpoch).setAssignorName(ASSIGNOR);
    Map<Uuid, String> names = registry.topicNamesById();
    for (Member m : g.members.values()) {
      ShareGroupDescribeResponseData.Assignment a = new ShareGroupDescribeResponseData.Assignment();
      m.assignment.forEach((topicId, ps) -> a.topicPartitions().add(new ShareGroupDescribeResponseData.TopicPartitions()
          .setTopicId(topicId).setTopicName(names.getOrDefault(topicId, "")).setPartitions(new ArrayList<>(ps))));
      out.members().add(new ShareGroupDescribeResponseData.Member().setMemberId(m.memberId).setRackId(m.rackId)
          .setMemberEpoch(m.epoch).setClientId(m.clientId == null ? "" : m.clientId).setClientHost(m.clientHost == null ? "" : m.clientHost)
          .setSubscribedTopicNames(new ArrayList<>(m.subscribed)).setAssignment(a));
    }
    return out;
  }

  /** Every share group coordinated here (whose offsets partition is open here), replaying partitions not read yet. */
  public CompletableFuture<List<Listed>> list() {
    return CompletableFuture.supplyAsync(() -> {
      List<CompletableFuture<Void>> loading = new ArrayList<>();
      for (PartitionLog log : partitions.all()) {
        if (log.topicPartition().topic().equals(offsetsTopic)) {
          loading.add(ensureLoaded(log.topicPartition().partition()));
        }
      }
      return CompletableFuture.allOf(loading.toArray(CompletableFuture[]::new));
    }, owner).thenCompose(f -> f).thenApplyAsync(x -> groups.values().stream()
        .filter(g -> partitions.get(new TopicPartition(offsetsTopic, offsetsPartitionFor.apply(g.id))).isPresent())
        .map(g -> new Listed(g.id, g.state())).toList(), owner);
  }

  /** Whether {@code id} is a share group here. */
  public CompletableFuture<Boolean> isShareGroup(String id) {
    return call(id, () -> CompletableFuture.completedFuture(groups.containsKey(id)));
  }

  /** Whether {@code id} is not a share group but a classic or consumer group. */
  public CompletableFuture<Boolean> isOtherGroup(String id) {
    return call(id, () -> groups.containsKey(id) ? CompletableFuture.completedFuture(false) : otherGroupExists.apply(id));
  }

  /** Whether the share group has members now; NONE when it is empty or absent, else NON_EMPTY_GROUP. */
  public CompletableFuture<Errors> checkEmpty(String id) {
    return call(id, () -> {
      Group g = groups.get(id);
      return CompletableFuture.completedFuture(g != null && !g.members.isEmpty() ? Errors.NON_EMPTY_GROUP : Errors.NONE);
    });
  }

  /**
   * Makes sure an empty share group {@code id} exists (offsets set for a group not created yet), unless
   * a classic or consumer group has the id: GROUP_ID_NOT_FOUND then.
   */
  public CompletableFuture<Errors> ensureGroup(String id) {
    return call(id, () -> {
      if (groups.containsKey(id)) {
        return CompletableFuture.completedFuture(Errors.NONE);
      }
      return otherGroupExists.apply(id).thenComposeAsync(other -> other ? CompletableFuture.completedFuture(Errors.GROUP_ID_NOT_FOUND)
          : create(id).thenApply(x -> Errors.NONE), owner);
    });
  }

  /** Deletes an empty share group and its group configs (the caller deletes its share-partition state first). */
  public CompletableFuture<Errors> delete(String id) {
    return call(id, () -> {
      Group g = groups.get(id);
      if (g == null) {
        return CompletableFuture.completedFuture(Errors.GROUP_ID_NOT_FOUND);
      }
      if (!g.members.isEmpty()) {
        return CompletableFuture.completedFuture(Errors.NON_EMPTY_GROUP);
      }
      groups.remove(id);
      configs.remove(id);
      return append(id, List.of(new byte[][] {key(SHARE_GROUP_KEY_TYPE, id), null}, new byte[][] {key(GROUP_CONFIG_KEY_TYPE, id), null}))
          .thenApply(x -> Errors.NONE);
    });
  }

  // ---------------------------------------------------------------- group configs

  /**
   * Replaces the group configs of {@code group} with {@code change(current)} after validating them;
   * durable before it completes. For a group coordinated by another broker, the change is made
   * there (read, change, write the whole set: two brokers changing one group's configs at once can
   * lose one change); NOT_COORDINATOR when no broker can be reached for it.
   */
  public CompletableFuture<Void> alterConfigs(String group, UnaryOperator<Map<String, String>> change, boolean validateOnly) {
    if (!here(group)) {
      return remote != null ? alterRemote(group, change, validateOnly)
          : CompletableFuture.failedFuture(Errors.NOT_COORDINATOR.exception("group " + group + " is coordinated by another broker"));
    }
    return call(group, () -> {
      Map<String, String> next = new TreeMap<>(change.apply(configs(group)));
      next.values().removeIf(v -> v == null);
      configDefs.validate(next);
      if (validateOnly) {
        return CompletableFuture.completedFuture(null);
      }
      return append(group, List.<byte[][]>of(new byte[][] {key(GROUP_CONFIG_KEY_TYPE, group), next.isEmpty() ? null : configValue(next)}))
          .thenRunAsync(() -> {
            if (next.isEmpty()) {
              configs.remove(group);
            } else {
              configs.put(group, Map.copyOf(next));
            }
          }, owner);
    });
  }

  /** The set group configs of {@code group} once its partition is replayed; NOT_COORDINATOR elsewhere. */
  public CompletableFuture<Map<String, String>> describeConfigs(String group) {
    if (!here(group)) {
      return remote != null ? describeRemote(group)
          : CompletableFuture.failedFuture(Errors.NOT_COORDINATOR.exception("group " + group + " is coordinated by another broker"));
    }
    return call(group, () -> CompletableFuture.completedFuture(configs(group)));
  }

  private boolean here(String group) {
    return partitions.get(new TopicPartition(offsetsTopic, offsetsPartitionFor.apply(group))).isPresent();
  }

  // ---------------------------------------------------------------- durable records

  private CompletableFuture<Void> create(String id) {
    Group g = new Group(id);
    return append(id, List.<byte[][]>of(new byte[][] {key(SHARE_GROUP_KEY_TYPE, id), new byte[] {0, VALUE_VERSION}}))
        .thenRunAsync(() -> groups.putIfAbsent(id, g), owner);
  }

  private CompletableFuture<Void> append(String group, List<byte[][]> records) {
    Optional<PartitionLog> log = partitions.get(new TopicPartition(offsetsTopic, offsetsPartitionFor.apply(group)));
    if (log.isEmpty()) {
      return CompletableFuture.failedFuture(Errors.COORDINATOR_NOT_AVAILABLE.exception("offsets partition of group " + group + " is not open here"));
    }
    return log.get().append(RecordBatches.internalBatch(time.milliseconds(), records)).thenApply(r -> null);
  }

  private CompletableFuture<Void> ensureLoaded(String group) {
    return ensureLoaded(offsetsPartitionFor.apply(group));
  }

  /** Replays the share-group records of offsets partition {@code p} if this instance of it was not read yet. Owner thread. */
  private CompletableFuture<Void> ensureLoaded(int p) {
    Optional<PartitionLog> log = partitions.get(new TopicPartition(offsetsTopic, p));
    if (log.isEmpty()) {
      return CompletableFuture.failedFuture(Errors.NOT_COORDINATOR.exception("offsets partition " + p + " is not open here"));
    }
    if (loadedFrom.get(p) == log.get()) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> pending = loads.get(p);
    if (pending != null) {
      return pending;
    }
    PartitionLog l = log.get();
    Map<String, Boolean> exists = new HashMap<>();
    Map<String, Map<String, String>> cfg = new HashMap<>();
    CompletableFuture<Void> f = replay(l, l.logStartOffset(), exists, cfg).thenRunAsync(() -> {
      groups.keySet().removeIf(id -> offsetsPartitionFor.apply(id) == p);
      configs.keySet().removeIf(id -> offsetsPartitionFor.apply(id) == p);
      exists.forEach((id, yes) -> {
        if (yes) {
          groups.put(id, new Group(id));
        }
      });
      cfg.forEach((id, c) -> {
        if (c != null) {
          configs.put(id, c);
        }
      });
      loadedFrom.put(p, l);
    }, owner);
    loads.put(p, f);
    f.whenCompleteAsync((x, e) -> loads.remove(p, f), owner);
    return f;
  }

  private CompletableFuture<Void> replay(PartitionLog log, long from, Map<String, Boolean> exists, Map<String, Map<String, String>> cfg) {
    if (from >= log.highWatermark()) {
      return CompletableFuture.completedFuture(null);
    }
    return log.readRecords(from, 1024 * 1024).thenCompose(page -> {
      for (KeyValue kv : page.records()) {
        try (DataInputStream k = new DataInputStream(new ByteArrayInputStream(kv.key()))) {
          short type = k.readShort();
          if (type == SHARE_GROUP_KEY_TYPE) {
            exists.put(k.readUTF(), kv.value() != null);
          } else if (type == GROUP_CONFIG_KEY_TYPE) {
            String id = k.readUTF();
            cfg.put(id, kv.value() == null ? null : readConfigValue(kv.value()));
          }
        } catch (IOException | RuntimeException e) {
          LOG.warn("skipping unreadable record of {} at offset {}: {}", log.topicPartition(), kv.offset(), e.toString());
        }
      }
      long next = page.nextOffset();
      return next <= from ? CompletableFuture.completedFuture(null) : replay(log, next, exists, cfg);
    });
  }

  private static byte[] key(short type, String group) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(type);
      out.writeUTF(group);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  private static byte[] configValue(Map<String, String> c) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(buf)) {
      out.writeShort(VALUE_VERSION);
      out.writeInt(c.size());
      for (Map.Entry<String, String> e : c.entrySet()) {
        out.writeUTF(e.getKey());
        out.writeUTF(e.getValue());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return buf.toByteArray();
  }

  private static Map<String, String> readConfigValue(byte[] v) throws IOException {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(v))) {
      if (in.readShort() != VALUE_VERSION) {
        throw new IOException("unknown group config value version");
      }
      int n = in.readInt();
      if (n < 0 || n > in.available()) {
        throw new IOException("bad config count " + n);
      }
      Map<String, String> out = new TreeMap<>();
      for (int i = 0; i < n; i++) {
        out.put(in.readUTF(), in.readUTF());
      }
      return Map.copyOf(out);
    }
  }

  @Override
  public void close() {
    owner.shutdownNow();
  }
}
