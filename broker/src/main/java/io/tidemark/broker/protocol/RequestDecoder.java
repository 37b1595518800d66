package io.tidemark.broker.protocol;

import java.nio.ByteBuffer;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Turns one request frame (without its size prefix) into a header and a typed request, using
 * only Kafka's generated classes. Anything it cannot parse, or an API or version not in the
 * {@link ApiRegistry}, throws {@link MalformedRequestException}; the single exception is an
 * ApiVersions request of a version newer than known, which is returned without a body so that
 * it can be answered with v0 and UNSUPPORTED_VERSION (KIP-511). Stateless and thread-safe.
 */
public final class RequestDecoder {

  /** A parsed frame; {@code request} is null when it is an ApiVersions of an unknown version. */
  public record Decoded(RequestHeader header, AbstractRequest request) {
    public boolean unsupportedApiVersions() {
      return request == null;
    }
  }

  private final ApiRegistry registry;

  public RequestDecoder(ApiRegistry registry) {
    this.registry = registry;
  }

  public Decoded decode(ByteBuffer frame) {
    RequestHeader header;
    try {
      header = RequestHeader.parse(frame);
    } catch (RuntimeException e) {
      throw new MalformedRequestException("unreadable request header: " + e.getMessage(), e);
    }
    ApiKeys key = header.apiKey();
    short version = header.apiVersion();
    if (key == ApiKeys.API_VERSIONS && !registry.serves(key, version)) {
      if (version > registry.lookup(key).maxVersion()) {
        return new Decoded(header, null);
      }
    }
    if (!header.isApiVersionSupported() || !registry.serves(key, version)) {
      throw new MalformedRequestException("API " + key + " version " + version + " is not served by this broker");
    }
    try {
      return new Decoded(header, AbstractRequest.parseRequest(key, version, new ByteBufferAccessor(frame)).request);
    } catch (RuntimeException e) {
      throw new MalformedRequestException("unreadable " + key + " v" + version + " request: " + e.getMessage(), e);
    }
  }
}
