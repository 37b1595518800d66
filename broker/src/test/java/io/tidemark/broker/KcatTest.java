package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: kcat (librdkafka, a non-Java client) lists metadata, produces and consumes against the
 * broker, and reads batches that the Java producer compressed with every codec. CI installs kcat
 * (.ci/run); where it is missing outside CI the test is skipped, in CI it fails.
 */
class KcatTest {

  static TestBroker broker;
  static String kcat;

  @BeforeAll
  static void start() {
    kcat = findKcat();
    if (kcat == null) {
      if (System.getenv("CI") != null) {
        throw new AssertionError("kcat is not installed; .ci/run installs it with apt-get");
      }
      Assumptions.abort("kcat not installed (apt-get install kcat)");
    }
    broker = new TestBroker();
  }

  @AfterAll
  static void stop() {
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  void metadataListsTopicWithItsPartitions() throws Exception {
    createTopic("kcat-meta", 3);
    Run run = run(null, "-L", "-b", broker.bootstrap(), "-t", "kcat-meta");
    assertThat(run.code).as(run.out).isZero();
    assertThat(run.out).contains("topic \"kcat-meta\" with 3 partitions");
    assertThat(run.out).contains("partition 0, leader 0");
  }

  @Test
  void producesWithKcatAndConsumesWithKcat(@TempDir Path dir) throws Exception {
    createTopic("kcat-pc", 1);
    StringBuilder input = new StringBuilder();
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      input.append("k").append(i).append(':').append("value-").append(i).append('\n');
      expected.add("k" + i + "=value-" + i + "@" + i);
    }
    Path in = dir.resolve("in.txt");
    Files.writeString(in, input);
    Run produce = run(in, "-P", "-b", broker.bootstrap(), "-t", "kcat-pc", "-p", "0", "-K", ":",
        "-X", "acks=all");
    assertThat(produce.code).as(produce.out).isZero();

    Run consume = run(null, "-C", "-b", broker.bootstrap(), "-t", "kcat-pc", "-p", "0", "-o", "beginning", "-e",
        "-f", "%k=%s@%o\\n");
    assertThat(consume.code).as(consume.out).isZero();
    assertThat(consume.out.lines().filter(l -> l.startsWith("k")).toList()).containsExactlyElementsOf(expected);
  }

  @Test
  void consumesBatchesCompressedByTheJavaProducerWithEveryCodec() throws Exception {
    for (String codec : List.of("gzip", "snappy", "lz4", "zstd")) {
      String topic = "kcat-" + codec;
      createTopic(topic, 1);
      try (KafkaProducer<String, String> producer =
          broker.producer(Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.ACKS_CONFIG, "all"))) {
        for (int i = 0; i < 50; i++) {
          producer.send(new ProducerRecord<>(topic, 0, "k" + i, codec + "-" + i));
        }
        producer.flush();
      }
      Run consume = run(null, "-C", "-b", broker.bootstrap(), "-t", topic, "-p", "0", "-o", "beginning", "-e",
          "-f", "%s\\n");
      assertThat(consume.code).as(consume.out).isZero();
      List<String> values = consume.out.lines().filter(l -> l.startsWith(codec + "-")).toList();
      assertThat(values).as(codec).hasSize(50).first().isEqualTo(codec + "-0");
      assertThat(values.get(49)).isEqualTo(codec + "-49");
    }
  }

  private static void createTopic(String name, int partitions) throws Exception {
    try (Admin admin = broker.admin()) {
      admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
  }

  record Run(int code, String out) {}

  private static Run run(Path stdin, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(kcat);
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    if (stdin != null) {
      pb.redirectInput(stdin.toFile());
    }
    Process process = pb.start();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("kcat timed out: " + command);
    }
    return new Run(process.exitValue(), new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  private static String findKcat() {
    for (String name : List.of("kcat", "kafkacat")) {
      for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
        File f = new File(dir, name);
        if (f.canExecute()) {
          return f.getPath();
        }
      }
    }
    return null;
  }
}
