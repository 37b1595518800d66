package io.tidemark.broker;

import io.tidemark.stream.config.Settings;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** An in-memory broker on an ephemeral port plus factories for real Kafka clients pointed at it. */
final class TestBroker implements AutoCloseable {

  final KafkaBroker broker;

  TestBroker(Map<String, String> extra) {
    this(extra, b -> { });
  }

  /** A broker with {@code beforeStart} applied to it before it listens (tests wrap handlers there). */
  TestBroker(Map<String, String> extra, java.util.function.Consumer<KafkaBroker> beforeStart) {
    Map<String, String> s = new HashMap<>();
    s.put("kafka.listener.port", "0");
    s.put("kafka.listener.host", "127.0.0.1");
    s.put("kafka.advertised.host", "127.0.0.1");
    s.put("kafka.group.initial.rebalance.delay.ms", "0");
    s.putAll(extra);
    broker = KafkaBroker.inMemory(new Settings(s));
    beforeStart.accept(broker);
    broker.start();
  }

  TestBroker() {
    this(Map.of());
  }

  /** A {@code beforeStart} that records the principal of every ListGroups request into {@code seen}. */
  static java.util.function.Consumer<KafkaBroker> recordListGroupsPrincipals(
      java.util.List<org.apache.kafka.common.security.auth.KafkaPrincipal> seen) {
    return b -> {
      var original = b.apis().lookup(org.apache.kafka.common.protocol.ApiKeys.LIST_GROUPS);
      b.apis().register(org.apache.kafka.common.protocol.ApiKeys.LIST_GROUPS, original.minVersion(),
          original.maxVersion(), (ctx, req) -> {
            seen.add(ctx.principal());
            return original.handler().handle(ctx, req);
          });
    };
  }

  String bootstrap() {
    return broker.bootstrapServers();
  }

  KafkaProducer<String, String> producer(Map<String, Object> overrides) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 20_000);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.putAll(overrides);
    return new KafkaProducer<>(p);
  }

  /** Produces values "v{from}".."v{to-1}" (keys "k..."), record i to partition i % partitions, and waits for all acks. */
  void produceSpread(String topic, int from, int to, int partitions) {
    try (KafkaProducer<String, String> p = producer(Map.of())) {
      for (int i = from; i < to; i++) {
        p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, i % partitions, "k" + i, "v" + i));
      }
      p.flush();
    }
  }

  KafkaConsumer<String, String> consumer(Map<String, Object> overrides) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 200);
    p.putAll(overrides);
    return new KafkaConsumer<>(p);
  }

  /**
   * Every value of {@code topic}'s first {@code partitions} partitions, per partition in offset order, read from the start to
   * the end offsets with read_committed or read_uncommitted (the end as that isolation sees it); fails after 60 s.
   */
  Map<Integer, java.util.List<String>> readPerPartition(String topic, int partitions, boolean committed) {
    Map<Integer, java.util.List<String>> out = new java.util.TreeMap<>();
    try (KafkaConsumer<String, String> consumer = consumer(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG,
        committed ? "read_committed" : "read_uncommitted"))) {
      java.util.List<org.apache.kafka.common.TopicPartition> tps = new java.util.ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        tps.add(new org.apache.kafka.common.TopicPartition(topic, p));
      }
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<org.apache.kafka.common.TopicPartition, Long> end = consumer.endOffsets(tps);
      long deadline = System.nanoTime() + java.time.Duration.ofSeconds(60).toNanos();
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("reading " + topic + " to " + end + " took over 60 s");
        }
        for (org.apache.kafka.clients.consumer.ConsumerRecord<String, String> r : consumer.poll(java.time.Duration.ofMillis(200))) {
          out.computeIfAbsent(r.partition(), x -> new java.util.ArrayList<>()).add(r.value());
        }
      }
    }
    return out;
  }

  Admin admin() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
    return Admin.create(p);
  }

  @Override
  public void close() {
    broker.close();
  }
}
