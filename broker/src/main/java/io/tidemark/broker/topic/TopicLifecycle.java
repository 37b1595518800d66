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
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates, grows, reconfigures and deletes topics: creates each partition's data and meta
 * streams, records the topic in the {@link TopicRegistry} (durable first), then opens its
 * {@link PartitionLog}s into {@link Partitions}. At start it reopens every known partition with a
 * bumped leader epoch (a restart is a leadership change).
 *
 * <p>Threading: operations run one at a time, each chained after the previous one (a queue of at
 * most {@code maxPendingOperations}; beyond it callers get an error at once). Reads go straight
 * to the registry.
 */
public final class TopicLifecycle {

  private static final Logger log = LoggerFactory.getLogger(TopicLifecycle.class);
  private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]+");
  public static final int MAX_NAME_LENGTH = 249;

  private final TopicRegistry registry;
  private final TopicConfigs configs;
  private final StreamStore store;
  private final Partitions partitions;
  private final Time time;
  private final PartitionLog.AppendListener listener;
  private final int maxPartitions;
  private final int maxPendingOperations;
  private CompletableFuture<?> tail = CompletableFuture.completedFuture(null);
  private int pending;

  public TopicLifecycle(TopicRegistry registry, TopicConfigs configs, StreamStore store, Partitions partitions, Time time,
      PartitionLog.AppendListener listener, int maxPartitions, int maxPendingOperations) {
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
    CompletableFuture<T> result = tail.handle((x, e) -> null).thenCompose(x -> {
      try {
        return op.get();
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    });
    tail = result.whenComplete((x, e) -> {
      synchronized (this) {
        pending--;
      }
    });
    return result;
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

  /** Creates a topic and opens its partitions here. */
  public CompletableFuture<TopicInfo> create(String name, int partitionCount, Map<String, String> topicConfigs, boolean internal) {
    return serially(() -> {
      checkCreate(name, partitionCount, topicConfigs);
      return createPartitions(name, 0, partitionCount).thenCompose(parts -> {
        TopicInfo topic = new TopicInfo(name, newTopicId(), internal, topicConfigs, parts);
        registry.update(s -> {
          Map<String, TopicInfo> topics = new LinkedHashMap<>(s.topics());
          topics.put(name, topic);
          return new RegistryState(s.clusterId(), s.nextProducerIdBlock(), topics);
        });
        log.info("created topic {} ({} partitions, id {})", name, partitionCount, topic.id());
        return openPartitions(topic, parts).thenApply(v -> topic);
      });
    });
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
      futures.add(PartitionLog.open(store, loc, p.leaderEpoch(), configs.logSettings(topic.configs()), time, listener)
          .thenApply(logp -> {
            partitions.put(logp);
            return logp;
          }));
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
      return createPartitions(name, current, newCount).thenCompose(added -> {
        List<TopicInfo.PartitionInfo> all = new ArrayList<>(topic.partitions());
        all.addAll(added);
        TopicInfo grown = topic.withPartitions(all);
        replaceTopic(grown);
        return openPartitions(grown, added).thenApply(v -> grown);
      });
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

  /** Reopens every registered partition here with its leader epoch bumped (start-up). */
  public CompletableFuture<Void> openAll() {
    return serially(() -> {
      RegistryState bumped = registry.update(s -> {
        Map<String, TopicInfo> topics = new LinkedHashMap<>();
        s.topics().forEach((n, t) -> topics.put(n, t.withPartitions(t.partitions().stream()
            .map(p -> new TopicInfo.PartitionInfo(p.partition(), p.dataStreamId(), p.metaStreamId(), p.leaderEpoch() + 1)).toList())));
        return new RegistryState(s.clusterId(), s.nextProducerIdBlock(), topics);
      });
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (TopicInfo t : bumped.topics().values()) {
        all.add(openPartitions(t, t.partitions()));
      }
      return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    });
  }

  /** Closes every open partition (writing their last snapshots). */
  public CompletableFuture<Void> closeAll() {
    return serially(() -> {
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (PartitionLog p : partitions.all()) {
        partitions.remove(p.topicPartition());
        all.add(p.close());
      }
      return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    });
  }

  private void replaceTopic(TopicInfo topic) {
    registry.update(s -> {
      Map<String, TopicInfo> topics = new LinkedHashMap<>(s.topics());
      topics.put(topic.name(), topic);
      return new RegistryState(s.clusterId(), s.nextProducerIdBlock(), topics);
    });
  }

  private static TopicException unknown(String name) {
    return new TopicException(TopicException.Outcome.UNKNOWN_TOPIC, "topic '" + name + "' does not exist");
  }
}
