package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.partition.PartitionLocation;
import io.tidemark.server.storage.EmbeddedStorage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the stream debugging API may do once enabled: never write into or fence a partition's streams; off loopback only with users. */
class AdminExposureTest {

  private final HttpClient http = HttpClient.newHttpClient();
  private final List<TidemarkServer> servers = new ArrayList<>();
  @TempDir Path dataDir;

  @AfterEach
  void stop() {
    servers.forEach(TidemarkServer::close);
  }

  private TidemarkServer start(String... extra) {
    List<String> args = new ArrayList<>(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "wal.capacity.bytes=" + (32L << 20)));
    args.addAll(List.of(extra));
    TidemarkServer server = Main.start(args, Map.of(), new EmbeddedStorage());
    servers.add(server);
    return server;
  }

  @Test
  void theDebugApiNeitherWritesNorFencesAPartitionsStreams() throws Exception {
    // Goal: with the debugging API on, a partition's streams (and __consumer_offsets') refuse writes, a read goes
    // through the broker's own handle, and the partition keeps taking produces and serving fetches afterwards.
    TidemarkServer server = start("--set", "admin.streams.api.enabled=true");
    String bootstrap = "127.0.0.1:" + server.kafkaPort().orElseThrow();
    try (KafkaProducer<String, String> producer = producer(bootstrap)) {
      for (int i = 0; i < 5; i++) {
        producer.send(new ProducerRecord<>("orders", 0, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
      }
      consume(bootstrap, 5); // the group coordinator opens __consumer_offsets
      List<PartitionLocation> owned = new ArrayList<>();
      owned.add(location(server, new TopicPartition("orders", 0)));
      for (int p = 0; p < 50; p++) {
        server.broker().orElseThrow().partitionLog(new TopicPartition("__consumer_offsets", p))
            .ifPresent(log -> owned.add(log.location()));
      }
      assertThat(owned).hasSizeGreaterThan(1);
      for (PartitionLocation loc : owned) {
        for (long stream : new long[] {loc.dataStreamId(), loc.metaStreamId()}) {
          HttpResponse<String> write = send(server, "POST", "/v1/streams/" + stream + "/records?records=1", new byte[] {7}, null);
          assertThat(write.statusCode()).as(write.body()).isEqualTo(403);
          assertThat(write.body()).contains(loc.topicPartition().topic());
        }
      }
      long data = owned.get(0).dataStreamId();
      HttpResponse<String> read = send(server, "GET", "/v1/streams/" + data + "/records?offset=0", null, null);
      assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
      assertThat(read.body()).contains("\"baseOffset\":0");
      for (int i = 5; i < 10; i++) {
        producer.send(new ProducerRecord<>("orders", 0, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
      }
    }
    assertThat(consume(bootstrap, 10)).extracting(ConsumerRecord::value)
        .containsExactly("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9");
  }

  @Test
  void offLoopbackTheDebugApiNeedsUsers() throws Exception {
    // Goal: the debugging API on a non-loopback address without users refuses to start; with users every route
    // but the probes requires them.
    assertThatThrownBy(() -> start("--set", "admin.host=0.0.0.0", "--set", "admin.streams.api.enabled=true"))
        .hasMessageContaining("admin.auth.basic.users");
    // The controller role alone: the admin endpoint is all this test needs.
    TidemarkServer server = start("--set", "process.roles=controller", "--set", "admin.host=0.0.0.0",
        "--set", "admin.streams.api.enabled=true", "--set", "admin.auth.basic.users=ops:s3cret");
    String good = "Basic " + Base64.getEncoder().encodeToString("ops:s3cret".getBytes(StandardCharsets.UTF_8));
    String bad = "Basic " + Base64.getEncoder().encodeToString("ops:guess".getBytes(StandardCharsets.UTF_8));
    assertThat(send(server, "GET", "/health", null, null).statusCode()).isEqualTo(200);
    assertThat(send(server, "GET", "/ready", null, null).statusCode()).isIn(200, 503);
    assertThat(send(server, "GET", "/metrics", null, null).statusCode()).isEqualTo(401);
    assertThat(send(server, "GET", "/v1/streams", null, bad).statusCode()).isEqualTo(401);
    assertThat(send(server, "POST", "/v1/streams", new byte[0], null).statusCode()).isEqualTo(401);
    assertThat(send(server, "GET", "/v1/streams", null, null).headers().firstValue("WWW-Authenticate")).isPresent();
    assertThat(send(server, "POST", "/v1/streams", new byte[0], good).statusCode()).isEqualTo(201);
    assertThat(send(server, "GET", "/metrics", null, good).statusCode()).isEqualTo(200);
  }

  private static PartitionLocation location(TidemarkServer server, TopicPartition tp) {
    return server.broker().orElseThrow().partitionLog(tp).orElseThrow().location();
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  /** Reads partition 0 of orders from the start through a group until {@code count} records arrived. */
  private static List<ConsumerRecord<String, String>> consume(String bootstrap, int count) {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.GROUP_ID_CONFIG, "exposure-" + count);
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
      consumer.subscribe(List.of("orders"));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (out.size() < count && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(500)).forEach(out::add);
      }
      consumer.commitSync();
    }
    return out;
  }

  HttpResponse<String> send(TidemarkServer server, String method, String path, byte[] body, String auth) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    if (auth != null) {
      b.header("Authorization", auth);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
