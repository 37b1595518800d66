package io.tidemark.broker.protocol;

import java.nio.ByteBuffer;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.RequestUtils;

/**
 * Serializes a response body with the header version the API asks for (ApiVersions always uses
 * header v0), prefixed by its size. Stateless and thread-safe.
 */
public final class ResponseEncoder {

  private ResponseEncoder() {}

  public static ByteBuffer encode(ApiKeys key, short version, int correlationId, ApiMessage body) {
    ByteBuffer payload = RequestUtils.serialize(new ResponseHeaderData().setCorrelationId(correlationId),
        key.responseHeaderVersion(version), body, version);
    ByteBuffer framed = ByteBuffer.allocate(4 + payload.remaining());
    framed.putInt(payload.remaining()).put(payload).flip();
    return framed;
  }
}
