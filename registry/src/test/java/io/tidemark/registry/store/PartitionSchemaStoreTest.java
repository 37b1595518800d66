package io.tidemark.registry.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.partition.LogSettings;
import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.broker.partition.PartitionLocation;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.RegistryError;
import io.tidemark.registry.RegistryException;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.SchemaRequest;
import io.tidemark.registry.schema.SchemaType;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Goal: the registry's log on a broker partition (_schemas-0) passes the store contract and survives restart and leader moves. */
class PartitionSchemaStoreTest extends SchemaStoreContractTest {
  private final MemoryStreamStore streams = new MemoryStreamStore(64L << 20);
  private PartitionLocation location;

  private PartitionLog open(int leaderEpoch) {
    try {
      if (location == null) {
        long data = streams.createStream(Map.of()).get(10, TimeUnit.SECONDS);
        long meta = streams.createStream(Map.of()).get(10, TimeUnit.SECONDS);
        location = new PartitionLocation(new TopicPartition(PartitionSchemaStore.TOPIC, 0), Uuid.randomUuid(), data, meta);
      }
      return PartitionLog.open(streams, location, leaderEpoch, new LogSettings(1 << 20, false), Time.SYSTEM, p -> { })
          .get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Override
  protected SchemaStore newStore() {
    location = null;
    return new PartitionSchemaStore(open(1), Time.SYSTEM, 10_000);
  }

  @AfterEach
  void closeStreams() {
    streams.close();
  }

  @Test
  void leaderMoveKeepsIdsAndVersionsAndFencesTheOldWriter() {
    // Goal: a registry on the partition reopened with a newer leader epoch replays the same ids and versions;
    // the old leader's registry can no longer write (50001) and its failed write changes nothing.
    PartitionLog first = open(1);
    SchemaRegistry oldLeader = new SchemaRegistry(RegistryConfig.defaults(0), new PartitionSchemaStore(first, Time.SYSTEM, 1_000));
    oldLeader.start();
    int a = oldLeader.register("a", SchemaRequest.of(SchemaType.AVRO, "\"int\""), false);
    int b = oldLeader.register("b", SchemaRequest.of(SchemaType.JSON, "{\"type\":\"object\"}"), false);
    oldLeader.setCompatibility("a", "FULL");
    oldLeader.deleteVersion("b", "1", false);

    PartitionLog moved = open(2);
    SchemaRegistry newLeader = new SchemaRegistry(RegistryConfig.defaults(0), new PartitionSchemaStore(moved, Time.SYSTEM, 10_000));
    newLeader.start();
    assertThat(newLeader.version("a", "1", false).id()).isEqualTo(a);
    assertThat(newLeader.version("b", "1", true).id()).isEqualTo(b);
    assertThat(newLeader.version("b", "1", true).deleted()).isTrue();
    assertThat(newLeader.subjectCompatibility("a", false)).isEqualTo("FULL");

    assertThatThrownBy(() -> oldLeader.register("c", SchemaRequest.of(SchemaType.AVRO, "\"long\""), false))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.getMessage()).contains("epoch 2");
          assertThat(e.error()).isEqualTo(RegistryError.STORE_ERROR);
        });
    assertThat(newLeader.register("c", SchemaRequest.of(SchemaType.AVRO, "\"long\""), false)).isEqualTo(3);
    assertThat(newLeader.subjects(true, null)).containsExactly("a", "b", "c");
    oldLeader.close();
    newLeader.close();
  }
}
