package io.tidemark.broker.cluster;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;

/**
 * FindCoordinator (v0–6): a group's coordinator is the live broker leading its
 * {@code __consumer_offsets} partition ({@link GroupCoordinators}), a transactional id's the one
 * leading its {@code __transaction_state} partition; without one the answer is
 * COORDINATOR_NOT_AVAILABLE and the client asks again. A share-partition key
 * ("group:topicId:partition", key type SHARE, v6+) names the broker leading its
 * {@code __share_group_state} partition (the share coordinator of that key); a malformed one is
 * answered INVALID_REQUEST, as Kafka does. Other key types are refused with INVALID_REQUEST.
 */
public final class FindCoordinatorHandler implements ApiHandler {

  private static final byte GROUP = 0;
  private static final byte TRANSACTION = 1;
  private static final byte SHARE = 2;
  private static final String NO_COORDINATOR = "the group's offsets partition has no live leader yet";
  private final ClusterView cluster;
  private final GroupCoordinators coordinators;
  private final java.util.function.Function<String, Optional<Integer>> transactionCoordinators;
  private final java.util.function.Function<String, Optional<Integer>> shareCoordinators;

  /** {@code shareCoordinators} throws IllegalArgumentException for a malformed share-partition key. */
  public FindCoordinatorHandler(ClusterView cluster, GroupCoordinators coordinators,
      java.util.function.Function<String, Optional<Integer>> transactionCoordinators,
      java.util.function.Function<String, Optional<Integer>> shareCoordinators) {
    this.cluster = cluster;
    this.coordinators = coordinators;
    this.transactionCoordinators = transactionCoordinators;
    this.shareCoordinators = shareCoordinators;
  }

  private Optional<ClusterView.Node> coordinator(byte keyType, String key, String listener) {
    Optional<Integer> id = switch (keyType) {
      case TRANSACTION -> transactionCoordinators.apply(key);
      case SHARE -> shareCoordinators.apply(key);
      default -> coordinators.coordinator(key);
    };
    return id.flatMap(i -> cluster.broker(i, listener));
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    FindCoordinatorRequestData req = ((FindCoordinatorRequest) request).data();
    short v = request.version();
    FindCoordinatorResponseData body = new FindCoordinatorResponseData();
    boolean supported = req.keyType() == GROUP || req.keyType() == TRANSACTION || (req.keyType() == SHARE && v >= 6);
    String reason = supported ? null : "coordinator type " + req.keyType() + " is not supported";
    if (v < 4) {
      if (!supported) {
        return CompletableFuture.completedFuture(body.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(reason)
            .setNodeId(-1).setHost("").setPort(-1));
      }
      Optional<ClusterView.Node> node = coordinator(req.keyType(), req.key(), context.listenerName());
      if (node.isEmpty()) {
        return CompletableFuture.completedFuture(body.setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code())
            .setErrorMessage(NO_COORDINATOR).setNodeId(-1).setHost("").setPort(-1));
      }
      return CompletableFuture.completedFuture(body.setErrorCode(Errors.NONE.code()).setNodeId(node.get().id())
          .setHost(node.get().host()).setPort(node.get().port()));
    }
    List<FindCoordinatorResponseData.Coordinator> out = new ArrayList<>();
    for (String key : req.coordinatorKeys()) {
      FindCoordinatorResponseData.Coordinator c = new FindCoordinatorResponseData.Coordinator().setKey(key);
      Optional<ClusterView.Node> node;
      try {
        node = supported ? coordinator(req.keyType(), key, context.listenerName()) : Optional.empty();
      } catch (IllegalArgumentException malformed) {
        out.add(c.setNodeId(-1).setHost("").setPort(-1).setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(malformed.getMessage()));
        continue;
      }
      if (node.isPresent()) {
        c.setNodeId(node.get().id()).setHost(node.get().host()).setPort(node.get().port()).setErrorCode(Errors.NONE.code());
      } else if (supported) {
        c.setNodeId(-1).setHost("").setPort(-1).setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code())
            .setErrorMessage(NO_COORDINATOR);
      } else {
        c.setNodeId(-1).setHost("").setPort(-1).setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(reason);
      }
      out.add(c);
    }
    body.setCoordinators(out);
    return CompletableFuture.completedFuture(body);
  }
}
