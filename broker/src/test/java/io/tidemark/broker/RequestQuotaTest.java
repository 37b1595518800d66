package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.time.Duration;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DeleteTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The request-time quota ({@code request_percentage}) and the per-IP connection creation rate
 * ({@code connection_creation_rate} of an ip entity), set with AlterClientQuotas from a real Admin
 * client: a producer under a tiny request quota is throttled (its {@code produce-throttle-time-max}
 * is above zero and it completes about one request per throttle period) while a producer without
 * one on the same broker is not; a client over its {@code controller_mutation_rate} (KIP-599) has
 * topic creations, partition additions and deletions refused with THROTTLING_QUOTA_EXCEEDED; an address over its creation rate has new connections closed
 * unserved, and all are served once the quota is removed. One broker for the class; quota windows of
 * 3 x 1 s and throttles capped at 1 s keep it to a few seconds.
 */
class RequestQuotaTest {
  private static TestBroker broker;

  @BeforeAll
  static void start() {
    broker = new TestBroker(Map.of("kafka.quota.window.num", "3", "kafka.quota.window.size.seconds", "1",
        "kafka.quota.max.throttle.ms", "1000"));
    try (Admin admin = broker.admin()) {
      admin.createTopics(List.of(new NewTopic("rq", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterAll
  static void stop() {
    broker.close();
  }

  private static void quota(ClientQuotaEntity entity, String key, Double value) throws Exception {
    try (Admin admin = broker.admin()) {
      admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity, List.of(new ClientQuotaAlteration.Op(key, value)))))
          .all().get(30, TimeUnit.SECONDS);
    }
  }

  /** Acknowledged sends of a producer sending one record at a time for {@code millis}, and its largest throttle time. */
  private record Run(int acked, double maxThrottleMs) {}

  private static Run sendFor(String clientId, long millis) throws Exception {
    try (KafkaProducer<String, String> producer = broker.producer(Map.of(ProducerConfig.CLIENT_ID_CONFIG, clientId,
        ProducerConfig.LINGER_MS_CONFIG, 0, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000,
        ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 30_000))) {
      producer.partitionsFor("rq"); // metadata first, so the clock measures produce round trips
      int acked = 0;
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
      while (System.nanoTime() < end) {
        producer.send(new ProducerRecord<>("rq", "k", "v")).get(60, TimeUnit.SECONDS);
        acked++;
      }
      double max = producer.metrics().entrySet().stream()
          .filter(e -> e.getKey().name().equals("produce-throttle-time-max"))
          .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).filter(v -> !Double.isNaN(v))
          .max().orElse(0);
      return new Run(acked, max);
    }
  }

  @Test
  void aClientOverItsRequestPercentageIsThrottledAndAnotherIsNot() throws Exception {
    // Goal: request_percentage holds a client to its share of thread time with Kafka's throttle; others are untouched.
    ClientQuotaEntity slow = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "rq-slow"));
    // 0.001% of one thread is 10 microseconds per second: any request puts the client over it
    quota(slow, "request_percentage", 0.001);
    try {
      Run throttled = sendFor("rq-slow", 4_000);
      Run free = sendFor("rq-free", 4_000);
      System.out.printf("request_percentage: throttled client %d requests in 4 s (max throttle %.0f ms), unthrottled %d%n",
          throttled.acked(), throttled.maxThrottleMs(), free.acked());
      assertThat(throttled.maxThrottleMs()).as("throttle time the throttled producer saw").isGreaterThan(0);
      // each response mutes the connection for the 1 s cap: about one request a second, plus the one before the first throttle
      assertThat(throttled.acked()).as("requests of the throttled client in 4 s").isLessThanOrEqualTo(8);
      assertThat(free.maxThrottleMs()).as("throttle time of the client without a quota").isZero();
      assertThat(free.acked()).as("requests of the client without a quota").isGreaterThan(throttled.acked());
    } finally {
      quota(slow, "request_percentage", null);
    }
    // removed, the same client id is served without throttling again (a client without a quota has no rate)
    assertThat(sendFor("rq-slow", 500).maxThrottleMs()).as("throttle once the quota is removed").isZero();
  }

  @Test
  void anAddressOverItsConnectionCreationRateHasNewConnectionsClosedUntilTheQuotaIsRemoved() throws Exception {
    // Goal: connection_creation_rate of an ip entity throttles new connections from it; removed, it does not.
    int port = Integer.parseInt(broker.bootstrap().substring(broker.bootstrap().lastIndexOf(':') + 1));
    Map<String, String> ip = new HashMap<>();
    ip.put(ClientQuotaEntity.IP, "127.0.0.1");
    ClientQuotaEntity local = new ClientQuotaEntity(ip);
    quota(local, "connection_creation_rate", 1.0);
    int served;
    try {
      served = servedOf(8, port);
    } finally {
      quota(local, "connection_creation_rate", null);
    }
    // at 1 per second measured over at least 2 s, 8 connections opened at once cannot all be served
    assertThat(served).as("connections served of 8 at 1/s").isLessThan(8).isGreaterThanOrEqualTo(1);
    assertThat(servedOf(8, port)).as("connections served of 8 without the quota").isEqualTo(8);
  }

  private static Admin adminAs(String clientId) {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
        AdminClientConfig.CLIENT_ID_CONFIG, clientId, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000));
  }

  private static void assertThrottled(KafkaFuture<?> future) {
    assertThat(future).failsWithin(Duration.ofSeconds(30)).withThrowableThat()
        .havingCause().isInstanceOfSatisfying(ThrottlingQuotaExceededException.class,
            e -> assertThat(e.throttleTimeMs()).as("throttle time of the answer").isGreaterThan(0));
  }

  @Test
  void aClientOverItsControllerMutationRateIsRefusedPerTopicWithThrottlingQuotaExceededAndNothingChanges() throws Exception {
    // Goal: KIP-599. Once a client id's controller_mutation_rate bucket is empty, CreateTopics, CreatePartitions and
    // DeleteTopics answer THROTTLING_QUOTA_EXCEEDED with a throttle time and change nothing; other clients are untouched;
    // Kafka's Admin retries throttled topics on its own; removed, the quota stops applying.
    ClientQuotaEntity mutator = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "cm-mutator"));
    // 0.01 partitions/s over a 3 s window: a burst of 0.03 tokens; the 2 partitions below take ~200 s to refill
    quota(mutator, "controller_mutation_rate", 0.01);
    try (Admin admin = adminAs("cm-mutator"); Admin other = adminAs("cm-other")) {
      // admitted while the bucket holds tokens: served whole (the bucket goes below zero)
      admin.createTopics(List.of(new NewTopic("cm-a", 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
      assertThrottled(admin.createTopics(List.of(new NewTopic("cm-b", 1, (short) 1)),
          new CreateTopicsOptions().retryOnQuotaViolation(false)).all());
      assertThrottled(admin.createPartitions(Map.of("cm-a", NewPartitions.increaseTo(4)),
          new CreatePartitionsOptions().retryOnQuotaViolation(false)).all());
      assertThrottled(admin.deleteTopics(List.of("cm-a"), new DeleteTopicsOptions().retryOnQuotaViolation(false)).all());
      assertThat(other.listTopics().names().get(30, TimeUnit.SECONDS)).contains("cm-a").doesNotContain("cm-b");
      assertThat(other.describeTopics(List.of("cm-a")).allTopicNames().get(30, TimeUnit.SECONDS).get("cm-a")
          .partitions()).as("cm-a's partitions after the refused CreatePartitions").hasSize(2);
      // a client without the quota is served meanwhile
      other.createTopics(List.of(new NewTopic("cm-c", 3, (short) 1))).all().get(30, TimeUnit.SECONDS);

      // a rate whose bucket refills within a second or two: the Admin's own retry gets the topic created
      quota(mutator, "controller_mutation_rate", 2.0);
      admin.createTopics(List.of(new NewTopic("cm-d", 8, (short) 1))).all().get(30, TimeUnit.SECONDS);
      admin.createTopics(List.of(new NewTopic("cm-e", 1, (short) 1))).all().get(60, TimeUnit.SECONDS);

      quota(mutator, "controller_mutation_rate", null);
      admin.deleteTopics(List.of("cm-a", "cm-d"), new DeleteTopicsOptions().retryOnQuotaViolation(false)).all()
          .get(30, TimeUnit.SECONDS);
      admin.createTopics(List.of(new NewTopic("cm-b", 4, (short) 1)), new CreateTopicsOptions().retryOnQuotaViolation(false))
          .all().get(30, TimeUnit.SECONDS);
      assertThat(other.listTopics().names().get(30, TimeUnit.SECONDS)).contains("cm-b", "cm-c", "cm-e")
          .doesNotContain("cm-a", "cm-d");
    } finally {
      quota(mutator, "controller_mutation_rate", null);
    }
  }

  /** Opens {@code n} connections at once and counts those the broker answers an ApiVersions request on. */
  private static int servedOf(int n, int port) throws IOException {
    List<Socket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        Socket s = new Socket("127.0.0.1", port);
        s.setSoTimeout(30_000);
        sockets.add(s);
      }
      int served = 0;
      for (Socket s : sockets) {
        served += RawConnection.answersApiVersions(s) ? 1 : 0;
      }
      return served;
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
