package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Goal: a topic's compression.type decides the codec of stored batches, as in Kafka, without changing any record. */
class TopicCompressionTest {

  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() {
    broker = new TestBroker();
    admin = broker.admin();
  }

  @AfterAll
  static void stop() {
    admin.close();
    broker.close();
  }

  private static void create(String topic, Map<String, String> configs) throws Exception {
    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all().get();
  }

  @ParameterizedTest(name = "topic={0} producer={1}")
  @CsvSource({"uncompressed,zstd", "gzip,none", "snappy,lz4", "lz4,gzip", "zstd,snappy", "zstd,zstd", "producer,lz4", "gzip,gzip"})
  void storedBatchesHaveTheTopicCodecAndTheProducersRecords(String topicCodec, String producerCodec) throws Exception {
    // Goal: batches in another codec are recompressed (offsets, keys, values, headers, timestamps kept); 'producer' keeps the producer's.
    String topic = "c-" + topicCodec + "-" + producerCodec;
    create(topic, Map.of("compression.type", topicCodec));
    int n = 300;
    long baseTime = 1_700_000_000_000L;
    try (KafkaProducer<String, String> producer = broker.producer(Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, producerCodec,
        ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
      for (int i = 0; i < n; i++) {
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, baseTime + i * 7L, "k" + i, "v" + i + "-" + "x".repeat(i % 40));
        r.headers().add(new RecordHeader("h", ("hv" + i).getBytes(StandardCharsets.UTF_8)));
        producer.send(r);
      }
      producer.flush();
    }
    String expected = topicCodec.equals("producer") ? producerCodec : topicCodec.equals("uncompressed") ? "none" : topicCodec;
    MemoryRecords stored = storedRecords(topic);
    long next = 0;
    for (MutableRecordBatch b : stored.batches()) {
      assertThat(b.compressionType().name).isEqualTo(expected);
      assertThat(b.baseOffset()).isEqualTo(next);
      assertThat(b.producerId()).isGreaterThanOrEqualTo(0);
      b.ensureValid();
      next = b.lastOffset() + 1;
    }
    assertThat(next).isEqualTo(n);
    List<ConsumerRecord<String, String>> got = consumeAll(topic, n);
    for (int i = 0; i < n; i++) {
      ConsumerRecord<String, String> r = got.get(i);
      assertThat(r.offset()).isEqualTo(i);
      assertThat(r.key()).isEqualTo("k" + i);
      assertThat(r.value()).isEqualTo("v" + i + "-" + "x".repeat(i % 40));
      assertThat(r.timestamp()).isEqualTo(baseTime + i * 7L);
      assertThat(new String(r.headers().lastHeader("h").value(), StandardCharsets.UTF_8)).isEqualTo("hv" + i);
    }
  }

  @Test
  void aRetriedIdempotentBatchIsStillADuplicateAfterRecompression() throws Exception {
    // Goal: recompression keeps producer id, epoch and sequences, so a retry is answered with the first offset and stored once.
    String topic = "c-retry";
    create(topic, Map.of("compression.type", "gzip"));
    try (RawConnection raw = new RawConnection(broker.broker.port())) {
      int id = raw.send(new InitProducerIdRequest.Builder(new InitProducerIdRequestData().setTransactionalId(null)
          .setTransactionTimeoutMs(60_000)), (short) 4);
      InitProducerIdResponse init = (InitProducerIdResponse) raw.receive(ApiKeys.INIT_PRODUCER_ID, (short) 4, id);
      long pid = init.data().producerId();
      short epoch = init.data().producerEpoch();
      long first = produce(raw, topic, MemoryRecords.withIdempotentRecords(Compression.lz4().build(), pid, epoch, 0,
          new SimpleRecord(1L, "a".getBytes(), "1".getBytes()), new SimpleRecord(2L, "b".getBytes(), "2".getBytes())));
      long retry = produce(raw, topic, MemoryRecords.withIdempotentRecords(Compression.lz4().build(), pid, epoch, 0,
          new SimpleRecord(1L, "a".getBytes(), "1".getBytes()), new SimpleRecord(2L, "b".getBytes(), "2".getBytes())));
      long second = produce(raw, topic, MemoryRecords.withIdempotentRecords(Compression.NONE, pid, epoch, 2,
          new SimpleRecord(3L, "c".getBytes(), "3".getBytes())));
      assertThat(first).isEqualTo(0);
      assertThat(retry).isEqualTo(0);
      assertThat(second).isEqualTo(2);
    }
    List<RecordBatch> batches = new ArrayList<>();
    storedRecords(topic).batches().forEach(batches::add);
    assertThat(batches).hasSize(2);
    assertThat(batches.get(0).baseSequence()).isEqualTo(0);
    assertThat(batches.get(0).lastSequence()).isEqualTo(1);
    assertThat(batches.get(1).baseSequence()).isEqualTo(2);
    assertThat(batches).allSatisfy(b -> assertThat(b.compressionType().name).isEqualTo("gzip"));
  }

  @Test
  void aBatchThatGrowsPastMaxMessageBytesWhenRecompressedIsRefusedAndNothingIsStored() throws Exception {
    // Goal: a small zstd batch of 4 MB of zeros on an uncompressed topic is refused with MESSAGE_TOO_LARGE, bounded in memory.
    String topic = "c-bomb";
    create(topic, Map.of("compression.type", "uncompressed", "max.message.bytes", "100000"));
    SimpleRecord[] records = new SimpleRecord[4096];
    for (int i = 0; i < records.length; i++) {
      records[i] = new SimpleRecord(1L, null, new byte[1024]);
    }
    MemoryRecords bomb = MemoryRecords.withRecords(Compression.zstd().build(), records);
    assertThat(bomb.sizeInBytes()).isLessThan(100_000);
    try (RawConnection raw = new RawConnection(broker.broker.port())) {
      ProduceResponse.PartitionResponse r = produceRaw(raw, topic, bomb);
      assertThat(r.error).isEqualTo(Errors.MESSAGE_TOO_LARGE);
    }
    assertThat(broker.broker.partitionLog(new TopicPartition(topic, 0)).orElseThrow().highWatermark()).isZero();
  }

  @Test
  void unknownCodecsAndBadLevelsAreRefusedLikeKafka() throws Exception {
    // Goal: only Kafka's compression.type values and each codec's level range are accepted (INVALID_CONFIG otherwise).
    for (Map<String, String> bad : List.of(Map.of("compression.type", "brotli"), Map.of("compression.gzip.level", "10"),
        Map.of("compression.zstd.level", "23"), Map.of("compression.lz4.level", "0"))) {
      assertThat(admin.createTopics(List.of(new NewTopic("c-bad", 1, (short) 1).configs(bad))).all())
          .failsWithin(Duration.ofSeconds(30)).withThrowableThat()
          .withCauseInstanceOf(org.apache.kafka.common.errors.InvalidConfigurationException.class);
    }
    create("c-levels", Map.of("compression.type", "zstd", "compression.zstd.level", "-5", "compression.gzip.level", "-1"));
    assertThat(admin.listTopics().names().get()).contains("c-levels");
  }

  private long produce(RawConnection raw, String topic, MemoryRecords records) throws Exception {
    ProduceResponse.PartitionResponse r = produceRaw(raw, topic, records);
    assertThat(r.error).isEqualTo(Errors.NONE);
    return r.baseOffset;
  }

  private ProduceResponse.PartitionResponse produceRaw(RawConnection raw, String topic, MemoryRecords records) throws Exception {
    ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
    data.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic)
        .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))));
    short v = 11;
    int id = raw.send(ProduceRequest.builder(data, true), v);
    ProduceResponse resp = (ProduceResponse) raw.receive(ApiKeys.PRODUCE, v, id);
    var pr = resp.data().responses().iterator().next().partitionResponses().get(0);
    return new ProduceResponse.PartitionResponse(Errors.forCode(pr.errorCode()), pr.baseOffset(), pr.logAppendTimeMs(),
        pr.logStartOffset());
  }

  private static MemoryRecords storedRecords(String topic) {
    var log = broker.broker.partitionLog(new TopicPartition(topic, 0)).orElseThrow();
    return MemoryRecords.readableRecords(((MemoryRecords) io.tidemark.broker.record.RecordBatches.concat(
        log.read(0, Integer.MAX_VALUE).join().batches())).buffer());
  }

  private static List<ConsumerRecord<String, String>> consumeAll(String topic, int n) {
    List<ConsumerRecord<String, String>> got = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = broker.consumer(Map.of())) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(Set.of(tp));
      consumer.seekToBeginning(Set.of(tp));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (got.size() < n && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(got::add);
      }
    }
    assertThat(got).hasSize(n);
    return got;
  }
}
