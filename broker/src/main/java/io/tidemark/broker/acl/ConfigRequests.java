package io.tidemark.broker.acl;

import static io.tidemark.broker.acl.RequestAuthorizer.partial;

import io.tidemark.broker.protocol.ApiHandler;
import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Authorization of the config APIs, with Kafka's operations: DescribeConfigs DESCRIBE_CONFIGS,
 * AlterConfigs and IncrementalAlterConfigs ALTER_CONFIGS, on the topic for a topic resource
 * (TOPIC_AUTHORIZATION_FAILED), on the group for a group resource (GROUP_AUTHORIZATION_FAILED) and
 * on the cluster for broker, broker-logger and client-metrics resources
 * (CLUSTER_AUTHORIZATION_FAILED). A denied resource is not changed and its result carries the
 * error; DescribeConfigs of a denied resource returns no config. Stateless.
 */
final class ConfigRequests {
  private final Authorizer authorizer;

  ConfigRequests(Authorizer authorizer) {
    this.authorizer = authorizer;
  }

  void addTo(Map<ApiKeys, RequestAuthorizer.Rule> rules) {
    rules.put(ApiKeys.DESCRIBE_CONFIGS, (c, r, inner) -> inner.handle(c, r).thenApply(b -> describe(c, b)));
    rules.put(ApiKeys.ALTER_CONFIGS, this::alter);
    rules.put(ApiKeys.INCREMENTAL_ALTER_CONFIGS, this::incrementalAlter);
  }

  /** NONE when allowed, else the error Kafka answers for the resource type. */
  private Errors check(RequestContext c, AclOperation op, byte resourceType, String name) {
    ConfigResource.Type type = ConfigResource.Type.forId(resourceType);
    return switch (type) {
      case TOPIC -> authorizer.allowed(c, op, ResourceType.TOPIC, name) ? Errors.NONE : Errors.TOPIC_AUTHORIZATION_FAILED;
      case GROUP -> authorizer.allowed(c, op, ResourceType.GROUP, name) ? Errors.NONE : Errors.GROUP_AUTHORIZATION_FAILED;
      default -> authorizer.allowedOnCluster(c, op) ? Errors.NONE : Errors.CLUSTER_AUTHORIZATION_FAILED;
    };
  }

  private ApiMessage describe(RequestContext c, ApiMessage body) {
    for (DescribeConfigsResponseData.DescribeConfigsResult r : ((DescribeConfigsResponseData) body).results()) {
      Errors e = check(c, AclOperation.DESCRIBE_CONFIGS, r.resourceType(), r.resourceName());
      if (e != Errors.NONE) {
        r.setErrorCode(e.code()).setErrorMessage(e.message()).setConfigs(new ArrayList<>());
      }
    }
    return body;
  }

  private CompletableFuture<ApiMessage> alter(RequestContext c, AbstractRequest r, ApiHandler inner) {
    AlterConfigsRequestData data = ((AlterConfigsRequest) r).data();
    List<AlterConfigsResponseData.AlterConfigsResourceResponse> denied = new ArrayList<>();
    for (AlterConfigsRequestData.AlterConfigsResource res : data.resources()) {
      Errors e = check(c, AclOperation.ALTER_CONFIGS, res.resourceType(), res.resourceName());
      if (e != Errors.NONE) {
        denied.add(new AlterConfigsResponseData.AlterConfigsResourceResponse().setResourceType(res.resourceType())
            .setResourceName(res.resourceName()).setErrorCode(e.code()).setErrorMessage(e.message()));
      }
    }
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    AlterConfigsRequestData kept = data.duplicate();
    kept.resources().removeIf(res -> denied.stream().anyMatch(d -> d.resourceType() == res.resourceType()
        && d.resourceName().equals(res.resourceName())));
    return partial(c, r, inner, kept, kept.resources().isEmpty(), AlterConfigsResponseData::new,
        response -> response.responses().addAll(denied));
  }

  private CompletableFuture<ApiMessage> incrementalAlter(RequestContext c, AbstractRequest r, ApiHandler inner) {
    IncrementalAlterConfigsRequestData data = ((IncrementalAlterConfigsRequest) r).data();
    List<IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse> denied = new ArrayList<>();
    for (IncrementalAlterConfigsRequestData.AlterConfigsResource res : data.resources()) {
      Errors e = check(c, AclOperation.ALTER_CONFIGS, res.resourceType(), res.resourceName());
      if (e != Errors.NONE) {
        denied.add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
            .setResourceType(res.resourceType()).setResourceName(res.resourceName()).setErrorCode(e.code())
            .setErrorMessage(e.message()));
      }
    }
    if (denied.isEmpty()) {
      return inner.handle(c, r);
    }
    IncrementalAlterConfigsRequestData kept = data.duplicate();
    kept.resources().removeIf(res -> denied.stream().anyMatch(d -> d.resourceType() == res.resourceType()
        && d.resourceName().equals(res.resourceName())));
    return partial(c, r, inner, kept, kept.resources().isEmpty(), IncrementalAlterConfigsResponseData::new,
        response -> response.responses().addAll(denied));
  }
}
