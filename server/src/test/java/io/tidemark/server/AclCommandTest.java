package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tidemark.server.storage.EmbeddedStorage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.internals.Exit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: Kafka's own {@code kafka-acls} tool (in-process, unchanged) adds, lists and removes ACLs on a
 * node whose ACLs live in the replicated controller, and the authorizer enforces them at once: a
 * DENY for WRITE on one topic makes a real producer fail with TopicAuthorizationException on that
 * topic only, and removing it lets the same producer write again. The node runs the authorizer with
 * {@code allow.everyone.if.no.acl.found=true}, so the PLAINTEXT client ({@code User:ANONYMOUS}) may
 * manage ACLs (no ACL names the cluster).
 */
class AclCommandTest {
  @TempDir Path dataDir;
  private TidemarkServer server;

  @AfterEach
  void stop() {
    Exit.resetExitProcedure();
    if (server != null) {
      server.close();
    }
  }

  private String acls(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream old = System.out;
    Exit.setExitProcedure((code, message) -> {
      throw new IllegalStateException("kafka-acls exited " + code + ": " + message + "\n" + out);
    });
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      String[] all = new String[args.length + 2];
      all[0] = "--bootstrap-server";
      all[1] = "127.0.0.1:" + server.kafkaPort().orElseThrow();
      System.arraycopy(args, 0, all, 2, args.length);
      org.apache.kafka.tools.AclCommand.main(all);
    } finally {
      System.setOut(old);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void kafkaAclsAddsListsAndRemovesAclsThatTheAuthorizerEnforces() throws Exception {
    server = Main.start(TidemarkServerTest.withPorts("--set", "data.dir=" + dataDir, "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (32L << 20),
        "--set", "kafka.authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "--set", "kafka.allow.everyone.if.no.acl.found=true"), Map.of(), new EmbeddedStorage());
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.kafkaPort().orElseThrow());
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      producer.send(new ProducerRecord<>("secret", "k", "before")).get();
      producer.send(new ProducerRecord<>("open", "k", "before")).get();

      acls("--add", "--deny-principal", "User:ANONYMOUS", "--operation", "Write", "--topic", "secret");
      acls("--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "logs-",
          "--resource-pattern-type", "prefixed");
      String listed = acls("--list");
      assertThat(listed).contains("name=secret", "User:ANONYMOUS", "DENY", "WRITE", "name=logs-", "PREFIXED", "User:alice");
      assertThat(acls("--list", "--topic", "logs-app", "--resource-pattern-type", "match")).contains("User:alice")
          .doesNotContain("User:ANONYMOUS");

      assertThatThrownBy(() -> producer.send(new ProducerRecord<>("secret", "k", "denied")).get())
          .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TopicAuthorizationException.class);
      producer.send(new ProducerRecord<>("open", "k", "still allowed")).get();

      acls("--remove", "--force", "--deny-principal", "User:ANONYMOUS", "--operation", "Write", "--topic", "secret");
      assertThat(acls("--list")).doesNotContain("name=secret").contains("name=logs-");
      await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
          .until(() -> producer.send(new ProducerRecord<>("secret", "k", "after")).get() != null);
    }
  }
}
