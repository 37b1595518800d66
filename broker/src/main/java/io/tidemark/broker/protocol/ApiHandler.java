package io.tidemark.broker.protocol;

import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;

/**
 * Serves one Kafka API. Called on the connection's event loop: it must not block; long work
 * completes the returned future later, from any thread. A future completed with {@code null}
 * means "send no response" ({@code acks=0}). Domain exceptions thrown or completed here are
 * turned into the API's error response by {@link ErrorMapping}.
 */
@FunctionalInterface
public interface ApiHandler {
  CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request);
}
