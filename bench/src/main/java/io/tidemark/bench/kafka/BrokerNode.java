package io.tidemark.bench.kafka;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;

/**
 * A broker under test (Apache Kafka or Tidemark) running in a child JVM on loopback, with an
 * Admin client for readiness and topic creation. Closing it stops the child and deletes its data
 * directory. Owned by the benchmark's main thread.
 */
final class BrokerNode implements AutoCloseable {

  private static final Duration ADMIN_CALL = Duration.ofSeconds(30);

  private final String label;
  private final String bootstrap;
  private final ChildJvm process;
  private final Path dataDir;
  private Admin admin;

  BrokerNode(String label, String bootstrap, ChildJvm process, Path dataDir) {
    this.label = label;
    this.bootstrap = bootstrap;
    this.process = process;
    this.dataDir = dataDir;
  }

  /** Short name, used in log file names. */
  String name() {
    return process.name();
  }

  String label() {
    return label;
  }

  String bootstrap() {
    return bootstrap;
  }

  /** Waits until the broker answers DescribeCluster with at least one node; fails when it exits or the time passes. */
  void awaitReady(Duration timeout) throws Exception {
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
    admin = Admin.create(props);
    Instant deadline = Instant.now().plus(timeout);
    Exception last = null;
    while (Instant.now().isBefore(deadline)) {
      requireAlive();
      try {
        if (!admin.describeCluster().nodes().get(15, TimeUnit.SECONDS).isEmpty()) {
          return;
        }
      } catch (ExecutionException | TimeoutException e) {
        last = e;
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException(label + " did not become ready within " + timeout + " (last error: " + last
        + "); its log " + process.log() + " ends with:\n" + process.tail(30));
  }

  /** Creates a topic (replication factor 1) and waits until every partition has a leader. */
  void createTopic(String name, int partitions) throws Exception {
    createTopic(name, partitions, Map.of());
  }

  /** Creates a topic (replication factor 1) with {@code configs} and waits until every partition has a leader. */
  void createTopic(String name, int partitions, Map<String, String> configs) throws Exception {
    requireAlive();
    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs))).all()
        .get(ADMIN_CALL.toSeconds(), TimeUnit.SECONDS);
    Instant deadline = Instant.now().plus(ADMIN_CALL);
    while (true) {
      try {
        Map<String, TopicDescription> topics = admin.describeTopics(List.of(name)).allTopicNames()
            .get(ADMIN_CALL.toSeconds(), TimeUnit.SECONDS);
        if (topics.get(name).partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
          return;
        }
      } catch (ExecutionException e) {
        if (Instant.now().isAfter(deadline)) {
          throw e;
        }
      }
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("topic " + name + " on " + label + " has partitions without a leader after "
            + ADMIN_CALL);
      }
      Thread.sleep(200);
    }
  }

  /** Sets one config of a topic (IncrementalAlterConfigs). */
  void setTopicConfig(String topic, String key, String value) throws Exception {
    requireAlive();
    admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic),
        List.of(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET)))).all()
        .get(ADMIN_CALL.toSeconds(), TimeUnit.SECONDS);
  }

  /** Throws with the end of the broker's log if it is no longer running. */
  void requireAlive() {
    if (!process.isAlive()) {
      throw new IllegalStateException(label + " exited; its log " + process.log() + " ends with:\n" + process.tail(30));
    }
  }

  @Override
  public void close() throws InterruptedException, IOException {
    if (admin != null) {
      admin.close(Duration.ofSeconds(5));
    }
    process.close();
    Setup.deleteRecursively(dataDir);
  }
}
