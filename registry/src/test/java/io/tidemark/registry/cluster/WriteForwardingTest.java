package io.tidemark.registry.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.KafkaBroker;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.RegistryError;
import io.tidemark.registry.http.RegistryHarness;
import io.tidemark.registry.http.RegistryHarness.Reply;
import io.tidemark.registry.store.ConsumerSchemaStore;
import io.tidemark.registry.store.PartitionSchemaStore;
import io.tidemark.stream.config.Settings;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Goal: a registry on a node that does not lead {@code _schemas} follows the log over the Kafka
 * protocol, forwards every write to the leading registry and relays its answer unchanged, so ids
 * stay unique and dense whichever node a client talks to; reads are served locally.
 */
class WriteForwardingTest {
  private static final String AVRO_V1 = "{\"type\":\"record\",\"name\":\"Click\",\"fields\":[{\"name\":\"url\",\"type\":\"string\"}]}";
  private static final String AVRO_V2 = "{\"type\":\"record\",\"name\":\"Click\",\"fields\":[{\"name\":\"url\",\"type\":\"string\"},"
      + "{\"name\":\"ms\",\"type\":\"long\",\"default\":0}]}";

  private KafkaBroker broker;
  private RegistryHarness leader;
  private RegistryHarness follower;

  @BeforeEach
  void start() throws Exception {
    broker = KafkaBroker.inMemory(new Settings(Map.of("kafka.listener.port", "0", "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1")));
    broker.start();
    leader = new RegistryHarness(new PartitionSchemaStore(broker.internalPartition(PartitionSchemaStore.TOPIC)
        .get(30, TimeUnit.SECONDS), Time.SYSTEM, 10_000), RegistryConfig.defaults(0));
    URI leaderUrl = URI.create(leader.baseUrl());
    follower = new RegistryHarness(new ConsumerSchemaStore(broker.bootstrapServers(), Map.of(), Duration.ofSeconds(10)),
        RegistryConfig.defaults(0), () -> Optional.of(leaderUrl));
  }

  @AfterEach
  void stop() {
    follower.close();
    leader.close();
    broker.close();
  }

  @Test
  void writesThroughEitherNodeGetDenseIdsAndTheFollowerReadsItsOwnWrites() {
    int first = follower.register("clicks-value", null, AVRO_V1);
    // read-your-writes on the follower, straight after its forwarded write
    assertThat(follower.get("/schemas/ids/" + first).status()).isEqualTo(200);
    assertThat(leader.get("/subjects/clicks-value/versions/1").json().get("id").asInt()).isEqualTo(first);

    int second = leader.register("orders-value", "JSON", "{\"type\":\"object\"}");
    int third = follower.register("clicks-value", null, AVRO_V2);
    assertThat(new int[] {first, second, third}).containsExactly(1, 2, 3);
    assertThat(follower.get("/subjects").json().toString()).isEqualTo("[\"clicks-value\",\"orders-value\"]");
    assertThat(follower.get("/subjects/clicks-value/versions").json().toString()).isEqualTo("[1,2]");

    // config writes go to the leader too; the follower then answers with the new setting
    assertThat(follower.put("/config/clicks-value", "{\"compatibility\":\"FULL\"}").status()).isEqualTo(200);
    assertThat(leader.get("/config/clicks-value").json().get("compatibilityLevel").asText()).isEqualTo("FULL");
    assertThat(follower.get("/config/clicks-value").json().get("compatibilityLevel").asText()).isEqualTo("FULL");
  }

  @Test
  void theLeadersErrorsAreRelayedAndChangeNothing() {
    follower.register("clicks-value", null, AVRO_V1);
    Reply invalid = follower.post("/subjects/clicks-value/versions", RegistryHarness.schemaBody(null, "{\"type\":\"nope\"}"));
    assertThat(invalid.status()).isEqualTo(422);
    assertThat(invalid.errorCode()).isEqualTo(RegistryError.INVALID_SCHEMA.errorCode());

    Reply incompatible = follower.post("/subjects/clicks-value/versions", RegistryHarness.schemaBody(null,
        "{\"type\":\"record\",\"name\":\"Click\",\"fields\":[{\"name\":\"url\",\"type\":\"int\"}]}"));
    assertThat(incompatible.status()).isEqualTo(409);
    assertThat(follower.get("/subjects/missing/versions").errorCode()).isEqualTo(RegistryError.SUBJECT_NOT_FOUND.errorCode());
    assertThat(leader.get("/subjects/clicks-value/versions").json().toString()).isEqualTo("[1]");
    assertThat(leader.registry.appliedOffset()).isEqualTo(follower.registry.appliedOffset());
  }

  @Test
  void lookupsAndCompatibilityChecksAreReadsAnsweredLocally() {
    follower.register("clicks-value", null, AVRO_V1);
    leader.close(); // nothing to forward to any more: reads must still work on the follower
    assertThat(follower.post("/subjects/clicks-value", RegistryHarness.schemaBody(null, AVRO_V1)).status()).isEqualTo(200);
    assertThat(follower.post("/compatibility/subjects/clicks-value/versions/latest", RegistryHarness.schemaBody(null, AVRO_V2))
        .json().get("is_compatible").asBoolean()).isTrue();
    Reply unreachable = follower.post("/subjects/other/versions", RegistryHarness.schemaBody(null, AVRO_V1));
    assertThat(unreachable.status()).isEqualTo(500);
    assertThat(unreachable.errorCode()).isEqualTo(RegistryError.FORWARD_FAILED.errorCode());
  }

  @Test
  void noLeaderOrAForwardedRequestToANonLeaderIsRefusedWithoutLooping() {
    try (RegistryHarness orphan = new RegistryHarness(new ConsumerSchemaStore(broker.bootstrapServers(), Map.of(),
        Duration.ofSeconds(10)), RegistryConfig.defaults(0), () -> {
          throw RegistryError.NOT_LEADER.exception("no broker leads _schemas-0 right now");
        })) {
      Reply refused = orphan.post("/subjects/x/versions", RegistryHarness.schemaBody(null, AVRO_V1));
      assertThat(refused.status()).isEqualTo(500);
      assertThat(refused.errorCode()).isEqualTo(RegistryError.NOT_LEADER.errorCode());
      assertThat(orphan.get("/subjects").json().size()).isZero();
    }
    Reply looped = follower.call("POST", "/subjects/x/versions", RegistryHarness.schemaBody(null, AVRO_V1),
        Map.of(WriteForwarder.FORWARDED_HEADER, "1"));
    assertThat(looped.errorCode()).isEqualTo(RegistryError.NOT_LEADER.errorCode());
    assertThat(leader.get("/subjects").json().size()).isZero();
  }
}
