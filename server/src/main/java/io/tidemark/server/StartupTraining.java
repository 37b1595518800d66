package io.tidemark.server;

import io.tidemark.server.storage.EmbeddedStorage;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The training run of the JVM's ahead-of-time cache ({@code bin/tidemark aot-cache}; JDK 25's
 * {@code -XX:AOTCacheOutput}): one node in a scratch directory on loopback ports starts, gets a
 * topic and acknowledged records, stops, starts again on the same data (WAL recovery and reopening
 * partitions, what a restart does), takes more records and stops. The JVM then writes the classes it
 * loaded and linked and the methods' profiles into the cache, which later starts map instead of
 * loading and verifying the same classes again (less CPU before a node serves). Nothing of the
 * scratch data remains.
 */
public final class StartupTraining {

  private static final int PARTITIONS = 8;
  private static final int RECORDS_PER_PARTITION = 50;

  private StartupTraining() {}

  public static void main(String[] args) throws Exception {
    Path dir = Files.createTempDirectory("tidemark-aot-training-");
    try {
      List<String> settings = settings(dir);
      run(settings, true);
      run(settings, false);
    } finally {
      deleteRecursively(dir);
    }
    System.out.println("tidemark: startup training done");
  }

  /** One start, produce to every partition of topic {@code training} (created on the first run), stop. */
  private static void run(List<String> settings, boolean create) throws Exception {
    TidemarkServer server = Main.start(settings, Map.of(), new EmbeddedStorage());
    try {
      String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
      if (create) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
          admin.createTopics(List.of(new NewTopic("training", PARTITIONS, (short) 1))).all().get(2, TimeUnit.MINUTES);
        }
      }
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
          for (int i = 0; i < RECORDS_PER_PARTITION; i++) {
            sent.add(producer.send(new ProducerRecord<>("training", partition, null, new byte[256])));
          }
        }
        for (Future<RecordMetadata> f : sent) {
          f.get(2, TimeUnit.MINUTES);
        }
      }
    } finally {
      server.close();
    }
  }

  private static List<String> settings(Path dir) throws IOException {
    return List.of("--set", "data.dir=" + dir,
        "--set", "kafka.listener.host=127.0.0.1", "--set", "kafka.advertised.host=127.0.0.1",
        "--set", "kafka.listener.port=" + freePort(), "--set", "admin.host=127.0.0.1", "--set", "admin.port=0",
        "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "controller.voters=0@127.0.0.1:" + freePort());
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }
}
