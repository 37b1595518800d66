package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.config.Settings;
import java.net.InetAddress;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.junit.jupiter.api.Test;

/** Goal: without kafka.advertised.host the broker advertises what Kafka would: the listener's address, else the machine's name. */
class AdvertisedHostTest {

  @Test
  void theListenerAddressOrTheMachinesCanonicalNameIsAdvertised() throws Exception {
    assertThat(BrokerConfig.advertisedHost(new Settings(Map.of("kafka.listener.host", "127.0.0.1")))).isEqualTo("127.0.0.1");
    String machine = InetAddress.getLocalHost().getCanonicalHostName();
    assertThat(BrokerConfig.advertisedHost(Settings.empty())).isEqualTo(machine);
    assertThat(BrokerConfig.advertisedHost(new Settings(Map.of("kafka.listener.host", "::")))).isEqualTo(machine);
    assertThat(BrokerConfig.advertisedHost(new Settings(Map.of("kafka.listener.host", "0.0.0.0", "kafka.advertised.host", "kafka.example"))))
        .isEqualTo("kafka.example");
  }

  @Test
  void metadataNamesTheListenerAddressWhenNothingIsAdvertised() throws Exception {
    KafkaBroker broker = KafkaBroker.inMemory(new Settings(Map.of("kafka.listener.host", "127.0.0.1", "kafka.listener.port", "0")));
    broker.start();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.port()))) {
      Node node = admin.describeCluster().nodes().get().iterator().next();
      assertThat(node.host()).isEqualTo("127.0.0.1");
      assertThat(node.port()).isEqualTo(broker.port());
    } finally {
      broker.close();
    }
  }
}
