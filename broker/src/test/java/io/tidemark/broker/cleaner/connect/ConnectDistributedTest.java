package io.tidemark.broker.cleaner.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.cleaner.CompactedBrokerFixtureAccess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.connect.cli.ConnectDistributed;
import org.apache.kafka.connect.runtime.Connect;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: Kafka Connect 4.4 in distributed mode runs unchanged on Tidemark: it creates its config,
 * offset and status topics compacted (and refuses to start otherwise), copies a file through a
 * source and a sink connector, and after a restart of the worker goes on where it stopped: the
 * sink file holds every line of the source exactly once, in order. The file connectors are small
 * test ones ({@link LineFileSource}, {@link LineFileSink}): Kafka's connect-file does not resolve
 * on this build machine. It takes about 40 s (a Connect worker started twice), so it runs with
 * {@code -Dtidemark.test.scale=full} only, outside the default suite's time budget.
 */
@EnabledIfSystemProperty(named = "tidemark.test.scale", matches = "full")
class ConnectDistributedTest {

  @TempDir
  Path dir;

  @Test
  void fileSourceAndSinkCopyAFileAcrossAWorkerRestart() throws Exception {
    Path source = dir.resolve("in.txt");
    Path sink = dir.resolve("out.txt");
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      lines.add("line " + i);
    }
    Files.write(source, lines.subList(0, 100), StandardCharsets.UTF_8);
    try (CompactedBrokerFixtureAccess broker = new CompactedBrokerFixtureAccess(dir.resolve("broker"))) {
      Connect<?> connect = start(broker.bootstrap());
      try {
        String url = connect.rest().serverUrl().toString();
        put(url, "source", Map.of("connector.class", LineFileSource.class.getName(), "tasks.max", "1",
            "file", source.toString(), "topic", "copied"));
        put(url, "sink", Map.of("connector.class", LineFileSink.class.getName(), "tasks.max", "1",
            "file", sink.toString(), "topics", "copied"));
        awaitLines(sink, lines.subList(0, 100));
      } finally {
        connect.stop();
        connect.awaitStop();
      }
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()))) {
        for (String topic : List.of("connect-configs", "connect-offsets", "connect-status")) {
          ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
          assertThat(admin.describeConfigs(List.of(res)).all().get().get(res).get("cleanup.policy").value())
              .as(topic).isEqualTo("compact");
        }
      }
      Files.write(source, lines.subList(100, 200), StandardCharsets.UTF_8, StandardOpenOption.APPEND);
      Connect<?> again = start(broker.bootstrap());
      try {
        awaitLines(sink, lines);
      } finally {
        again.stop();
        again.awaitStop();
      }
    }
  }

  private static Connect<?> start(String bootstrap) {
    Map<String, String> props = new HashMap<>();
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", "tidemark-connect");
    props.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
    props.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
    props.put("config.storage.topic", "connect-configs");
    props.put("offset.storage.topic", "connect-offsets");
    props.put("status.storage.topic", "connect-status");
    props.put("config.storage.replication.factor", "1");
    props.put("offset.storage.replication.factor", "1");
    props.put("status.storage.replication.factor", "1");
    props.put("offset.storage.partitions", "1");
    props.put("status.storage.partitions", "1");
    props.put("offset.flush.interval.ms", "200");
    props.put("listeners", "http://127.0.0.1:0");
    props.put("plugin.discovery", "service_load");
    props.put("consumer.auto.offset.reset", "earliest");
    return new ConnectDistributed().startConnect(props);
  }

  private static void put(String url, String name, Map<String, String> config) throws Exception {
    StringBuilder json = new StringBuilder("{");
    config.forEach((k, v) -> json.append(json.length() > 1 ? "," : "").append('"').append(k).append("\":\"")
        .append(v.replace("\\", "\\\\")).append('"'));
    json.append('}');
    HttpClient http = HttpClient.newHttpClient();
    Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500)).until(() -> {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url + "connectors/" + name + "/config"))
          .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(json.toString())).build(),
          HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 || r.statusCode() == 201;
    });
  }

  private static void awaitLines(Path sink, List<String> expected) {
    Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
        assertThat(Files.exists(sink) ? Files.readAllLines(sink, StandardCharsets.UTF_8) : List.of()).isEqualTo(expected));
  }
}
