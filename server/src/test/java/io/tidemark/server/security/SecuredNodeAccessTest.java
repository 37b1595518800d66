package io.tidemark.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.server.FreePorts;
import io.tidemark.server.Main;
import io.tidemark.server.TidemarkServer;
import io.tidemark.server.storage.EmbeddedStorage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.internals.Exit;
import org.apache.kafka.tools.AclCommand;
import org.apache.kafka.tools.TopicCommand;
import org.apache.kafka.tools.consumer.ConsoleConsumer;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: on a node whose Kafka port is secured (SASL SCRAM, ACL authorizer on), users see only what
 * their ACLs allow through real Kafka clients and Kafka's own tools ({@code kafka-acls},
 * {@code kafka-topics}, {@code kafka-console-consumer}, in-process), and the schema registry,
 * the Iceberg REST catalog and the admin endpoint authenticate the same SCRAM users (HTTP basic),
 * refuse anonymous and wrong credentials with 401, and authorize each request through the same
 * Kafka ACLs (registry subjects and catalog tables as topics, admin routes on the cluster) with 403
 * and nothing changed when denied; {@code /health} and {@code /ready} stay open. Real clients:
 * java.net.http for the Confluent REST API, Iceberg's own RESTCatalog, the Kafka Admin for ACLs.
 */
class SecuredNodeAccessTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SCHEMA = "{\"schema\":\"{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"Order\\\","
      + "\\\"fields\\\":[{\\\"name\\\":\\\"id\\\",\\\"type\\\":\\\"long\\\"}]}\"}";
  private static final String V1 = "application/vnd.schemaregistry.v1+json";

  @TempDir static Path dir;
  private static TidemarkServer server;
  private static final io.tidemark.broker.security.TestJwts IDP = new io.tidemark.broker.security.TestJwts().addKey("idp-1");
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    String users = String.join(";", "SCRAM-SHA-256=[name=admin,password=admin-secret]",
        "SCRAM-SHA-256=[name=alice,password=alice-secret]", "SCRAM-SHA-256=[name=bob,password=bob-secret]",
        "SCRAM-SHA-256=[name=carol,password=carol-secret]", "SCRAM-SHA-256=[name=dave,password=dave-secret]");
    server = Main.start(List.of("--set", "data.dir=" + dir.resolve("data"), "--set", "admin.port=0",
        "--set", "admin.host=127.0.0.1", "--set", "wal.capacity.bytes=" + (32L << 20),
        "--set", "registry.host=127.0.0.1", "--set", "registry.port=0",
        "--set", "table.rest.host=127.0.0.1", "--set", "table.rest.port=0",
        "--set", "controller.voters=" + FreePorts.singleVoter(),
        "--set", "listeners=SASL_PLAINTEXT://127.0.0.1:0",
        "--set", "sasl.enabled.mechanisms=SCRAM-SHA-256",
        "--set", "sasl.scram.bootstrap.credentials=" + users,
        "--set", "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram."
            + "ScramLoginModule required username=\"admin\" password=\"admin-secret\";",
        "--set", "kafka.authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "--set", "kafka.super.users=User:admin",
        "--set", "sasl.oauthbearer.jwks.endpoint.url=" + Files.writeString(dir.resolve("jwks.json"), IDP.jwks()).toUri(),
        "--set", "sasl.oauthbearer.expected.audience=tidemark"), Map.of(), new EmbeddedStorage());
    try (Admin admin = Admin.create(kafka("admin", "admin-secret"))) {
      admin.createAcls(List.of(
          allow("User:alice", AclOperation.WRITE, "orders"),
          allow("User:bob", AclOperation.READ, "orders"),
          allow("User:bob", AclOperation.READ, "lake.clicks"))).all().get(30, TimeUnit.SECONDS);
    }
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  private static Map<String, Object> kafka(String user, String password) {
    Map<String, Object> p = new HashMap<>();
    p.put("bootstrap.servers", "127.0.0.1:" + server.kafkaPort().orElseThrow());
    p.put("security.protocol", "SASL_PLAINTEXT");
    p.put("sasl.mechanism", "SCRAM-SHA-256");
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
        + "\" password=\"" + password + "\";");
    return p;
  }

  private static AclBinding allow(String principal, AclOperation op, String topic) {
    return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
        new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW));
  }

  // ---------------------------------------------------------------- Kafka clients and tools

  @Test
  void twoSaslUsersSeeOnlyWhatTheirAclsAllowThroughClientsAndKafkaTools() throws Exception {
    Path adminConfig = clientConfig("admin", "admin-secret");
    Path aliceConfig = clientConfig("alice", "alice-secret");
    Path bobConfig = clientConfig("bob", "bob-secret");
    Path carolConfig = clientConfig("carol", "carol-secret");
    try (Admin admin = Admin.create(kafka("admin", "admin-secret"))) {
      admin.createTopics(List.of(new NewTopic("trades", 1, (short) 1), new NewTopic("hidden", 1, (short) 1)))
          .all().get(30, TimeUnit.SECONDS);
    }
    tool(() -> AclCommand.main(new String[] {"--bootstrap-server", bootstrap(), "--command-config", adminConfig.toString(),
        "--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "trades"}));
    tool(() -> AclCommand.main(new String[] {"--bootstrap-server", bootstrap(), "--command-config", adminConfig.toString(),
        "--add", "--allow-principal", "User:bob", "--operation", "Read", "--topic", "trades", "--group", "bob-app"}));

    // alice writes trades, not hidden
    Map<String, Object> alice = kafka("alice", "alice-secret");
    alice.put("max.block.ms", 30_000);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(alice, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < 5; i++) {
        producer.send(new ProducerRecord<>("trades", "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
      }
      ExecutionException denied = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
          () -> producer.send(new ProducerRecord<>("hidden", "k", "v")).get(30, TimeUnit.SECONDS));
      assertThat(denied.getCause()).isInstanceOf(TopicAuthorizationException.class);
    }
    // bob may not write trades: an idempotent producer (the default) is refused IDEMPOTENT_WRITE as Kafka refuses it
    // (no WRITE on any topic, KIP-679), a plain one is refused the topic
    Map<String, Object> bob = kafka("bob", "bob-secret");
    bob.put("max.block.ms", 30_000);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(bob, new StringSerializer(), new StringSerializer())) {
      // The producer asks for its id as it starts: when the refusal arrives before send() is called, send() throws the
      // producer's fatal error itself (as it does against Kafka), otherwise the returned future fails with it.
      assertThatThrownBy(() -> producer.send(new ProducerRecord<>("trades", "k", "bob")).get(30, TimeUnit.SECONDS))
          .isInstanceOfAny(ExecutionException.class, KafkaException.class)
          .cause().isInstanceOf(ClusterAuthorizationException.class);
    }
    bob.put("enable.idempotence", false);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(bob, new StringSerializer(), new StringSerializer())) {
      ExecutionException denied = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
          () -> producer.send(new ProducerRecord<>("trades", "k", "bob")).get(30, TimeUnit.SECONDS));
      assertThat(denied.getCause()).isInstanceOf(TopicAuthorizationException.class);
    }
    // ... but reads it in his group with kafka-console-consumer, and not in another group
    String consumed = tool(() -> ConsoleConsumer.main(new String[] {"--bootstrap-server", bootstrap(), "--command-config",
        bobConfig.toString(), "--topic", "trades", "--group", "bob-app", "--from-beginning", "--max-messages", "5",
        "--timeout-ms", "60000"}));
    assertThat(consumed.lines().toList()).containsExactly("v0", "v1", "v2", "v3", "v4");
    Map<String, Object> otherGroup = kafka("bob", "bob-secret");
    otherGroup.put("group.id", "not-bobs");
    otherGroup.put("auto.offset.reset", "earliest");
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(otherGroup, new StringDeserializer(),
        new StringDeserializer())) {
      consumer.subscribe(List.of("trades"));
      assertThatThrownBy(() -> {
        for (int i = 0; i < 300; i++) {
          consumer.poll(Duration.ofMillis(100));
        }
      }).isInstanceOf(GroupAuthorizationException.class);
    }
    // kafka-topics lists only the topics each user may describe
    List<String> bobTopics = tool(() -> TopicCommand.main("--bootstrap-server", bootstrap(), "--command-config",
        bobConfig.toString(), "--list")).lines().toList();
    assertThat(bobTopics).contains("trades").doesNotContain("hidden");
    List<String> aliceTopics = tool(() -> TopicCommand.main("--bootstrap-server", bootstrap(), "--command-config",
        aliceConfig.toString(), "--list")).lines().toList();
    assertThat(aliceTopics).contains("trades").doesNotContain("hidden");
    List<String> carolTopics = tool(() -> TopicCommand.main("--bootstrap-server", bootstrap(), "--command-config",
        carolConfig.toString(), "--list")).lines().toList();
    assertThat(carolTopics).doesNotContain("trades", "hidden");
    assertThat(tool(() -> TopicCommand.main("--bootstrap-server", bootstrap(), "--command-config",
        adminConfig.toString(), "--list")).lines().toList()).contains("trades", "hidden");
  }

  private static String bootstrap() {
    return "127.0.0.1:" + server.kafkaPort().orElseThrow();
  }

  private static Path clientConfig(String user, String password) throws Exception {
    Properties p = new Properties();
    kafka(user, password).forEach((k, v) -> p.put(k, v.toString()));
    p.remove("bootstrap.servers");
    Path file = dir.resolve(user + ".properties");
    try (var out = Files.newOutputStream(file)) {
      p.store(out, null);
    }
    return file;
  }

  private interface ToolMain {
    void run() throws Exception;
  }

  /** Runs a Kafka tool's main in this JVM; its standard output. An exit code other than 0 fails. */
  private static synchronized String tool(ToolMain main) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream old = System.out;
    PrintStream oldErr = System.err;
    Exit.setExitProcedure((code, message) -> {
      if (code != 0) { // exit(0) returns to the tool, which ends on its own (TopicCommand catches what it throws)
        throw new ToolExit(code, message + "\n" + out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8));
      }
    });
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      main.run();
    } finally {
      System.setOut(old);
      System.setErr(oldErr);
      Exit.resetExitProcedure();
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static final class ToolExit extends RuntimeException {
    ToolExit(int code, String message) {
      super("tool exited " + code + ": " + message);
    }
  }

  // ---------------------------------------------------------------- schema registry

  @Test
  void registryRefusesAnonymousAndWrongCredentialsAndAuthorizesSubjectsAsTopics() throws Exception {
    int port = server.registryPort().orElseThrow();
    HttpResponse<String> anonymous = registry(port, "GET", "/subjects", null, null);
    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThat(anonymous.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Basic"));
    assertThat(JSON.readTree(anonymous.body()).get("error_code").asInt()).isEqualTo(401);
    assertThat(registry(port, "GET", "/subjects", "alice:wrong", null).statusCode()).isEqualTo(401);
    assertThat(registry(port, "GET", "/subjects", "nobody:alice-secret", null).statusCode()).isEqualTo(401);

    // bob may only READ orders: registering its value schema is denied and changes nothing
    HttpResponse<String> denied = registry(port, "POST", "/subjects/orders-value/versions", "bob:bob-secret", SCHEMA);
    assertThat(denied.statusCode()).as(denied.body()).isEqualTo(403);
    assertThat(JSON.readTree(denied.body()).get("error_code").asInt()).isEqualTo(40301);
    assertThat(registry(port, "GET", "/subjects", "admin:admin-secret", null).body()).doesNotContain("orders-value");

    // alice may WRITE orders: she registers orders-value (TopicNameStrategy: subject orders-value is topic orders)
    HttpResponse<String> registered = registry(port, "POST", "/subjects/orders-value/versions", "alice:alice-secret", SCHEMA);
    assertThat(registered.statusCode()).as(registered.body()).isEqualTo(200);
    int id = JSON.readTree(registered.body()).get("id").asInt();
    // ... but not another topic's subject
    assertThat(registry(port, "POST", "/subjects/payments-value/versions", "alice:alice-secret", SCHEMA).statusCode())
        .isEqualTo(403);

    // bob reads the subject and the schema by id (what a deserializer does); carol, with no ACL, may not
    assertThat(registry(port, "GET", "/subjects/orders-value/versions/latest", "bob:bob-secret", null).statusCode())
        .isEqualTo(200);
    assertThat(registry(port, "GET", "/schemas/ids/" + id, "bob:bob-secret", null).statusCode()).isEqualTo(200);
    assertThat(registry(port, "GET", "/schemas/ids/" + id, "carol:carol-secret", null).statusCode()).isEqualTo(403);
    assertThat(registry(port, "GET", "/subjects/orders-value/versions/latest", "carol:carol-secret", null).statusCode())
        .isEqualTo(403);
    // listings show only what the principal may see
    assertThat(list(registry(port, "GET", "/subjects", "bob:bob-secret", null))).containsExactly("orders-value");
    assertThat(list(registry(port, "GET", "/subjects", "carol:carol-secret", null))).isEmpty();
    assertThat(JSON.readTree(registry(port, "GET", "/schemas", "carol:carol-secret", null).body())).isEmpty();

    // bob cannot delete the subject (DELETE on the topic); it is still there
    assertThat(registry(port, "DELETE", "/subjects/orders-value", "bob:bob-secret", null).statusCode()).isEqualTo(403);
    assertThat(list(registry(port, "GET", "/subjects", "admin:admin-secret", null))).contains("orders-value");

    // global config: ALTER_CONFIGS on the cluster (the super user has it, alice does not)
    String full = "{\"compatibility\":\"FULL\"}";
    assertThat(registry(port, "PUT", "/config", "alice:alice-secret", full).statusCode()).isEqualTo(403);
    assertThat(JSON.readTree(registry(port, "GET", "/config", "admin:admin-secret", null).body())
        .get("compatibilityLevel").asText()).isEqualTo("BACKWARD");
    assertThat(registry(port, "PUT", "/config", "admin:admin-secret", full).statusCode()).isEqualTo(200);
    assertThat(registry(port, "PUT", "/config", "admin:admin-secret", "{\"compatibility\":\"BACKWARD\"}").statusCode())
        .isEqualTo(200);
  }

  private static List<String> list(HttpResponse<String> response) throws Exception {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    JsonNode node = JSON.readTree(response.body());
    return java.util.stream.StreamSupport.stream(node.spliterator(), false).map(JsonNode::asText).toList();
  }

  private static HttpResponse<String> registry(int port, String method, String path, String credentials, String body)
      throws Exception {
    return send(URI.create("http://127.0.0.1:" + port + path), method, credentials, body, V1);
  }

  private static HttpResponse<String> send(URI uri, String method, String credentials, String body, String type)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri).method(method,
        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header("Content-Type", type);
    }
    if (credentials != null && credentials.startsWith("Bearer ")) {
      b.header("Authorization", credentials);
    } else if (credentials != null) {
      b.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  // ---------------------------------------------------------------- Iceberg REST catalog

  @Test
  void icebergRestCatalogClientIsAuthenticatedAndTablesAreAuthorizedAsTopics() throws Exception {
    int port = server.tableRestPort().orElseThrow();
    TableIdentifier clicks = TableIdentifier.of("lake", "clicks");
    Schema schema = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

    try (RESTCatalog anonymous = new RESTCatalog()) {
      assertThatThrownBy(() -> anonymous.initialize("anon", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + port))))
          .isInstanceOf(NotAuthorizedException.class);
    }
    try (RESTCatalog wrong = catalog(port, "bob", "not-bob")) {
      org.junit.jupiter.api.Assertions.fail("a wrong password was accepted");
    } catch (NotAuthorizedException expected) {
      // refused at GET /v1/config
    }
    try (RESTCatalog admin = catalog(port, "admin", "admin-secret");
        RESTCatalog bob = catalog(port, "bob", "bob-secret");
        RESTCatalog carol = catalog(port, "carol", "carol-secret")) {
      // creating a namespace needs CREATE on the cluster: carol is refused, the super user is not
      assertThatThrownBy(() -> carol.createNamespace(Namespace.of("lake"))).isInstanceOf(ForbiddenException.class);
      assertThat(admin.namespaceExists(Namespace.of("lake"))).isFalse();
      admin.createNamespace(Namespace.of("lake"));
      assertThatThrownBy(() -> carol.createTable(clicks, schema)).isInstanceOf(ForbiddenException.class);
      admin.createTable(clicks, schema);

      // bob may READ topic lake.clicks (a table no topic writes is the topic <namespace>.<table>)
      assertThat(bob.loadTable(clicks).schema().asStruct()).isEqualTo(schema.asStruct());
      assertThat(bob.listTables(Namespace.of("lake"))).containsExactly(clicks);
      assertThatThrownBy(() -> bob.dropTable(clicks)).isInstanceOf(ForbiddenException.class);
      assertThatThrownBy(() -> bob.loadTable(clicks).updateProperties().set("owner", "bob").commit())
          .isInstanceOf(ForbiddenException.class);
      assertThat(admin.loadTable(clicks).properties()).doesNotContainKey("owner");

      // carol has no ACL: she does not see the table and cannot load it
      assertThat(carol.listTables(Namespace.of("lake"))).isEmpty();
      assertThatThrownBy(() -> carol.loadTable(clicks)).isInstanceOf(ForbiddenException.class);
      assertThat(admin.tableExists(clicks)).isTrue();
    }
  }

  @Test
  void bearerTokensOfTheIdentityProviderAndOfTheCatalogsTokenEndpointAuthenticateHttp() throws Exception {
    int rest = server.tableRestPort().orElseThrow();
    int registry = server.registryPort().orElseThrow();
    TableIdentifier orders = TableIdentifier.of("oauth", "orders");
    // Iceberg's RESTCatalog with credential=<user>:<password> gets its token from POST /v1/oauth/tokens
    try (RESTCatalog admin = oauthCatalog(rest, "admin:admin-secret")) {
      if (!admin.namespaceExists(Namespace.of("oauth"))) {
        admin.createNamespace(Namespace.of("oauth"));
      }
      admin.createTable(orders, new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
      assertThat(admin.loadTable(orders).schema().columns()).hasSize(1);
    }
    // the token names bob, who has no ACL on the table's topic: authenticated, then refused by the ACLs
    try (RESTCatalog bob = oauthCatalog(rest, "bob:bob-secret")) {
      assertThatThrownBy(() -> bob.loadTable(orders)).isInstanceOf(ForbiddenException.class);
    }
    assertThatThrownBy(() -> oauthCatalog(rest, "bob:wrong-secret")).isInstanceOf(NotAuthorizedException.class);

    // a token from the endpoint, used by hand on the schema registry (the same node)
    HttpResponse<String> issued = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + rest + "/v1/oauth/tokens"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString("grant_type=client_credentials&client_id=alice&client_secret=alice-secret"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(issued.statusCode()).as(issued.body()).isEqualTo(200);
    String nodeToken = JSON.readTree(issued.body()).get("access_token").asText();
    assertThat(registry(registry, "GET", "/subjects", "Bearer " + nodeToken, null).statusCode()).isEqualTo(200);

    // the identity provider's JWTs (sasl.oauthbearer.jwks.endpoint.url), as OAUTHBEARER checks them
    String idpToken = IDP.token("idp-1", "admin", "https://idp.test", "tidemark", 600_000);
    assertThat(registry(registry, "GET", "/subjects", "Bearer " + idpToken, null).statusCode()).isEqualTo(200);
    assertThat(send(URI.create("http://127.0.0.1:" + server.adminPort() + "/metrics"), "GET", "Bearer " + idpToken,
        null, null).statusCode()).isEqualTo(200);
    for (String refused : List.of(IDP.token("idp-1", "admin", "https://idp.test", "tidemark", -120_000),
        IDP.token("idp-1", "admin", "https://idp.test", "elsewhere", 600_000),
        new io.tidemark.broker.security.TestJwts().addKey("idp-1").token("idp-1", "admin", "https://idp.test", "tidemark",
            600_000), nodeToken.substring(0, nodeToken.length() - 4) + "AAAA")) {
      HttpResponse<String> r = registry(registry, "GET", "/subjects", "Bearer " + refused, null);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(401);
    }
  }

  private static RESTCatalog oauthCatalog(int port, String credential) {
    RESTCatalog catalog = new RESTCatalog();
    try {
      catalog.initialize("oauth", new HashMap<>(Map.of("uri", "http://127.0.0.1:" + port, "credential", credential)));
    } catch (RuntimeException e) {
      try {
        catalog.close();
      } catch (java.io.IOException ignored) {
        // closing a catalog that did not start
      }
      throw e;
    }
    return catalog;
  }

  private static RESTCatalog catalog(int port, String user, String password) {
    RESTCatalog catalog = new RESTCatalog();
    catalog.initialize(user, new HashMap<>(Map.of("uri", "http://127.0.0.1:" + port, "rest.auth.type", "basic",
        "rest.auth.basic.username", user, "rest.auth.basic.password", password)));
    return catalog;
  }

  // ---------------------------------------------------------------- admin endpoint

  @Test
  void adminEndpointNeedsClusterAclsButProbesStayOpen() throws Exception {
    URI base = URI.create("http://127.0.0.1:" + server.adminPort());
    assertThat(send(base.resolve("/health"), "GET", null, null, null).statusCode()).isEqualTo(200);
    assertThat(send(base.resolve("/ready"), "GET", null, null, null).statusCode()).isIn(200, 503);
    assertThat(send(base.resolve("/metrics"), "GET", null, null, null).statusCode()).isEqualTo(401);
    assertThat(send(base.resolve("/metrics"), "GET", "alice:wrong", null, null).statusCode()).isEqualTo(401);
    // alice has no DESCRIBE on the cluster
    HttpResponse<String> alice = send(base.resolve("/metrics"), "GET", "alice:alice-secret", null, null);
    assertThat(alice.statusCode()).isEqualTo(403);
    assertThat(alice.body()).contains("DESCRIBE").doesNotContain("jvm_");
    HttpResponse<String> admin = send(base.resolve("/metrics"), "GET", "admin:admin-secret", null, null);
    assertThat(admin.statusCode()).isEqualTo(200);
    assertThat(admin.body()).contains("jvm_");
  }

  @Test
  void theConsoleShowsTheClusterToUsersAllowedToDescribeItAndChangesNothingForAnyone() throws Exception {
    // Goal: the web console is readable only with DESCRIBE on the cluster (anonymous 401, alice 403), and it is
    // read-only for everyone: it has no action, so no write reaches it, not even the super user's; a user who may
    // only read is refused any write on the admin endpoint (ALTER on the cluster is what writes need).
    try (Admin admin = Admin.create(kafka("admin", "admin-secret"))) {
      admin.createAcls(List.of(new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL),
          new AccessControlEntry("User:dave", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW))))
          .all().get(30, TimeUnit.SECONDS);
    }
    URI base = URI.create("http://127.0.0.1:" + server.adminPort());
    List<String> pages = List.of("/", "/console/app.js", "/api/console/cluster", "/api/console/topics", "/api/console/moves");
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).untilAsserted(() ->
        assertThat(send(base.resolve("/api/console/cluster"), "GET", "dave:dave-secret", null, null).statusCode())
            .isEqualTo(200));
    for (String page : pages) {
      assertThat(send(base.resolve(page), "GET", null, null, null).statusCode()).as("anonymous GET " + page).isEqualTo(401);
      assertThat(send(base.resolve(page), "GET", "alice:alice-secret", null, null).statusCode()).as("alice GET " + page)
          .isEqualTo(403);
      assertThat(send(base.resolve(page), "GET", "dave:dave-secret", null, null).statusCode()).as("dave GET " + page)
          .isEqualTo(200);
      assertThat(send(base.resolve(page), "GET", "admin:admin-secret", null, null).statusCode()).as("admin GET " + page)
          .isEqualTo(200);
      for (String method : List.of("POST", "PUT", "DELETE", "PATCH")) {
        assertThat(send(base.resolve(page), method, "dave:dave-secret", "{}", "application/json").statusCode())
            .as("dave %s %s: writes need ALTER on the cluster", method, page).isEqualTo(403);
        assertThat(send(base.resolve(page), method, "admin:admin-secret", "{}", "application/json").statusCode())
            .as("admin %s %s: the console has no action", method, page).isIn(404, 405);
      }
    }
    JsonNode cluster = JSON.readTree(send(base.resolve("/api/console/cluster"), "GET", "dave:dave-secret", null, null).body());
    assertThat(cluster.path("nodes")).isNotEmpty();
  }
}
