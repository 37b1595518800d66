package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: Admin.describeLogDirs shows one log directory per broker with every partition, its size in bytes, lag 0 and no future replica. */
class LogDirsTest {

  private static Map<String, LogDirDescription> describe(Admin admin) throws Exception {
    return admin.describeLogDirs(List.of(0)).allDescriptions().get().get(0);
  }

  @Test
  void everyPartitionIsListedWithTheBytesItHolds() throws Exception {
    try (TestBroker broker = new TestBroker(); Admin admin = broker.admin()) {
      admin.createTopics(List.of(new NewTopic("dirs", 2, (short) 1))).all().get();
      String value = "x".repeat(100);
      try (KafkaProducer<String, String> p = broker.producer(Map.of())) {
        for (int i = 0; i < 200; i++) {
          p.send(new ProducerRecord<>("dirs", 0, "k" + i, value));
        }
      }
      Map<String, LogDirDescription> dirs = describe(admin);
      assertThat(dirs).containsOnlyKeys("tidemark:memory");
      LogDirDescription dir = dirs.get("tidemark:memory");
      assertThat(dir.error()).isNull();
      assertThat(dir.totalBytes()).isEmpty();
      Map<TopicPartition, ReplicaInfo> replicas = dir.replicaInfos();
      assertThat(replicas).containsKeys(new TopicPartition("dirs", 0), new TopicPartition("dirs", 1),
          new TopicPartition("__consumer_offsets", 0));
      ReplicaInfo p0 = replicas.get(new TopicPartition("dirs", 0));
      assertThat(p0.size()).as("200 records of 100-byte values in record batches").isBetween(200L * 100, 200L * 100 * 2);
      assertThat(p0.offsetLag()).isZero();
      assertThat(p0.isFuture()).isFalse();
      assertThat(replicas.get(new TopicPartition("dirs", 1)).size()).isZero();

      admin.deleteRecords(Map.of(new TopicPartition("dirs", 0), RecordsToDelete.beforeOffset(200))).all().get();
      assertThat(describe(admin).get("tidemark:memory").replicaInfos().get(new TopicPartition("dirs", 0)).size())
          .as("trimmed bytes are no longer counted").isZero();
      var only = admin.describeReplicaLogDirs(List.of(new org.apache.kafka.common.TopicPartitionReplica("dirs", 1, 0))).all().get();
      assertThat(only.values()).singleElement().satisfies(r -> assertThat(r.getCurrentReplicaLogDir()).isEqualTo("tidemark:memory"));
    }
  }

  @Test
  void theLogDirIsNamedAfterTheDataDirectory(@TempDir Path data) throws Exception {
    try (TestBroker broker = new TestBroker(Map.of("kafka.data.dir", data.toString())); Admin admin = broker.admin()) {
      assertThat(describe(admin)).containsOnlyKeys(data.toAbsolutePath().normalize().toString());
    }
  }
}
