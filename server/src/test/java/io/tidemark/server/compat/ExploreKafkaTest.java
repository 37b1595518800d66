package io.tidemark.server.compat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.*;
import org.apache.kafka.common.requests.*;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExploreKafkaTest {
  @TempDir Path dir;

  @Test
  void dump() throws Exception {
    try (KafkaReference k = KafkaReference.start(dir, Map.of()); WireClient c = new WireClient(k.port())) {
      System.out.println("APIVERSIONS " + Responses.json(c.call(new ApiVersionsRequest.Builder(), (short) 4), (short) 4, Set.of()));
      System.out.println("TELEMETRY " + Responses.json(c.call(new GetTelemetrySubscriptionsRequest.Builder(
          new GetTelemetrySubscriptionsRequestData().setClientInstanceId(Uuid.ZERO_UUID), true), (short) 0), (short) 0, Set.of()));
      System.out.println("QUORUM " + Responses.json(c.call(new DescribeQuorumRequest.Builder(DescribeQuorumRequest.singletonRequest(
          new org.apache.kafka.common.TopicPartition("__cluster_metadata", 0))), (short) 2), (short) 2, Set.of()));
      DescribeConfigsRequestData d = new DescribeConfigsRequestData().setIncludeSynonyms(true);
      d.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 4).setResourceName("1"));
      System.out.println("BROKERCONFIGS " + Responses.json(c.call(new DescribeConfigsRequest.Builder(d), (short) 4), (short) 4, Set.of()));
      System.out.println("LISTCONFIGRES " + Responses.json(c.call(new ListConfigResourcesRequest.Builder(new ListConfigResourcesRequestData()), (short) 1), (short) 1, Set.of()));
      UpdateFeaturesRequestData u = new UpdateFeaturesRequestData().setTimeoutMs(10000);
      u.featureUpdates().add(new UpdateFeaturesRequestData.FeatureUpdateKey().setFeature("group.version").setMaxVersionLevel((short) 1).setUpgradeType((byte) 1));
      System.out.println("UPDATEFEATURES " + Responses.json(c.call(new UpdateFeaturesRequest.Builder(u), (short) 1), (short) 1, Set.of()));
      IncrementalAlterConfigsRequestData ia = new IncrementalAlterConfigsRequestData();
      IncrementalAlterConfigsRequestData.AlterConfigsResource r = new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 4).setResourceName("1");
      r.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName("log.dirs").setValue("/x").setConfigOperation((byte) 0));
      r.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName("message.max.bytes").setValue("2000000").setConfigOperation((byte) 0));
      ia.resources().add(r);
      System.out.println("INCALTER " + Responses.json(c.call(new IncrementalAlterConfigsRequest.Builder(ia), (short) 1), (short) 1, Set.of()));
    }
  }
}
