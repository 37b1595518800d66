package io.tidemark.broker.telemetry;

import io.tidemark.broker.protocol.RequestContext;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.GetTelemetrySubscriptionsRequestData;
import org.apache.kafka.common.message.GetTelemetrySubscriptionsResponseData;
import org.apache.kafka.common.message.PushTelemetryRequestData;
import org.apache.kafka.common.message.PushTelemetryResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsRequest;
import org.apache.kafka.common.requests.PushTelemetryRequest;

/**
 * Client metrics (KIP-714): GetTelemetrySubscriptions (v0) and PushTelemetry (v0). A client gets
 * the subscription of the client-metrics resources that match it ({@link ClientMetricsSubscriptions}:
 * the union of their metrics, the shortest interval), or with none Kafka 4.4's empty subscription: no
 * requested metrics (the client then pushes nothing), Kafka's default push interval (5 min); always
 * its 1 MiB push limit, delta temporality and the four codecs. A client without an instance id is
 * given a new one. A push is checked as Kafka checks it (known instance id, the subscription id
 * handed out, accepted codec, size) and then <em>discarded</em>: Tidemark has no telemetry
 * receiver (Kafka's is a plug-in, {@code ClientTelemetryReceiver}, also absent by default), so
 * pushed metrics are not exported anywhere. Stateless: the subscription id is derived from the
 * instance id and the subscription's content, so any broker of the cluster answers the same and a
 * changed subscription makes the client's next push fail with UNKNOWN_SUBSCRIPTION_ID (it then asks
 * again), as in Kafka.
 */
public final class ClientTelemetryApis {

  /** Kafka's default {@code telemetry.max.bytes}. */
  static final int TELEMETRY_MAX_BYTES = 1024 * 1024;
  /** zstd, lz4, gzip, snappy, in Kafka's order of preference. */
  static final List<Byte> ACCEPTED_CODECS = List.of((byte) 4, (byte) 3, (byte) 1, (byte) 2);

  private final Supplier<Uuid> newInstanceIds;
  private final ClientMetricsSubscriptions subscriptions;

  public ClientTelemetryApis(Supplier<Uuid> newInstanceIds, ClientMetricsSubscriptions subscriptions) {
    this.newInstanceIds = newInstanceIds;
    this.subscriptions = subscriptions;
  }

  /** The subscription id of {@code subscription} for {@code instance}. */
  static int subscriptionId(Uuid instance, ClientMetricsSubscriptions.Subscription subscription) {
    return 31 * (31 * Long.hashCode(instance.getMostSignificantBits()) + Long.hashCode(instance.getLeastSignificantBits()))
        + subscription.metrics().hashCode() * 17 + subscription.intervalMs();
  }

  private ClientMetricsSubscriptions.Subscription subscriptionOf(RequestContext context, Uuid instance) {
    return subscriptions.subscriptionOf(new ClientMetricsSubscriptions.Client(instance.toString(), context.clientId(),
        context.software().name(), context.software().version(),
        context.clientAddress() == null ? "" : context.clientAddress().getHostAddress(), Integer.toString(context.clientPort())));
  }

  public CompletableFuture<ApiMessage> getTelemetrySubscriptions(RequestContext context, AbstractRequest request) {
    GetTelemetrySubscriptionsRequestData req = ((GetTelemetrySubscriptionsRequest) request).data();
    Uuid instance = req.clientInstanceId() == null || req.clientInstanceId().equals(Uuid.ZERO_UUID) ? newInstanceIds.get()
        : req.clientInstanceId();
    ClientMetricsSubscriptions.Subscription subscription = subscriptionOf(context, instance);
    GetTelemetrySubscriptionsResponseData body = new GetTelemetrySubscriptionsResponseData().setErrorCode(Errors.NONE.code())
        .setClientInstanceId(instance).setSubscriptionId(subscriptionId(instance, subscription))
        .setAcceptedCompressionTypes(ACCEPTED_CODECS).setPushIntervalMs(subscription.intervalMs())
        .setTelemetryMaxBytes(TELEMETRY_MAX_BYTES).setDeltaTemporality(true).setRequestedMetrics(subscription.metrics());
    return CompletableFuture.completedFuture(body);
  }

  public CompletableFuture<ApiMessage> pushTelemetry(RequestContext context, AbstractRequest request) {
    PushTelemetryRequestData req = ((PushTelemetryRequest) request).data();
    Errors error;
    if (req.clientInstanceId() == null || req.clientInstanceId().equals(Uuid.ZERO_UUID)) {
      error = Errors.INVALID_REQUEST;
    } else if (req.subscriptionId() != subscriptionId(req.clientInstanceId(), subscriptionOf(context, req.clientInstanceId()))) {
      error = Errors.UNKNOWN_SUBSCRIPTION_ID;
    } else if (!ACCEPTED_CODECS.contains(req.compressionType()) && req.compressionType() != 0) {
      error = Errors.UNSUPPORTED_COMPRESSION_TYPE;
    } else if (req.metrics() != null && req.metrics().remaining() > TELEMETRY_MAX_BYTES) {
      error = Errors.TELEMETRY_TOO_LARGE;
    } else {
      error = Errors.NONE;
    }
    return CompletableFuture.completedFuture(new PushTelemetryResponseData().setErrorCode(error.code()));
  }
}
