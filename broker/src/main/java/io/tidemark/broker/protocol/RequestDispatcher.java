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
 * {@link CloseConnectionException} when the connection must be closed.
 *
 * <p>Request-time quotas ({@code request_percentage}, Kafka's request quota): a request of a
 * client under one, of any API but the exempt ones ({@link #exempt}), is timed from when its
 * connection dispatched it (the instant the connection already keeps for its meters, so decoding
 * counts) to when its handler returned, that is the time it held the connection's thread; the
 * time is recorded against the quota before the response is encoded, a throttle time is put into
 * the response's {@code throttle_time_ms} (raised, never lowered, so a byte-rate throttle stays if
 * longer) and the connection is muted for that long. Encoding the response is timed too and counts
 * towards the next request. Time a handler spends on other threads after returning (a WAL append,
 * a long poll) is waiting, not this client's thread time, and is not counted. Requests of clients
 * without a quota read no clock here. Stateless apart from the registry and the quota's rates;
 * callable from any thread.
 */
public final class RequestDispatcher {

  private static final Logger log = LoggerFactory.getLogger(RequestDispatcher.class);
  private final ApiRegistry registry;
  private final BrokerMeters meters;
  private final ChannelThrottles throttles = new ChannelThrottles();
  private volatile RequestTimeQuota requestQuota = RequestTimeQuota.NONE;
  private final java.util.List<java.util.function.Consumer<String>> closedListeners = new java.util.concurrent.CopyOnWriteArrayList<>();

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

  /**
   * Tells {@code listener} the id of every connection that closes (as Kafka's connection-disconnect
   * listeners: share sessions opened on a dropped connection are closed).
   */
  public void onConnectionClosed(java.util.function.Consumer<String> listener) {
    closedListeners.add(listener);
  }

  /** Called by a connection once it has closed, on its event loop; listeners must not block. */
  public void connectionClosed(String connectionId) {
    for (java.util.function.Consumer<String> l : closedListeners) {
      try {
        l.accept(connectionId);
      } catch (RuntimeException e) {
        log.warn("a connection-closed listener failed for connection {}", connectionId, e);
      }
    }
  }

  /** Sets the request-time quota of every request dispatched from now on. */
  public void requestTimeQuota(RequestTimeQuota quota) {
    this.requestQuota = quota;
  }

  /**
   * APIs no request-time quota throttles, as Kafka exempts them: ApiVersions and the SASL exchange
   * (a client must always be able to connect), and the cluster actions of brokers and controllers.
   */
  static boolean exempt(ApiKeys key) {
    return key == ApiKeys.API_VERSIONS || key == ApiKeys.SASL_HANDSHAKE || key == ApiKeys.SASL_AUTHENTICATE
        || key.clusterAction;
  }

  public CompletableFuture<ByteBuffer> dispatch(RequestDecoder.Decoded decoded, RequestContext context) {
    return dispatch(decoded, context, System.nanoTime());
  }

  /** Dispatches a request its connection started handling at {@code startNanos} ({@link System#nanoTime()}). */
  public CompletableFuture<ByteBuffer> dispatch(RequestDecoder.Decoded decoded, RequestContext context, long startNanos) {
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
    RequestTimeQuota quota = requestQuota;
    boolean timed = !exempt(header.apiKey()) && quota.applies(context);
    CompletableFuture<ApiMessage> result;
    try {
      result = handler.handle(context, request);
    } catch (RuntimeException e) {
      result = CompletableFuture.failedFuture(e);
    }
    long handledNanos = timed ? System.nanoTime() - startNanos : 0;
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
      long encodeStart = 0;
      int throttleBefore = 0;
      boolean raised = false;
      if (timed) {
        long throttleMs = quota.record(context, handledNanos);
        if (throttleMs > 0) {
          throttleBefore = ThrottleTimeField.get(body);
          raised = ThrottleTimeField.raise(body, throttleMs);
          throttles.mute(context.connectionId(), throttleMs);
        }
        encodeStart = System.nanoTime();
      }
      ByteBuffer encoded;
      try {
        encoded = encodeWithThrottle(header, body, raised, throttleBefore);
        if (timed) {
          quota.record(context, System.nanoTime() - encodeStart);
        }
      } catch (RuntimeException e) {
        log.error("cannot encode {} v{} response; closing the connection", header.apiKey(), header.apiVersion(), e);
        throw new CloseConnectionException("response could not be encoded: " + e.getMessage());
      }
      countErrors(header.apiKey(), header.apiVersion(), body, encoded);
      return encoded;
    });
  }

  /**
   * Encodes the response; when a raised throttle time cannot be written at the request's version
   * (a version without the field that refuses a non-default value), encodes it with the time it
   * had: the connection is still muted, as Kafka mutes clients too old to read the field.
   */
  private static ByteBuffer encodeWithThrottle(org.apache.kafka.common.requests.RequestHeader header, ApiMessage body,
      boolean raised, int throttleBefore) {
    try {
      return ResponseEncoder.encode(header.apiKey(), header.apiVersion(), header.correlationId(), body);
    } catch (org.apache.kafka.common.errors.UnsupportedVersionException e) {
      if (!raised) {
        throw e;
      }
      ThrottleTimeField.reset(body, throttleBefore);
      return ResponseEncoder.encode(header.apiKey(), header.apiVersion(), header.correlationId(), body);
    }
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
