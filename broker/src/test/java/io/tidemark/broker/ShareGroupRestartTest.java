package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.net.LoopbackPorts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: a share consumer keeps consuming across a restart of the broker in the middle of its work
 * (same stream store, data directory and port): every record is acknowledged exactly once: none
 * whose acknowledgement succeeded is delivered again, and none is lost.
 */
class ShareGroupRestartTest {

  @TempDir
  Path dir;

  private KafkaBroker start(MemoryStreamStore store, int port) {
    Settings s = new Settings(Map.of("kafka.listener.port", Integer.toString(port), "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1", "kafka.data.dir", dir.toString(), "kafka.group.initial.rebalance.delay.ms", "0",
        "kafka.group.share.heartbeat.interval.ms", "500", "kafka.controlled.shutdown.timeout.ms", "0"));
    KafkaBroker b = new KafkaBroker(new BrokerConfig(s), store, Time.SYSTEM);
    b.start();
    return b;
  }

  private static int freePort() {
    return LoopbackPorts.pick();
  }

  @Test
  void restartInTheMiddleLosesNothingAndAcknowledgesNothingTwice() throws Exception {
    int total = 300;
    MemoryStreamStore store = new MemoryStreamStore(1L << 30);
    int port = freePort();
    KafkaBroker broker = start(store, port);
    String bootstrap = "127.0.0.1:" + port;
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic("restart-share", 2, (short) 1))).all().get();
      admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, "g-restart"),
          List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
    }
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
        new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < total; i++) {
        p.send(new ProducerRecord<>("restart-share", i % 2, null, "v" + i));
      }
      p.flush();
    }
    Set<String> acked = ConcurrentHashMap.newKeySet();
    List<String> ackedTwice = new ArrayList<>();
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch restarted = new CountDownLatch(1);
    CompletableFuture<Void> consuming = CompletableFuture.runAsync(() -> {
      try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
          ConsumerConfig.GROUP_ID_CONFIG, "g-restart", "share.acknowledgement.mode", "explicit", ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10),
          new StringDeserializer(), new StringDeserializer())) {
        c.subscribe(List.of("restart-share"));
        while (!stop.get() && acked.size() < total) {
          Map<Integer, List<String>> polled = new HashMap<>();
          try {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
              polled.computeIfAbsent(r.partition(), x -> new ArrayList<>()).add(r.value());
              c.acknowledge(r, AcknowledgeType.ACCEPT);
            }
            if (acked.size() >= total / 3 && !polled.isEmpty() && holding.getCount() > 0) {
              holding.countDown(); // these records are acquired, not yet acknowledged, while the broker restarts
              restarted.await(120, TimeUnit.SECONDS);
            }
            Map<TopicIdPartition, Optional<KafkaException>> result = c.commitSync(Duration.ofSeconds(20));
            for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : result.entrySet()) {
              if (e.getValue().isEmpty()) {
                for (String v : polled.getOrDefault(e.getKey().partition(), List.of())) {
                  if (!acked.add(v)) {
                    synchronized (ackedTwice) {
                      ackedTwice.add(v);
                    }
                  }
                }
              }
            }
          } catch (KafkaException e) {
            // the broker is restarting: what was not acknowledged comes again
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    });
    try {
      assertThat(holding.await(60, TimeUnit.SECONDS)).as("the consumer got a third of the records").isTrue();
      assertThat(acked.size()).as("acknowledged before the restart").isLessThan(total);
      broker.close();
      broker = start(store, port);
      restarted.countDown();
      await().atMost(Duration.ofSeconds(120)).until(() -> acked.size() >= total || consuming.isDone());
    } finally {
      stop.set(true);
      restarted.countDown();
      consuming.get(60, TimeUnit.SECONDS);
      broker.close();
    }
    assertThat(ackedTwice).as("records acknowledged twice").isEmpty();
    Set<String> all = new HashSet<>();
    for (int i = 0; i < total; i++) {
      all.add("v" + i);
    }
    assertThat(acked).isEqualTo(all);
  }
}
