package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.security.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: a three-node cluster secured end to end, as the "three-node cluster with TLS + SCRAM
 * between nodes and clients" asks: every node has a SASL_SSL client listener ({@code CLIENT}) and a
 * SASL_SSL inter-broker listener ({@code BROKER}), each with its own certificate, SCRAM-SHA-512 only,
 * and the ACL authorizer denying by default; the nodes' own clients log in as the super user {@code
 * broker} on {@code BROKER}. Real kafka-clients produce and consume with credentials, a wrong password
 * and a user without ACLs are refused (and change nothing), a transaction over partitions led by all
 * three nodes commits (its markers travel between brokers on the secured listener), and a partition
 * moved between nodes while a user produces loses nothing acknowledged.
 *
 * <p>One {@link ChildCluster} for the class (its own: the shared one is PLAINTEXT).
 */
class SecuredClusterTest {

  private static final String ADMIN_PASSWORD = "admin-secret";
  private static final Path LOGS = Path.of("target", "secured-cluster-logs");
  private static Path dir;
  private static Path trust;
  private static ChildCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("tidemark-secured-cluster");
    // one key pair per node (keytool), and the trust store of all three certificates built here (fewer keytool runs)
    java.security.KeyStore trusted = java.security.KeyStore.getInstance("PKCS12");
    trusted.load(null, null);
    for (int id = 1; id <= 3; id++) {
      Path store = TestCertificates.keyPair(dir, "node-" + id, "CN=node-" + id + ",O=Tidemark");
      java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
      try (java.io.InputStream in = Files.newInputStream(store)) {
        ks.load(in, TestCertificates.PASSWORD.toCharArray());
      }
      trusted.setCertificateEntry("node-" + id, ks.getCertificate("node-" + id));
    }
    trust = dir.resolve("trust.p12");
    try (java.io.OutputStream out = Files.newOutputStream(trust)) {
      trusted.store(out, TestCertificates.PASSWORD.toCharArray());
    }
    int[] brokerPorts = {FreePorts.pick(), FreePorts.pick(), FreePorts.pick()};
    List<String> shared = List.of("controller.session.timeout.ms=" + SharedCluster.SESSION_TIMEOUT_MS,
        "listener.security.protocol.map=CLIENT:SASL_SSL,BROKER:SASL_SSL",
        "inter.broker.listener.name=BROKER",
        "sasl.enabled.mechanisms=SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
        "sasl.scram.bootstrap.credentials=SCRAM-SHA-512=[name=broker,password=broker-secret];"
            + "SCRAM-SHA-512=[name=admin,password=" + ADMIN_PASSWORD + "]",
        "listener.name.broker.scram-sha-512.sasl.jaas.config=" + jaas("broker", "broker-secret"),
        "ssl.truststore.location=" + trust, "ssl.truststore.password=" + TestCertificates.PASSWORD,
        "ssl.keystore.password=" + TestCertificates.PASSWORD,
        "kafka.authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "kafka.super.users=User:broker;User:admin",
        "kafka.allow.everyone.if.no.acl.found=false");
    cluster = new ChildCluster(dir, shared);
    cluster.perNodeSettings(id -> List.of(
            "listeners=CLIENT://127.0.0.1:" + cluster.kafkaPort(id) + ",BROKER://127.0.0.1:" + brokerPorts[id - 1],
            "ssl.keystore.location=" + dir.resolve("node-" + id + ".p12")))
        .clientSecurity(security("admin", ADMIN_PASSWORD));
    try {
      cluster.start();
      try (Admin admin = cluster.admin()) {
        admin.alterUserScramCredentials(List.of(
            new UserScramCredentialUpsertion("alice", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
                "alice-secret"),
            new UserScramCredentialUpsertion("mallory", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
                "mallory-secret"))).all().get(1, TimeUnit.MINUTES);
        List<AclBinding> acls = new ArrayList<>();
        for (AclOperation op : List.of(AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE)) {
          acls.add(allowAlice(ResourceType.TOPIC, op));
        }
        acls.add(allowAlice(ResourceType.GROUP, AclOperation.READ));
        acls.add(allowAlice(ResourceType.TRANSACTIONAL_ID, AclOperation.WRITE));
        acls.add(allowAlice(ResourceType.TRANSACTIONAL_ID, AclOperation.DESCRIBE));
        admin.createAcls(acls).all().get(1, TimeUnit.MINUTES);
      }
    } catch (Exception | AssertionError e) {
      stop();
      throw e;
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
      cluster.keepLogs(LOGS);
      cluster = null;
    }
    if (dir != null && Files.exists(dir)) {
      try (Stream<Path> all = Files.walk(dir)) {
        all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static AclBinding allowAlice(ResourceType type, AclOperation op) {
    return new AclBinding(new ResourcePattern(type, "secured-", PatternType.PREFIXED),
        new AccessControlEntry("User:alice", "*", op, AclPermissionType.ALLOW));
  }

  private static String jaas(String user, String password) {
    return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user + "\" password=\""
        + password + "\";";
  }

  private static Map<String, Object> security(String user, String password) {
    Map<String, Object> p = new HashMap<>();
    p.put("security.protocol", "SASL_SSL");
    p.put("ssl.truststore.location", trust.toString());
    p.put("ssl.truststore.password", TestCertificates.PASSWORD);
    p.put("sasl.mechanism", "SCRAM-SHA-512");
    p.put("sasl.jaas.config", jaas(user, password));
    return p;
  }

  /** A client of {@code user} against every node's CLIENT listener. */
  private static Map<String, Object> client(String user, String password) {
    Map<String, Object> p = new HashMap<>(security(user, password));
    p.put("bootstrap.servers", cluster.bootstrapAll());
    p.put("default.api.timeout.ms", 60_000);
    p.put("request.timeout.ms", 20_000);
    return p;
  }

  /**
   * Creates {@code topic} as the admin with three partitions and moves partition {@code i} to node
   * {@code i + 1} (a node accepts explicit assignments only to itself), so that each node leads one.
   */
  private static TopicDescription createSpread(Admin admin, String topic) throws Exception {
    admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get(1, TimeUnit.MINUTES);
    Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
    for (int p = 0; p < 3; p++) {
      TopicPartition tp = new TopicPartition(topic, p);
      int node = p + 1;
      if (await().atMost(Duration.ofMinutes(2)).ignoreExceptions().until(() -> leader(admin, tp), l -> l > 0) != node) {
        moves.put(tp, Optional.of(new NewPartitionReassignment(List.of(node))));
      }
    }
    if (!moves.isEmpty()) {
      admin.alterPartitionReassignments(moves).all().get(1, TimeUnit.MINUTES);
    }
    return await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(
        () -> admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic),
        d -> d.partitions().stream().allMatch(p -> p.leader() != null && p.leader().id() == p.partition() + 1));
  }

  @Test
  void aTransactionOverPartitionsOfEveryNodeCommitsAndAUserWithCredentialsReadsIt() throws Exception {
    // Goal: alice produces transactionally to partitions led by nodes 1, 2 and 3 (the commit's markers go from the
    // coordinator to the other leaders over their SASL_SSL BROKER listener as User:broker) and reads it back committed.
    String topic = "secured-orders";
    try (Admin admin = cluster.admin()) {
      TopicDescription d = createSpread(admin, topic);
      assertThat(d.partitions()).extracting(p -> p.leader().id()).containsExactlyInAnyOrder(1, 2, 3);
    }
    Map<String, Object> producerConfig = client("alice", "alice-secret");
    producerConfig.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "secured-tx");
    producerConfig.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig, new StringSerializer(),
        new StringSerializer())) {
      producer.initTransactions();
      producer.beginTransaction();
      for (int i = 0; i < 30; i++) {
        producer.send(new ProducerRecord<>(topic, i % 3, "k" + i, "committed-" + i));
      }
      producer.commitTransaction();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, 1, "k", "aborted"));
      producer.flush();
      producer.abortTransaction();
    }

    Map<String, Object> consumerConfig = client("alice", "alice-secret");
    consumerConfig.put(ConsumerConfig.GROUP_ID_CONFIG, "secured-readers");
    consumerConfig.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    consumerConfig.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    Set<String> read = new HashSet<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerConfig, new StringDeserializer(),
        new StringDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
      while (read.size() < 30 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(300))) {
          read.add(r.value());
        }
      }
      consumer.commitSync(Duration.ofMinutes(1));
    }
    Set<String> expected = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      expected.add("committed-" + i);
    }
    assertThat(read).isEqualTo(expected);
  }

  @Test
  void aWrongPasswordAndAUserWithoutAclsAreRefusedAndChangeNothing() throws Exception {
    // Goal: a wrong password fails authentication on every node; mallory (a valid user with no ACL) can neither
    // produce, read nor create topics, and nothing she tried changed the cluster.
    String topic = "secured-private";
    try (Admin admin = cluster.admin()) {
      createSpread(admin, topic);
    }
    for (int id = 1; id <= 3; id++) {
      Map<String, Object> wrong = client("alice", "not-alice-secret");
      wrong.put("bootstrap.servers", cluster.bootstrap(id));
      try (Admin a = Admin.create(wrong)) {
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
            () -> a.describeCluster().nodes().get(1, TimeUnit.MINUTES));
        assertThat(e.getCause()).as("node %d", id).isInstanceOf(SaslAuthenticationException.class);
      }
    }

    Map<String, Object> mallory = client("mallory", "mallory-secret");
    mallory.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20_000);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(mallory, new StringSerializer(),
        new StringSerializer())) {
      assertThat(producer.send(new ProducerRecord<>(topic, 0, "k", "from-mallory")))
          .failsWithin(Duration.ofMinutes(1)).withThrowableThat().withCauseInstanceOf(TopicAuthorizationException.class);
    }
    try (Admin a = Admin.create(mallory)) {
      assertThat(a.createTopics(List.of(new NewTopic("secured-mallory", 1, (short) 1))).all())
          .failsWithin(Duration.ofMinutes(1)).withThrowableThat().withCauseInstanceOf(TopicAuthorizationException.class);
    }
    Map<String, Object> malloryReads = client("mallory", "mallory-secret");
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(malloryReads, new StringDeserializer(),
        new StringDeserializer())) {
      consumer.assign(List.of(new TopicPartition(topic, 0)));
      consumer.seekToBeginning(List.of(new TopicPartition(topic, 0)));
      org.junit.jupiter.api.Assertions.assertThrows(TopicAuthorizationException.class,
          () -> consumer.poll(Duration.ofSeconds(30)));
    }
    try (Admin admin = cluster.admin()) {
      assertThat(admin.listTopics().names().get(1, TimeUnit.MINUTES)).doesNotContain("secured-mallory");
      Map<TopicPartition, org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(
          Map.of(new TopicPartition(topic, 0), org.apache.kafka.clients.admin.OffsetSpec.latest())).all()
          .get(1, TimeUnit.MINUTES);
      assertThat(ends.get(new TopicPartition(topic, 0)).offset()).as("mallory's record was not written").isZero();
    }
  }

  @Test
  void aPartitionMovedBetweenNodesKeepsServingAnAuthenticatedProducerAndLosesNothing() throws Exception {
    // Goal: while alice produces (idempotent, acks=all) over SASL_SSL, the admin moves a partition to another node; the
    // producer follows the new leader, and every acknowledged record is read back once at its offset.
    String topic = "secured-moves";
    try (Admin admin = cluster.admin()) {
      createSpread(admin, topic);
      try (ClusterLoad load = new ClusterLoad(client("alice", "alice-secret"), Map.of(topic, 3), null, List.of())) {
        load.awaitMoreAcks(300);
        TopicPartition moved = new TopicPartition(topic, 0);
        int from = leader(admin, moved);
        int to = from % 3 + 1;
        admin.alterPartitionReassignments(Map.of(moved, Optional.of(new NewPartitionReassignment(List.of(to)))))
            .all().get(1, TimeUnit.MINUTES);
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
            .until(() -> leader(admin, moved) == to);
        load.mark();
        load.awaitMoreAcks(300);
        await().atMost(Duration.ofMinutes(2)).until(() -> load.againAt.containsKey(moved));
        load.stopProducing();
        assertThat(load.failures).as("producer failures").isEmpty();
        load.checkLog(topic, 3, null);
      }
    }
  }

  private static int leader(Admin admin, TopicPartition tp) throws Exception {
    TopicPartitionInfo p = admin.describeTopics(List.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS)
        .get(tp.topic()).partitions().get(tp.partition());
    return p.leader() == null ? -1 : p.leader().id();
  }
}
