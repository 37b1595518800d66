package io.tidemark.broker.cluster;

import io.tidemark.broker.offset.PartitionLookup;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;

/**
 * DescribeCluster (v0–2; broker endpoints only: every live broker), ElectLeaders (v0–2; every partition already has
 * its only possible leader, so ELECTION_NOT_NEEDED) and DescribeProducers (v0; idempotent
 * producers known to each partition).
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
    for (ClusterView.Node node : cluster.brokers()) {
      body.brokers().add(new DescribeClusterResponseData.DescribeClusterBroker().setBrokerId(node.id()).setHost(node.host())
          .setPort(node.port()).setRack(null));
    }
    return CompletableFuture.completedFuture(body);
  }

  public CompletableFuture<ApiMessage> electLeaders(RequestContext context, AbstractRequest request) {
    ElectLeadersRequestData req = ((ElectLeadersRequest) request).data();
    ElectLeadersResponseData body = new ElectLeadersResponseData().setErrorCode(Errors.NONE.code());
    if (req.topicPartitions() == null) {
      for (TopicInfo t : registry.state().topics().values()) {
        ElectLeadersResponseData.ReplicaElectionResult r = new ElectLeadersResponseData.ReplicaElectionResult().setTopic(t.name());
        for (TopicInfo.PartitionInfo p : t.partitions()) {
          r.partitionResult().add(new ElectLeadersResponseData.PartitionResult().setPartitionId(p.partition())
              .setErrorCode(Errors.ELECTION_NOT_NEEDED.code()).setErrorMessage("the only replica is already the leader"));
        }
        body.replicaElectionResults().add(r);
      }
      return CompletableFuture.completedFuture(body);
    }
    for (ElectLeadersRequestData.TopicPartitions tp : req.topicPartitions()) {
      ElectLeadersResponseData.ReplicaElectionResult r = new ElectLeadersResponseData.ReplicaElectionResult().setTopic(tp.topic());
      for (int p : tp.partitions()) {
        PartitionLookup.Found f = lookup.find(tp.topic(), p, -1);
        Errors e = f.error() == Errors.NONE ? Errors.ELECTION_NOT_NEEDED : f.error();
        r.partitionResult().add(new ElectLeadersResponseData.PartitionResult().setPartitionId(p).setErrorCode(e.code())
            .setErrorMessage(e == Errors.ELECTION_NOT_NEEDED ? "the only replica is already the leader" : e.message()));
      }
      body.replicaElectionResults().add(r);
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
              .setProducerEpoch((int) s[1]).setLastSequence((int) s[2]).setLastTimestamp(s[3]).setCoordinatorEpoch(-1)
              .setCurrentTxnStartOffset(-1));
        }
      }
    }
    return CompletableFuture.completedFuture(body);
  }
}
