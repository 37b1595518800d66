package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;

/**
 * Goal: Kafka's connection limits hold with Kafka's semantics: a connection over
 * {@code max.connections.per.ip} (or its override) is closed at once and a real Kafka client is
 * served again once the address holds fewer; over {@code max.connections} a new connection waits
 * (not served, not closed) until another closes; {@code max.connection.creation.rate} spaces
 * accepts out so that no more than the rate is accepted over the window.
 */
class ConnectionLimitsTest {

  @Test
  void theThrottleOfAnAddressOverItsConnectionCreationRateIsBoundedByOneQuotaSample() throws Exception {
    // Goal: a tiny connection_creation_rate (0.001/s) holds a connection unserved for at most one quota sample (1 s),
    // not the ~990 s its rate formula gives, and an address without a quota is not throttled.
    java.net.InetAddress limited = java.net.InetAddress.getByName("10.0.0.5");
    java.net.InetAddress free = java.net.InetAddress.getByName("10.0.0.6");
    java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(1_000_000);
    var quotas = Map.of(new org.apache.kafka.common.quota.ClientQuotaEntity(Map.of(
        org.apache.kafka.common.quota.ClientQuotaEntity.IP, "10.0.0.5")), Map.of("connection_creation_rate", 0.001));
    var limits = new io.tidemark.broker.network.ConnectionLimits(io.tidemark.stream.config.Settings.empty(), List.of(),
        11, 1000, now::get, () -> quotas);
    for (int i = 0; i < 5; i++) {
      assertThat(limits.ipThrottleMs(limited)).as("throttle of connection %d", i).isEqualTo(1000);
      now.addAndGet(10);
    }
    assertThat(limits.ipThrottleMs(free)).isZero();
  }

  @Test
  void aConnectionOverThePerIpLimitIsClosedAndClientsAreServedOnceOneCloses() throws Exception {
    try (TestBroker broker = new TestBroker(Map.of("max.connections.per.ip", "3"))) {
      int port = broker.broker.port();
      List<Socket> held = new ArrayList<>(List.of(connect(port), connect(port), connect(port)));
      for (Socket s : held) {
        assertThat(RawConnection.answersApiVersions(s)).isTrue();
      }
      try (Socket fourth = connect(port)) {
        assertThat(RawConnection.closedByServer(fourth)).isTrue();
      }
      try (Admin refused = admin(broker, 3_000)) {
        assertThatThrownBy(() -> refused.describeCluster().nodes().get(30, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class);
      }
      // an Admin client needs two connections (bootstrap, then the node): it fits once two of the three are closed
      held.remove(0).close();
      held.remove(0).close();
      await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
        try (Admin admin = admin(broker, 10_000)) {
          assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
        }
      });
      for (Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void anOverrideRaisesTheLimitForItsAddress() throws Exception {
    try (TestBroker broker = new TestBroker(Map.of("max.connections.per.ip", "1",
        "max.connections.per.ip.overrides", "127.0.0.1:3"))) {
      int port = broker.broker.port();
      List<Socket> held = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        held.add(connect(port));
        assertThat(RawConnection.answersApiVersions(held.get(i))).as("connection " + i).isTrue();
      }
      try (Socket fourth = connect(port)) {
        assertThat(RawConnection.closedByServer(fourth)).isTrue();
      }
      for (Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void overMaxConnectionsANewConnectionWaitsUntilOneCloses() throws Exception {
    try (TestBroker broker = new TestBroker(Map.of("max.connections", "2"))) {
      int port = broker.broker.port();
      Socket first = connect(port);
      Socket second = connect(port);
      assertThat(RawConnection.answersApiVersions(first)).isTrue();
      assertThat(RawConnection.answersApiVersions(second)).isTrue();
      try (Socket waiting = connect(port)) {
        RawConnection.sendApiVersions(waiting);
        waiting.setSoTimeout(1_500);
        assertThatThrownBy(() -> new DataInputStream(waiting.getInputStream()).readInt())
            .as("not served while the broker holds max.connections").isInstanceOf(SocketTimeoutException.class);
        first.close();
        waiting.setSoTimeout(60_000);
        DataInputStream in = new DataInputStream(waiting.getInputStream());
        int size = in.readInt();
        assertThat(size).isPositive();
      }
      second.close();
    }
  }

  @Test
  void theCreationRateSpacesAcceptsOut() throws Exception {
    int connections = 20;
    try (TestBroker broker = new TestBroker(Map.of("max.connection.creation.rate", "5",
        "kafka.quota.window.num", "2", "kafka.quota.window.size.seconds", "1"))) {
      int port = broker.broker.port();
      long start = System.nanoTime();
      for (int i = 0; i < connections; i++) {
        try (Socket s = connect(port)) {
          assertThat(RawConnection.answersApiVersions(s)).as("connection " + i).isTrue();
        }
      }
      long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      // At 5 per second with at most a two-second window of burst, 20 accepts take at least (20 - 10) / 5 s.
      assertThat(elapsedMs).as("20 connections at 5/s").isGreaterThanOrEqualTo(1_800);
    }
  }

  private static Socket connect(int port) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout(60_000);
    return s;
  }

  private static Admin admin(TestBroker broker, int timeoutMs) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(timeoutMs, 5_000));
    return Admin.create(p);
  }
}
