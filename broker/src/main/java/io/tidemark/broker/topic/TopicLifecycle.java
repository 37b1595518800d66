package io.tidemark.broker.topic;

import io.tidemark.broker.partition.PartitionLocation;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.stream.api.StreamStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates, grows, reconfigures and deletes topics: creates each partition's data and meta
 * streams, places each partition's leadership on a live broker (round robin from a rotating
 * start), records the topic in the {@link TopicRegistry} (durable first), then opens the
 * {@link PartitionLog}s led here into {@link Partitions}. At start it reopens every partition led
 * here with a bumped leader epoch (a restart is a leadership change); afterwards
 * {@link #reconcile} follows changes made by other brokers and by the controller (moves): it
 * closes open partitions now led elsewhere (stop appends, upload their data, close their streams) and
 * those led here at a newer leader epoch than they were opened at (led elsewhere and back before a
 * pass looked: they open again at the new epoch, which clients take from the metadata),
 * opens partitions newly led here once their previous holder closed their streams (until then
 * the controller refuses the open; the lifecycle looks again on every stream change of the local
 * image, and after a backoff of {@value #MIN_OPEN_BACKOFF_MS}–{@value #MAX_OPEN_BACKOFF_MS} ms),
 * and deletes the streams of open partitions whose topic was deleted. A pass only starts the
 * closes and opens of single partitions, which then run side by side (a failed-over broker's
 * partitions open as their streams close, not one batch after another); a close or open that
 * fails (a partition that cannot open while storage is unreachable) is looked at again on its own
 * with backoff, not only at the next change, so no partition led here stays unopened while the
 * process lives.
 *
 * <p>Threading: operations run one at a time on this lifecycle's own thread, each chained after
 * the previous one (a queue of at most {@code maxPendingOperations}; beyond it callers get an
 * error at once), so a blocking metadata write never runs on a network or storage thread; the
 * partition transitions a reconcile pass starts are the exception (their ends come back to this
 * thread, and {@link #closeAll} waits for them). Reads go straight to the registry.
 */
public final class TopicLifecycle {

  private static final Logger log = LoggerFactory.getLogger(TopicLifecycle.class);
  private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]+");
  public static final int MAX_NAME_LENGTH = 249;
  static final long MIN_OPEN_BACKOFF_MS = 20;
  static final long MAX_OPEN_BACKOFF_MS = 1_000;
  static final long RECONCILE_RETRY_MIN_MS = 500;
  static final long RECONCILE_RETRY_MAX_MS = 30_000;

  private final TopicRegistry registry;
  private final TopicConfigs configs;
  private final StreamStore store;
  private final Partitions partitions;
  private final Time time;
  private final PartitionLog.AppendListener listener;
  private final int maxPartitions;
  private final int maxPendingOperations;
  private final int nodeId;
  private final Supplier<List<Integer>> liveBrokers;
  private final ScheduledExecutorService executor;
  private final AtomicBoolean reconcileQueued = new AtomicBoolean();
  /** Pause before the next retry of a failed reconcile pass (doubling, reset by a pass that succeeds). */
  private volatile long reconcileRetryMs = RECONCILE_RETRY_MIN_MS;
  /** Pause before looking again after a failed close or open (doubling, reset by one that succeeds); lifecycle thread. */
  private long transitionRetryMs = RECONCILE_RETRY_MIN_MS;
  private int placementStart;
  /** Closes and opens of single partitions in flight (lifecycle thread; see {@link #reconcileNow}). */
  private final Map<TopicPartition, CompletableFuture<?>> transitions = new HashMap<>();
  /** Partitions led here waiting for their previous holder to close their streams, since when (lifecycle thread; for the log). */
  private final Map<TopicPartition, Long> waitingSince = new HashMap<>();
  /** Wait before the next attempt to open partitions led here that could not open yet; owned by the lifecycle thread. */
  private long openBackoffMs = MIN_OPEN_BACKOFF_MS;
  private volatile boolean started;
  private CompletableFuture<?> tail = CompletableFuture.completedFuture(null);
  private int pending;

  /** A lifecycle of one node alone (node 0 leads everything). */
  public TopicLifecycle(TopicRegistry registry, TopicConfigs configs, StreamStore store, Partitions partitions, Time time,
      PartitionLog.AppendListener listener, int maxPartitions, int maxPendingOperations) {
    this(registry, configs, store, partitions, time, listener, maxPartitions, maxPendingOperations, 0, () -> List.of(0));
  }

  /**
   * @param nodeId this broker's node id
   * @param liveBrokers ids of the brokers new partitions may be placed on (this one included)
   */
  public TopicLifecycle(TopicRegistry registry, TopicConfigs configs, StreamStore store, Partitions partitions, Time time,
      PartitionLog.AppendListener listener, int maxPartitions, int maxPendingOperations, int nodeId,
      Supplier<List<Integer>> liveBrokers) {
    this.nodeId = nodeId;
    this.liveBrokers = liveBrokers;
    this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "topic-lifecycle-" + nodeId);
      t.setDaemon(true);
      return t;
    });
    this.registry = registry;
    this.configs = configs;
    this.store = store;
    this.partitions = partitions;
    this.time = time;
    this.listener = listener;
    this.maxPartitions = maxPartitions;
    this.maxPendingOperations = maxPendingOperations;
  }

  public TopicConfigs configs() {
    return configs;
  }

  public TopicRegistry registry() {
    return registry;
  }

  private synchronized <T> CompletableFuture<T> serially(Supplier<CompletableFuture<T>> op) {
    if (pending >= maxPendingOperations) {
      return CompletableFuture.failedFuture(new IllegalStateException(
          "too many topic operations queued (" + pending + "); retry later"));
    }
    pending++;
    CompletableFuture<T> result = tail.handle((x, e) -> null).thenComposeAsync(x -> {
      try {
        return op.get();
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }, executor);
    tail = result.whenComplete((x, e) -> {
      synchronized (this) {
        pending--;
      }
    });
    return result;
  }

  /** Runs blocking {@code work} (a metadata write) on the lifecycle's thread, after the operations queued before it. */
  public <T> CompletableFuture<T> submit(Supplier<T> work) {
    return serially(() -> CompletableFuture.completedFuture(work.get()));
  }

  /** Checks a topic name as Kafka does; throws {@link TopicException} INVALID_NAME. */
  public static void validateName(String name) {
    if (name == null || name.isEmpty()) {
      throw new TopicException(TopicException.Outcome.INVALID_NAME, "topic name is empty");
    }
    if (name.equals(".") || name.equals("..")) {
      throw new TopicException(TopicException.Outcome.INVALID_NAME, "topic name cannot be '.' or '..'");
    }
    if (name.length() > MAX_NAME_LENGTH) {
      throw new TopicException(TopicException.Outcome.INVALID_NAME, "topic name is longer than " + MAX_NAME_LENGTH + " characters");
    }
    if (!LEGAL.matcher(name).matches()) {
      throw new TopicException(TopicException.Outcome.INVALID_NAME,
          "topic name '" + name + "' has characters other than ASCII letters, digits, '.', '_' and '-'");
    }
  }

  /** Validates a creation without doing it (also used for validateOnly). */
  public void checkCreate(String name, int partitionCount, Map<String, String> topicConfigs) {
    validateName(name);
    if (registry.topic(name).isPresent()) {
      throw new TopicException(TopicException.Outcome.ALREADY_EXISTS, "topic '" + name + "' already exists");
    }
    String collision = name.replace('.', '_');
    for (String existing : registry.state().topics().keySet()) {
      if (existing.replace('.', '_').equals(collision)) {
        throw new TopicException(TopicException.Outcome.INVALID_NAME,
            "topic '" + name + "' collides with existing topic '" + existing + "' ('.' and '_' are treated alike in metric names)");
      }
    }
    if (partitionCount < 1 || partitionCount > maxPartitions) {
      throw new TopicException(TopicException.Outcome.INVALID_PARTITIONS,
          "number of partitions must be between 1 and " + maxPartitions + ", was " + partitionCount);
    }
    configs.validate(topicConfigs);
  }

  /** Creates a topic with its partitions placed over the live brokers, and opens those led here. */
  public CompletableFuture<TopicInfo> create(String name, int partitionCount, Map<String, String> topicConfigs, boolean internal) {
    return create(name, partitionCount, topicConfigs, internal, false);
  }

  /**
   * Creates a topic and opens the partitions led here: every partition when {@code here} (a topic
   * an in-process service needs), else placed over the live brokers.
   */
  public CompletableFuture<TopicInfo> create(String name, int partitionCount, Map<String, String> topicConfigs, boolean internal,
      boolean here) {
    return serially(() -> {
      checkCreate(name, partitionCount, topicConfigs);
      return createPartitions(name, 0, partitionCount).thenComposeAsync(created -> {
        List<TopicInfo.PartitionInfo> parts = here ? created.stream().map(p -> p.ledBy(nodeId, 0)).toList() : place(created);
        TopicInfo topic = new TopicInfo(name, newTopicId(), internal, topicConfigs, parts);
        registry.update(s -> {
          // another broker may have created the name while the streams were made: never replace its topic
          if (s.topics().containsKey(name)) {
            throw new TopicException(TopicException.Outcome.ALREADY_EXISTS, "topic '" + name + "' already exists");
          }
          Map<String, TopicInfo> topics = new LinkedHashMap<>(s.topics());
          topics.put(name, topic);
          return new RegistryState(s.clusterId(), s.nextProducerIdBlock(), topics);
        });
        log.info("created topic {} ({} partitions, id {})", name, partitionCount, topic.id());
        return openPartitions(topic, ledHere(parts)).thenApply(v -> topic);
      }, executor);
    });
  }

  /** Leaders for new partitions: the live brokers in id order, round robin from a start that rotates per call. */
  private List<TopicInfo.PartitionInfo> place(List<TopicInfo.PartitionInfo> created) {
    List<Integer> live = liveBrokers.get();
    if (live.isEmpty()) {
      live = List.of(nodeId);
    }
    int start = Math.floorMod(placementStart++, live.size());
    List<TopicInfo.PartitionInfo> out = new ArrayList<>();
    for (int i = 0; i < created.size(); i++) {
      out.add(created.get(i).ledBy(live.get((start + i) % live.size()), 0));
    }
    return out;
  }

  /** Partitions led here whose streams exist (another broker may be creating the topic right now). */
  private List<TopicInfo.PartitionInfo> ledHere(List<TopicInfo.PartitionInfo> parts) {
    return parts.stream().filter(p -> p.leader() == nodeId && placed(p)).toList();
  }

  private static boolean placed(TopicInfo.PartitionInfo p) {
    return p.dataStreamId() >= 0 && p.metaStreamId() >= 0;
  }

  private Uuid newTopicId() {
    Uuid id;
    do {
      id = Uuid.randomUuid();
    } while (registry.topic(id).isPresent());
    return id;
  }

  private CompletableFuture<List<TopicInfo.PartitionInfo>> createPartitions(String topic, int from, int to) {
    List<CompletableFuture<TopicInfo.PartitionInfo>> futures = new ArrayList<>();
    for (int p = from; p < to; p++) {
      int partition = p;
      Map<String, String> tags = Map.of("topic", topic, "partition", Integer.toString(p));
      CompletableFuture<Long> dataId = store.createStream(withKind(tags, "data"));
      CompletableFuture<Long> metaId = store.createStream(withKind(tags, "meta"));
      futures.add(dataId.thenCombine(metaId, (d, m) -> new TopicInfo.PartitionInfo(partition, d, m, 0)));
    }
    return CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new))
        .thenApply(v -> futures.stream().map(CompletableFuture::join).toList());
  }

  private static Map<String, String> withKind(Map<String, String> tags, String kind) {
    Map<String, String> m = new HashMap<>(tags);
    m.put("kind", kind);
    return m;
  }

  private CompletableFuture<Void> openPartitions(TopicInfo topic, List<TopicInfo.PartitionInfo> parts) {
    List<CompletableFuture<PartitionLog>> futures = new ArrayList<>();
    for (TopicInfo.PartitionInfo p : parts) {
      PartitionLocation loc = new PartitionLocation(new TopicPartition(topic.name(), p.partition()), topic.id(), p.dataStreamId(),
          p.metaStreamId());
      partitions.opening(loc.topicPartition()); // a produce meanwhile waits a little instead of NOT_LEADER_OR_FOLLOWER
      CompletableFuture<PartitionLog> opened;
      try {
        opened = PartitionLog.open(store, loc, p.leaderEpoch(), configs.logSettings(topic.configs()), time, listener);
      } catch (RuntimeException e) {
        opened = CompletableFuture.failedFuture(e);
      }
      futures.add(opened.thenApply(logp -> {
        partitions.put(logp);
        return logp;
      }).whenComplete((logp, error) -> partitions.openEnded(loc.topicPartition())));
    }
    return CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new));
  }

  /** Adds partitions up to {@code newCount}. */
  public CompletableFuture<TopicInfo> addPartitions(String name, int newCount, boolean validateOnly) {
    return serially(() -> {
      TopicInfo topic = registry.topic(name).orElseThrow(() -> unknown(name));
      int current = topic.partitions().size();
      if (newCount <= current) {
        throw new TopicException(TopicException.Outcome.INVALID_PARTITIONS,
            "topic '" + name + "' has " + current + " partitions; the new count " + newCount + " must be larger");
      }
      if (newCount > maxPartitions) {
        throw new TopicException(TopicException.Outcome.INVALID_PARTITIONS, "at most " + maxPartitions + " partitions per topic");
      }
      if (validateOnly) {
        return CompletableFuture.completedFuture(topic);
      }
      return createPartitions(name, current, newCount).thenComposeAsync(created -> {
        List<TopicInfo.PartitionInfo> added = place(created);
        List<TopicInfo.PartitionInfo> all = new ArrayList<>(topic.partitions());
        all.addAll(added);
        TopicInfo grown = topic.withPartitions(all);
        replaceTopic(grown);
        return openPartitions(grown, ledHere(added)).thenApply(v -> grown);
      }, executor);
    });
  }

  /** Replaces a topic's configs (already validated by the caller with {@link TopicConfigs#validate}). */
  public CompletableFuture<TopicInfo> replaceConfigs(String name, Map<String, String> newConfigs) {
    return serially(() -> {
      TopicInfo topic = registry.topic(name).orElseThrow(() -> unknown(name));
      configs.validate(newConfigs);
      TopicInfo changed = topic.withConfigs(newConfigs);
      replaceTopic(changed);
      for (TopicInfo.PartitionInfo p : changed.partitions()) {
        partitions.get(new TopicPartition(name, p.partition())).ifPresent(l -> l.updateSettings(configs.logSettings(newConfigs)));
      }
      return CompletableFuture.completedFuture(changed);
    });
  }

  /** Deletes a topic: forgets it, then trims and closes its streams. Its id is never reused. */
  public CompletableFuture<Void> delete(String name) {
    return serially(() -> {
      TopicInfo topic = registry.topic(name).orElseThrow(() -> unknown(name));
      if (topic.internal()) {
        throw new TopicException(TopicException.Outcome.INTERNAL_TOPIC, "internal topic '" + name + "' cannot be deleted");
      }
      registry.update(s -> {
        Map<String, TopicInfo> topics = new LinkedHashMap<>(s.topics());
        topics.remove(name);
        return new RegistryState(s.clusterId(), s.nextProducerIdBlock(), topics);
      });
      List<CompletableFuture<Void>> closing = new ArrayList<>();
      for (TopicInfo.PartitionInfo p : topic.partitions()) {
        partitions.remove(new TopicPartition(name, p.partition())).ifPresent(l -> closing.add(l.deleteAndClose()));
      }
      log.info("deleted topic {} (id {})", name, topic.id());
      return CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new));
    });
  }

  /**
   * Reopens every partition led here (or not assigned yet, which this node takes) with its leader
   * epoch bumped (start-up); then {@link #reconcile} follows other brokers' changes.
   */
  public CompletableFuture<Void> openAll() {
    return serially(() -> {
      RegistryState bumped = registry.update(s -> {
        Map<String, TopicInfo> topics = new LinkedHashMap<>();
        s.topics().forEach((n, t) -> topics.put(n, t.withPartitions(t.partitions().stream()
            .map(p -> p.leader() == nodeId || (p.leader() < 0 && placed(p)) ? p.ledBy(nodeId, p.leaderEpoch() + 1) : p)
            .toList())));
        return new RegistryState(s.clusterId(), s.nextProducerIdBlock(), topics);
      });
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (TopicInfo t : bumped.topics().values()) {
        all.add(openPartitions(t, ledHere(t.partitions())));
      }
      return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenRun(() -> started = true);
    });
  }

  /**
   * Queues one pass that brings the open partitions in line with the agreed state (after
   * {@link #openAll}; a pass already queued covers this call): opens partitions led here that
   * are not open, closes open ones now led elsewhere, deletes the streams of open partitions whose
   * topic was deleted, and applies changed topic configs. Callable from any thread; never blocks.
   */
  public void reconcile() {
    if (!started || !reconcileQueued.compareAndSet(false, true)) {
      return;
    }
    serially(() -> {
      reconcileQueued.set(false);
      return reconcileNow();
    }).whenComplete((v, e) -> {
      if (e == null) {
        reconcileRetryMs = RECONCILE_RETRY_MIN_MS;
        return;
      }
      long delayMs = reconcileRetryMs;
      reconcileRetryMs = Math.min(RECONCILE_RETRY_MAX_MS, delayMs * 2);
      log.warn("following the cluster's partition assignments failed; retrying in {} ms: {}", delayMs, e.toString());
      try {
        executor.schedule(this::reconcile, delayMs, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException stopped) {
        // shut down meanwhile
      }
    });
  }

  /**
   * One pass (on the lifecycle thread). It only starts the closes and opens it decides on and
   * returns: a partition's close or open runs on its own, tracked in {@link #transitions} so that no
   * later pass starts another transition of the same partition meanwhile, and queues a new pass
   * when it ends (the assignment may have changed since). So a slow close or open never holds up
   * the others, nor the next pass that finds more partitions ready to open (as a failed-over
   * broker's streams close one after another).
   */
  private CompletableFuture<Void> reconcileNow() {
    RegistryState state = registry.state();
    for (PartitionLog open : partitions.all()) {
      TopicPartition tp = open.topicPartition();
      TopicInfo topic = state.topics().get(tp.topic());
      if (topic == null || !topic.id().equals(open.location().topicId())) {
        partitions.remove(tp);
        log.info("partition {} was deleted by another broker; deleting its streams", tp);
        track(tp, open.deleteAndClose(), "deleting");
      } else if (tp.partition() >= topic.partitions().size() || topic.partitions().get(tp.partition()).leader() != nodeId) {
        partitions.remove(tp);
        log.info("partition {} is now led by another broker; closing it here", tp);
        track(tp, open.close(), "closing");
      } else if (topic.partitions().get(tp.partition()).leaderEpoch() > open.leaderEpoch()) {
        // led here again at a newer epoch, the change away never seen (a move cancelled, or a failover and a move
        // back, applied before this pass): clients follow the newer epoch, which this open log would answer with
        // UNKNOWN_LEADER_EPOCH for ever; it closes and opens again at the new epoch like any partition led here
        partitions.remove(tp);
        log.info("partition {} is led here at leader epoch {} but open at {}; closing it and reopening it at the new epoch",
            tp, topic.partitions().get(tp.partition()).leaderEpoch(), open.leaderEpoch());
        track(tp, open.close(), "closing (to reopen at a newer leader epoch)");
      } else {
        open.updateSettings(configs.logSettings(topic.configs()));
      }
    }
    boolean waiting = false;
    for (TopicInfo topic : state.topics().values()) {
      List<TopicInfo.PartitionInfo> missing = topic.partitions().stream()
          .filter(p -> p.leader() == nodeId && p.dataStreamId() >= 0)
          .filter(p -> {
            TopicPartition tp = new TopicPartition(topic.name(), p.partition());
            return partitions.get(tp).isEmpty() && !transitions.containsKey(tp);
          })
          .toList();
      // a partition moving here opens once its previous holder closed its streams (flushing its data)
      List<TopicInfo.PartitionInfo> ready = new ArrayList<>();
      long now = time.milliseconds();
      for (TopicInfo.PartitionInfo p : missing) {
        TopicPartition tp = new TopicPartition(topic.name(), p.partition());
        if (registry.metadata().heldElsewhere(p.dataStreamId(), p.metaStreamId())) {
          waitingSince.putIfAbsent(tp, now);
          waiting = true;
        } else {
          ready.add(p);
        }
      }
      if (!ready.isEmpty()) {
        long waitedMs = 0;
        for (TopicInfo.PartitionInfo p : ready) {
          Long since = waitingSince.remove(new TopicPartition(topic.name(), p.partition()));
          waitedMs = Math.max(waitedMs, since == null ? 0 : now - since);
        }
        log.info("opening {} partitions of {} newly led here (after waiting up to {} ms for their previous holder to close"
            + " their streams)", ready.size(), topic.name(), waitedMs);
        for (TopicInfo.PartitionInfo p : ready) {
          track(new TopicPartition(topic.name(), p.partition()), openPartitions(topic, List.of(p)), "opening");
        }
      }
    }
    waitingSince.keySet().removeIf(tp -> {
      TopicInfo t = state.topics().get(tp.topic());
      return t == null || tp.partition() >= t.partitions().size() || t.partitions().get(tp.partition()).leader() != nodeId;
    });
    registry.metadata().awaitingStreams(waiting);
    if (waiting) {
      lookAgainSoon();
    } else {
      openBackoffMs = MIN_OPEN_BACKOFF_MS;
    }
    return CompletableFuture.completedFuture(null);
  }

  /**
   * Records a partition's close or open in flight (lifecycle thread); when it ends it leaves
   * {@link #transitions} and a new pass is queued, after a backoff if it failed.
   */
  private void track(TopicPartition tp, CompletableFuture<?> transition, String what) {
    transitions.put(tp, transition);
    transition.whenCompleteAsync((v, e) -> {
      transitions.remove(tp, transition);
      if (e == null) {
        transitionRetryMs = RECONCILE_RETRY_MIN_MS;
        reconcile();
        return;
      }
      long delayMs = transitionRetryMs;
      transitionRetryMs = Math.min(RECONCILE_RETRY_MAX_MS, delayMs * 2);
      log.warn("{} partition {} failed; looking again in {} ms: {}", what, tp, delayMs, e.toString());
      try {
        executor.schedule(this::reconcile, delayMs, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException stopped) {
        // shut down meanwhile
      }
    }, executor);
  }

  /**
   * Queues another reconcile after a short, growing backoff: a partition led here waits for its
   * previous holder to close its streams, which is no topic change that would call {@link #reconcile}.
   */
  private void lookAgainSoon() {
    long delay = openBackoffMs;
    openBackoffMs = Math.min(MAX_OPEN_BACKOFF_MS, openBackoffMs * 2);
    try {
      executor.schedule(this::reconcile, delay, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException stopped) {
      // shut down meanwhile
    }
  }

  /** Closes every open partition (writing their last snapshots); no reconcile runs afterwards. */
  public CompletableFuture<Void> closeAll() {
    started = false;
    return serially(() -> CompletableFuture.allOf(transitions.values().toArray(CompletableFuture[]::new))
        .handle((v, e) -> null).thenComposeAsync(x -> {
      // the transitions in flight ended first: a partition they opened is closed below
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (PartitionLog p : partitions.all()) {
        partitions.remove(p.topicPartition());
        all.add(p.close());
      }
      return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }, executor));
  }

  /** Stops the lifecycle's thread (after {@link #closeAll}). */
  public void shutdown() {
    executor.shutdown();
  }

  private void replaceTopic(TopicInfo topic) {
    registry.update(s -> {
      TopicInfo current = s.topics().get(topic.name());
      if (current == null || !current.id().equals(topic.id())) {
        throw unknown(topic.name()); // deleted (or deleted and re-created) by another broker meanwhile
      }
      Map<String, TopicInfo> topics = new LinkedHashMap<>(s.topics());
      topics.put(topic.name(), topic);
      return new RegistryState(s.clusterId(), s.nextProducerIdBlock(), topics);
    });
  }

  private static TopicException unknown(String name) {
    return new TopicException(TopicException.Outcome.UNKNOWN_TOPIC, "topic '" + name + "' does not exist");
  }
}
