package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.storage.EmbeddedStorage;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.convert.KafkaColumns;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.iceberg.data.Record;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three combined controller+broker processes in one JVM (three voters, so each broker has its own
 * metadata image), each with its own WAL and data directory, sharing one object storage
 * directory: partitions spread over the brokers, real Kafka clients produce
 * and consume across them, and a broker restart loses nothing acknowledged.
 *
 * <p>The tests share one cluster (a cluster start is the largest cost of this class on two cores):
 * each uses its own topics and subjects and leaves the three nodes running; the registry test,
 * which adds a fourth node, runs last.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ThreeNodeClusterTest {

  private static final String TOPIC = "orders";
  private static final int PARTITIONS = 6;
  private static final int RECORDS = 600;

  /**
   * Between the starts of two nodes: the local object storage clears temporary files of its
   * directory when it opens, so two nodes must not open the shared directory at the same moment
   * (S3, the real shared store, has no such step; S3Proxy cannot run on the server's test class
   * path, whose Ratis pins an older jakarta.annotation-api than jclouds needs).
   */
  private static final long START_STAGGER_MS = 1500;
  @TempDir static Path root;
  private final int[] kafkaPorts = {FreePorts.pick(), FreePorts.pick(), FreePorts.pick(), FreePorts.pick()};
  private final String voters = "1@127.0.0.1:" + FreePorts.pick() + ",2@127.0.0.1:" + FreePorts.pick()
      + ",3@127.0.0.1:" + FreePorts.pick();
  private final TidemarkServer[] nodes = new TidemarkServer[4];
  private static final String ROLES = "controller,broker,registry";
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  void startCluster() throws Exception {
    startAll();
  }

  /** Stops every node at once: each node's engine commits its last uploads while a majority of voters still runs. */
  @AfterAll
  void stopAll() {
    List<CompletableFuture<Void>> stopping = new ArrayList<>();
    for (TidemarkServer node : nodes) {
      if (node != null) {
        stopping.add(CompletableFuture.runAsync(node::close));
      }
    }
    CompletableFuture.allOf(stopping.toArray(CompletableFuture[]::new)).orTimeout(5, TimeUnit.MINUTES).join();
  }

  private TidemarkServer start(int nodeId) {
    return start(nodeId, ROLES, List.of());
  }

  private TidemarkServer start(int nodeId, String roles, List<String> extra) {
    List<String> args = new ArrayList<>(extra);
    args.addAll(List.of("--set", "node.id=" + nodeId, "--set", "data.dir=" + root.resolve("node-" + nodeId),
        "--set", "process.roles=" + roles, "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0", "--set", "controller.voters=" + voters,
        "--set", "storage.local.path=" + root.resolve("objects"), "--set", "wal.capacity.bytes=" + (32L << 20),
        "--set", "admin.host=127.0.0.1", "--set", "admin.port=0",
        "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.advertised.host=127.0.0.1",
        "--set", "kafka.listener.port=" + kafkaPorts[nodeId - 1], "--set", "kafka.group.initial.rebalance.delay.ms=0",
        // a client request outlasts a leader election on a loaded machine
        "--set", "controller.client.retry.backoff.ms=500",
        // at teardown the last voter has no quorum to upload to: its WAL keeps the data, no need to wait long
        "--set", "stream.close.timeout.ms=5000",
        // the brokers of this one machine share one embedded Iceberg catalog
        "--set", TableCatalogConfig.EMBEDDED_DB + "=" + root.resolve("catalog.db")));
    return Main.start(args, Map.of(), new EmbeddedStorage());
  }

  /** Starts every node concurrently (registration needs a majority of the voters running), slightly staggered. */
  private void startAll() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<TidemarkServer>> starting = new ArrayList<>();
      for (int id = 1; id <= 3; id++) {
        int nodeId = id;
        starting.add(pool.submit(() -> start(nodeId)));
        Thread.sleep(START_STAGGER_MS);
      }
      for (int i = 0; i < 3; i++) {
        nodes[i] = starting.get(i).get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private String bootstrap(int nodeId) {
    return "127.0.0.1:" + kafkaPorts[nodeId - 1];
  }

  @Test
  @Order(1)
  void partitionsSpreadOverThreeBrokersAndSurviveABrokerRestart() throws Exception {
    // Goal: a topic's leaders are spread over all brokers, clients follow them, and a restart loses nothing acknowledged.
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(1)))) {
      assertThat(admin.describeCluster().nodes().get(1, TimeUnit.MINUTES)).extracting(Node::id)
          .containsExactlyInAnyOrder(1, 2, 3);
      admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get(2, TimeUnit.MINUTES);
      // a leader is reported once it opened the partition's streams; clients (and this test) wait for that
      TopicDescription described = withLeaders(admin, TOPIC, PARTITIONS);
      Map<Integer, Long> perLeader = described.partitions().stream()
          .collect(Collectors.groupingBy(p -> p.leader().id(), Collectors.counting()));
      assertThat(perLeader).as("leaders of %s", described).containsOnly(Map.entry(1, 2L), Map.entry(2, 2L), Map.entry(3, 2L));
      // a topic config set through one broker is what every broker reads (it lives in the controller)
      ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
      admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
          new ConfigEntry("retention.ms", "86400000"), AlterConfigOp.OpType.SET)))).all().get(1, TimeUnit.MINUTES);
      // CreatePartitions grows the topic through the controller; the new partitions are placed on live brokers
      admin.createTopics(List.of(new NewTopic("grown", 2, (short) 1))).all().get(2, TimeUnit.MINUTES);
      admin.createPartitions(Map.of("grown", NewPartitions.increaseTo(5))).all().get(2, TimeUnit.MINUTES);
      assertThat(admin.createPartitions(Map.of("grown", NewPartitions.increaseTo(3))).all())
          .failsWithin(Duration.ofMinutes(1)).withThrowableThat().withCauseInstanceOf(InvalidPartitionsException.class);
    }
    try (Admin other = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(3)))) {
      // other brokers see the change once their replica applied it (followers learn commits a heartbeat later)
      ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
      String seen = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!"86400000".equals(seen) && System.nanoTime() < deadline) {
        seen = other.describeConfigs(List.of(resource)).all().get(1, TimeUnit.MINUTES).get(resource).get("retention.ms").value();
        Thread.sleep("86400000".equals(seen) ? 0 : 200);
      }
      assertThat(seen).isEqualTo("86400000");
      assertThat(other.describeTopics(List.of(TOPIC)).allTopicNames().get(1, TimeUnit.MINUTES).get(TOPIC).partitions())
          .hasSize(PARTITIONS);
      assertThat(withLeaders(other, "grown", 5).partitions()).hasSize(5);
      // the grown partitions take records through whichever broker leads them
      Properties props = new Properties();
      props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(3));
      props.put(ProducerConfig.ACKS_CONFIG, "all");
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
        for (int partition = 0; partition < 5; partition++) {
          assertThat(producer.send(new ProducerRecord<>("grown", partition, "k", "v")).get(1, TimeUnit.MINUTES).offset())
              .isZero();
        }
      }
      assertThat(other.describeTopics(List.of("__consumer_offsets")).allTopicNames().get(1, TimeUnit.MINUTES)
          .get("__consumer_offsets").isInternal()).isTrue();
    }
    Map<TopicPartition, List<Long>> acked = new HashMap<>();
    produce(0, RECORDS, acked);
    Map<TopicPartition, Long> consumed = consumeAll("first-group", acked, RECORDS);
    assertThat(consumed.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(RECORDS);

    // restart the broker that leads partition 1 with the same node id and directories
    int restarted;
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(1)))) {
      restarted = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(1, TimeUnit.MINUTES).get(TOPIC)
          .partitions().get(1).leader().id();
    }
    nodes[restarted - 1].close();
    nodes[restarted - 1] = start(restarted);

    produce(RECORDS, RECORDS, acked);
    consumeAll("second-group", acked, 2 * RECORDS);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(restarted)))) {
      Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("first-group")
          .partitionsToOffsetAndMetadata().get(1, TimeUnit.MINUTES);
      assertThat(committed).hasSize(PARTITIONS);
      committed.forEach((tp, offset) -> assertThat(offset.offset()).isEqualTo(consumed.get(tp)));
      for (TopicPartitionInfo p : admin.describeTopics(List.of(TOPIC)).allTopicNames().get(1, TimeUnit.MINUTES)
          .get(TOPIC).partitions()) {
        assertThat(p.leader()).isNotNull();
      }
    }
  }

  @Test
  @Order(3)
  void everyNodeServesTheRegistryAndWritesGoThroughTheNodeLeadingSchemas() throws Exception {
    // Goal (schema registry in a cluster): writes through any node get unique, dense ids from the one
    // writer (the broker leading _schemas-0); every node reads every schema; ids survive restarts.
    // Earlier tests of the class registered schemas too: ids continue densely after theirs.
    // a fourth node without the controller role: its broker follows the metadata log as a non-voting listener
    nodes[3] = start(4, "broker,registry", List.of("--set", "controller.follower.address=127.0.0.1:" + FreePorts.pick()));
    List<Integer> ids = new ArrayList<>();
    for (int node = 1; node <= 4; node++) {
      ids.add(register(node, "subject-" + node, "{\"type\":\"record\",\"name\":\"R" + node
          + "\",\"fields\":[{\"name\":\"f\",\"type\":\"long\"}]}"));
    }
    int first = ids.get(0);
    assertThat(ids).containsExactly(first, first + 1, first + 2, first + 3);
    awaitEveryNodeServes(ids);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(4)))) {
      assertThat(admin.describeCluster().nodes().get(1, TimeUnit.MINUTES)).extracting(Node::id)
          .containsExactlyInAnyOrder(1, 2, 3, 4);
    }
    quorumIsDescribedAndBrokerDefaultsApplyOnEveryNode();

    int writer;
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(1)))) {
      writer = withLeaders(admin, "_schemas", 1).partitions().get(0).leader().id();
    }
    int follower = writer % 3 + 1;
    // restart a follower, then the writer: both come back with the same ids, and writes continue densely
    nodes[follower - 1].close();
    nodes[follower - 1] = start(follower);
    nodes[writer - 1].close();
    nodes[writer - 1] = start(writer);
    ids.add(register(follower, "subject-after-restart", "\"string\""));
    assertThat(ids.get(4)).isEqualTo(first + 4);
    ids.add(register(writer, "subject-1", "{\"type\":\"record\",\"name\":\"R1\",\"fields\":[{\"name\":\"f\","
        + "\"type\":\"long\"},{\"name\":\"g\",\"type\":\"string\",\"default\":\"\"}]}"));
    assertThat(ids.get(5)).isEqualTo(first + 5);
    awaitEveryNodeServes(ids);
    for (int node = 1; node <= 4; node++) {
      assertThat(get(node, "/subjects/subject-1/versions").body()).isEqualTo("[1,2]");
    }
  }

  @Test
  @Order(2)
  void everyBrokerConvertsThePartitionsItLeadsIntoTheOneTable() throws Exception {
    // Goal (table topics in a cluster): each broker's worker converts the partitions it leads, the
    // coordinator on partition 0's leader commits them all, and the table holds every acknowledged
    // record exactly once with its partition and offset; then a table whose schema the brokers evolve
    // while they convert (issue 10, item 6) holds every value of every record.
    String topic = "spread";
    int partitions = 6;
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(2)))) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(Map.of("table.topic.enable", "true",
          "table.topic.commit.interval.ms", "1000", "table.topic.convert.value.type", "string"))))
          .all().get(1, TimeUnit.MINUTES);
      assertThat(withLeaders(admin, topic, partitions).partitions()).extracting(p -> p.leader().id())
          .containsOnly(1, 2, 3).contains(1, 2, 3);
    }
    Map<String, String> acked = new HashMap<>(); // "partition/offset" -> value
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(1));
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      List<String> values = new ArrayList<>();
      for (int i = 0; i < 600; i++) {
        values.add("v-" + i);
        sent.add(producer.send(new ProducerRecord<>(topic, i % partitions, "k" + i, "v-" + i)));
      }
      for (int i = 0; i < sent.size(); i++) {
        RecordMetadata m = sent.get(i).get(1, TimeUnit.MINUTES);
        acked.put(m.partition() + "/" + m.offset(), values.get(i));
      }
    }
    Map<String, String> inTable = new HashMap<>();
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (inTable.size() < acked.size() && System.nanoTime() < deadline) {
      Thread.sleep(1_000);
      inTable.clear();
      for (Record r : TableFiles.rows(root.resolve("catalog.db"), root.resolve("objects"), topic)) {
        Object v = r.getField(KafkaColumns.VALUE);
        String previous = inTable.put(r.getField(KafkaColumns.PARTITION) + "/" + r.getField(KafkaColumns.OFFSET),
            v == null ? null : v.toString());
        assertThat(previous).as("row %s/%s written twice", r.getField(KafkaColumns.PARTITION),
            r.getField(KafkaColumns.OFFSET)).isNull();
      }
    }
    Set<String> missing = new java.util.TreeSet<>(acked.keySet());
    missing.removeAll(inTable.keySet());
    assertThat(missing).as("acknowledged records not in the table (of %d)", acked.size()).isEmpty();
    assertThat(inTable).isEqualTo(acked);

    schemaEvolvedWhileEveryBrokerConvertsDropsNoValue();
  }

  private static final org.apache.avro.Schema EVENT_V1 = new org.apache.avro.Schema.Parser().parse("""
      {"type":"record","name":"Event","fields":[{"name":"id","type":"int"},
        {"name":"meta","type":{"type":"record","name":"Meta","fields":[{"name":"source","type":"string"}]}}]}""");
  private static final org.apache.avro.Schema EVENT_V2 = new org.apache.avro.Schema.Parser().parse("""
      {"type":"record","name":"Event","fields":[{"name":"id","type":"int"},
        {"name":"meta","type":{"type":"record","name":"Meta","fields":[{"name":"source","type":"string"}]}},
        {"name":"note","type":["null","string"],"default":null}]}""");
  private static final org.apache.avro.Schema EVENT_V3 = new org.apache.avro.Schema.Parser().parse("""
      {"type":"record","name":"Event","fields":[{"name":"id","type":"long"},
        {"name":"meta","type":{"type":"record","name":"Meta","fields":[{"name":"source","type":"string"},
          {"name":"region","type":["null","string"],"default":null}]}},
        {"name":"note","type":["null","string"],"default":null}]}""");

  /**
   * 6,000 Avro records of three versions (a field added, a nested field added, a type widened)
   * already in the six partitions when the table is enabled, so that the three brokers (two
   * conversion groups each) convert and evolve in the same rounds; read back with Iceberg's reader,
   * value by value.
   */
  private void schemaEvolvedWhileEveryBrokerConvertsDropsNoValue() throws Exception {
    String topic = "evolving";
    int partitions = 6;
    List<Integer> ids = List.of(register(1, topic + "-value", EVENT_V1.toString()),
        register(2, topic + "-value", EVENT_V2.toString()), register(3, topic + "-value", EVENT_V3.toString()));
    awaitEveryNodeServes(ids);
    List<org.apache.avro.Schema> versions = List.of(EVENT_V1, EVENT_V2, EVENT_V3);
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(2)))) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(1, TimeUnit.MINUTES);
      withLeaders(admin, topic, partitions);
    }
    Map<String, Map<String, Object>> acked = new HashMap<>(); // "partition/offset" -> value columns
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(1));
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      List<Map<String, Object>> columns = new ArrayList<>();
      for (int i = 0; i < 6_000; i++) {
        int v = i < 3_000 ? 0 : i < 4_500 ? 1 : 2;
        org.apache.avro.Schema schema = versions.get(v);
        org.apache.avro.generic.GenericData.Record meta = new org.apache.avro.generic.GenericData.Record(
            schema.getField("meta").schema());
        meta.put("source", "s" + i);
        org.apache.avro.generic.GenericData.Record value = new org.apache.avro.generic.GenericData.Record(schema);
        value.put("id", v == 2 ? (Object) (i + (1L << 40)) : (Object) i);
        value.put("meta", meta);
        Map<String, Object> expected = new HashMap<>();
        expected.put("id", v == 2 ? i + (1L << 40) : (long) i);
        expected.put("meta_source", "s" + i);
        if (v >= 1 && i % 2 == 0) {
          value.put("note", "note-" + i);
          expected.put("note", "note-" + i);
        }
        if (v == 2 && i % 3 == 0) {
          meta.put("region", "r" + i);
          expected.put("meta_region", "r" + i);
        }
        columns.add(expected);
        sent.add(producer.send(new ProducerRecord<>(topic, i % partitions, null, io.tidemark.registry.client.WireFormat.frame(
            ids.get(v), avro(schema, value)))));
      }
      for (int i = 0; i < sent.size(); i++) {
        RecordMetadata m = sent.get(i).get(1, TimeUnit.MINUTES);
        acked.put(m.partition() + "/" + m.offset(), columns.get(i));
      }
    }
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(3)))) {
      ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      admin.incrementalAlterConfigs(Map.of(resource, List.of(
          new AlterConfigOp(new ConfigEntry("table.topic.convert.value.type", "by_schema_id"), AlterConfigOp.OpType.SET),
          new AlterConfigOp(new ConfigEntry("table.topic.transform.value.type", "flatten"), AlterConfigOp.OpType.SET),
          new AlterConfigOp(new ConfigEntry("table.topic.commit.interval.ms", "1000"), AlterConfigOp.OpType.SET),
          new AlterConfigOp(new ConfigEntry("table.topic.enable", "true"), AlterConfigOp.OpType.SET))))
          .all().get(1, TimeUnit.MINUTES);
    }
    // wait on the coordinator's count (opening the shared local object storage to read would clear the
    // temporary files of the nodes' uploads in flight), then read the table once
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (!rowsCommitted(topic, acked.size())) {
      assertThat(System.nanoTime()).as("%d rows of %s committed", acked.size(), topic).isLessThan(deadline);
      Thread.sleep(500);
    }
    Map<String, Map<String, Object>> inTable = new HashMap<>();
    for (Record r : TableFiles.rows(root.resolve("catalog.db"), root.resolve("objects"), topic)) {
      Map<String, Object> values = new HashMap<>();
      for (String column : List.of("id", "meta_source", "note", "meta_region")) {
        Object v = r.getField(column);
        if (v != null) {
          values.put(column, v instanceof CharSequence text ? text.toString() : v);
        }
      }
      String key = r.getField(KafkaColumns.PARTITION) + "/" + r.getField(KafkaColumns.OFFSET);
      assertThat(inTable.put(key, values)).as("row %s written twice", key).isNull();
    }
    Map<String, String> wrong = new java.util.TreeMap<>();
    acked.forEach((key, expected) -> {
      if (!expected.equals(inTable.get(key))) {
        wrong.put(key, "record " + expected + ", table " + inTable.get(key));
      }
    });
    assertThat(wrong).as("rows that differ from their records (of %d)", acked.size()).isEmpty();
  }

  /** Whether the node coordinating {@code topic} reports at least {@code rows} rows committed (the topic is new). */
  private boolean rowsCommitted(String topic, long rows) throws Exception {
    for (TidemarkServer node : nodes) {
      if (node == null) {
        continue;
      }
      HttpResponse<String> reply = http.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + node.adminPort() + "/v1/tables/" + topic)).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      if (reply.statusCode() == 200) {
        com.fasterxml.jackson.databind.JsonNode status = new com.fasterxml.jackson.databind.ObjectMapper().readTree(reply.body());
        if (status.get("coordinator").asBoolean() && status.get("rowsWritten").asLong() >= rows) {
          return true;
        }
      }
    }
    return false;
  }

  private static byte[] avro(org.apache.avro.Schema schema, Object datum) throws java.io.IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    org.apache.avro.io.BinaryEncoder encoder = org.apache.avro.io.EncoderFactory.get().binaryEncoder(out, null);
    new org.apache.avro.generic.GenericDatumWriter<Object>(schema).write(datum, encoder);
    encoder.flush();
    return out.toByteArray();
  }

  private int register(int node, String subject, String schema) throws Exception {
    String body = "{\"schema\":" + new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(schema) + "}";
    HttpResponse<String> reply = http.send(HttpRequest.newBuilder(registryUri(node, "/subjects/" + subject + "/versions"))
        .header("Content-Type", "application/vnd.schemaregistry.v1+json").POST(HttpRequest.BodyPublishers.ofString(body))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(reply.statusCode()).as("register %s through node %d: %s", subject, node, reply.body()).isEqualTo(200);
    return Integer.parseInt(reply.body().replaceAll("[^0-9]", ""));
  }

  private HttpResponse<String> get(int node, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(registryUri(node, path)).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private URI registryUri(int node, String path) {
    return URI.create("http://127.0.0.1:" + nodes[node - 1].registryPort().orElseThrow() + path);
  }

  /** Followers replay the writer's log every second: every running node must answer every id soon. */
  /**
   * Goal (on the same four nodes, to spare a cluster start): DescribeQuorum answers the same quorum
   * (the Raft leader's view) from a voter and from the node that is not a voter, as Kafka brokers
   * forward it to the active controller; a cluster-wide dynamic broker default set through the
   * non-voter is described by every broker.
   */
  private void quorumIsDescribedAndBrokerDefaultsApplyOnEveryNode() throws Exception {
    for (int node : new int[] {1, 4}) {
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(node)))) {
        var quorum = admin.describeMetadataQuorum().quorumInfo().get(1, TimeUnit.MINUTES);
        assertThat(quorum.voters()).as("voters described through node " + node)
            .extracting(org.apache.kafka.clients.admin.QuorumInfo.ReplicaState::replicaId).containsExactlyInAnyOrder(1, 2, 3);
        assertThat(quorum.observers()).extracting(org.apache.kafka.clients.admin.QuorumInfo.ReplicaState::replicaId).contains(4);
        assertThat(quorum.leaderId()).isBetween(1, 3);
        assertThat(quorum.voters()).filteredOn(v -> v.replicaId() == quorum.leaderId()).singleElement()
            .satisfies(v -> assertThat(v.logEndOffset()).isPositive());
      }
    }
    ConfigResource clusterDefault = new ConfigResource(ConfigResource.Type.BROKER, "");
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(4)))) {
      admin.incrementalAlterConfigs(Map.of(clusterDefault, List.of(new AlterConfigOp(new ConfigEntry("log.retention.ms", "3600000"),
          AlterConfigOp.OpType.SET)))).all().get(1, TimeUnit.MINUTES);
      for (int node = 1; node <= 4; node++) {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(node));
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
          ConfigEntry e = admin.describeConfigs(List.of(broker)).all().get(1, TimeUnit.MINUTES).get(broker).get("log.retention.ms");
          assertThat(e.value()).as("log.retention.ms on broker " + broker.name()).isEqualTo("3600000");
          assertThat(e.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        });
      }
      admin.incrementalAlterConfigs(Map.of(clusterDefault, List.of(new AlterConfigOp(new ConfigEntry("log.retention.ms", null),
          AlterConfigOp.OpType.DELETE)))).all().get(1, TimeUnit.MINUTES);
    }
  }

  private void awaitEveryNodeServes(List<Integer> ids) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    for (int node = 1; node <= 4; node++) {
      if (nodes[node - 1] == null) {
        continue;
      }
      for (int id : ids) {
        while (get(node, "/schemas/ids/" + id).statusCode() != 200) {
          assertThat(System.nanoTime()).as("node %d serves schema id %d", node, id).isLessThan(deadline);
          Thread.sleep(200);
        }
      }
    }
  }

  /** Describes {@code topic} until it has {@code partitions} partitions, each with a leader (at most two minutes). */
  private static TopicDescription withLeaders(Admin admin, String topic, int partitions) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (true) {
      TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(1, TimeUnit.MINUTES).get(topic);
      if (d.partitions().size() == partitions && d.partitions().stream().allMatch(p -> p.leader() != null)) {
        return d;
      }
      assertThat(System.nanoTime()).as("leaders of %s", d).isLessThan(deadline);
      Thread.sleep(200);
    }
  }

  /** Idempotent acks=all produce through a client bootstrapped at node 1; records every acknowledged offset. */
  private void produce(int from, int count, Map<TopicPartition, List<Long>> acked) throws Exception {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(1));
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
    props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    List<CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
    try (KafkaProducer<String, String> producer =
             new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
      for (int i = from; i < from + count; i++) {
        CompletableFuture<RecordMetadata> sent = new CompletableFuture<>();
        producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, "k" + i, "v" + i), (meta, error) -> {
          if (error != null) {
            sent.completeExceptionally(error);
          } else {
            sent.complete(meta);
          }
        });
        sends.add(sent);
      }
      producer.flush();
    }
    for (CompletableFuture<RecordMetadata> sent : sends) {
      RecordMetadata meta = sent.get(2, TimeUnit.MINUTES);
      acked.computeIfAbsent(new TopicPartition(meta.topic(), meta.partition()), k -> new ArrayList<>()).add(meta.offset());
    }
  }

  /**
   * Reads the topic from the start in a new group until {@code expected} records arrived; checks each
   * value once, offsets dense from 0 and equal to the acknowledged ones; commits. Returns the end offsets read.
   */
  private Map<TopicPartition, Long> consumeAll(String group, Map<TopicPartition, List<Long>> acked, int expected) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(2));
    props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    Map<TopicPartition, List<Long>> offsets = new HashMap<>();
    Set<String> values = new HashSet<>();
    int received = 0;
    try (KafkaConsumer<String, String> consumer =
             new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of(TOPIC));
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
      while (received < expected && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          assertThat(values.add(r.value())).as("read once: %s", r.value()).isTrue();
          offsets.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>()).add(r.offset());
          received++;
        }
      }
      consumer.commitSync(Duration.ofMinutes(1));
    }
    assertThat(received).isEqualTo(expected);
    Map<TopicPartition, Long> ends = new HashMap<>();
    offsets.forEach((tp, list) -> {
      for (int i = 0; i < list.size(); i++) {
        assertThat(list.get(i)).as("dense offsets in %s", tp).isEqualTo(i);
      }
      assertThat(list).containsExactlyInAnyOrderElementsOf(acked.get(tp));
      ends.put(tp, (long) list.size());
    });
    return ends;
  }
}
