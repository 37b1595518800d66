package io.tidemark.broker.share;

import io.tidemark.broker.cluster.InterBrokerClient;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.broker.record.StoredBatch;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partition-leader side of share groups (KIP-932): share sessions, ShareFetch and
 * ShareAcknowledge, acquisition locks and their expiry, for the share partitions of the topic
 * partitions led here, with their state kept by the share coordinator of each share partition
 * ({@link ShareCoordinator}, on the leader of its {@value ShareStateLog#TOPIC} partition, this
 * broker or another) and reached through {@link SharePersister}.
 *
 * <p><b>Threading:</b> one owner thread ({@code tidemark-share-partitions}) holds every
 * {@link SharePartition}, the share sessions and the timers; requests, lock expiries and
 * partition changes are handed to it, and the reads and appends they start continue on it.
 *
 * <p><b>Durability:</b> a change of a share partition (initialisation, acquisition with its
 * delivery count, acknowledgement, release, lock expiry) is answered only after its new state is
 * durable at its share coordinator. The writes of one share partition go out one at a time, in
 * the order of the changes, each carrying the whole state. If a write fails, the share partition is
 * dropped from memory and reloaded from its last durable state at the next use, so an
 * acknowledgement the client was told failed is never treated as done. After a restart or a move
 * of the data partition, the new leader reads the state with its (higher) leader epoch, which
 * fences any later write of the former leader; records that were acquired are available again
 * with their delivery counts kept: nothing acknowledged is delivered again, and a record never
 * gets more deliveries than the limit. A share partition re-initialised or deleted meanwhile (a
 * newer state epoch) fences this broker's next write, and it reloads.
 *
 * <p><b>Sessions:</b> keyed by (group, member); epoch 0 opens one (replacing the member's old one),
 * each later request must carry the next epoch (INVALID_SHARE_SESSION_EPOCH), -1 closes it and
 * releases what the member still holds in it. At most {@code kafka.group.share.max.share.sessions}
 * (SHARE_SESSION_LIMIT_REACHED beyond); a session unused for twice the session timeout is dropped.
 * A session belongs to the connection that opened it: when that connection closes (a consumer that
 * died, or lost its network), the session closes and its records are released at once, as Kafka's
 * share-session cache does on a disconnect, rather than when the locks or the member's session
 * time out.
 *
 * <p><b>Long polls</b> re-try acquisition every few tens of milliseconds until MaxWaitMs; at most
 * {@value #MAX_PARKED} are parked, beyond that a fetch that found nothing is answered at once.
 */
public final class SharePartitionManager implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SharePartitionManager.class);
  static final int MAX_PARKED = 1000;
  private static final long POLL_RETRY_MS = 25;

  /** One topic partition of a session. */
  record Member(String group, String memberId) {}

  record TopicIdPartition(Uuid topicId, int partition) {}

  private static final class Session {
    final String connectionId;
    int epoch;
    long lastUsedMs;
    final LinkedHashSet<TopicIdPartition> partitions = new LinkedHashSet<>();
    int rotation;

    Session(String connectionId) {
      this.connectionId = connectionId;
    }
  }

  /** A share partition held here, with the data partition instance it describes and the state epoch it was read at. */
  private record Held(SharePartition share, PartitionLog data, int stateEpoch) {}

  private final ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "tidemark-share-partitions");
    t.setDaemon(true);
    return t;
  });
  private final Partitions partitions;
  private final TopicRegistry registry;
  private final SharePersister state;
  private final InterBrokerClient network;
  private final ShareGroupConfigs configs;
  private final Function<String, Map<String, String>> groupConfigs;
  private final Function<String, CompletableFuture<Map<String, String>>> freshGroupConfigs;
  private final Time time;
  private final int maxSessions;
  private final long sessionIdleMs;
  private final Map<ShareKey, Held> shares = new HashMap<>();
  private final Map<ShareKey, CompletableFuture<Held>> loading = new HashMap<>();
  private final Map<Member, Session> sessions = new HashMap<>();
  private final Map<ShareKey, Long> timers = new HashMap<>();
  /** The last state write of each share partition still in flight: the next one waits for it. */
  private final Map<ShareKey, CompletableFuture<Void>> writes = new HashMap<>();
  private int parked;

  /**
   * @param coordinator the share coordinator of this broker (state partitions led here)
   * @param network requests to the share coordinators of other brokers
   * @param stateRetryMs how long a state operation follows a moving share coordinator before it fails
   * @param groupConfigs a group's set configs as known now (a copy at most a second old for groups coordinated elsewhere)
   * @param freshGroupConfigs a group's set configs read from its coordinator now (used when a share partition starts)
   */
  public SharePartitionManager(Partitions partitions, TopicRegistry registry, ShareCoordinator coordinator, int nodeId,
      InterBrokerClient network, long stateRetryMs, ShareGroupConfigs configs, Function<String, Map<String, String>> groupConfigs,
      Function<String, CompletableFuture<Map<String, String>>> freshGroupConfigs, Time time, int maxSessions, long sessionIdleMs) {
    this.freshGroupConfigs = freshGroupConfigs;
    this.partitions = partitions;
    this.registry = registry;
    this.state = new SharePersister(coordinator, registry, nodeId, network, time, stateRetryMs);
    this.network = network;
    this.configs = configs;
    this.groupConfigs = groupConfigs;
    this.time = time;
    this.maxSessions = maxSessions;
    this.sessionIdleMs = sessionIdleMs;
    partitions.addListener(new Partitions.Listener() {
      @Override
      public void opened(PartitionLog log) {}

      @Override
      public void closed(PartitionLog log) {
        owner.execute(() -> forget(log));
      }
    });
    owner.scheduleWithFixedDelay(this::dropIdleSessions, 1, 1, TimeUnit.SECONDS);
  }

  public static String stateTopic() {
    return ShareStateLog.TOPIC;
  }

  SharePartition.Limits limits(String group) {
    Map<String, String> set = groupConfigs.apply(group);
    return new SharePartition.Limits(configs.intValue(set, ShareGroupConfigs.RECORD_LOCK_DURATION_MS),
        configs.intValue(set, ShareGroupConfigs.DELIVERY_COUNT_LIMIT), configs.intValue(set, ShareGroupConfigs.PARTITION_MAX_RECORD_LOCKS));
  }

  // ---------------------------------------------------------------- ShareFetch

  /** ShareFetch (v1–2) received on connection {@code connectionId}. */
  public CompletableFuture<ShareFetchResponseData> fetch(ShareFetchRequestData d, short version, String connectionId) {
    return CompletableFuture.supplyAsync(() -> startFetch(d, version, connectionId), owner).thenCompose(f -> f);
  }

  /** Connection {@code connectionId} closed: the share sessions it opened close and their records are released. */
  public void connectionClosed(String connectionId) {
    owner.execute(() -> {
      List<Member> opened = new ArrayList<>();
      sessions.forEach((who, s) -> {
        if (s.connectionId.equals(connectionId)) {
          opened.add(who);
        }
      });
      opened.forEach(this::closeSession);
    });
  }

  private CompletableFuture<ShareFetchResponseData> startFetch(ShareFetchRequestData d, short version, String connectionId) {
    ShareFetchResponseData resp = new ShareFetchResponseData();
    if (d.groupId() == null || d.groupId().isEmpty()) {
      return CompletableFuture.completedFuture(resp.setErrorCode(Errors.INVALID_GROUP_ID.code()).setErrorMessage("group id is empty"));
    }
    if (d.memberId() == null || d.memberId().isEmpty()) {
      return CompletableFuture.completedFuture(resp.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("member id is empty"));
    }
    Member who = new Member(d.groupId(), d.memberId());
    boolean hasAcks = d.topics().stream().anyMatch(t -> t.partitions().stream().anyMatch(p -> !p.acknowledgementBatches().isEmpty()));
    int epoch = d.shareSessionEpoch();
    Session session = sessions.get(who);
    if (epoch == 0) {
      if (hasAcks) {
        return CompletableFuture.completedFuture(resp.setErrorCode(Errors.INVALID_REQUEST.code())
            .setErrorMessage("acknowledgements in a ShareFetch that opens a share session (epoch 0)"));
      }
      if (session == null && sessions.size() >= maxSessions) {
        return CompletableFuture.completedFuture(resp.setErrorCode(Errors.SHARE_SESSION_LIMIT_REACHED.code())
            .setErrorMessage("this broker holds its limit of " + maxSessions + " share sessions"));
      }
      session = new Session(connectionId);
      sessions.put(who, session);
    } else {
      Errors e = checkEpoch(session, epoch);
      if (e != Errors.NONE) {
        return CompletableFuture.completedFuture(resp.setErrorCode(e.code()));
      }
    }
    Session current = session;
    current.lastUsedMs = time.milliseconds();
    boolean closing = epoch == -1;
    if (!closing) {
      current.epoch = epoch + 1 == Integer.MAX_VALUE ? 1 : epoch + 1;
      for (ShareFetchRequestData.FetchTopic t : d.topics()) {
        t.partitions().forEach(p -> current.partitions.add(new TopicIdPartition(t.topicId(), p.partitionIndex())));
      }
      for (ShareFetchRequestData.ForgottenTopic f : d.forgottenTopicsData()) {
        f.partitions().forEach(p -> current.partitions.remove(new TopicIdPartition(f.topicId(), p)));
      }
    }
    Map<TopicIdPartition, ShareFetchResponseData.PartitionData> out = new LinkedHashMap<>();
    List<CompletableFuture<Void>> acks = new ArrayList<>();
    for (ShareFetchRequestData.FetchTopic t : d.topics()) {
      for (ShareFetchRequestData.FetchPartition p : t.partitions()) {
        if (p.acknowledgementBatches().isEmpty()) {
          continue;
        }
        TopicIdPartition tip = new TopicIdPartition(t.topicId(), p.partitionIndex());
        ShareFetchResponseData.PartitionData pd = out.computeIfAbsent(tip, x -> emptyFetchPartition(tip));
        List<SharePartition.Ack> batches = p.acknowledgementBatches().stream()
            .map(b -> new SharePartition.Ack(b.firstOffset(), b.lastOffset(), b.acknowledgeTypes())).toList();
        acks.add(acknowledge(who, tip, batches).thenAccept(err -> pd.setAcknowledgeErrorCode(err.error().code())
            .setAcknowledgeErrorMessage(err.message())));
      }
    }
    int lockMs = (int) limits(d.groupId()).lockDurationMs();
    CompletableFuture<Void> acked = CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new));
    if (closing) {
      return acked.thenComposeAsync(x -> closeSession(who), owner).thenApply(x -> build(resp, out, lockMs));
    }
    boolean fetchRecords = !(version >= 2 && d.isRenewAck());
    long deadline = time.milliseconds() + Math.max(0, d.maxWaitMs());
    int maxRecords = version >= 1 && d.maxRecords() > 0 ? d.maxRecords() : 500;
    return acked.thenComposeAsync(x -> fetchRecords ? acquireUntil(who, current, out, maxRecords, Math.max(1, d.maxBytes()), deadline, false)
        : CompletableFuture.completedFuture(null), owner).thenApply(x -> build(resp, out, lockMs));
  }

  private static Errors checkEpoch(Session session, int epoch) {
    if (session == null) {
      return Errors.SHARE_SESSION_NOT_FOUND;
    }
    if (epoch != -1 && epoch != session.epoch) {
      return Errors.INVALID_SHARE_SESSION_EPOCH;
    }
    return Errors.NONE;
  }

  private static ShareFetchResponseData build(ShareFetchResponseData resp, Map<TopicIdPartition, ShareFetchResponseData.PartitionData> out,
      int lockMs) {
    Map<Uuid, ShareFetchResponseData.ShareFetchableTopicResponse> topics = new LinkedHashMap<>();
    out.forEach((tip, pd) -> topics.computeIfAbsent(tip.topicId(), id -> new ShareFetchResponseData.ShareFetchableTopicResponse()
        .setTopicId(id)).partitions().add(pd));
    topics.values().forEach(resp.responses()::add);
    return resp.setAcquisitionLockTimeoutMs(lockMs);
  }

  private ShareFetchResponseData.PartitionData emptyFetchPartition(TopicIdPartition tip) {
    ShareFetchResponseData.PartitionData pd = new ShareFetchResponseData.PartitionData().setPartitionIndex(tip.partition())
        .setRecords(RecordBatches.empty());
    leaderOf(tip).ifPresent(l -> pd.currentLeader().setLeaderId(l.leader()).setLeaderEpoch(l.leaderEpoch()));
    return pd;
  }

  private Optional<TopicInfo.PartitionInfo> leaderOf(TopicIdPartition tip) {
    return registry.topic(tip.topicId()).flatMap(t -> t.partitions().stream().filter(p -> p.partition() == tip.partition()).findFirst());
  }

  /**
   * Acquires records from the session's partitions (rotating the first one between requests) until
   * some are acquired or the deadline passes; runs on the owner thread.
   */
  private CompletableFuture<Void> acquireUntil(Member who, Session session, Map<TopicIdPartition, ShareFetchResponseData.PartitionData> out,
      int maxRecords, int maxBytes, long deadline, boolean wasParked) {
    List<TopicIdPartition> order = new ArrayList<>(session.partitions);
    if (!order.isEmpty()) {
      int shift = session.rotation++ % order.size();
      java.util.Collections.rotate(order, -shift);
    }
    int[] left = {maxRecords, maxBytes};
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (TopicIdPartition tip : order) {
      chain = chain.thenComposeAsync(x -> left[0] <= 0 || left[1] <= 0 ? CompletableFuture.completedFuture(null)
          : acquireOne(who, tip, out, left), owner);
    }
    return chain.thenComposeAsync(x -> {
      if (wasParked) {
        parked--;
      }
      boolean got = left[0] < maxRecords;
      boolean errors = out.values().stream().anyMatch(pd -> pd.errorCode() != 0);
      long now = time.milliseconds();
      if (got || errors || now >= deadline || parked >= MAX_PARKED || sessions.get(who) != session) {
        return CompletableFuture.completedFuture(null);
      }
      parked++;
      CompletableFuture<Void> later = new CompletableFuture<>();
      owner.schedule(() -> acquireUntil(who, session, out, maxRecords, maxBytes, deadline, true).whenComplete((v, e) -> {
        if (e != null) {
          later.completeExceptionally(e);
        } else {
          later.complete(null);
        }
      }), Math.min(POLL_RETRY_MS, deadline - now), TimeUnit.MILLISECONDS);
      return later;
    }, owner);
  }

  /** Acquires what it can in one partition, within {@code left} (records, bytes), adding it to {@code out}. */
  private CompletableFuture<Void> acquireOne(Member who, TopicIdPartition tip, Map<TopicIdPartition, ShareFetchResponseData.PartitionData> out,
      int[] left) {
    Optional<TopicInfo> topic = registry.topic(tip.topicId());
    if (topic.isEmpty() || tip.partition() < 0 || tip.partition() >= topic.get().partitions().size()) {
      out.computeIfAbsent(tip, this::emptyFetchPartition).setErrorCode(topic.isEmpty() ? Errors.UNKNOWN_TOPIC_ID.code()
          : Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
      return CompletableFuture.completedFuture(null);
    }
    ShareKey key = new ShareKey(who.group(), tip.topicId(), tip.partition());
    TopicPartition tp = new TopicPartition(topic.get().name(), tip.partition());
    return held(key, tp).thenComposeAsync(h -> {
      PartitionLog log = h.data();
      SharePartition sp = h.share();
      boolean moved = sp.skipTo(log.logStartOffset());
      long from = sp.nextFetchOffset();
      if (from >= log.highWatermark()) {
        return moved ? persist(key, h) : CompletableFuture.completedFuture(null);
      }
      return log.read(Math.max(from, log.logStartOffset()), left[1]).thenComposeAsync(r -> {
        if (shares.get(key) != h) {
          return CompletableFuture.completedFuture(null); // dropped meanwhile (write failure, partition moved)
        }
        List<long[]> bounds = new ArrayList<>();
        for (ByteBuffer b : r.batches()) {
          StoredBatch sb = RecordBatches.header(b);
          bounds.add(new long[] {sb.baseOffset(), sb.lastOffset()});
        }
        SharePartition.Limits limits = limits(who.group());
        List<SharePartition.Acquired> acquired = sp.acquire(who.memberId(), bounds, left[0], time.milliseconds(), limits);
        if (acquired.isEmpty()) {
          return moved ? persist(key, h) : CompletableFuture.completedFuture(null);
        }
        long lastAcquired = acquired.get(acquired.size() - 1).lastOffset();
        List<ByteBuffer> send = new ArrayList<>();
        for (ByteBuffer b : r.batches()) {
          if (RecordBatches.header(b).baseOffset() <= lastAcquired) {
            send.add(b);
          }
        }
        int count = acquired.stream().mapToInt(a -> (int) (a.lastOffset() - a.firstOffset() + 1)).sum();
        left[0] -= count;
        left[1] -= send.stream().mapToInt(ByteBuffer::remaining).sum();
        armTimer(key, sp.nextLockDeadlineMs());
        return persist(key, h).handle((x, e) -> {
          ShareFetchResponseData.PartitionData pd = out.computeIfAbsent(tip, this::emptyFetchPartition);
          if (e != null) {
            pd.setErrorCode(ErrorMapping.toErrors(e).code()).setErrorMessage(ErrorMapping.message(e));
            return null;
          }
          pd.setRecords(RecordBatches.concat(send));
          acquired.forEach(a -> pd.acquiredRecords().add(new ShareFetchResponseData.AcquiredRecords().setFirstOffset(a.firstOffset())
              .setLastOffset(a.lastOffset()).setDeliveryCount((short) a.deliveryCount())));
          return null;
        });
      }, owner);
    }, owner).exceptionally(e -> {
      ShareFetchResponseData.PartitionData pd = out.computeIfAbsent(tip, this::emptyFetchPartition);
      pd.setErrorCode(ErrorMapping.toErrors(e).code()).setErrorMessage(ErrorMapping.message(e));
      return null;
    });
  }

  // ---------------------------------------------------------------- ShareAcknowledge

  /** ShareAcknowledge (v1–2). */
  public CompletableFuture<ShareAcknowledgeResponseData> acknowledge(ShareAcknowledgeRequestData d, short version) {
    return CompletableFuture.supplyAsync(() -> startAcknowledge(d, version), owner).thenCompose(f -> f);
  }

  private CompletableFuture<ShareAcknowledgeResponseData> startAcknowledge(ShareAcknowledgeRequestData d, short version) {
    ShareAcknowledgeResponseData resp = new ShareAcknowledgeResponseData();
    if (d.groupId() == null || d.groupId().isEmpty() || d.memberId() == null || d.memberId().isEmpty()) {
      return CompletableFuture.completedFuture(resp.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("group and member id are required"));
    }
    Member who = new Member(d.groupId(), d.memberId());
    Session session = sessions.get(who);
    int epoch = d.shareSessionEpoch();
    if (epoch == 0) {
      return CompletableFuture.completedFuture(resp.setErrorCode(Errors.INVALID_SHARE_SESSION_EPOCH.code())
          .setErrorMessage("ShareAcknowledge cannot open a share session (epoch 0)"));
    }
    Errors e = checkEpoch(session, epoch);
    if (e != Errors.NONE) {
      return CompletableFuture.completedFuture(resp.setErrorCode(e.code()));
    }
    session.lastUsedMs = time.milliseconds();
    if (epoch != -1) {
      session.epoch = epoch + 1 == Integer.MAX_VALUE ? 1 : epoch + 1;
    }
    List<CompletableFuture<Void>> waits = new ArrayList<>();
    for (ShareAcknowledgeRequestData.AcknowledgeTopic t : d.topics()) {
      ShareAcknowledgeResponseData.ShareAcknowledgeTopicResponse tr = new ShareAcknowledgeResponseData.ShareAcknowledgeTopicResponse()
          .setTopicId(t.topicId());
      resp.responses().add(tr);
      for (ShareAcknowledgeRequestData.AcknowledgePartition p : t.partitions()) {
        TopicIdPartition tip = new TopicIdPartition(t.topicId(), p.partitionIndex());
        ShareAcknowledgeResponseData.PartitionData pd = new ShareAcknowledgeResponseData.PartitionData().setPartitionIndex(p.partitionIndex());
        leaderOf(tip).ifPresent(l -> pd.currentLeader().setLeaderId(l.leader()).setLeaderEpoch(l.leaderEpoch()));
        tr.partitions().add(pd);
        List<SharePartition.Ack> batches = p.acknowledgementBatches().stream()
            .map(b -> new SharePartition.Ack(b.firstOffset(), b.lastOffset(), b.acknowledgeTypes())).toList();
        waits.add(acknowledge(who, tip, batches).thenAccept(err -> pd.setErrorCode(err.error().code()).setErrorMessage(err.message())));
      }
    }
    int lockMs = (int) limits(d.groupId()).lockDurationMs();
    CompletableFuture<Void> all = CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new));
    CompletableFuture<Void> done = epoch == -1 ? all.thenComposeAsync(x -> closeSession(who), owner) : all;
    return done.thenApply(x -> version >= 2 ? resp.setAcquisitionLockTimeoutMs(lockMs) : resp);
  }

  record AckError(Errors error, String message) {}

  /** Applies a member's acknowledgement batches to one share partition; durable before it completes. */
  private CompletableFuture<AckError> acknowledge(Member who, TopicIdPartition tip, List<SharePartition.Ack> batches) {
    Optional<TopicInfo> topic = registry.topic(tip.topicId());
    if (topic.isEmpty() || tip.partition() < 0 || tip.partition() >= topic.get().partitions().size()) {
      return CompletableFuture.completedFuture(new AckError(topic.isEmpty() ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION, null));
    }
    ShareKey key = new ShareKey(who.group(), tip.topicId(), tip.partition());
    return held(key, new TopicPartition(topic.get().name(), tip.partition())).thenComposeAsync(h -> {
      Errors result = h.share().acknowledge(who.memberId(), batches, time.milliseconds(), limits(who.group()));
      if (result != Errors.NONE) {
        return CompletableFuture.completedFuture(new AckError(result, result == Errors.INVALID_REQUEST ? "malformed acknowledgement batch"
            : "some acknowledged records are not acquired by member " + who.memberId() + " (lock expired, or delivered elsewhere)"));
      }
      armTimer(key, h.share().nextLockDeadlineMs());
      return persist(key, h).thenApply(x -> new AckError(Errors.NONE, null));
    }, owner).exceptionally(e -> new AckError(ErrorMapping.toErrors(e), ErrorMapping.message(e)));
  }

  /** Closes a session: what the member still holds in its partitions becomes available again. */
  private CompletableFuture<Void> closeSession(Member who) {
    Session s = sessions.remove(who);
    if (s == null) {
      return CompletableFuture.completedFuture(null);
    }
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (TopicIdPartition tip : s.partitions) {
      ShareKey key = new ShareKey(who.group(), tip.topicId(), tip.partition());
      Held h = shares.get(key);
      if (h != null && h.share().releaseMember(who.memberId(), limits(who.group()))) {
        writes.add(persist(key, h).exceptionally(e -> null));
      }
    }
    return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new));
  }

  /** A member left its group (or was removed): its sessions close and its records are released. */
  public void memberLeft(String group, String memberId) {
    owner.execute(() -> {
      closeSession(new Member(group, memberId));
      shares.forEach((key, h) -> {
        if (key.group().equals(group) && h.share().releaseMember(memberId, limits(group))) {
          persist(key, h);
        }
      });
    });
  }

  // ---------------------------------------------------------------- share partitions: load, persist, forget

  /** The share partition of {@code key} held here, loading or initialising it first. Owner thread. */
  private CompletableFuture<Held> held(ShareKey key, TopicPartition tp) {
    Optional<PartitionLog> data = partitions.get(tp);
    if (data.isEmpty()) {
      return CompletableFuture.failedFuture(Errors.NOT_LEADER_OR_FOLLOWER.exception("partition " + tp + " is not led by this broker"));
    }
    Held h = shares.get(key);
    if (h != null && h.data() == data.get()) {
      return CompletableFuture.completedFuture(h);
    }
    if (h != null) {
      shares.remove(key); // the partition reopened: its state is reloaded from what is durable
    }
    CompletableFuture<Held> pending = loading.get(key);
    if (pending != null) {
      return pending;
    }
    PartitionLog log = data.get();
    CompletableFuture<Held> f = state.read(key, log.leaderEpoch()).thenComposeAsync(stored -> {
      if (partitions.get(tp).orElse(null) != log) {
        return CompletableFuture.failedFuture(Errors.NOT_LEADER_OR_FOLLOWER.exception("partition " + tp + " moved while its share state loaded"));
      }
      if (stored != null && stored.snapshot() != null) {
        Held restored = new Held(SharePartition.restore(stored.snapshot()), log, stored.stateEpoch());
        shares.put(key, restored);
        return CompletableFuture.completedFuture(restored);
      }
      int epoch = stored == null ? 1 : stored.stateEpoch() + 1;
      return resetOffset(key.group(), log).thenComposeAsync(start -> state.initialize(key, epoch, start).thenApplyAsync(x -> {
        Held fresh = new Held(SharePartition.starting(start), log, epoch);
        shares.put(key, fresh);
        return fresh;
      }, owner), owner);
    }, owner).exceptionally(e -> {
      throw clientError(e);
    });
    loading.put(key, f);
    f.whenCompleteAsync((x, e) -> loading.remove(key, f), owner);
    return f;
  }

  /** Where a share partition without state starts, from the group's {@code share.auto.offset.reset} (read fresh). */
  private CompletableFuture<Long> resetOffset(String group, PartitionLog log) {
    return freshGroupConfigs.apply(group).thenComposeAsync(set -> resetOffset(group, log, set), owner);
  }

  private CompletableFuture<Long> resetOffset(String group, PartitionLog log, Map<String, String> set) {
    String reset = configs.effective(set, ShareGroupConfigs.AUTO_OFFSET_RESET).trim();
    LOG.info("share partition of group {} on {} starts by share.auto.offset.reset={} (group configs {})", group, log.topicPartition(), reset, set);
    if (reset.equals("earliest")) {
      return CompletableFuture.completedFuture(log.logStartOffset());
    }
    Duration back = reset.equals("latest") ? null : ShareGroupConfigs.resetDuration(reset);
    if (back == null) {
      return CompletableFuture.completedFuture(log.highWatermark());
    }
    long hw = log.highWatermark();
    return log.offsetForTimestamp(time.milliseconds() - back.toMillis()).thenApply(hit -> hit == null ? hw : hit[0]);
  }

  /**
   * Writes the share partition's state as it is now, after the writes before it; on failure drops
   * it so that the next use reloads what is durable. Owner thread.
   */
  private CompletableFuture<Void> persist(ShareKey key, Held h) {
    SharePartition.Snapshot snapshot = h.share().snapshot();
    CompletableFuture<Void> before = writes.getOrDefault(key, CompletableFuture.completedFuture(null));
    CompletableFuture<Void> write = before.handle((x, e) -> null)
        .thenCompose(x -> state.write(key, h.stateEpoch(), h.data().leaderEpoch(), snapshot))
        .whenCompleteAsync((x, e) -> {
          if (e != null) {
            LOG.warn("share partition {}: state write failed ({}); reloading it from its last durable state at next use", key, e.toString());
            shares.remove(key, h);
          }
        }, owner);
    writes.put(key, write);
    write.whenCompleteAsync((x, e) -> writes.remove(key, write), owner);
    return write.exceptionally(e -> {
      throw clientError(e);
    });
  }

  /**
   * What a client is told when share state cannot be read or written, as Kafka's partition leader
   * tells it: the coordinator is away (LEADER_NOT_AVAILABLE) or this broker's view is fenced
   * (NOT_LEADER_OR_FOLLOWER); both make the client refresh and retry.
   */
  private static RuntimeException clientError(Throwable e) {
    Errors error = ErrorMapping.toErrors(e);
    String message = ErrorMapping.message(e);
    return switch (error) {
      case NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, NETWORK_EXCEPTION, REQUEST_TIMED_OUT,
          BROKER_NOT_AVAILABLE -> Errors.LEADER_NOT_AVAILABLE.exception("share state unavailable: " + message);
      case FENCED_STATE_EPOCH, FENCED_LEADER_EPOCH -> Errors.NOT_LEADER_OR_FOLLOWER.exception("share state fenced: " + message);
      default -> e instanceof RuntimeException r ? r : new java.util.concurrent.CompletionException(e);
    };
  }

  private void armTimer(ShareKey key, long deadlineMs) {
    if (deadlineMs == Long.MAX_VALUE) {
      return;
    }
    Long at = timers.get(key);
    if (at != null && at <= deadlineMs) {
      return;
    }
    timers.put(key, deadlineMs);
    owner.schedule(() -> expire(key, deadlineMs), Math.max(0, deadlineMs - time.milliseconds()) + 1, TimeUnit.MILLISECONDS);
  }

  private void expire(ShareKey key, long armedFor) {
    if (timers.get(key) != null && timers.get(key) == armedFor) {
      timers.remove(key);
    }
    Held h = shares.get(key);
    if (h == null) {
      return;
    }
    if (h.share().expireLocks(time.milliseconds(), limits(key.group()))) {
      persist(key, h);
    }
    armTimer(key, h.share().nextLockDeadlineMs());
  }

  private void forget(PartitionLog closed) {
    shares.entrySet().removeIf(e -> e.getValue().data() == closed);
  }

  private void dropIdleSessions() {
    long now = time.milliseconds();
    Iterator<Map.Entry<Member, Session>> it = sessions.entrySet().iterator();
    List<Member> idle = new ArrayList<>();
    while (it.hasNext()) {
      Map.Entry<Member, Session> e = it.next();
      if (now - e.getValue().lastUsedMs > sessionIdleMs) {
        idle.add(e.getKey());
      }
    }
    idle.forEach(this::closeSession);
  }

  // ---------------------------------------------------------------- offsets (for the group coordinator)

  /** The start offset and lag of a share partition; start -1 when the group has no state for it. */
  public record StartOffset(long startOffset, long lag) {}

  /**
   * SPSO (and lag when the partition is led here) of each asked partition of {@code group}; null
   * asked: every partition of every topic that has state for the group. The state of partitions
   * held here is read from memory, the rest from their share coordinators.
   */
  public CompletableFuture<Map<TopicIdPartition, StartOffset>> startOffsets(String group, List<TopicIdPartition> asked) {
    return CompletableFuture.supplyAsync(() -> {
      List<TopicIdPartition> which = asked != null ? asked : allPartitions(null);
      Map<TopicIdPartition, CompletableFuture<StartOffset>> each = new LinkedHashMap<>();
      for (TopicIdPartition tip : which) {
        ShareKey key = new ShareKey(group, tip.topicId(), tip.partition());
        Held h = shares.get(key);
        CompletableFuture<SharePersister.Summary> summary = h != null
            ? CompletableFuture.completedFuture(new SharePersister.Summary(h.stateEpoch(), h.share().startOffset(), h.share().doneInWindow()))
            : state.summary(key);
        each.put(tip, summary.thenComposeAsync(s -> s == null || s.startOffset() < 0 ? CompletableFuture.completedFuture(new StartOffset(-1, -1))
            : lag(tip, s).thenApply(lag -> new StartOffset(s.startOffset(), lag)), owner));
      }
      return CompletableFuture.allOf(each.values().toArray(CompletableFuture[]::new)).thenApply(x -> {
        Map<TopicIdPartition, StartOffset> out = new LinkedHashMap<>();
        each.forEach((tip, f) -> {
          if (asked != null || f.join().startOffset() >= 0) {
            out.put(tip, f.join());
          }
        });
        return out;
      });
    }, owner).thenCompose(f -> f);
  }

  /**
   * The lag of a share partition: the records from its start offset to the data partition's high
   * watermark not done yet. The high watermark is read here when the partition is led here, else
   * asked of its leader (ListOffsets, latest); -1 when it cannot be known. Owner thread.
   */
  private CompletableFuture<Long> lag(TopicIdPartition tip, SharePersister.Summary s) {
    Optional<TopicInfo> topic = registry.topic(tip.topicId());
    Optional<PartitionLog> log = topic.flatMap(ti -> partitions.get(new TopicPartition(ti.name(), tip.partition())));
    if (log.isPresent()) {
      long start = Math.max(s.startOffset(), log.get().logStartOffset());
      return CompletableFuture.completedFuture(Math.max(0, log.get().highWatermark() - start - s.done()));
    }
    Optional<TopicInfo.PartitionInfo> p = leaderOf(tip);
    if (topic.isEmpty() || p.isEmpty() || p.get().leader() < 0) {
      return CompletableFuture.completedFuture(-1L);
    }
    org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic t = new org.apache.kafka.common.message.ListOffsetsRequestData
        .ListOffsetsTopic().setName(topic.get().name());
    t.partitions().add(new org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(tip.partition())
        .setTimestamp(org.apache.kafka.common.requests.ListOffsetsRequest.LATEST_TIMESTAMP));
    return network.send(p.get().leader(), org.apache.kafka.common.requests.ListOffsetsRequest.Builder.forConsumer(false,
        org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED).setTargetTimes(List.of(t))).handle((r, e) -> {
          if (e != null) {
            return -1L;
          }
          var rp = ((org.apache.kafka.common.requests.ListOffsetsResponse) r).data().topics().get(0).partitions().get(0);
          return rp.errorCode() != 0 ? -1L : Math.max(0, rp.offset() - s.startOffset() - s.done());
        });
  }

  /** Every partition of the given topics (null: of every non-internal topic). */
  private List<TopicIdPartition> allPartitions(java.util.Set<Uuid> topicIds) {
    List<TopicIdPartition> out = new ArrayList<>();
    for (TopicInfo t : registry.state().topics().values()) {
      if (topicIds == null ? !t.internal() : topicIds.contains(t.id())) {
        for (int p = 0; p < t.partitions().size(); p++) {
          out.add(new TopicIdPartition(t.id(), p));
        }
      }
    }
    return out;
  }

  /**
   * Sets the SPSO of share partitions (the group is empty): each is re-initialised at its
   * coordinator under a new state epoch, which fences the leader that held the old state; durable
   * before it completes.
   */
  public CompletableFuture<Map<TopicIdPartition, Errors>> alterStartOffsets(String group, Map<TopicIdPartition, Long> offsets) {
    return CompletableFuture.supplyAsync(() -> {
      Map<TopicIdPartition, CompletableFuture<Errors>> each = new LinkedHashMap<>();
      offsets.forEach((tip, offset) -> {
        ShareKey key = new ShareKey(group, tip.topicId(), tip.partition());
        shares.remove(key);
        each.put(tip, state.summary(key).thenCompose(s -> state.initialize(key, s == null ? 1 : s.stateEpoch() + 1, offset))
            .handle((x, e) -> e == null ? Errors.NONE : ErrorMapping.toErrors(e)));
      });
      return CompletableFuture.allOf(each.values().toArray(CompletableFuture[]::new)).thenApply(x -> {
        Map<TopicIdPartition, Errors> out = new LinkedHashMap<>();
        each.forEach((tip, f) -> out.put(tip, f.join()));
        return out;
      });
    }, owner).thenCompose(f -> f);
  }

  /** Deletes the state of the group's share partitions of the given topics (null: all); durable before it completes. */
  public CompletableFuture<Void> deleteState(String group, java.util.Set<Uuid> topicIds) {
    return CompletableFuture.supplyAsync(() -> {
      List<CompletableFuture<Void>> deletes = new ArrayList<>();
      for (TopicIdPartition tip : allPartitions(topicIds)) {
        ShareKey key = new ShareKey(group, tip.topicId(), tip.partition());
        shares.remove(key);
        deletes.add(state.summary(key).thenCompose(s -> s == null || s.startOffset() < 0 ? CompletableFuture.completedFuture(null)
            : state.delete(key)));
      }
      return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new));
    }, owner).thenCompose(f -> f);
  }

  @Override
  public void close() {
    owner.shutdownNow();
  }
}
