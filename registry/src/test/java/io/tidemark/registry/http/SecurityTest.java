package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.client.SchemaRegistryClient;
import io.tidemark.registry.client.SchemaRegistryClientException;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.store.MemorySchemaStore;
import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.Settings;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: HTTP basic authentication and TLS, configured through RegistryConfig, protect the API. */
class SecurityTest {

  private static String basic(String userInfo) {
    return "Basic " + Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void basicAuthRejectsMissingAndWrongCredentials() {
    // Goal: without or with wrong credentials the answer is 401 and nothing is written; right ones work, also via the client.
    RegistryConfig config = RegistryConfig.from(Settings.empty()
        .with(RegistryConfig.PORT.name(), "0")
        .with(RegistryConfig.BASIC_AUTH_USERS.name(), "ada:s3cret,bob:pw"));
    try (RegistryHarness h = new RegistryHarness(new MemorySchemaStore(), config)) {
      RegistryHarness.Reply anonymous = h.get("/subjects");
      assertThat(anonymous.status()).isEqualTo(401);
      assertThat(anonymous.errorCode()).isEqualTo(401);
      assertThat(h.call("POST", "/subjects/s/versions", RegistryHarness.schemaBody(null, "\"int\""),
          Map.of("Authorization", basic("ada:wrong"))).status()).isEqualTo(401);
      assertThat(h.store.endOffset()).isZero();
      assertThat(h.call("GET", "/subjects", null, Map.of("Authorization", basic("ada:s3cret"))).status()).isEqualTo(200);
      SchemaRegistryClient client = new SchemaRegistryClient(URI.create(h.baseUrl()), 10, "bob:pw",
          HttpClient.newHttpClient(), Duration.ofSeconds(10));
      assertThat(client.register("s", SchemaType.AVRO, "\"int\"")).isEqualTo(1);
      SchemaRegistryClient intruder = new SchemaRegistryClient(URI.create(h.baseUrl()), 10, "eve:pw",
          HttpClient.newHttpClient(), Duration.ofSeconds(10));
      assertThatThrownBy(() -> intruder.schemaById(1)).isInstanceOfSatisfying(SchemaRegistryClientException.class,
          e -> assertThat(e.httpStatus()).isEqualTo(401));
    }
  }

  @Test
  void badAuthConfigurationIsRefused() {
    // Goal: a users entry without ':' is a configuration error naming the key.
    assertThatThrownBy(() -> RegistryConfig.from(Settings.empty().with(RegistryConfig.BASIC_AUTH_USERS.name(), "ada")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("registry.auth.basic.users");
    assertThatThrownBy(() -> RegistryConfig.from(Settings.empty().with(RegistryConfig.DEFAULT_COMPATIBILITY.name(), "SIDEWAYS")))
        .isInstanceOf(ConfigException.class);
  }

  @Test
  void tlsServesHttpsWithTheConfiguredKeystore(@TempDir Path dir) throws Exception {
    // Goal: with a keystore configured the API answers over HTTPS to a client trusting that certificate.
    Path keystore = dir.resolve("registry.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
        "-genkeypair", "-alias", "registry", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
        "-dname", "CN=localhost", "-ext", "SAN=dns:localhost", "-storetype", "PKCS12",
        "-keystore", keystore.toString(), "-storepass", "changeit", "-keypass", "changeit")
        .redirectErrorStream(true).start();
    assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue()).as(new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();

    KeyStore trust = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      trust.load(in, "changeit".toCharArray());
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(null, tmf.getTrustManagers(), null);
    HttpClient https = HttpClient.newBuilder().sslContext(ssl).build();

    RegistryConfig config = RegistryConfig.defaults(0).withTls(keystore.toString(), "changeit", "PKCS12");
    try (RegistryHarness h = new RegistryHarness(new MemorySchemaStore(), config, https)) {
      assertThat(h.baseUrl()).startsWith("https://");
      assertThat(h.register("secure", null, "\"string\"")).isEqualTo(1);
      assertThat(h.get("/subjects").json().toString()).isEqualTo("[\"secure\"]");
      HttpClient plain = HttpClient.newHttpClient();
      assertThatThrownBy(() -> plain.send(java.net.http.HttpRequest.newBuilder(URI.create(h.baseUrl() + "/subjects")).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString())).as("a client not trusting the certificate fails the handshake")
          .isInstanceOf(java.io.IOException.class);
    }
  }
}
