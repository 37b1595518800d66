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
 *
 * <p>{@code clientPort} is the peer's port (-1 when unknown) and {@code software} what the client
 * named itself in its last valid ApiVersions request on this connection (an older version than 3,
 * which has no such fields, names it {@code unknown} again), {@link ClientSoftware#UNKNOWN} before
 * one: Kafka 4.4's {@code ClientInformation}. Client-metrics subscriptions (KIP-714) match on both.
 */
public record RequestContext(RequestHeader header, InetAddress clientAddress, int clientPort, String connectionId,
    String listenerName, SecurityProtocol securityProtocol, KafkaPrincipal principal, ClientSoftware software) {

  /** The listener name a single-listener (legacy {@code kafka.port}) broker uses. */
  public static final String DEFAULT_LISTENER = "PLAINTEXT";

  /** A client's software name and version from ApiVersions; Kafka's "unknown" for both before any. */
  public record ClientSoftware(String name, String version) {
    public static final ClientSoftware UNKNOWN = new ClientSoftware("unknown", "unknown");

    /** The software as an ApiVersions request names it; an empty name or version is {@code unknown}. */
    public static ClientSoftware of(String name, String version) {
      return new ClientSoftware(name == null || name.isEmpty() ? UNKNOWN.name : name,
          version == null || version.isEmpty() ? UNKNOWN.version : version);
    }
  }

  /** A request on the default PLAINTEXT listener from an anonymous client that sent no ApiVersions. */
  public RequestContext(RequestHeader header, InetAddress clientAddress, String connectionId) {
    this(header, clientAddress, -1, connectionId, DEFAULT_LISTENER, SecurityProtocol.PLAINTEXT,
        KafkaPrincipal.ANONYMOUS, ClientSoftware.UNKNOWN);
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
