package io.tidemark.broker.protocol;

import io.tidemark.broker.metrics.BrokerMeters;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes a decoded request to its {@link ApiHandler} and produces the encoded response: the
 * handler's body, or the API's own error shape ({@code getErrorResponse}) when the handler
 * failed. Completes with null when no response is due, exceptionally with
 * {@link CloseConnectionException} when the connection must be closed. Stateless apart from the
 * registry; callable from any thread.
 */
public final class RequestDispatcher {

  private static final Logger log = LoggerFactory.getLogger(RequestDispatcher.class);
  private final ApiRegistry registry;
  private final BrokerMeters meters;
  private final ChannelThrottles throttles = new ChannelThrottles();

  public RequestDispatcher(ApiRegistry registry) {
    this(registry, BrokerMeters.noop());
  }

  /** Counts the errors of every response into {@code meters}. */
  public RequestDispatcher(ApiRegistry registry, BrokerMeters meters) {
    this.registry = registry;
    this.meters = meters;
  }

  public BrokerMeters meters() {
    return meters;
  }

  public ApiRegistry registry() {
    return registry;
  }

  /** The throttle times quotas put on connections; each connection takes its own after writing a response. */
  public ChannelThrottles throttles() {
    return throttles;
  }

  public CompletableFuture<ByteBuffer> dispatch(RequestDecoder.Decoded decoded, RequestContext context) {
    var header = decoded.header();
    if (decoded.unsupportedApiVersions()) {
      ApiRegistry.Registration r = registry.lookup(ApiKeys.API_VERSIONS);
      ApiVersionsResponseData body = new ApiVersionsResponseData().setErrorCode(Errors.UNSUPPORTED_VERSION.code());
      body.apiKeys().add(new ApiVersionsResponseData.ApiVersion().setApiKey(ApiKeys.API_VERSIONS.id)
          .setMinVersion(r.advertisedMin()).setMaxVersion(r.maxVersion()));
      return CompletableFuture.completedFuture(ResponseEncoder.encode(ApiKeys.API_VERSIONS, (short) 0, header.correlationId(), body));
    }
    AbstractRequest request = decoded.request();
    ApiHandler handler = registry.lookup(header.apiKey()).handler();
    CompletableFuture<ApiMessage> result;
    try {
      result = handler.handle(context, request);
    } catch (RuntimeException e) {
      result = CompletableFuture.failedFuture(e);
    }
    return result.handle((body, error) -> {
      if (error != null) {
        Throwable cause = ErrorMapping.unwrap(error);
        if (cause instanceof CloseConnectionException c) {
          throw c;
        }
        if (ErrorMapping.toErrors(cause) == Errors.UNKNOWN_SERVER_ERROR) {
          log.warn("{} v{} from {} failed", header.apiKey(), header.apiVersion(), context.clientId(), cause);
        }
        body = request.getErrorResponse(0, ErrorMapping.toApiException(cause)).data();
      }
      if (body == null) {
        return null;
      }
      ByteBuffer encoded;
      try {
        encoded = ResponseEncoder.encode(header.apiKey(), header.apiVersion(), header.correlationId(), body);
      } catch (RuntimeException e) {
        log.error("cannot encode {} v{} response; closing the connection", header.apiKey(), header.apiVersion(), e);
        throw new CloseConnectionException("response could not be encoded: " + e.getMessage());
      }
      countErrors(header.apiKey(), header.apiVersion(), body, encoded);
      return encoded;
    });
  }

  /** Metrics never fail a response: a response kafka-clients cannot read back is logged and not counted. */
  private void countErrors(ApiKeys key, short version, ApiMessage body, ByteBuffer encoded) {
    try {
      meters.api(key).errors(version, body, encoded);
    } catch (RuntimeException e) {
      log.debug("cannot count the errors of a {} v{} response", key, version, e);
    }
  }
}
