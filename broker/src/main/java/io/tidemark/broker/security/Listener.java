package io.tidemark.broker.security;

import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * One named Kafka listener: where it binds, what it tells clients (its advertised endpoint) and
 * its security protocol. Names are upper case, as Kafka normalizes them.
 */
public record Listener(String name, SecurityProtocol protocol, String host, int port, String advertisedHost,
    int advertisedPort) {

  public boolean sasl() {
    return protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL;
  }

  public boolean tls() {
    return protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL;
  }

  /** The same listener advertising {@code port} (once an ephemeral port is bound). */
  public Listener bound(int boundPort) {
    return new Listener(name, protocol, host, boundPort, advertisedHost, advertisedPort == 0 ? boundPort : advertisedPort);
  }
}
