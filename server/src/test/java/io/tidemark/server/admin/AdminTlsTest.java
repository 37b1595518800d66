package io.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tidemark.broker.security.TestCertificates;
import io.tidemark.server.config.ServerConfig;
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
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: with {@code admin.tls.keystore.path} the admin endpoint serves HTTPS only, with the key
 * store's certificate: a client trusting it gets {@code /health} and, with credentials,
 * {@code /metrics}; credentials are still required; a client with the JDK's default trust (which
 * does not hold the self-signed certificate) fails the handshake; plain HTTP on the port gets no answer.
 */
class AdminTlsTest {

  @TempDir Path dir;

  @Test
  void theAdminEndpointServesHttpsWithItsKeyStoreAndNoPlainHttp() throws Exception {
    Path keystore = TestCertificates.keyPair(dir, "admin", "CN=localhost");
    Path trust = keystore; // the JDK trusts the certificate of a key entry of a trust store: one keytool run less
    Settings settings = Settings.empty()
        .with(ServerConfig.ADMIN_PORT.name(), "0")
        .with(ServerConfig.ADMIN_HOST.name(), "127.0.0.1")
        .with(ServerConfig.DATA_DIR.name(), dir.resolve("data").toString())
        .with(ServerConfig.ADMIN_AUTH_BASIC_USERS.name(), "ops:ops-secret")
        .with(ServerConfig.ADMIN_TLS_KEYSTORE_PATH.name(), keystore.toString())
        .with(ServerConfig.ADMIN_TLS_KEYSTORE_PASSWORD.name(), TestCertificates.PASSWORD);
    AdminServer server = new AdminServer(ServerConfig.from(settings), new Health() {
      @Override
      public boolean live() {
        return true;
      }

      @Override
      public Map<String, Boolean> readiness() {
        return Map.of("storage.recovered", true);
      }
    }, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    try {
      int port = server.start();
      HttpClient trusting = client(trust);
      URI base = URI.create("https://localhost:" + port);
      assertThat(trusting.send(HttpRequest.newBuilder(base.resolve("/health")).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      assertThat(trusting.send(HttpRequest.newBuilder(base.resolve("/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode()).as("metrics without credentials").isEqualTo(401);
      String basic = "Basic " + Base64.getEncoder().encodeToString("ops:ops-secret".getBytes(StandardCharsets.UTF_8));
      HttpResponse<String> metrics = trusting.send(HttpRequest.newBuilder(base.resolve("/metrics"))
          .header("Authorization", basic).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(metrics.statusCode()).isEqualTo(200);
      assertThat(metrics.body()).contains("# TYPE");

      assertThatThrownBy(() -> HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build().send(HttpRequest.newBuilder(base.resolve("/health")).build(),
          HttpResponse.BodyHandlers.ofString())).as("a client not trusting the certificate")
          .isInstanceOf(SSLHandshakeException.class);
      assertThatThrownBy(() -> HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()
          .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
              .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()))
          .as("plain HTTP on the HTTPS port").isInstanceOf(IOException.class);
    } finally {
      server.close();
    }
  }

  /** A client trusting only the certificates of {@code trustStore}. */
  private static HttpClient client(Path trustStore) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(trustStore)) {
      ks.load(in, TestCertificates.PASSWORD.toCharArray());
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(null, tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(10)).build();
  }
}
