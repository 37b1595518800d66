package io.tidemark.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.cluster.ClusterMetadata;
import io.tidemark.broker.cluster.ClusterView;
import io.tidemark.broker.topic.RegistryState;
import io.tidemark.broker.topic.TopicException;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.raft.ControllerConfig;
import io.tidemark.metadata.raft.ControllerNode;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.server.FreePorts;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker's topic metadata on one real controller voter: what one broker writes, every view reads back. */
class ControllerClusterMetadataTest {

  @TempDir Path dir;
  private ControllerNode node;
  private ControllerClient client;
  private NodeRef self;

  @BeforeEach
  void start() throws Exception {
    ControllerConfig config = new ControllerConfig(new Settings(Map.of("controller.node.id", "1",
        "controller.voters", "1@127.0.0.1:" + FreePorts.pick(), "controller.dir", dir.toString())));
    node = new ControllerNode(config, Clock.systemUTC(), new MemoryObjectStorage(), ObjectKeys.defaults()::key).start();
    // a single voter elects itself first; a loaded machine can take longer than the client's attempts
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (!node.isLeader() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    client = new ControllerClient(config);
    self = client.registerBroker(1, List.of(new Endpoint("kafka", "127.0.0.1", 19092)), "").get(1, TimeUnit.MINUTES);
  }

  @AfterEach
  void stop() {
    client.close();
    node.close();
  }

  private static RegistryState with(RegistryState s, TopicInfo topic) {
    Map<String, TopicInfo> topics = new LinkedHashMap<>(s.topics());
    topics.put(topic.name(), topic);
    return new RegistryState(s.clusterId(), s.nextProducerIdBlock(), topics);
  }

  @Test
  void topicsConfigsAndLeadersWrittenByOneBrokerAreReadBackByAnother() {
    // Goal: topics, internal flag, configs, leaders and stream ids round-trip through the controller log.
    ClusterMetadata writer = new ControllerClusterMetadata(client, node.replica(), self, "");
    ClusterMetadata reader = new ControllerClusterMetadata(client, node.replica(), self, "");
    assertThat(reader.state().clusterId()).isEqualTo(writer.state().clusterId()).isNotEmpty();
    assertThat(reader.liveBrokers()).containsExactly(new ClusterView.Node(1, "127.0.0.1", 19092));

    TopicInfo topic = new TopicInfo("t", Uuid.randomUuid(), true, Map.of("retention.ms", "1000"),
        List.of(new TopicInfo.PartitionInfo(0, 10, 11, 0, 1), new TopicInfo.PartitionInfo(1, 12, 13, 0, 1)));
    RegistryState created = writer.apply(writer.state(), with(writer.state(), topic));
    assertThat(created.topics().get("t")).isEqualTo(topic);
    assertThat(reader.state().topics().get("t")).isEqualTo(topic);

    TopicInfo changed = topic.withConfigs(Map.of("retention.ms", "2000", "max.message.bytes", "100"))
        .withPartitions(List.of(topic.partitions().get(0).ledBy(1, 3), topic.partitions().get(1)));
    writer.apply(writer.state(), with(writer.state(), changed));
    assertThat(reader.state().topics().get("t")).isEqualTo(changed);

    TopicInfo grown = changed.withPartitions(List.of(changed.partitions().get(0), changed.partitions().get(1),
        new TopicInfo.PartitionInfo(2, 14, 15, 0, 1)));
    writer.apply(writer.state(), with(writer.state(), grown));
    assertThat(reader.state().topics().get("t")).isEqualTo(grown);
    // shrinking is refused and changes nothing
    assertThatThrownBy(() -> writer.apply(writer.state(), with(writer.state(), changed))).isInstanceOf(TopicException.class)
        .extracting(e -> ((TopicException) e).outcome()).isEqualTo(TopicException.Outcome.INVALID_PARTITIONS);
    assertThat(reader.state().topics().get("t")).isEqualTo(grown);

    TopicInfo sameName = new TopicInfo("t", Uuid.randomUuid(), false, Map.of(), List.of(new TopicInfo.PartitionInfo(0, 20, 21, 0, 1)));
    RegistryState withoutT = new RegistryState(reader.state().clusterId(), 0, Map.of());
    assertThatThrownBy(() -> reader.apply(withoutT, with(withoutT, sameName))).isInstanceOf(TopicException.class)
        .extracting(e -> ((TopicException) e).outcome()).isEqualTo(TopicException.Outcome.ALREADY_EXISTS);
    assertThat(reader.state().topics().get("t")).isEqualTo(grown);
    // a creation racing another broker's sees the other topic in its starting state: it must not replace it
    assertThatThrownBy(() -> reader.apply(reader.state(), with(reader.state(), sameName)))
        .isInstanceOf(TopicException.class)
        .extracting(e -> ((TopicException) e).outcome()).isEqualTo(TopicException.Outcome.ALREADY_EXISTS);
    assertThat(reader.state().topics().get("t")).isEqualTo(grown);

    RegistryState deleted = writer.apply(writer.state(), withoutT);
    assertThat(deleted.topics()).isEmpty();
    assertThat(node.replica().image().keyValue(TopicDescriptor.NAMESPACE, new java.util.UUID(
        topic.id().getMostSignificantBits(), topic.id().getLeastSignificantBits()).toString())).isNull();
  }

  @Test
  void producerIdBlocksNeverOverlapAndTheClusterIdIsAgreedOnce() {
    // Goal: blocks from the controller are disjoint; a broker configured for another cluster refuses to start.
    ClusterMetadata first = new ControllerClusterMetadata(client, node.replica(), self, "");
    ClusterMetadata.IdBlock a = first.allocateProducerIds();
    ClusterMetadata.IdBlock b = first.allocateProducerIds();
    assertThat(a.size()).isPositive();
    assertThat(b.first()).isGreaterThanOrEqualTo(a.first() + a.size());
    String agreed = first.state().clusterId();
    assertThat(new ControllerClusterMetadata(client, node.replica(), self, agreed).state().clusterId()).isEqualTo(agreed);
    assertThatThrownBy(() -> new ControllerClusterMetadata(client, node.replica(), self, "another-cluster"))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining(agreed);
  }
}
