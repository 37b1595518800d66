package io.tidemark.broker.protocol;

import java.net.InetAddress;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Who sent a request and how: its header (API, version, correlation id, client id), the peer's
 * address and a connection id unique within this broker.
 */
public record RequestContext(RequestHeader header, InetAddress clientAddress, String connectionId) {

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
