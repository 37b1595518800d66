package io.tidemark.broker.cluster;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;

/**
 * FindCoordinator (v0–6): this node coordinates every group (single node). Transaction
 * coordinators are refused with INVALID_REQUEST until transactions exist; share-group keys
 * likewise.
 */
public final class FindCoordinatorHandler implements ApiHandler {

  private static final byte GROUP = 0;
  private final ClusterView cluster;

  public FindCoordinatorHandler(ClusterView cluster) {
    this.cluster = cluster;
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    FindCoordinatorRequestData req = ((FindCoordinatorRequest) request).data();
    short v = request.version();
    ClusterView.Node self = cluster.self();
    FindCoordinatorResponseData body = new FindCoordinatorResponseData();
    boolean supported = req.keyType() == GROUP;
    String reason = supported ? null : "coordinator type " + req.keyType() + " is not supported (no transactions or share groups yet)";
    if (v < 4) {
      if (!supported) {
        return CompletableFuture.completedFuture(body.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(reason)
            .setNodeId(-1).setHost("").setPort(-1));
      }
      return CompletableFuture.completedFuture(body.setErrorCode(Errors.NONE.code()).setNodeId(self.id()).setHost(self.host())
          .setPort(self.port()));
    }
    List<FindCoordinatorResponseData.Coordinator> out = new ArrayList<>();
    for (String key : req.coordinatorKeys()) {
      FindCoordinatorResponseData.Coordinator c = new FindCoordinatorResponseData.Coordinator().setKey(key);
      if (supported) {
        c.setNodeId(self.id()).setHost(self.host()).setPort(self.port()).setErrorCode(Errors.NONE.code());
      } else {
        c.setNodeId(-1).setHost("").setPort(-1).setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(reason);
      }
      out.add(c);
    }
    body.setCoordinators(out);
    return CompletableFuture.completedFuture(body);
  }
}
