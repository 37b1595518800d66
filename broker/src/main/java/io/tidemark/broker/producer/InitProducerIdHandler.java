package io.tidemark.broker.producer;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;

/**
 * InitProducerId (v0–5) for idempotent producers: always a fresh producer id at epoch 0 (as
 * Kafka does without a transactional id). A request with a transactional id goes to
 * {@code transactional} (the transaction coordinator's side).
 */
public final class InitProducerIdHandler implements ApiHandler {

  private final ProducerIdAllocator allocator;
  private final ApiHandler transactional;

  public InitProducerIdHandler(ProducerIdAllocator allocator, ApiHandler transactional) {
    this.allocator = allocator;
    this.transactional = transactional;
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    InitProducerIdRequestData req = ((InitProducerIdRequest) request).data();
    InitProducerIdResponseData body = new InitProducerIdResponseData().setProducerId(-1).setProducerEpoch((short) -1);
    if (req.transactionalId() != null) {
      return transactional.handle(context, request);
    }
    return CompletableFuture.completedFuture(body.setProducerId(allocator.nextProducerId()).setProducerEpoch((short) 0));
  }
}
