package io.tidemark.broker.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ResponseHeader;

/**
 * The Kafka-level meters of one broker, named by Prometheus conventions once exported (base units,
 * {@code _total} counters, the {@code tidemark_kafka_} prefix; docs/metrics.md lists them all):
 * requests per API and version with a latency histogram per API and the time split into queue,
 * handle and respond phases, errors per API and error code, bytes and records produced and fetched
 * per topic, connections per listener, and the produce and fetch purgatories.
 *
 * <p>Hot path: the broker asks for a handle once ({@link #api}, {@link #topic}, {@link #listener})
 * and updates it with lock-free adders; a handle's meters are registered on its first use and cached
 * here (per API in an array indexed by API key, per topic in a concurrent map looked up by the topic
 * name, which allocates nothing), so a request builds no tags and allocates no map.
 *
 * <p>Bounds: API keys, versions and error codes are finite enumerations; topics beyond
 * {@code kafka.metrics.topics.max} share the series {@code topic="_other"}, and a deleted topic's
 * series are removed ({@link #forgetTopic}).
 *
 * <p>Threading: any thread. Two threads racing to create the same handle both get Micrometer's one
 * meter per id; handles are immutable apart from their meters.
 */
public final class BrokerMeters {

  /** The topic label of the topics beyond the cap. */
  public static final String OTHER_TOPIC = "_other";
  /** Upper bounds of the request latency histogram buckets. */
  static final Duration[] LATENCY_BUCKETS = {Duration.ofNanos(250_000), Duration.ofMillis(1), Duration.ofMillis(2),
      Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
      Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5),
      Duration.ofSeconds(10), Duration.ofSeconds(30)};

  private final MeterRegistry registry;
  private final int maxTopics;
  private final AtomicReferenceArray<ApiMeters> apis = new AtomicReferenceArray<>(maxApiKey() + 1);
  private final Map<String, TopicMeters> topics = new ConcurrentHashMap<>();
  private final AtomicInteger topicSeries = new AtomicInteger();
  private final Map<String, ListenerMeters> listeners = new ConcurrentHashMap<>();

  /** Meters recorded into {@code registry}; at most {@code maxTopics} topics get their own series. */
  public BrokerMeters(MeterRegistry registry, int maxTopics) {
    this.registry = registry;
    this.maxTopics = maxTopics;
  }

  /** Meters that go nowhere (a registry without backends): for brokers started without an exporter. */
  public static BrokerMeters noop() {
    return new BrokerMeters(new CompositeMeterRegistry(), 0);
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** Whether the meters go anywhere (false for {@link #noop()}: nothing to compute for them). */
  public boolean exported() {
    return !(registry instanceof CompositeMeterRegistry composite) || !composite.getRegistries().isEmpty();
  }

  private static int maxApiKey() {
    int max = 0;
    for (ApiKeys k : ApiKeys.values()) {
      max = Math.max(max, k.id);
    }
    return max;
  }

  /** The handle of one API (created on its first request). */
  public ApiMeters api(ApiKeys key) {
    ApiMeters m = apis.get(key.id);
    if (m == null) {
      apis.compareAndSet(key.id, null, new ApiMeters(registry, key));
      m = apis.get(key.id);
    }
    return m;
  }

  /** The handle of one topic, or of {@code _other} once {@code kafka.metrics.topics.max} topics have theirs. */
  public TopicMeters topic(String topic) {
    TopicMeters m = topics.get(topic);
    if (m != null) {
      return m;
    }
    if (topicSeries.get() >= maxTopics) {
      return topics.computeIfAbsent(OTHER_TOPIC, t -> new TopicMeters(registry, t));
    }
    return topics.computeIfAbsent(topic, t -> {
      topicSeries.incrementAndGet();
      return new TopicMeters(registry, t);
    });
  }

  /** Removes a deleted topic's series (its handle, if cached elsewhere, keeps counting into nothing exported). */
  public void forgetTopic(String topic) {
    TopicMeters m = topics.remove(topic);
    if (m != null) {
      topicSeries.decrementAndGet();
      m.meters().forEach(registry::remove);
    }
  }

  /** Removes the series of the topics that no longer exist (deleted topics), run from time to time. */
  public void retainTopics(java.util.function.Predicate<String> exists) {
    for (String topic : List.copyOf(topics.keySet())) {
      if (!topic.equals(OTHER_TOPIC) && !exists.test(topic)) {
        forgetTopic(topic);
      }
    }
  }

  /** The connection meters of one listener. */
  public ListenerMeters listener(String name) {
    return listeners.computeIfAbsent(name, n -> new ListenerMeters(registry, n));
  }

  /** Registers the size of a purgatory (requests waiting on something: "produce" for durability, "fetch" for data). */
  public void purgatory(String name, Supplier<Number> size) {
    Gauge.builder("tidemark.kafka.purgatory.requests", size).tag("purgatory", name)
        .description("Requests waiting in the purgatory: produce requests waiting for their appends to be durable, "
            + "fetches long-polling for data").register(registry);
  }

  /** Per API: requests by version, latency, errors by code. */
  public static final class ApiMeters {
    private static final int MAX_ERROR_CODE = 255;
    private final MeterRegistry registry;
    private final String api;
    private final Timer total;
    /** The phases' count (one per request, shared) and time in nanoseconds: plain adders, exported as function timers. */
    private final LongAdder phaseCount = new LongAdder();
    private final LongAdder queueNanos = new LongAdder();
    private final LongAdder handleNanos = new LongAdder();
    private final LongAdder respondNanos = new LongAdder();
    private final AtomicReferenceArray<Counter> byVersion;
    private final AtomicReferenceArray<Counter> errors = new AtomicReferenceArray<>(MAX_ERROR_CODE + 2);
    private final ApiKeys key;

    ApiMeters(MeterRegistry registry, ApiKeys key) {
      this.registry = registry;
      this.key = key;
      this.api = key.name;
      this.total = Timer.builder("tidemark.kafka.request").tag("api", api)
          .description("Request time from its frame read to its response written to the socket, by API")
          .serviceLevelObjectives(LATENCY_BUCKETS).register(registry);
      phase(registry, "queue", queueNanos);
      phase(registry, "handle", handleNanos);
      phase(registry, "respond", respondNanos);
      this.byVersion = new AtomicReferenceArray<>(key.latestVersion(true) + 2); // the last slot: unsupported versions
    }

    private void phase(MeterRegistry registry, String phase, LongAdder nanos) {
      FunctionTimer.builder("tidemark.kafka.request.phase", this, m -> m.phaseCount.sum(), m -> nanos.sum(),
              TimeUnit.NANOSECONDS).tag("api", api).tag("phase", phase)
          .description("Request time by phase: queue (read, waiting for the connection's in-flight bound or a quota), "
              + "handle (dispatched until the handler answered: includes waiting for WAL durability or long-poll data), "
              + "respond (answered until written, in request order)").register(registry);
    }

    /** One request done, with its four instants in {@link System#nanoTime()}. */
    public void request(short version, long readNanos, long dispatchedNanos, long answeredNanos, long writtenNanos) {
      versionCounter(version).increment();
      total.record(writtenNanos - readNanos, TimeUnit.NANOSECONDS);
      phaseCount.increment();
      queueNanos.add(dispatchedNanos - readNanos);
      handleNanos.add(answeredNanos - dispatchedNanos);
      respondNanos.add(writtenNanos - answeredNanos);
    }

    private Counter versionCounter(short version) {
      int slot = version >= 0 && version < byVersion.length() - 1 ? version : byVersion.length() - 1;
      Counter c = byVersion.get(slot);
      if (c == null) {
        String label = slot == byVersion.length() - 1 ? "unsupported" : Short.toString(version);
        byVersion.compareAndSet(slot, null, Counter.builder("tidemark.kafka.requests").tag("api", api).tag("version", label)
            .description("Requests answered (or closed), by API and version").register(registry));
        c = byVersion.get(slot);
      }
      return c;
    }

    /**
     * Counts the errors of one answered request: Produce and Fetch (the hot APIs) by walking their
     * response bodies, which allocates nothing; any other API through kafka-clients' own
     * {@code errorCounts()} of the response parsed back from {@code encoded} (size, header, body).
     */
    public void errors(short version, ApiMessage body, ByteBuffer encoded) {
      if (body instanceof ProduceResponseData produce) {
        for (ProduceResponseData.TopicProduceResponse t : produce.responses()) {
          for (ProduceResponseData.PartitionProduceResponse p : t.partitionResponses()) {
            error(p.errorCode(), 1);
          }
        }
      } else if (body instanceof FetchResponseData fetch) {
        error(fetch.errorCode(), 1);
        for (FetchResponseData.FetchableTopicResponse t : fetch.responses()) {
          for (FetchResponseData.PartitionData p : t.partitions()) {
            error(p.errorCode(), 1);
          }
        }
      } else {
        ByteBuffer buffer = encoded.duplicate();
        buffer.position(buffer.position() + 4);
        ResponseHeader.parse(buffer, key.responseHeaderVersion(version));
        AbstractResponse.parseResponse(key, new ByteBufferAccessor(buffer), version).errorCounts()
            .forEach((e, n) -> error(e.code(), n));
      }
    }

    /** {@code count} errors of {@code code} in one response (a partition-level error counts once per partition). */
    public void error(short code, int count) {
      if (code == Errors.NONE.code() || count <= 0) {
        return;
      }
      int slot = code >= -1 && code <= MAX_ERROR_CODE ? code + 1 : 0;
      Counter c = errors.get(slot);
      if (c == null) {
        errors.compareAndSet(slot, null, Counter.builder("tidemark.kafka.request.errors").tag("api", api)
            .tag("error", Errors.forCode((short) (slot - 1)).name())
            .description("Errors in responses by API and error code (per partition where the API answers per partition)")
            .register(registry));
        c = errors.get(slot);
      }
      c.increment(count);
    }
  }

  /** Per topic: bytes and records produced and fetched. */
  public static final class TopicMeters {
    private final Counter producedBytes;
    private final Counter producedRecords;
    private final Counter fetchedBytes;
    private final Counter fetchedRecords;

    TopicMeters(MeterRegistry registry, String topic) {
      producedBytes = Counter.builder("tidemark.kafka.produced.bytes").baseUnit("bytes").tag("topic", topic)
          .description("Record batch bytes appended by Produce requests (as received)").register(registry);
      producedRecords = Counter.builder("tidemark.kafka.produced.records").tag("topic", topic)
          .description("Records appended by Produce requests").register(registry);
      fetchedBytes = Counter.builder("tidemark.kafka.fetched.bytes").baseUnit("bytes").tag("topic", topic)
          .description("Record batch bytes returned by Fetch requests to consumers").register(registry);
      fetchedRecords = Counter.builder("tidemark.kafka.fetched.records").tag("topic", topic)
          .description("Records in the batches returned by Fetch requests").register(registry);
    }

    public void produced(int bytes, int records) {
      producedBytes.increment(bytes);
      producedRecords.increment(records);
    }

    public void fetched(long bytes, long records) {
      fetchedBytes.increment(bytes);
      fetchedRecords.increment(records);
    }

    List<Meter> meters() {
      return List.of(producedBytes, producedRecords, fetchedBytes, fetchedRecords);
    }
  }

  /**
   * Per listener: open connections, connections opened and closed. (Not {@code _created_total}: the
   * Prometheus client reserves the {@code _created} suffix and would drop the meter.)
   */
  public static final class ListenerMeters {
    private final AtomicInteger open = new AtomicInteger();
    private final Counter created;
    private final Counter closed;

    ListenerMeters(MeterRegistry registry, String listener) {
      Gauge.builder("tidemark.kafka.connections", open, AtomicInteger::get).tag("listener", listener)
          .description("Open client connections").register(registry);
      created = Counter.builder("tidemark.kafka.connections.opened").tag("listener", listener)
          .description("Client connections accepted").register(registry);
      closed = Counter.builder("tidemark.kafka.connections.closed").tag("listener", listener)
          .description("Client connections closed (by either side)").register(registry);
    }

    public void opened() {
      open.incrementAndGet();
      created.increment();
    }

    public void closed() {
      open.decrementAndGet();
      closed.increment();
    }
  }
}
