package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.config.Settings;
import org.junit.jupiter.api.Test;

/**
 * Goal: {@code http.auth.required=auto} requires HTTP credentials when the node is secured in any of
 * the ways it counts (a SASL listener, the authorizer, or client certificates required on HTTPS), and
 * {@code true}/{@code false} override it.
 */
class HttpAuthRequiredTest {

  private static final Settings CERTS_REQUIRED = Settings.empty().with("http.ssl.client.auth", "required")
      .with("http.ssl.truststore.location", "/etc/tidemark/clients-ca.p12");

  @Test
  void autoCountsRequiredClientCertificatesAsSecured() {
    assertThat(TidemarkServer.httpAuthRequired(Settings.empty())).as("embedded default").isFalse();
    assertThat(TidemarkServer.httpAuthRequired(CERTS_REQUIRED)).as("client certificates required").isTrue();
    assertThat(TidemarkServer.httpAuthRequired(CERTS_REQUIRED.with("http.ssl.client.auth", "requested")))
        .as("client certificates only requested").isFalse();
    assertThat(TidemarkServer.httpAuthRequired(CERTS_REQUIRED.with("http.auth.required", "false"))).isFalse();
    assertThat(TidemarkServer.httpAuthRequired(Settings.empty().with("listeners", "SASL_PLAINTEXT://127.0.0.1:0")))
        .as("a SASL listener").isTrue();
    assertThat(TidemarkServer.httpAuthRequired(Settings.empty().with("http.auth.required", "true"))).isTrue();
  }
}
