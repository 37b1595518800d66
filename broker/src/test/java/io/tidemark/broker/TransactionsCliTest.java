package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.internals.Exit;
import org.apache.kafka.tools.TransactionsCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: Kafka's {@code kafka-transactions} tool (its main class, in-process) lists and describes
 * an open transaction, shows it in describe-producers with its start offset, does not report it as
 * hanging (its coordinator knows it), and aborts it in its partition with a marker, after which the last stable offset moves past it.
 */
class TransactionsCliTest {

  static TestBroker broker;

  /** Thrown instead of exiting the JVM. */
  static final class ExitCalled extends RuntimeException {
    final int code;

    ExitCalled(int code) {
      super("exit " + code);
      this.code = code;
    }
  }

  @BeforeAll
  static void start() {
    broker = new TestBroker();
    Exit.setExitProcedure((code, message) -> {
      throw new ExitCalled(code);
    });
  }

  @AfterAll
  static void stop() {
    Exit.resetExitProcedure();
    broker.close();
  }

  private static synchronized String run(String... args) {
    PrintStream oldOut = System.out;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    int code = 0;
    try {
      TransactionsCommand.main(args);
    } catch (ExitCalled e) {
      code = e.code;
    } catch (Exception e) {
      throw new AssertionError("kafka-transactions failed: " + e, e);
    } finally {
      System.setOut(oldOut);
    }
    String text = out.toString(StandardCharsets.UTF_8);
    oldOut.println(text);
    assertThat(code).as("exit code of kafka-transactions %s:%n%s", List.of(args), text).isZero();
    return text;
  }

  @Test
  void listDescribeDescribeProducersFindHangingAndAbort() throws Exception {
    String b = broker.bootstrap();
    TopicPartition tp = new TopicPartition("cli-txn", 0);
    try (Admin admin = broker.admin()) {
      admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) 1))).all().get();
    }
    KafkaProducer<String, String> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "cli-open"));
    try {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>(tp.topic(), "k", "v")).get();

      assertThat(run("--bootstrap-server", b, "list")).contains("cli-open").contains("Ongoing");
      assertThat(run("--bootstrap-server", b, "describe", "--transactional-id", "cli-open")).contains("Ongoing")
          .contains("cli-txn-0");
      String producers = run("--bootstrap-server", b, "describe-producers", "--topic", tp.topic(), "--partition", "0");
      assertThat(producers.lines().filter(l -> !l.isBlank()).toList()).hasSize(2); // header and the one producer
      String[] columns = producers.lines().skip(1).findFirst().orElseThrow().trim().split("\\s+");
      assertThat(columns[columns.length - 1]).as("CurrentTransactionStartOffset").isEqualTo("0");
      // open past any timeout, but its coordinator holds it with this partition: as in Kafka, that is not hanging
      assertThat(run("--bootstrap-server", b, "find-hanging", "--broker-id", "0", "--max-transaction-timeout", "0"))
          .contains("ProducerId").doesNotContain("cli-txn");

      run("--bootstrap-server", b, "abort", "--topic", tp.topic(), "--partition", "0", "--start-offset", "0");
      try (Admin admin = broker.admin()) {
        await().atMost(Duration.ofSeconds(30)).until(() -> admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
            new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get().get(tp).offset() == 2); // the record and the marker
      }
    } finally {
      producer.close(Duration.ZERO);
    }
  }
}
