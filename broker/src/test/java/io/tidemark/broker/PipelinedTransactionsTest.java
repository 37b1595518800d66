package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ProduceRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: a real kafka-clients producer that pipelines batches (max.in.flight 5, linger 0) keeps
 * working across producer-epoch bumps. A transactions V2 producer (KIP-890: the coordinator bumps
 * its epoch at every transaction end, and the broker adds each partition at the producer's first
 * write of a transaction) runs many small transactions over several partitions; an idempotent
 * producer is made to bump its own epoch mid-stream (the broker answers one of its batches
 * OUT_OF_ORDER_SEQUENCE, as after a lost write, and the client then restarts its sequences at 0
 * with the next epoch while later batches are in flight). Every record sent must be read back
 * exactly once, in send order per partition. The transactional case used to fail within a few
 * transactions with OutOfOrderSequenceException: verifications of pipelined requests finished out of
 * order and a later batch reached the sequence check before the earlier ones were acknowledged.
 */
class PipelinedTransactionsTest {

  static final int PARTITIONS = 4;
  static final String BUMP_TOPIC = "pipelined-idempotent";
  /** Partition 0 of {@link #BUMP_TOPIC} answers its first batch at this sequence or later with OUT_OF_ORDER_SEQUENCE, once. */
  static final int REFUSED_FROM_SEQUENCE = 150;

  static final AtomicReference<Uuid> bumpTopicId = new AtomicReference<>();
  static final AtomicBoolean refusedOnce = new AtomicBoolean();
  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() {
    broker = new TestBroker(Map.of(), PipelinedTransactionsTest::refuseOneIdempotentBatch);
    admin = broker.admin();
  }

  @AfterAll
  static void stop() {
    admin.close();
    broker.close();
  }

  /** Wraps Produce: the first request carrying a batch of partition 0 of {@link #BUMP_TOPIC} at {@link #REFUSED_FROM_SEQUENCE} or later is refused whole. */
  static void refuseOneIdempotentBatch(KafkaBroker b) {
    var produce = b.apis().lookup(ApiKeys.PRODUCE);
    b.apis().register(ApiKeys.PRODUCE, produce.advertisedMin(), produce.minVersion(), produce.maxVersion(), (ctx, req) -> {
      ProduceRequest request = (ProduceRequest) req;
      if (!refusedOnce.get() && carriesBatchToRefuse(request.data()) && refusedOnce.compareAndSet(false, true)) {
        return CompletableFuture.completedFuture(refuseAll(request.data()));
      }
      return produce.handler().handle(ctx, req);
    });
  }

  static boolean carriesBatchToRefuse(ProduceRequestData data) {
    for (ProduceRequestData.TopicProduceData t : data.topicData()) {
      if (!BUMP_TOPIC.equals(t.name()) && !t.topicId().equals(bumpTopicId.get())) {
        continue;
      }
      for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
        if (p.index() == 0) {
          for (RecordBatch batch : ((MemoryRecords) p.records()).batches()) {
            if (batch.baseSequence() >= REFUSED_FROM_SEQUENCE) {
              return true;
            }
          }
        }
      }
    }
    return false;
  }

  static ApiMessage refuseAll(ProduceRequestData data) {
    ProduceResponseData body = new ProduceResponseData();
    for (ProduceRequestData.TopicProduceData t : data.topicData()) {
      ProduceResponseData.TopicProduceResponse tr = new ProduceResponseData.TopicProduceResponse().setName(t.name()).setTopicId(t.topicId());
      body.responses().add(tr);
      for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
        tr.partitionResponses().add(new ProduceResponseData.PartitionProduceResponse().setIndex(p.index())
            .setErrorCode(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code()).setErrorMessage("refused by the test (a lost write)")
            .setBaseOffset(-1).setLogAppendTimeMs(-1).setLogStartOffset(-1));
      }
    }
    return body;
  }

  static Map<String, Object> pipelined(Map<String, Object> extra) {
    Map<String, Object> p = new HashMap<>(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0, ProducerConfig.BATCH_SIZE_CONFIG, 16_384,
        ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5, ProducerConfig.ACKS_CONFIG, "all"));
    p.putAll(extra);
    return p;
  }

  static Map<Integer, List<String>> readCommitted(String topic) {
    return broker.readPerPartition(topic, PARTITIONS, true);
  }

  /** Values of the form prefix-N, per partition in increasing N: every one of {@code sent} exactly once, in send order. */
  static void assertExactlyOnceInOrder(Map<Integer, List<String>> read, Map<Integer, List<String>> sent) {
    assertThat(read.keySet()).containsExactlyInAnyOrderElementsOf(sent.keySet());
    sent.forEach((p, values) -> assertThat(read.get(p)).as("partition %d", p).containsExactlyElementsOf(values));
  }

  @Test
  void manySmallTransactionsPipelinedOverSeveralPartitionsCommitEveryRecordOnce() throws Exception {
    String topic = "pipelined-transactions";
    admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
    int transactions = 100;
    int perTransaction = 100;
    String padding = "x".repeat(1000); // 1 KiB records, as bench/run-transactions.sh writes: about 15 to a batch
    Map<Integer, List<String>> sent = new HashMap<>();
    try (KafkaProducer<String, String> producer = broker.producer(pipelined(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
        "pipelined", ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000)))) {
      producer.initTransactions();
      for (int t = 0; t < transactions; t++) {
        producer.beginTransaction();
        for (int i = 0; i < perTransaction; i++) {
          int partition = (i / 15) % PARTITIONS; // runs of 15 records: batches go to every partition, several pipelined to each
          String value = t + "-" + i + "-" + padding;
          sent.computeIfAbsent(partition, x -> new ArrayList<>()).add(value);
          producer.send(new ProducerRecord<>(topic, partition, null, value));
        }
        producer.commitTransaction();
      }
    }
    // transactions V2: the coordinator bumped the epoch at each of the transaction ends
    List<ProducerState> producers = admin.describeProducers(List.of(new TopicPartition(topic, 0))).partitionResult(
        new TopicPartition(topic, 0)).get().activeProducers();
    assertThat(producers).hasSize(1);
    assertThat(producers.get(0).producerEpoch()).isGreaterThanOrEqualTo(transactions);
    assertExactlyOnceInOrder(readCommitted(topic), sent);
  }

  @Test
  void anIdempotentProducerBumpingItsEpochMidStreamLosesAndRepeatsNothing() throws Exception {
    admin.createTopics(List.of(new NewTopic(BUMP_TOPIC, PARTITIONS, (short) 1))).all().get();
    bumpTopicId.set(admin.describeTopics(List.of(BUMP_TOPIC)).topicNameValues().get(BUMP_TOPIC).get().topicId());
    String padding = "y".repeat(1000);
    Map<Integer, List<String>> sent = new HashMap<>();
    try (KafkaProducer<String, String> producer = broker.producer(pipelined(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true)))) {
      for (int i = 0; i < 2_000; i++) {
        int partition = (i / 15) % PARTITIONS;
        String value = i + "-" + padding;
        sent.computeIfAbsent(partition, x -> new ArrayList<>()).add(value);
        producer.send(new ProducerRecord<>(BUMP_TOPIC, partition, null, value));
      }
      producer.flush();
    }
    assertThat(refusedOnce).as("a batch of partition 0 was refused").isTrue();
    List<ProducerState> producers = admin.describeProducers(List.of(new TopicPartition(BUMP_TOPIC, 0))).partitionResult(
        new TopicPartition(BUMP_TOPIC, 0)).get().activeProducers();
    assertThat(producers).hasSize(1);
    assertThat(producers.get(0).producerEpoch()).as("the client bumped its epoch after the refusal").isGreaterThanOrEqualTo(1);
    assertExactlyOnceInOrder(readCommitted(BUMP_TOPIC), sent);
  }
}
