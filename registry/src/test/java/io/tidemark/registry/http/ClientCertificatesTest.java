package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.acl.Acls;
import io.tidemark.broker.acl.Authorizer;
import io.tidemark.broker.acl.AuthorizerConfig;
import io.tidemark.broker.security.PasswordCheck;
import io.tidemark.broker.security.PrincipalMappingRules;
import io.tidemark.broker.security.ScramCredentialStore;
import io.tidemark.broker.security.TestCertificates;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.cluster.WriteLeader;
import io.tidemark.registry.store.MemorySchemaStore;
import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.Settings;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
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
 * Goal: on the HTTPS schema registry a verified client certificate is a Kafka principal
 * (ssl.principal.mapping.rules on its subject DN) authorized by the ACLs, {@code required} refuses
 * a client without one at the handshake, and {@code requested} keeps HTTP basic working.
 */
class ClientCertificatesTest {

  private static final String RULES = "RULE:^CN=([^,]+),O=Tidemark$/$1/L";

  @TempDir
  static Path dir;
  private static Path serverStore;
  private static Path truststore;
  private static HttpClient alice;
  private static HttpClient mallory;
  private static HttpClient noCertificate;
  private static Server requested;
  private static Server required;

  private record Server(SchemaRegistry registry, RegistryHttpServer http) implements AutoCloseable {
    String url(String path) {
      return "https://localhost:" + http.port() + path;
    }

    @Override
    public void close() {
      http.close();
      registry.close();
    }
  }

  @BeforeAll
  static void start() throws Exception {
    // the three keytool runs (each a JVM start) in parallel
    var serverPair = keyPair("server", "CN=localhost");
    var alicePair = keyPair("alice", "CN=Alice,O=Tidemark");
    var malloryPair = keyPair("mallory", "CN=Mallory,O=Tidemark");
    serverStore = serverPair.get(2, TimeUnit.MINUTES);
    Path aliceStore = alicePair.get(2, TimeUnit.MINUTES);
    Path malloryStore = malloryPair.get(2, TimeUnit.MINUTES);
    // trust stores are made in-process (each keytool run is a JVM start, seconds on a loaded machine)
    truststore = trustStore("clients", aliceStore, "alice", malloryStore, "mallory");
    Path serverTrust = trustStore("server-trust", serverStore, "server");
    alice = client(aliceStore, serverTrust);
    mallory = client(malloryStore, serverTrust);
    noCertificate = client(null, serverTrust);
    requested = server("requested");
    required = server("required");
  }

  @AfterAll
  static void stop() {
    for (Server s : new Server[] {requested, required}) {
      if (s != null) {
        s.close();
      }
    }
    for (HttpClient c : new HttpClient[] {alice, mallory, noCertificate}) {
      if (c != null) {
        c.close();
      }
    }
  }

  /** A registry over HTTPS whose ACLs let User:alice (certificate) and User:bob (basic) write subjects of topic orders. */
  private static Server server(String clientAuth) {
    Acls acls = new Acls(List.of(allow("User:alice"), allow("User:bob")));
    HttpAccess access = new HttpAccess(true, java.util.Map.of(),
        () -> new PasswordCheck(java.util.Map.of("bob", "bob-secret"), ScramCredentialStore.memory()),
        new Authorizer(new AuthorizerConfig(true, Set.of(), false), () -> acls), Optional.empty(), Optional::empty,
        new ClientCertificates(clientAuth, truststore.toString(), TestCertificates.PASSWORD, "PKCS12",
            PrincipalMappingRules.parse(RULES)));
    RegistryConfig config = RegistryConfig.defaults(0).withTls(serverStore.toString(), TestCertificates.PASSWORD, "PKCS12");
    SchemaRegistry registry = new SchemaRegistry(config, new MemorySchemaStore());
    registry.start();
    return new Server(registry, new RegistryHttpServer(registry, config, WriteLeader.self(), access).start());
  }

  private static AclBinding allow(String principal) {
    return new AclBinding(new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL),
        new AccessControlEntry(principal, "*", AclOperation.WRITE, AclPermissionType.ALLOW));
  }

  private static HttpClient client(Path keystore, Path trust) throws Exception {
    KeyManagerFactory kmf = null;
    if (keystore != null) {
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(load(keystore), TestCertificates.PASSWORD.toCharArray());
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(load(trust));
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(10)).build();
  }

  private static CompletableFuture<Path> keyPair(String alias, String dn) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return TestCertificates.keyPair(dir, alias, dn);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, Executors.newVirtualThreadPerTaskExecutor());
  }

  /** A PKCS12 trust store of the certificates of the given (key store, alias) pairs. */
  private static Path trustStore(String name, Object... storesAndAliases) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    for (int i = 0; i < storesAndAliases.length; i += 2) {
      String alias = (String) storesAndAliases[i + 1];
      trust.setCertificateEntry(alias, load((Path) storesAndAliases[i]).getCertificate(alias));
    }
    Path out = dir.resolve(name + ".p12");
    try (var os = Files.newOutputStream(out)) {
      trust.store(os, TestCertificates.PASSWORD.toCharArray());
    }
    return out;
  }

  private static KeyStore load(Path store) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      ks.load(in, TestCertificates.PASSWORD.toCharArray());
    }
    return ks;
  }

  private static HttpResponse<String> register(HttpClient client, Server server, String subject, String auth)
      throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url("/subjects/" + subject + "/versions")))
        .timeout(Duration.ofSeconds(20)).header("Content-Type", "application/vnd.schemaregistry.v1+json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"schema\":\"\\\"int\\\"\"}"));
    if (auth != null) {
      request.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(auth.getBytes(StandardCharsets.UTF_8)));
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aCertificateIsThePrincipalItsSubjectMapsToAndTheAclsDecide() throws Exception {
    // alice's certificate maps to User:alice, who may write orders' subjects
    HttpResponse<String> ok = register(alice, requested, "orders-value", null);
    assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
    assertThat(ok.body()).contains("\"id\"");
    // ... and not another topic's
    assertThat(register(alice, requested, "payments-value", null).statusCode()).isEqualTo(403);
    // mallory's certificate verifies, but User:mallory has no ACL: forbidden, nothing written
    HttpResponse<String> denied = register(mallory, requested, "orders-key", null);
    assertThat(denied.statusCode()).as(denied.body()).isEqualTo(403);
    assertThat(requested.registry().subjects(false, "")).containsExactly("orders-value");
  }

  @Test
  void requestedKeepsBasicWorkingAndStillNeedsCredentials() throws Exception {
    // no certificate and no credentials: 401 (authentication is required on this endpoint)
    assertThat(register(noCertificate, requested, "orders-value", null).statusCode()).isEqualTo(401);
    // no certificate, basic credentials of a Kafka user with the ACL
    assertThat(register(noCertificate, requested, "orders-value", "bob:bob-secret").statusCode()).isEqualTo(200);
    // an Authorization header decides over the certificate: wrong basic credentials are refused
    assertThat(register(alice, requested, "orders-value", "bob:wrong").statusCode()).isEqualTo(401);
  }

  @Test
  void requiredRefusesAClientWithoutACertificateAtTheHandshake() throws Exception {
    assertThatThrownBy(() -> register(noCertificate, required, "orders-value", "bob:bob-secret"))
        .isInstanceOf(IOException.class);
    assertThat(register(alice, required, "orders-value", null).statusCode()).isEqualTo(200);
  }

  @Test
  void settingsAreCheckedAtStart() {
    assertThat(ClientCertificates.from(Settings.empty()).mode()).isEqualTo("none");
    assertThatThrownBy(() -> ClientCertificates.from(Settings.empty().with(ClientCertificates.CLIENT_AUTH.name(), "required")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("http.ssl.truststore.location");
    assertThatThrownBy(() -> ClientCertificates.from(Settings.empty().with(ClientCertificates.CLIENT_AUTH.name(), "maybe")))
        .isInstanceOf(ConfigException.class);
  }
}
