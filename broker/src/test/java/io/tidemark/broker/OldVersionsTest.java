package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Goal: the oldest advertised versions of the main APIs are answered (no field the version cannot carry is set). */
class OldVersionsTest {

  static TestBroker broker;

  @BeforeAll
  static void start() throws Exception {
    broker = new TestBroker();
    try (var admin = broker.admin(); KafkaProducer<String, String> p = broker.producer(Map.of())) {
      admin.createTopics(List.of(new NewTopic("old", 1, (short) 1))).all().get();
      p.send(new ProducerRecord<>("old", 0, "k", "v")).get();
    }
  }

  @AfterAll
  static void stop() {
    broker.close();
  }

  @Test
  void oldestVersionsAreServed() throws Exception {
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      for (short v = 1; v <= 11; v++) {
        var lo = ListOffsetsRequest.Builder.forConsumer(true, IsolationLevel.READ_UNCOMMITTED, true, true, true, true)
            .setTargetTimes(List.of(new ListOffsetsRequestData.ListOffsetsTopic().setName("old").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1)))));
        int id = c.send(lo, v);
        ListOffsetsResponse r = (ListOffsetsResponse) c.receive(ApiKeys.LIST_OFFSETS, v, id);
        assertThat(r.topics().get(0).partitions().get(0).offset()).as("ListOffsets v%d", v).isEqualTo(1);
      }
      for (short v = 1; v <= 13; v++) {
        MetadataRequestData md = new MetadataRequestData().setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("old")))
            .setAllowAutoTopicCreation(v >= 4 ? false : true);
        int id = c.send(new MetadataRequest.Builder(md), v);
        MetadataResponse r = (MetadataResponse) c.receive(ApiKeys.METADATA, v, id);
        assertThat(r.topicMetadata()).as("Metadata v%d", v).hasSize(1);
      }
      for (short v = 4; v <= 12; v++) {
        FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20)
            .setSessionId(0).setSessionEpoch(-1);
        fetch.topics().add(new FetchRequestData.FetchTopic().setTopic("old").setPartitions(List.of(
            new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20))));
        int id = c.send(new FetchRequest.SimpleBuilder(fetch), v);
        FetchResponse r = (FetchResponse) c.receive(ApiKeys.FETCH, v, id);
        assertThat(r.error()).as("Fetch v%d", v).isEqualTo(Errors.NONE);
        assertThat(r.data().responses().get(0).partitions().get(0).highWatermark()).isEqualTo(1);
      }
      for (short v = 1; v <= 7; v++) {
        OffsetFetchRequestData of = new OffsetFetchRequestData().setGroupId("nobody").setTopics(List.of(
            new OffsetFetchRequestData.OffsetFetchRequestTopic().setName("old").setPartitionIndexes(List.of(0))));
        int id = c.send(OffsetFetchRequest.Builder.forTopicNames(of, false), v);
        OffsetFetchResponse r = (OffsetFetchResponse) c.receive(ApiKeys.OFFSET_FETCH, v, id);
        assertThat(r.data().topics().get(0).partitions().get(0).committedOffset()).as("OffsetFetch v%d", v).isEqualTo(-1);
      }
    }
  }

  @Test
  void describeTopicPartitionsPagesWithACursor() throws Exception {
    try (var admin = broker.admin()) {
      admin.createTopics(List.of(new NewTopic("paged", 5, (short) 1))).all().get();
    }
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      var data = new org.apache.kafka.common.message.DescribeTopicPartitionsRequestData().setResponsePartitionLimit(3)
          .setTopics(List.of(new org.apache.kafka.common.message.DescribeTopicPartitionsRequestData.TopicRequest().setName("paged")));
      int id = c.send(new org.apache.kafka.common.requests.DescribeTopicPartitionsRequest.Builder(data), (short) 0);
      var r = (org.apache.kafka.common.requests.DescribeTopicPartitionsResponse) c.receive(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, (short) 0, id);
      assertThat(r.data().topics().find("paged").partitions()).hasSize(3);
      assertThat(r.data().nextCursor().partitionIndex()).isEqualTo(3);
      data.setCursor(new org.apache.kafka.common.message.DescribeTopicPartitionsRequestData.Cursor().setTopicName("paged")
          .setPartitionIndex(3));
      id = c.send(new org.apache.kafka.common.requests.DescribeTopicPartitionsRequest.Builder(data), (short) 0);
      r = (org.apache.kafka.common.requests.DescribeTopicPartitionsResponse) c.receive(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, (short) 0, id);
      assertThat(r.data().topics().find("paged").partitions()).extracting(p -> p.partitionIndex()).containsExactly(3, 4);
      assertThat(r.data().nextCursor()).isNull();
    }
  }
}
