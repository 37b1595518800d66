package io.tidemark.broker.cluster;

import io.tidemark.broker.offset.PartitionLookup;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.requests.DescribeProducersRequest;

/**
 * DescribeCluster (v0–2; broker endpoints only: every live broker) and DescribeProducers (v0;
 * idempotent and transactional producers known to each partition, with the coordinator epoch of
 * their last marker and the first offset of their open transaction). ElectLeaders is in {@link ReassignmentApis}.
 */
public final class ClusterApis {

  private static final byte BROKER_ENDPOINTS = 1;
  private final ClusterView cluster;
  private final TopicRegistry registry;
  private final PartitionLookup lookup;

  public ClusterApis(ClusterView cluster, TopicRegistry registry, PartitionLookup lookup) {
    this.cluster = cluster;
    this.registry = registry;
    this.lookup = lookup;
  }

  public CompletableFuture<ApiMessage> describeCluster(RequestContext context, AbstractRequest request) {
    DescribeClusterRequestData req = ((DescribeClusterRequest) request).data();
    DescribeClusterResponseData body = new DescribeClusterResponseData().setClusterId(cluster.clusterId())
        .setControllerId(cluster.controllerId()).setEndpointType(req.endpointType());
    if (request.version() >= 1 && req.endpointType() != BROKER_ENDPOINTS) {
      return CompletableFuture.completedFuture(body.setErrorCode(Errors.UNSUPPORTED_ENDPOINT_TYPE.code())
          .setErrorMessage("only broker endpoints are served on this listener"));
    }
    for (ClusterView.Node node : cluster.brokers(context.listenerName())) {
      body.brokers().add(new DescribeClusterResponseData.DescribeClusterBroker().setBrokerId(node.id()).setHost(node.host())
          .setPort(node.port()).setRack(null));
    }
    return CompletableFuture.completedFuture(body);
  }

  public CompletableFuture<ApiMessage> describeProducers(RequestContext context, AbstractRequest request) {
    DescribeProducersRequestData req = ((DescribeProducersRequest) request).data();
    DescribeProducersResponseData body = new DescribeProducersResponseData();
    for (DescribeProducersRequestData.TopicRequest t : req.topics()) {
      DescribeProducersResponseData.TopicResponse tr = new DescribeProducersResponseData.TopicResponse().setName(t.name());
      body.topics().add(tr);
      for (int p : t.partitionIndexes()) {
        DescribeProducersResponseData.PartitionResponse pr = new DescribeProducersResponseData.PartitionResponse().setPartitionIndex(p);
        tr.partitions().add(pr);
        PartitionLookup.Found f = lookup.find(t.name(), p, -1);
        if (f.error() != Errors.NONE) {
          pr.setErrorCode(f.error().code()).setErrorMessage(f.error().message());
          continue;
        }
        for (long[] s : f.log().producerStates()) {
          pr.activeProducers().add(new DescribeProducersResponseData.ProducerState().setProducerId(s[0])
              .setProducerEpoch((int) s[1]).setLastSequence((int) s[2]).setLastTimestamp(s[3]).setCoordinatorEpoch((int) s[5])
              .setCurrentTxnStartOffset(s[6]));
        }
      }
    }
    return CompletableFuture.completedFuture(body);
  }
}
