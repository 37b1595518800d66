package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.produce.ProduceHandler;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Goal: bad input gets the right Kafka error or a closed connection, changes nothing, and disturbs no other client. */
class BadInputTest {

  static TestBroker broker;

  @BeforeAll
  static void start() throws Exception {
    broker = new TestBroker(Map.of("kafka.max.request.bytes", "65536"));
    try (var admin = broker.admin()) {
      admin.createTopics(List.of(new NewTopic("bad", 1, (short) 1))).all().get();
    }
  }

  @AfterAll
  static void stop() {
    broker.close();
  }

  private static ApiVersionsResponse apiVersions(RawConnection c, short version) throws Exception {
    int id = c.send(new ApiVersionsRequest.Builder(new ApiVersionsRequestData().setClientSoftwareName("raw")
        .setClientSoftwareVersion("1.0"), version, version), version);
    return (ApiVersionsResponse) c.receive(ApiKeys.API_VERSIONS, version, id);
  }

  private static ProduceResponse produce(RawConnection c, ByteBuffer batch) throws Exception {
    ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000);
    data.topicData().add(new ProduceRequestData.TopicProduceData().setName("bad").setPartitionData(List.of(
        new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.readableRecords(batch)))));
    short v = 11;
    int id = c.send(ProduceRequest.builder(data, true), v);
    return (ProduceResponse) c.receive(ApiKeys.PRODUCE, v, id);
  }

  private static ByteBuffer validBatch() {
    return MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("k".getBytes(), "hello".getBytes())).buffer();
  }

  @Test
  void clientsCannotProduceToInternalTopicsButTheBrokersOwnServicesCanToTheirs() throws Exception {
    // Goal: internal topics refuse ordinary producers (INVALID_TOPIC_EXCEPTION, nothing written); the
    // services of other brokers (client id prefix __tidemark_internal) append to their own internal
    // topics, never to __consumer_offsets.
    broker.broker.internalPartition("__service_log").get(30, TimeUnit.SECONDS);
    broker.broker.internalPartition("__consumer_offsets").get(30, TimeUnit.SECONDS);
    try (var plain = broker.producer(Map.of())) {
      assertThatThrownBy(() -> plain.send(new ProducerRecord<>("__service_log", 0, "k", "v"))
          .get(30, TimeUnit.SECONDS))
          .hasCauseInstanceOf(InvalidTopicException.class);
    }
    try (var service = broker.producer(Map.of(ProducerConfig.CLIENT_ID_CONFIG,
        ProduceHandler.INTERNAL_CLIENT_PREFIX + "-test"))) {
      assertThat(service.send(new ProducerRecord<>("__service_log", 0, "k", "v"))
          .get(30, TimeUnit.SECONDS).offset()).isZero();
      assertThatThrownBy(() -> service.send(new ProducerRecord<>("__consumer_offsets", 0,
          "k", "v")).get(30, TimeUnit.SECONDS))
          .hasCauseInstanceOf(InvalidTopicException.class);
    }
    assertThat(broker.broker.partitionLog(new TopicPartition("__service_log", 0)).orElseThrow()
        .highWatermark()).isEqualTo(1);
  }

  @Test
  void malformedFrameClosesOnlyThatConnection() throws Exception {
    try (RawConnection good = new RawConnection(broker.broker.port()); RawConnection bad = new RawConnection(broker.broker.port())) {
      assertThat(apiVersions(good, (short) 3).data().errorCode()).isZero();
      bad.sendFrame(ByteBuffer.wrap(new byte[] {0, 3, 0, 9, 0, 0, 0, 1, (byte) 0xff, (byte) 0xff, 1, 2, 3}));
      assertThat(bad.closedByBroker()).isTrue();
      assertThat(apiVersions(good, (short) 3).data().errorCode()).isZero();
    }
  }

  @Test
  void unknownApiKeyClosesTheConnection() throws Exception {
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      ByteBuffer b = ByteBuffer.allocate(10);
      b.putShort((short) 999).putShort((short) 0).putInt(1).putShort((short) -1).flip();
      c.sendFrame(b);
      assertThat(c.closedByBroker()).isTrue();
    }
  }

  @Test
  void oversizedRequestClosesTheConnection() throws Exception {
    try (RawConnection c = new RawConnection(broker.broker.port()); RawConnection other = new RawConnection(broker.broker.port())) {
      c.sendRaw(new byte[] {0x16, 0x03, 0x01, 0x02}); // a TLS hello read as a size: far above the limit
      assertThat(c.closedByBroker()).isTrue();
      assertThat(apiVersions(other, (short) 3).data().errorCode()).isZero();
    }
  }

  @Test
  void newerApiVersionsIsAnsweredWithV0AndUnsupportedVersion() throws Exception {
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      ByteBuffer header = ByteBuffer.allocate(64);
      // ApiVersions v99, header v2: key, version, correlation, client id, empty tagged fields; body: empty tagged fields
      header.putShort(ApiKeys.API_VERSIONS.id).putShort((short) 99).putInt(42).putShort((short) 1).put((byte) 'x').put((byte) 0)
          .put((byte) 0).flip();
      c.sendFrame(header);
      ByteBuffer frame = c.receiveFrame();
      assertThat(frame.getInt()).isEqualTo(42); // response header v0: correlation only
      ApiVersionsResponse r = ApiVersionsResponse.parse(new org.apache.kafka.common.protocol.ByteBufferAccessor(frame), (short) 0);
      assertThat(r.data().errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
      assertThat(r.data().apiKeys().find(ApiKeys.API_VERSIONS.id).maxVersion()).isEqualTo((short) 4);
    }
  }

  @Test
  void advertisedApisAreExactlyTheRegisteredOnes() throws Exception {
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      ApiVersionsResponse r = apiVersions(c, (short) 4);
      assertThat(r.data().apiKeys()).hasSize(broker.broker.apis().all().size());
      assertThat(r.data().apiKeys().find(ApiKeys.PRODUCE.id).minVersion()).isZero();
      // transactions V2: AddPartitionsToTxn v4-5 (leaders verifying or adding partitions, KIP-890) and EndTxn v5
      assertThat(r.data().apiKeys().find(ApiKeys.ADD_PARTITIONS_TO_TXN.id).maxVersion()).isEqualTo((short) 5);
      assertThat(r.data().apiKeys().find(ApiKeys.END_TXN.id).maxVersion()).isEqualTo((short) 5);
      assertThat(r.data().apiKeys().find(ApiKeys.CREATE_DELEGATION_TOKEN.id)).isNull(); // SASL is served (SecureListenersTest)
    }
  }

  @Test
  void corruptBatchIsRefusedWithCorruptMessageAndNothingIsWritten() throws Exception {
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      long before = produce(c, validBatch()).data().responses().iterator().next().partitionResponses().get(0).baseOffset();
      ByteBuffer batch = validBatch();
      ByteBuffer corrupt = ByteBuffer.allocate(batch.remaining()).put(batch.duplicate()).flip();
      corrupt.put(corrupt.limit() - 2, (byte) (corrupt.get(corrupt.limit() - 2) ^ 0x5a));
      ProduceResponse r = produce(c, corrupt);
      var pr = r.data().responses().iterator().next().partitionResponses().get(0);
      assertThat(pr.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE.code());
      ProduceResponse ok = produce(c, validBatch());
      assertThat(ok.data().responses().iterator().next().partitionResponses().get(0).errorCode()).isZero();
      assertThat(ok.data().responses().iterator().next().partitionResponses().get(0).baseOffset()).isEqualTo(before + 1);
    }
  }

  @Test
  void acksZeroGetsNoResponseAndAFailureClosesTheConnection() throws Exception {
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      c.send(ProduceRequest.builder(acksZero("bad"), true), (short) 9);
      int versionsId = c.send(new ApiVersionsRequest.Builder(), (short) 3);
      // the next frame is the ApiVersions response: the acks=0 produce had none
      assertThat(c.receive(ApiKeys.API_VERSIONS, (short) 3, versionsId)).isInstanceOf(ApiVersionsResponse.class);
      c.send(ProduceRequest.builder(acksZero("no-such-topic"), true), (short) 9);
      assertThat(c.closedByBroker()).isTrue();
    }
  }

  private static ProduceRequestData acksZero(String topic) {
    ProduceRequestData data = new ProduceRequestData().setAcks((short) 0).setTimeoutMs(10_000);
    data.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
        new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.readableRecords(validBatch())))));
    return data;
  }

  @Test
  void responsesFollowRequestOrderEvenWhenTheFirstWaits() throws Exception {
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(1500).setMinBytes(1 << 20)
          .setMaxBytes(1 << 20).setSessionId(0).setSessionEpoch(-1);
      fetch.topics().add(new FetchRequestData.FetchTopic().setTopic("bad").setPartitions(List.of(
          new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20))));
      short fv = 12;
      int fetchId = c.send(new FetchRequest.SimpleBuilder(fetch), fv);
      int versionsId = c.send(new ApiVersionsRequest.Builder(), (short) 3);
      long start = System.nanoTime();
      FetchResponse fr = (FetchResponse) c.receive(ApiKeys.FETCH, fv, fetchId);
      assertThat(fr.error()).isEqualTo(Errors.NONE);
      assertThat(System.nanoTime() - start).isGreaterThan(1_000_000_000L);
      assertThat(c.receive(ApiKeys.API_VERSIONS, (short) 3, versionsId)).isInstanceOf(ApiVersionsResponse.class);
    }
  }

}
