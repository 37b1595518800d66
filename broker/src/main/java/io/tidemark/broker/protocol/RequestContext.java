package io.tidemark.broker.protocol;

import java.net.InetAddress;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * Who sent a request and how: its header (API, version, correlation id, client id), the peer's
 * address, a connection id unique within this broker, the listener the connection arrived on,
 * that listener's security protocol, and the authenticated principal.
 *
 * <p>The principal is {@link KafkaPrincipal#ANONYMOUS} on PLAINTEXT listeners and on SSL
 * listeners without client authentication; after SASL it is {@code User:<name>}; with mutual TLS
 * it is {@code User:<mapped certificate name>}. Before a SASL connection has authenticated, only
 * ApiVersions, SaslHandshake and SaslAuthenticate reach a handler, so every other handler sees an
 * authenticated principal. The authorizer reads {@link #principal()}, {@link #listenerName()} and
 * {@link #clientAddress()} from here.
 */
public record RequestContext(RequestHeader header, InetAddress clientAddress, String connectionId,
    String listenerName, SecurityProtocol securityProtocol, KafkaPrincipal principal) {

  /** The listener name a single-listener (legacy {@code kafka.port}) broker uses. */
  public static final String DEFAULT_LISTENER = "PLAINTEXT";

  /** A request on the default PLAINTEXT listener from an anonymous client. */
  public RequestContext(RequestHeader header, InetAddress clientAddress, String connectionId) {
    this(header, clientAddress, connectionId, DEFAULT_LISTENER, SecurityProtocol.PLAINTEXT,
        KafkaPrincipal.ANONYMOUS);
  }

  public short apiVersion() {
    return header.apiVersion();
  }

  public String clientId() {
    return header.clientId() == null ? "" : header.clientId();
  }

  public String clientHost() {
    return clientAddress == null ? "" : "/" + clientAddress.getHostAddress();
  }
}
