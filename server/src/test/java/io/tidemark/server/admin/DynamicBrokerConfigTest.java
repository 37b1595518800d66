package io.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.server.FreePorts;
import io.tidemark.server.KafkaConfigsTool;
import io.tidemark.server.Main;
import io.tidemark.server.TidemarkServer;
import io.tidemark.server.storage.EmbeddedStorage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: {@code kafka-configs --alter --entity-type brokers} (Kafka's own tool class, in this JVM)
 * changes broker-level topic defaults at run time, per broker and cluster-wide; Admin describes them
 * with their dynamic sources; they apply at once to a topic that existed before, survive a restart
 * (they live in the controller's metadata), and go back to the defaults when deleted. A key that
 * cannot change at run time is refused and changes nothing.
 */
class DynamicBrokerConfigTest {

  @TempDir Path dir;
  private TidemarkServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private TidemarkServer start() {
    server = Main.start(List.of("--set", "data.dir=" + dir.resolve("data"), "--set", "admin.port=0", "--set", "admin.host=127.0.0.1",
        "--set", "wal.capacity.bytes=" + (32L << 20), "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.listener.port=0",
        "--set", "kafka.advertised.host=127.0.0.1", "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0", "--set", "controller.voters=" + FreePorts.singleVoter()),
        Map.of(), new EmbeddedStorage());
    return server;
  }

  private String bootstrap() {
    return "127.0.0.1:" + server.kafkaPort().orElseThrow();
  }

  private Admin admin() {
    return Admin.create(Map.of("bootstrap.servers", bootstrap(), "default.api.timeout.ms", 30_000));
  }

  @Test
  void kafkaConfigsChangesBrokerDefaultsThatApplyAtOnceAndSurviveARestart() throws Exception {
    start();
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("dyn", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
    produce(5_000); // the static default (1 MiB) lets it in

    assertThat(configs(0, "--bootstrap-server", bootstrap(), "--alter", "--entity-type", "brokers", "--entity-name", "0",
        "--add-config", "message.max.bytes=2000")).contains("Completed updating config for broker 0");
    assertThat(configs(0, "--bootstrap-server", bootstrap(), "--alter", "--entity-type", "brokers", "--entity-default",
        "--add-config", "log.retention.ms=3600000,compression.type=gzip")).contains("Completed updating default config for brokers");
    assertThat(configs(1, "--bootstrap-server", bootstrap(), "--alter", "--entity-type", "brokers", "--entity-name", "0",
        "--add-config", "num.partitions=3")).contains("Cannot update these configs dynamically");
    assertThat(configs(0, "--bootstrap-server", bootstrap(), "--describe", "--entity-type", "brokers", "--entity-name", "0"))
        .contains("message.max.bytes=2000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:message.max.bytes=2000");

    assertAppliedDefaults();
    assertThatThrownBy(() -> produce(5_000)).hasCauseInstanceOf(RecordTooLargeException.class);

    server.close();
    start();
    assertAppliedDefaults();
    assertThatThrownBy(() -> produce(5_000)).hasCauseInstanceOf(RecordTooLargeException.class);

    configs(0, "--bootstrap-server", bootstrap(), "--alter", "--entity-type", "brokers", "--entity-name", "0", "--delete-config",
        "message.max.bytes");
    configs(0, "--bootstrap-server", bootstrap(), "--alter", "--entity-type", "brokers", "--entity-default", "--delete-config",
        "log.retention.ms,compression.type");
    try (Admin admin = admin()) {
      Config broker = describe(admin, ConfigResource.Type.BROKER, "0");
      assertThat(broker.get("message.max.bytes").source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
      assertThat(broker.get("message.max.bytes").value()).isEqualTo("1048588");
      Config topic = describe(admin, ConfigResource.Type.TOPIC, "dyn");
      assertThat(topic.get("retention.ms").value()).isEqualTo("604800000");
      assertThat(topic.get("compression.type").source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
    }
    produce(5_000);
  }

  private void assertAppliedDefaults() throws Exception {
    try (Admin admin = admin()) {
      Config broker = describe(admin, ConfigResource.Type.BROKER, "0");
      assertThat(broker.get("message.max.bytes").value()).isEqualTo("2000");
      assertThat(broker.get("message.max.bytes").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG);
      assertThat(broker.get("message.max.bytes").isReadOnly()).isFalse();
      assertThat(broker.get("log.retention.ms").value()).isEqualTo("3600000");
      assertThat(broker.get("log.retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
      assertThat(broker.get("num.partitions").isReadOnly()).isTrue();
      Config clusterDefault = describe(admin, ConfigResource.Type.BROKER, "");
      assertThat(clusterDefault.entries()).extracting(ConfigEntry::name).containsExactlyInAnyOrder("log.retention.ms", "compression.type");
      Config topic = describe(admin, ConfigResource.Type.TOPIC, "dyn");
      assertThat(topic.get("retention.ms").value()).isEqualTo("3600000");
      assertThat(topic.get("retention.ms").source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
      assertThat(topic.get("max.message.bytes").value()).isEqualTo("2000");
      assertThat(topic.get("compression.type").value()).isEqualTo("gzip");
    }
  }

  private static Config describe(Admin admin, ConfigResource.Type type, String name) throws Exception {
    ConfigResource r = new ConfigResource(type, name);
    return admin.describeConfigs(List.of(r)).all().get(30, TimeUnit.SECONDS).get(r);
  }

  private void produce(int valueBytes) throws Exception {
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap(), "compression.type", "none",
        "max.request.size", 1 << 20, "retries", 0), new ByteArraySerializer(), new ByteArraySerializer())) {
      try {
        producer.send(new ProducerRecord<>("dyn", new byte[valueBytes])).get(30, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        throw new IllegalStateException("produce failed", e.getCause());
      }
    }
  }

  private static String configs(int expectedExit, String... args) {
    return KafkaConfigsTool.run(expectedExit, args);
  }
}
