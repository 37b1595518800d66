package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Goal: the Java Admin client's topic, config, cluster, offsets and record-deletion calls work against the broker. */
class AdminApiTest {

  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() {
    broker = new TestBroker(Map.of("kafka.auto.create.topics", "false"));
    admin = broker.admin();
  }

  @AfterAll
  static void stop() {
    admin.close();
    broker.close();
  }

  @Test
  void createDescribeGrowAndDeleteTopic() throws Exception {
    admin.createTopics(List.of(new NewTopic("orders", 3, (short) 1).configs(Map.of("retention.ms", "3600000")))).all().get();
    TopicDescription d = admin.describeTopics(List.of("orders")).allTopicNames().get().get("orders");
    assertThat(d.partitions()).hasSize(3);
    assertThat(d.topicId().toString()).isNotEmpty();
    assertThat(d.partitions().get(0).leader().id()).isEqualTo(0);
    assertThat(admin.listTopics().names().get()).contains("orders");

    assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get())
        .hasCauseInstanceOf(TopicExistsException.class);

    admin.createPartitions(Map.of("orders", NewPartitions.increaseTo(5))).all().get();
    assertThat(admin.describeTopics(List.of("orders")).allTopicNames().get().get("orders").partitions()).hasSize(5);
    assertThatThrownBy(() -> admin.createPartitions(Map.of("orders", NewPartitions.increaseTo(2))).all().get())
        .hasCauseInstanceOf(InvalidPartitionsException.class);

    admin.deleteTopics(List.of("orders")).all().get();
    assertThat(admin.listTopics().names().get()).doesNotContain("orders");
    assertThatThrownBy(() -> admin.describeTopics(List.of("orders")).allTopicNames().get())
        .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
  }

  @Test
  void describeTopicsPagesThroughManyPartitions() throws Exception {
    admin.createTopics(List.of(new NewTopic("wide-a", 7, (short) 1), new NewTopic("wide-b", 5, (short) 1))).all().get();
    var options = new org.apache.kafka.clients.admin.DescribeTopicsOptions().partitionSizeLimitPerResponse(3);
    Map<String, TopicDescription> d = admin.describeTopics(List.of("wide-a", "wide-b"), options).allTopicNames().get();
    assertThat(d.get("wide-a").partitions()).hasSize(7);
    assertThat(d.get("wide-b").partitions()).hasSize(5);
    assertThat(d.get("wide-b").partitions().get(4).partition()).isEqualTo(4);
  }

  @Test
  void recreatedTopicGetsANewId() throws Exception {
    admin.createTopics(List.of(new NewTopic("again", 1, (short) 1))).all().get();
    var first = admin.describeTopics(List.of("again")).allTopicNames().get().get("again").topicId();
    admin.deleteTopics(List.of("again")).all().get();
    admin.createTopics(List.of(new NewTopic("again", 1, (short) 1))).all().get();
    var second = admin.describeTopics(List.of("again")).allTopicNames().get().get("again").topicId();
    assertThat(second).isNotEqualTo(first);
  }

  @Test
  void invalidTopicNamesAndConfigsAreRefusedClearly() {
    assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("bad/name", 1, (short) 1))).all().get())
        .hasCauseInstanceOf(InvalidTopicException.class);
    assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("shrunk", 1, (short) 1)
        .configs(Map.of("cleanup.policy", "shrink")))).all().get())
        .hasCauseInstanceOf(InvalidConfigurationException.class)
        .hasMessageContaining("unknown cleanup policy 'shrink'");
    assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("badretention", 1, (short) 1)
        .configs(Map.of("retention.ms", "soon")))).all().get())
        .hasCauseInstanceOf(InvalidConfigurationException.class);
    assertThatThrownBy(() -> admin.createTopics(List.of(new NewTopic("unknowncfg", 1, (short) 1)
        .configs(Map.of("no.such.config", "1")))).all().get())
        .hasCauseInstanceOf(InvalidConfigurationException.class);
  }

  @Test
  void topicConfigsAreDescribedAndAltered() throws Exception {
    admin.createTopics(List.of(new NewTopic("configured", 1, (short) 1))).all().get();
    ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, "configured");
    Config before = admin.describeConfigs(List.of(res)).all().get().get(res);
    assertThat(before.get("retention.ms").value()).isEqualTo("604800000");
    assertThat(before.get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);

    admin.incrementalAlterConfigs(Map.of(res, List.of(
        new AlterConfigOp(new ConfigEntry("retention.ms", "1000"), AlterConfigOp.OpType.SET),
        new AlterConfigOp(new ConfigEntry("message.timestamp.type", "LogAppendTime"), AlterConfigOp.OpType.SET)))).all().get();
    Config after = admin.describeConfigs(List.of(res)).all().get().get(res);
    assertThat(after.get("retention.ms").value()).isEqualTo("1000");
    assertThat(after.get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);

    assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(res, List.of(
        new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact,shrink"), AlterConfigOp.OpType.SET)))).all().get())
        .hasCauseInstanceOf(InvalidConfigurationException.class);
    assertThat(admin.describeConfigs(List.of(res)).all().get().get(res).get("cleanup.policy").value()).isEqualTo("delete");

    admin.incrementalAlterConfigs(Map.of(res, List.of(
        new AlterConfigOp(new ConfigEntry("retention.ms", null), AlterConfigOp.OpType.DELETE)))).all().get();
    assertThat(admin.describeConfigs(List.of(res)).all().get().get(res).get("retention.ms").value()).isEqualTo("604800000");

    // LogAppendTime is applied on produce
    try (KafkaProducer<String, String> p = broker.producer(Map.of())) {
      var md = p.send(new ProducerRecord<>("configured", 0, 1L, "k", "v")).get();
      assertThat(md.timestamp()).isGreaterThan(1L);
    }
  }

  @Test
  void clusterIsDescribed() throws Exception {
    DescribeClusterResult c = admin.describeCluster();
    assertThat(c.clusterId().get()).isEqualTo(broker.broker.clusterId());
    assertThat(c.controller().get().id()).isEqualTo(0);
    Collection<?> nodes = c.nodes().get();
    assertThat(nodes).hasSize(1);
  }

  @Test
  void offsetsAreListedAndRecordsDeleted() throws Exception {
    admin.createTopics(List.of(new NewTopic("offsets", 1, (short) 1))).all().get();
    TopicPartition tp = new TopicPartition("offsets", 0);
    try (KafkaProducer<String, String> p = broker.producer(Map.of("linger.ms", 0))) {
      for (int i = 0; i < 10; i++) {
        p.send(new ProducerRecord<>("offsets", 0, 1000L + i * 100, "k", "v" + i)).get();
      }
    }
    assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp).offset()).isEqualTo(10);
    assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp).offset()).isEqualTo(0);
    assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(1450))).all().get().get(tp).offset()).isEqualTo(5);
    var max = admin.listOffsets(Map.of(tp, OffsetSpec.maxTimestamp())).all().get().get(tp);
    assertThat(max.offset()).isEqualTo(9);
    assertThat(max.timestamp()).isEqualTo(1900);
    assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(99_999))).all().get().get(tp).offset()).isEqualTo(-1);

    var low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(tp).get();
    assertThat(low.lowWatermark()).isEqualTo(4);
    assertThat(admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp).offset()).isEqualTo(4);
  }

  @Test
  void producersAreDescribed() throws Exception {
    admin.createTopics(List.of(new NewTopic("idem", 1, (short) 1))).all().get();
    try (KafkaProducer<String, String> p = broker.producer(Map.of("enable.idempotence", true))) {
      p.send(new ProducerRecord<>("idem", 0, "k", "v")).get();
    }
    var states = admin.describeProducers(List.of(new TopicPartition("idem", 0))).all().get()
        .get(new TopicPartition("idem", 0)).activeProducers();
    assertThat(states).hasSize(1);
    assertThat(states.get(0).lastSequence()).isEqualTo(0);
  }

  @Test
  void deletingAnUnknownTopicFails() {
    assertThatThrownBy(() -> admin.deleteTopics(Set.of("never-was")).all().get())
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
  }
}
