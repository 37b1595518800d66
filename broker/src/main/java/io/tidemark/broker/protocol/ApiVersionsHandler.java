package io.tidemark.broker.protocol;

import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;

/**
 * ApiVersions: lists exactly the registered APIs and ranges, and (v3+) the feature levels of
 * {@link FeatureLevels} (group.version 1, transaction.version 2, share.version 1 when share groups
 * are served, streams groups at level 0). v3+ client software name and version are checked
 * against Kafka's pattern (INVALID_REQUEST otherwise).
 */
public final class ApiVersionsHandler implements ApiHandler {

  private static final Pattern SOFTWARE = Pattern.compile("[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?");
  private final ApiRegistry registry;

  public ApiVersionsHandler(ApiRegistry registry) {
    this.registry = registry;
  }

  @Override
  public CompletableFuture<ApiMessage> handle(RequestContext context, AbstractRequest request) {
    ApiVersionsRequest req = (ApiVersionsRequest) request;
    ApiVersionsResponseData body = new ApiVersionsResponseData();
    if (req.version() >= 3 && (!SOFTWARE.matcher(req.data().clientSoftwareName()).matches()
        || !SOFTWARE.matcher(req.data().clientSoftwareVersion()).matches())) {
      body.setErrorCode(Errors.INVALID_REQUEST.code());
    }
    for (ApiRegistry.Registration r : registry.all()) {
      body.apiKeys().add(new ApiVersionsResponseData.ApiVersion().setApiKey(r.key().id)
          .setMinVersion(r.advertisedMin()).setMaxVersion(r.maxVersion()));
    }
    if (req.version() >= 3) {
      FeatureLevels.describe(body, registry.lookup(org.apache.kafka.common.protocol.ApiKeys.SHARE_GROUP_HEARTBEAT) != null);
    }
    return CompletableFuture.completedFuture(body);
  }
}
