package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.internals.Exit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: Kafka's own command-line tools from kafka-tools 4.4.0 (run in-process through their main
 * classes) work against the broker: kafka-topics, console producer and consumer,
 * kafka-consumer-groups (describe, reset offsets) and kafka-configs.
 */
class KafkaCliToolsTest {

  static TestBroker broker;
  /** Some tools exit from a finally block and then exit again with 1 when that throws: the first code is the real one. */
  static final java.util.concurrent.atomic.AtomicReference<Integer> FIRST_EXIT = new java.util.concurrent.atomic.AtomicReference<>();

  /** Thrown instead of exiting the JVM. */
  static final class ExitCalled extends RuntimeException {
    final int code;

    ExitCalled(int code, String message) {
      super("exit " + code + ": " + message);
      this.code = code;
    }
  }

  /** What a tool printed and the code it exited with (0 when it returned normally). */
  record Run(int code, String out) {}

  @BeforeAll
  static void start() {
    broker = new TestBroker();
    Exit.setExitProcedure((code, message) -> {
      FIRST_EXIT.compareAndSet(null, code);
      throw new ExitCalled(code, message);
    });
  }

  @AfterAll
  static void stop() {
    Exit.resetExitProcedure();
    broker.close();
  }

  interface Tool {
    void main(String[] args) throws Exception;
  }

  private static synchronized Run run(Tool tool, String stdin, String... args) {
    PrintStream oldOut = System.out;
    InputStream oldIn = System.in;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    if (stdin != null) {
      System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
    }
    int code = 0;
    FIRST_EXIT.set(null);
    try {
      tool.main(args);
    } catch (ExitCalled e) {
      code = FIRST_EXIT.get();
    } catch (Exception e) {
      throw new AssertionError("tool failed: " + e, e);
    } finally {
      System.setOut(oldOut);
      System.setIn(oldIn);
    }
    String text = out.toString(StandardCharsets.UTF_8);
    oldOut.println(text);
    return new Run(code, text);
  }

  @Test
  void topicsProducerConsumerGroupsAndConfigs() throws Exception {
    String b = broker.bootstrap();
    Run create = run(org.apache.kafka.tools.TopicCommand::main, null, "--bootstrap-server", b, "--create", "--topic", "cli",
        "--partitions", "3", "--replication-factor", "1");
    assertThat(create.code()).isZero();
    assertThat(create.out()).contains("Created topic cli");
    assertThat(run(org.apache.kafka.tools.TopicCommand::main, null, "--bootstrap-server", b, "--list").out()).contains("cli");
    Run describe = run(org.apache.kafka.tools.TopicCommand::main, null, "--bootstrap-server", b, "--describe", "--topic", "cli");
    assertThat(describe.out()).contains("PartitionCount: 3");

    Run produce = run(org.apache.kafka.tools.ConsoleProducer::main, "alpha\nbeta\ngamma\n", "--bootstrap-server", b, "--topic", "cli");
    assertThat(produce.code()).isZero();

    Run consume = run(org.apache.kafka.tools.consumer.ConsoleConsumer::main, null, "--bootstrap-server", b, "--topic", "cli",
        "--from-beginning", "--max-messages", "3", "--group", "cli-group", "--timeout-ms", "30000");
    assertThat(consume.out().lines().toList()).containsExactlyInAnyOrder("alpha", "beta", "gamma");

    Run groups = run(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand::main, null, "--bootstrap-server", b,
        "--describe", "--group", "cli-group");
    assertThat(groups.out()).contains("cli-group").contains("cli");

    Run reset = run(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand::main, null, "--bootstrap-server", b,
        "--reset-offsets", "--group", "cli-group", "--topic", "cli", "--to-earliest", "--execute");
    assertThat(reset.code()).isZero();
    try (Admin admin = broker.admin()) {
      Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets("cli-group").partitionsToOffsetAndMetadata().get();
      assertThat(offsets).hasSize(3);
      assertThat(offsets.values()).allMatch(o -> o.offset() == 0);
    }

    Run alter = run(org.apache.kafka.tools.ConfigCommand::main, null, "--bootstrap-server", b, "--alter", "--entity-type", "topics",
        "--entity-name", "cli", "--add-config", "retention.ms=1000");
    assertThat(alter.code()).isZero();
    Run configs = run(org.apache.kafka.tools.ConfigCommand::main, null, "--bootstrap-server", b, "--describe", "--entity-type",
        "topics", "--entity-name", "cli");
    assertThat(configs.out()).contains("retention.ms=1000");

    Run delete = run(org.apache.kafka.tools.TopicCommand::main, null, "--bootstrap-server", b, "--delete", "--topic", "cli");
    assertThat(delete.code()).isZero();
    assertThat(run(org.apache.kafka.tools.TopicCommand::main, null, "--bootstrap-server", b, "--list").out().lines().toList())
        .doesNotContain("cli");
    assertThat(List.of(create, produce, reset)).allMatch(r -> r.code() == 0);
  }

  @Test
  void compactedTopicsAreCreatedAndTheirCleanerSettingsAlteredWithTheStockTools() {
    String b = broker.bootstrap();
    Run create = run(org.apache.kafka.tools.TopicCommand::main, null, "--bootstrap-server", b, "--create", "--topic", "cli-compacted",
        "--partitions", "1", "--replication-factor", "1", "--config", "cleanup.policy=compact");
    assertThat(create.code()).isZero();
    Run alter = run(org.apache.kafka.tools.ConfigCommand::main, null, "--bootstrap-server", b, "--alter", "--entity-type", "topics",
        "--entity-name", "cli-compacted", "--add-config", "cleanup.policy=[compact,delete],delete.retention.ms=1000,"
            + "min.compaction.lag.ms=5000,max.compaction.lag.ms=600000,min.cleanable.dirty.ratio=0.1");
    assertThat(alter.code()).isZero();
    Run configs = run(org.apache.kafka.tools.ConfigCommand::main, null, "--bootstrap-server", b, "--describe", "--entity-type",
        "topics", "--entity-name", "cli-compacted");
    assertThat(configs.out()).contains("cleanup.policy=compact,delete", "delete.retention.ms=1000", "min.compaction.lag.ms=5000",
        "max.compaction.lag.ms=600000", "min.cleanable.dirty.ratio=0.1");
    Run bad = run(org.apache.kafka.tools.ConfigCommand::main, null, "--bootstrap-server", b, "--alter", "--entity-type", "topics",
        "--entity-name", "cli-compacted", "--add-config", "min.cleanable.dirty.ratio=2");
    assertThat(bad.code()).isNotZero();
    assertThat(run(org.apache.kafka.tools.ConfigCommand::main, null, "--bootstrap-server", b, "--describe", "--entity-type",
        "topics", "--entity-name", "cli-compacted").out()).contains("min.cleanable.dirty.ratio=0.1");
  }

  @Test
  void consumerGroupsToolDescribesAConsumerProtocolGroup() throws Exception {
    String b = broker.bootstrap();
    try (Admin admin = broker.admin()) {
      admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("cli-848", 2, (short) 1))).all().get();
    }
    try (var producer = broker.producer(Map.of())) {
      for (int i = 0; i < 10; i++) {
        producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("cli-848", i % 2, "k" + i, "v" + i));
      }
    }
    try (var consumer = broker.consumer(Map.of("group.id", "cli-848-group", "group.protocol", "consumer", "enable.auto.commit", false))) {
      consumer.subscribe(List.of("cli-848"));
      java.util.concurrent.atomic.AtomicInteger seen = new java.util.concurrent.atomic.AtomicInteger();
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(() -> {
        seen.addAndGet(consumer.poll(java.time.Duration.ofMillis(100)).count());
        return seen.get() == 10 && consumer.assignment().size() == 2;
      });
      consumer.commitSync();
      String memberId = consumer.groupMetadata().memberId();

      Run describe = run(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand::main, null, "--bootstrap-server", b,
          "--describe", "--group", "cli-848-group");
      assertThat(describe.code()).isZero();
      List<String> rows = describe.out().lines().filter(l -> l.startsWith("cli-848-group ")).toList();
      assertThat(rows).hasSize(2).allSatisfy(row -> assertThat(row.split("\\s+")).containsSubsequence("cli-848", "5", "5", "0", memberId));

      Run state = run(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand::main, null, "--bootstrap-server", b,
          "--describe", "--group", "cli-848-group", "--state");
      assertThat(state.out()).contains("uniform").contains("Stable");
      Run members = run(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand::main, null, "--bootstrap-server", b,
          "--describe", "--group", "cli-848-group", "--members", "--verbose");
      assertThat(members.out()).contains(memberId).contains("cli-848:0,1");
      Run list = run(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand::main, null, "--bootstrap-server", b,
          "--list", "--type", "consumer");
      assertThat(list.out()).containsPattern("cli-848-group\\s+(?i:consumer)");
    }
    // once its member has left, the consumer group's offsets can be reset and the group deleted
    Run reset = run(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand::main, null, "--bootstrap-server", b,
        "--reset-offsets", "--group", "cli-848-group", "--topic", "cli-848", "--to-earliest", "--execute");
    assertThat(reset.code()).isZero();
    try (Admin admin = broker.admin()) {
      Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets("cli-848-group").partitionsToOffsetAndMetadata().get();
      assertThat(offsets).hasSize(2);
      assertThat(offsets.values()).allMatch(o -> o.offset() == 0);
    }
    Run delete = run(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand::main, null, "--bootstrap-server", b,
        "--delete", "--group", "cli-848-group");
    assertThat(delete.out()).contains("Deletion of requested consumer groups ('cli-848-group') was successful.");
  }

  @Test
  void logDirsToolDescribesThePartitionsOfATopic() throws Exception {
    String b = broker.bootstrap();
    try (Admin admin = broker.admin()) {
      admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("cli-dirs", 2, (short) 1))).all().get();
    }
    broker.produceSpread("cli-dirs", 0, 50, 2);
    Run dirs = run(org.apache.kafka.tools.LogDirsCommand::main, null, "--bootstrap-server", b, "--describe", "--topic-list", "cli-dirs");
    assertThat(dirs.code()).isZero();
    String json = dirs.out().lines().filter(l -> l.startsWith("{")).findFirst().orElseThrow();
    var tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json);
    var logDirs = tree.get("brokers").get(0).get("logDirs");
    assertThat(logDirs).hasSize(1);
    assertThat(logDirs.get(0).get("logDir").asText()).isEqualTo("tidemark:memory");
    var partitions = logDirs.get(0).get("partitions");
    assertThat(partitions).hasSize(2).allSatisfy(p -> {
      assertThat(p.get("partition").asText()).startsWith("cli-dirs-");
      assertThat(p.get("size").asLong()).isPositive();
      assertThat(p.get("offsetLag").asLong()).isZero();
      assertThat(p.get("isFuture").asBoolean()).isFalse();
    });
  }

  @Test
  void everyMessageAckedByVerifiableProducerIsConsumedByVerifiableConsumer() throws Exception {
    String b = broker.bootstrap();
    java.nio.file.Path props = java.nio.file.Files.createTempFile("verifiable", ".properties");
    java.nio.file.Files.writeString(props, "enable.idempotence=true\nacks=all\nretries=2147483647\n");
    try (Admin admin = broker.admin()) {
      admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("verified", 2, (short) 1))).all().get();
    }
    Run produced = child("org.apache.kafka.tools.VerifiableProducer", "--bootstrap-server", b, "--topic", "verified",
        "--max-messages", "1000", "--command-config", props.toString());
    java.util.Set<String> acked = new java.util.HashSet<>();
    for (String line : produced.out().lines().toList()) {
      if (line.contains("\"producer_send_success\"")) {
        acked.add(field(line, "partition") + "@" + field(line, "offset"));
      }
    }
    assertThat(acked).as("acked in output of %d chars, exit %d: %s", produced.out().length(), produced.code(),
        produced.out().lines().limit(3).toList()).hasSize(1000);
    Run consumed = child("org.apache.kafka.tools.VerifiableConsumer", "--bootstrap-server", b, "--topic", "verified",
        "--group-id", "verifier", "--max-messages", "1000");
    long count = 0;
    for (String line : consumed.out().lines().toList()) {
      if (line.contains("\"records_consumed\"")) {
        count += Long.parseLong(field(line, "count"));
      }
    }
    assertThat(count).isEqualTo(1000);
    try (Admin admin = broker.admin()) {
      Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets("verifier").partitionsToOffsetAndMetadata().get();
      assertThat(offsets.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(1000);
    }
  }

  @Test
  void kafkaFeaturesDescribesTheFixedLevelsAndRefusesChanges() throws Exception {
    // Goal: kafka-features describe lists group.version at level 1; an upgrade or downgrade is refused with a reason; a no-op passes.
    String b = broker.bootstrap();
    Run describe = run(org.apache.kafka.tools.FeatureCommand::main, null, "--bootstrap-server", b, "describe");
    assertThat(describe.code()).isZero();
    String features = describe.out().replaceAll("[ \t]+", " ");
    assertThat(features).contains("Feature: group.version SupportedMinVersion: 0 SupportedMaxVersion: 1 FinalizedVersionLevel: 1");
    assertThat(features).contains("Feature: transaction.version SupportedMinVersion: 0 SupportedMaxVersion: 2 FinalizedVersionLevel: 2");
    Run upgrade = run(org.apache.kafka.tools.FeatureCommand::main, null, "--bootstrap-server", b, "downgrade", "--feature",
        "transaction.version=1");
    assertThat(upgrade.code()).isNotZero();
    assertThat(upgrade.out()).contains("transaction.version");
    try (Admin admin = broker.admin()) {
      admin.updateFeatures(Map.of("group.version", new org.apache.kafka.clients.admin.FeatureUpdate((short) 1,
          org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType.UPGRADE)), new org.apache.kafka.clients.admin.UpdateFeaturesOptions())
          .all().get();
      assertThat(admin.updateFeatures(Map.of("group.version", new org.apache.kafka.clients.admin.FeatureUpdate((short) 0,
          org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)), new org.apache.kafka.clients.admin.UpdateFeaturesOptions())
          .all()).failsWithin(java.time.Duration.ofSeconds(30)).withThrowableThat()
          .withCauseInstanceOf(org.apache.kafka.common.errors.InvalidUpdateVersionException.class);
      assertThat(admin.describeFeatures().featureMetadata().get().finalizedFeatures().get("group.version").maxVersionLevel())
          .isEqualTo((short) 1);
    }
  }

  @Test
  void clientsPushingMetricsGetAnInstanceIdAndAnEmptySubscription() throws Exception {
    // Goal: with enable.metrics.push (KIP-714) a producer and a consumer get a client instance id and work without errors.
    try (var producer = broker.producer(Map.of(org.apache.kafka.clients.producer.ProducerConfig.ENABLE_METRICS_PUSH_CONFIG, true));
        var consumer = broker.consumer(Map.of(org.apache.kafka.clients.consumer.ConsumerConfig.ENABLE_METRICS_PUSH_CONFIG, true))) {
      assertThat(producer.clientInstanceId(java.time.Duration.ofSeconds(30))).isNotNull()
          .isNotEqualTo(org.apache.kafka.common.Uuid.ZERO_UUID);
      producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("telemetry", "k", "v")).get();
      consumer.assign(List.of(new TopicPartition("telemetry", 0)));
      consumer.poll(java.time.Duration.ofMillis(500));
      assertThat(consumer.clientInstanceId(java.time.Duration.ofSeconds(30))).isNotNull()
          .isNotEqualTo(org.apache.kafka.common.Uuid.ZERO_UUID);
    }
  }

  /** Runs a tool in a child JVM on the test classpath (these tools report from background threads and shutdown hooks). */
  private static Run child(String mainClass, String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of(
        java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-cp", System.getProperty("java.class.path"), mainClass));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    boolean exited = p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS);
    if (!exited) {
      p.destroyForcibly();
    }
    return new Run(exited ? p.exitValue() : -1, out);
  }

  /** The value of a top-level numeric JSON field in one line of a tool's output. */
  @Test
  void kafkaShareGroupsListsDescribesResetsAndDeletes() throws Exception {
    // Goal: kafka-share-groups --list, --describe (offsets and members), --reset-offsets and --delete on a share group.
    String b = broker.bootstrap();
    try (Admin admin = broker.admin()) {
      admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("cli-share", 1, (short) 1))).all().get();
      admin.incrementalAlterConfigs(Map.of(new org.apache.kafka.common.config.ConfigResource(
          org.apache.kafka.common.config.ConfigResource.Type.GROUP, "cli-sg"), List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
          new org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"),
          org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get();
    }
    broker.produceSpread("cli-share", 0, 5, 1);
    try (org.apache.kafka.clients.consumer.KafkaShareConsumer<String, String> c = new org.apache.kafka.clients.consumer.KafkaShareConsumer<>(
        Map.of("bootstrap.servers", b, "group.id", "cli-sg"), new org.apache.kafka.common.serialization.StringDeserializer(),
        new org.apache.kafka.common.serialization.StringDeserializer())) {
      c.subscribe(List.of("cli-share"));
      int got = 0;
      long deadline = System.nanoTime() + 60_000_000_000L;
      while (got < 5 && System.nanoTime() < deadline) {
        got += c.poll(java.time.Duration.ofMillis(200)).count();
      }
      assertThat(got).isEqualTo(5);
      c.poll(java.time.Duration.ofMillis(200)); // acknowledges the records (sent with the consumer's next ShareFetch)
      c.commitSync();
      try (Admin admin = broker.admin()) { // the acknowledgements may still be on their way
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> admin.listShareGroupOffsets(
            Map.of("cli-sg", new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())).partitionsToOffsetInfo("cli-sg").get()
            .get(new TopicPartition("cli-share", 0)).startOffset() == 5);
      }
      Run list = run(org.apache.kafka.tools.consumer.group.ShareGroupCommand::main, null, "--bootstrap-server", b, "--list");
      assertThat(list.out()).contains("cli-sg");
      Run describe = run(org.apache.kafka.tools.consumer.group.ShareGroupCommand::main, null, "--bootstrap-server", b, "--describe",
          "--group", "cli-sg");
      assertThat(describe.out()).containsPattern("cli-sg\\s+cli-share\\s+0\\s+5\\s+0");
      Run members = run(org.apache.kafka.tools.consumer.group.ShareGroupCommand::main, null, "--bootstrap-server", b, "--describe",
          "--group", "cli-sg", "--members");
      assertThat(members.out()).containsPattern("cli-sg\\s+\\S+\\s+\\S+").contains("cli-share:0");
    }
    Run reset = run(org.apache.kafka.tools.consumer.group.ShareGroupCommand::main, null, "--bootstrap-server", b, "--reset-offsets",
        "--group", "cli-sg", "--topic", "cli-share", "--to-earliest", "--execute");
    assertThat(reset.code()).as(reset.out()).isZero();
    assertThat(reset.out()).containsPattern("cli-sg\\s+cli-share\\s+0\\s+0");
    Run delete = run(org.apache.kafka.tools.consumer.group.ShareGroupCommand::main, null, "--bootstrap-server", b, "--delete",
        "--group", "cli-sg");
    assertThat(delete.out()).contains("Deletion of requested share groups ('cli-sg') was successful.");
    assertThat(run(org.apache.kafka.tools.consumer.group.ShareGroupCommand::main, null, "--bootstrap-server", b, "--list").out())
        .doesNotContain("cli-sg");
  }

  private static String field(String json, String name) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + name + "\":(-?\\d+)").matcher(json);
    return m.find() ? m.group(1) : "";
  }
}
