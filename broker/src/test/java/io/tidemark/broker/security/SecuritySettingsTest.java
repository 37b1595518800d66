package io.tidemark.broker.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.Settings;
import java.util.Map;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.Test;

/** Goal: Kafka's listener, mapping-rule, JAAS and bootstrap-user syntax is read as Kafka reads it, and bad values are named. */
class SecuritySettingsTest {

  @Test
  void listenersAdvertisedEndpointsAndProtocolsFollowKafkasSyntax() {
    SecurityConfig c = new SecurityConfig(new Settings(Map.of("listeners", "INTERNAL://:9092,EXTERNAL://[::1]:9094",
        "advertised.listeners", "EXTERNAL://kafka.example.com:19094", "listener.security.protocol.map",
        "INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL", "inter.broker.listener.name", "internal", "ssl.keystore.location", "/k.p12")),
        "0.0.0.0", 9092, "node-1", 0);
    assertThat(c.listeners()).containsExactly(
        new Listener("INTERNAL", SecurityProtocol.PLAINTEXT, "0.0.0.0", 9092, "node-1", 0),
        new Listener("EXTERNAL", SecurityProtocol.SASL_SSL, "::1", 9094, "kafka.example.com", 19094));
    assertThat(c.interBrokerListenerName()).isEqualTo("INTERNAL");
    assertThat(c.internalClientConfigs()).containsEntry("security.protocol", "PLAINTEXT");
  }

  @Test
  void withoutListenersTheLegacySinglePlaintextListenerStays() {
    SecurityConfig c = new SecurityConfig(Settings.empty(), "127.0.0.1", 9092, "127.0.0.1", 19092);
    assertThat(c.listeners()).containsExactly(new Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092,
        "127.0.0.1", 19092));
  }

  @Test
  void badListenerSettingsNameTheKey() {
    assertThatThrownBy(() -> config(Map.of("listeners", "FOO://:9092"))).isInstanceOf(ConfigException.class)
        .hasMessageContaining("listener.security.protocol.map");
    assertThatThrownBy(() -> config(Map.of("listeners", "SSL://:9093"))).hasMessageContaining("ssl.keystore.location");
    assertThatThrownBy(() -> config(Map.of("listeners", "PLAINTEXT://:x"))).hasMessageContaining("listeners");
    assertThatThrownBy(() -> config(Map.of("listeners", "PLAINTEXT://:1", "inter.broker.listener.name", "SSL")))
        .hasMessageContaining("inter.broker.listener.name");
    assertThatThrownBy(() -> config(Map.of("listeners", "SASL_PLAINTEXT://:1", "sasl.enabled.mechanisms", "GSSAPI")))
        .hasMessageContaining("GSSAPI");
  }

  private static SecurityConfig config(Map<String, String> s) {
    return new SecurityConfig(new Settings(s), "0.0.0.0", 9092, "h", 0);
  }

  @Test
  void sslProviderChoosesTheTlsEngine() {
    // netty-tcnative-boringssl-static ships the native library for this build's platform (Linux x86-64)
    assertThat(io.netty.handler.ssl.OpenSsl.isAvailable()).as("OpenSSL unavailable: %s",
        io.netty.handler.ssl.OpenSsl.unavailabilityCause()).isTrue();
    assertThat(TlsContexts.engine("auto")).isEqualTo(io.netty.handler.ssl.SslProvider.OPENSSL);
    assertThat(TlsContexts.engine(" OpenSSL ")).isEqualTo(io.netty.handler.ssl.SslProvider.OPENSSL);
    assertThat(TlsContexts.engine("jdk")).isEqualTo(io.netty.handler.ssl.SslProvider.JDK);
    assertThatThrownBy(() -> TlsContexts.engine("SunJSSE")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("ssl.provider").hasMessageContaining("auto, openssl, jdk");
    assertThatThrownBy(() -> config(Map.of("ssl.provider", "boring"))).isInstanceOf(ConfigException.class)
        .hasMessageContaining("ssl.provider");
  }

  @Test
  void principalMappingRulesMatchTheWholeDnFirstRuleWins() {
    PrincipalMappingRules rules = PrincipalMappingRules.parse(
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=([^,]+),OU=(.*?),O=.*$/$1@$2/L, DEFAULT");
    assertThat(rules.map("CN=kafka-svc,OU=ServiceUsers,O=Org")).contains("kafka-svc");
    assertThat(rules.map("CN=Alice,OU=Sales,O=Org")).contains("alice@sales");
    assertThat(rules.map("CN=x")).contains("CN=x");
    assertThat(PrincipalMappingRules.parse("RULE:^CN=([^,]+)$/$1/U").map("CN=bob")).contains("BOB");
    assertThat(PrincipalMappingRules.parse("RULE:^CN=([^,]+)$/$1/").map("O=none")).isEmpty();
    assertThatThrownBy(() -> PrincipalMappingRules.parse("RULE:broken")).isInstanceOf(ConfigException.class);
  }

  @Test
  void jaasUsersAndBootstrapCredentials() {
    assertThat(JaasUsers.users("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" "
        + "password=\"a\" user_admin=\"a\" user_alice=\"p\\\"w\";", "k")).containsExactly(Map.entry("admin", "a"),
        Map.entry("alice", "p\"w"));
    assertThat(ScramBootstrap.parse("SCRAM-SHA-256=[name=admin,password=s1];SCRAM-SHA-512=[name=bob,password=s2,"
        + "iterations=8192]")).containsExactly(new ScramBootstrap.Entry(ScramAlgorithm.SCRAM_SHA_256, "admin", "s1", 4096),
        new ScramBootstrap.Entry(ScramAlgorithm.SCRAM_SHA_512, "bob", "s2", 8192));
    assertThatThrownBy(() -> ScramBootstrap.parse("SCRAM-SHA-256=[name=a,password=b,iterations=10]"))
        .hasMessageContaining("iterations");
  }

  @Test
  void aScramCredentialMatchesOnlyItsPassword() {
    ScramCredential c = ScramAlgorithm.SCRAM_SHA_512.credential("pencil", new byte[] {1, 2, 3}, 4096);
    assertThat(ScramAlgorithm.SCRAM_SHA_512.matches(c, "pencil")).isTrue();
    assertThat(ScramAlgorithm.SCRAM_SHA_512.matches(c, "pencil2")).isFalse();
  }
}
