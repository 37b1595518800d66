package io.tidemark.broker.cleaner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.KafkaBroker;
import io.tidemark.stream.config.Settings;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Goal: as Kafka, a compacted topic refuses a record without a key (INVALID_RECORD, nothing
 * written) and takes keyed ones; DescribeConfigs shows the cleaner settings with Kafka's defaults.
 */
class CompactedProduceTest {

  @Test
  void keylessRecordsAreRefusedAndKeyedOnesTaken() throws Exception {
    try (KafkaBroker broker = KafkaBroker.inMemory(new Settings(Map.of("kafka.listener.port", "0",
        "kafka.listener.host", "127.0.0.1", "kafka.advertised.host", "127.0.0.1")))) {
      broker.start();
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
           KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
               broker.bootstrapServers(), ProducerConfig.RETRIES_CONFIG, 0), new StringSerializer(), new StringSerializer())) {
        admin.createTopics(List.of(new NewTopic("keyed", 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
            .all().get();
        assertThatThrownBy(() -> producer.send(new ProducerRecord<>("keyed", 0, null, "no key")).get())
            .hasCauseInstanceOf(InvalidRecordException.class);
        assertThat(producer.send(new ProducerRecord<>("keyed", 0, "k", "v")).get().offset()).isZero();

        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, "keyed");
        var config = admin.describeConfigs(List.of(res)).all().get().get(res);
        assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
        assertThat(config.get("delete.retention.ms").value()).isEqualTo("86400000");
        assertThat(config.get("min.compaction.lag.ms").value()).isEqualTo("0");
        assertThat(config.get("max.compaction.lag.ms").value()).isEqualTo(Long.toString(Long.MAX_VALUE));
        assertThat(config.get("min.cleanable.dirty.ratio").value()).isEqualTo("0.5");
      }
    }
  }
}
