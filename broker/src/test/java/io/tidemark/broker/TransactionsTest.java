package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: Kafka's transactions work for real clients on one broker: read_committed consumers see
 * committed records only (commit, abort, timeout abort, fencing by a second producer with the
 * same transactional.id), the last stable offset holds back at an open transaction, and
 * consume-transform-produce with sendOffsetsToTransaction moves the group's offsets exactly with
 * the commit. The broker finalizes transaction.version 2, so these Java 4.x clients run transactions
 * V2 (KIP-890); the raw-protocol test covers both versions' server rules (V1 partitions verified by
 * their leader, V2 partitions added by it, EndTxn v5's epoch bump and retries).
 */
class TransactionsTest {

  static TestBroker broker;
  static Admin admin;

  @BeforeAll
  static void start() {
    broker = new TestBroker(Map.of("kafka.transaction.abort.timed.out.transaction.cleanup.interval.ms", "100"));
    admin = broker.admin();
  }

  @AfterAll
  static void stop() {
    admin.close();
    broker.close();
  }

  static void createTopic(String name, int partitions) throws Exception {
    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
  }

  static KafkaProducer<String, String> txnProducer(String id, Map<String, Object> extra) {
    Map<String, Object> p = new HashMap<>(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id, ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000));
    p.putAll(extra);
    KafkaProducer<String, String> producer = broker.producer(p);
    producer.initTransactions();
    return producer;
  }

  static KafkaConsumer<String, String> committedConsumer(String group) {
    Map<String, Object> c = new HashMap<>(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false));
    if (group != null) {
      c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    }
    return broker.consumer(c);
  }

  /** Every value in the partitions of {@code topic}, read with the given isolation up to the end (as that isolation sees it). */
  static List<String> readAll(String topic, int partitions, boolean committed) {
    return broker.readPerPartition(topic, partitions, committed).values().stream().flatMap(List::stream).toList();
  }

  static long offset(String topic, int partition, IsolationLevel isolation) throws Exception {
    TopicPartition tp = new TopicPartition(topic, partition);
    ListOffsetsResult r = admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(isolation));
    return r.partitionResult(tp).get().offset();
  }

  @Test
  void committedRecordsAreVisibleAndAbortedOnesNeverAre() throws Exception {
    createTopic("txn-basic", 2);
    try (KafkaProducer<String, String> producer = txnProducer("basic", Map.of())) {
      producer.beginTransaction();
      for (int i = 0; i < 10; i++) {
        producer.send(new ProducerRecord<>("txn-basic", i % 2, "k", "committed-" + i));
      }
      producer.commitTransaction();
      producer.beginTransaction();
      for (int i = 0; i < 10; i++) {
        producer.send(new ProducerRecord<>("txn-basic", i % 2, "k", "aborted-" + i));
      }
      producer.flush();
      producer.abortTransaction();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>("txn-basic", 0, "k", "open-0"));
      producer.flush();
      // the open transaction holds the last stable offset back; the high watermark is past it
      long hw = offset("txn-basic", 0, IsolationLevel.READ_UNCOMMITTED);
      long lso = offset("txn-basic", 0, IsolationLevel.READ_COMMITTED);
      assertThat(lso).isEqualTo(hw - 1);
      assertThat(readAll("txn-basic", 2, true)).containsExactlyInAnyOrder(
          "committed-0", "committed-1", "committed-2", "committed-3", "committed-4",
          "committed-5", "committed-6", "committed-7", "committed-8", "committed-9");
      assertThat(readAll("txn-basic", 2, false)).hasSize(21).contains("aborted-3", "open-0");
      producer.commitTransaction();
    }
    assertThat(readAll("txn-basic", 2, true)).hasSize(11).contains("open-0").noneMatch(v -> v.startsWith("aborted"));
    // partition 0: 5 committed + marker, 5 aborted + marker, 1 + marker: every marker takes an offset
    await().atMost(Duration.ofSeconds(30)).until(() -> offset("txn-basic", 0, IsolationLevel.READ_COMMITTED) == 14);
    assertThat(offset("txn-basic", 0, IsolationLevel.READ_UNCOMMITTED)).isEqualTo(14);
  }

  @Test
  void aTimedOutTransactionIsAbortedAndItsProducerFenced() throws Exception {
    createTopic("txn-timeout", 1);
    KafkaProducer<String, String> producer = txnProducer("slow", Map.of(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 1000));
    try {
      producer.beginTransaction();
      producer.send(new ProducerRecord<>("txn-timeout", "k", "too-late")).get();
      await().atMost(Duration.ofSeconds(30)).until(() -> describe("slow").state() == org.apache.kafka.clients.admin.TransactionState.COMPLETE_ABORT);
      assertThatThrownBy(producer::commitTransaction).isInstanceOf(KafkaException.class);
    } finally {
      producer.close(Duration.ZERO);
    }
    assertThat(readAll("txn-timeout", 1, true)).isEmpty();
    assertThat(offset("txn-timeout", 0, IsolationLevel.READ_COMMITTED)).isEqualTo(2); // the record and the abort marker
    try (KafkaProducer<String, String> again = txnProducer("slow", Map.of())) {
      again.beginTransaction();
      again.send(new ProducerRecord<>("txn-timeout", "k", "in-time"));
      again.commitTransaction();
    }
    assertThat(readAll("txn-timeout", 1, true)).containsExactly("in-time");
  }

  static TransactionDescription describe(String id) throws ExecutionException, InterruptedException {
    return admin.describeTransactions(List.of(id)).description(id).get();
  }

  @Test
  void aSecondProducerWithTheSameIdFencesTheFirstAndAbortsItsTransaction() throws Exception {
    createTopic("txn-fence", 1);
    KafkaProducer<String, String> first = txnProducer("shared", Map.of());
    try {
      first.beginTransaction();
      first.send(new ProducerRecord<>("txn-fence", "k", "from-first")).get();
      try (KafkaProducer<String, String> second = txnProducer("shared", Map.of())) {
        // as with Kafka: the partition refuses the old epoch (INVALID_PRODUCER_EPOCH), and the producer cannot commit
        assertThatThrownBy(() -> first.send(new ProducerRecord<>("txn-fence", "k", "first-again")).get())
            .satisfiesAnyOf(e -> assertThat(e).hasCauseInstanceOf(ProducerFencedException.class),
                e -> assertThat(e).hasCauseInstanceOf(org.apache.kafka.common.errors.InvalidProducerEpochException.class));
        assertThatThrownBy(first::commitTransaction).isInstanceOf(KafkaException.class);
        second.beginTransaction();
        second.send(new ProducerRecord<>("txn-fence", "k", "from-second"));
        second.commitTransaction();
      }
    } finally {
      first.close(Duration.ZERO);
    }
    assertThat(readAll("txn-fence", 1, true)).containsExactly("from-second");
  }

  @Test
  void consumeTransformProduceCommitsOffsetsWithTheTransaction() throws Exception {
    createTopic("ctp-in", 2);
    createTopic("ctp-out", 2);
    broker.produceSpread("ctp-in", 0, 100, 2);
    String group = "copier";
    try (KafkaProducer<String, String> producer = txnProducer("copier-1", Map.of());
        KafkaConsumer<String, String> consumer = committedConsumer(group)) {
      consumer.subscribe(List.of("ctp-in"));
      // an aborted round: its output and offsets must vanish
      ConsumerRecords<String, String> first = pollSome(consumer);
      producer.beginTransaction();
      for (ConsumerRecord<String, String> r : first) {
        producer.send(new ProducerRecord<>("ctp-out", r.partition(), r.key(), "aborted-" + r.value()));
      }
      producer.sendOffsetsToTransaction(nextOffsets(first), consumer.groupMetadata());
      producer.abortTransaction();
      for (TopicPartition tp : consumer.assignment()) {
        OffsetAndMetadata committed = consumer.committed(Set.of(tp)).get(tp);
        consumer.seek(tp, committed == null ? 0 : committed.offset());
      }
      int copied = 0;
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (copied < 100) {
        assertThat(System.nanoTime()).isLessThan(deadline);
        ConsumerRecords<String, String> batch = consumer.poll(Duration.ofMillis(200));
        if (batch.isEmpty()) {
          continue;
        }
        producer.beginTransaction();
        for (ConsumerRecord<String, String> r : batch) {
          producer.send(new ProducerRecord<>("ctp-out", r.partition(), r.key(), r.value()));
        }
        producer.sendOffsetsToTransaction(nextOffsets(batch), consumer.groupMetadata());
        producer.commitTransaction();
        copied += batch.count();
      }
      assertThat(copied).isEqualTo(100);
    }
    List<String> out = readAll("ctp-out", 2, true);
    assertThat(out).hasSize(100).doesNotHaveDuplicates().noneMatch(v -> v.startsWith("aborted"));
    Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    assertThat(offsets.get(new TopicPartition("ctp-in", 0)).offset()).isEqualTo(50);
    assertThat(offsets.get(new TopicPartition("ctp-in", 1)).offset()).isEqualTo(50);
  }

  @Test
  void offsetsSentWithAStaleGenerationAreRefusedAndNeverCommitted() throws Exception {
    createTopic("zombie-in", 2);
    broker.produceSpread("zombie-in", 0, 20, 2);
    String group = "zombies";
    try (KafkaConsumer<String, String> first = committedConsumer(group);
         KafkaConsumer<String, String> second = committedConsumer(group);
         KafkaProducer<String, String> zombie = txnProducer("zombie-1", Map.of())) {
      first.subscribe(List.of("zombie-in"));
      ConsumerRecords<String, String> polled = pollSome(first);
      org.apache.kafka.clients.consumer.ConsumerGroupMetadata stale = first.groupMetadata();
      second.subscribe(List.of("zombie-in"));
      await().atMost(Duration.ofMinutes(1)).until(() -> {
        first.poll(Duration.ofMillis(50));
        second.poll(Duration.ofMillis(50));
        return first.groupMetadata().generationId() > stale.generationId() && !second.assignment().isEmpty();
      });
      // the producer of the old generation is a zombie: its offsets must be refused, so its transaction cannot commit
      zombie.beginTransaction();
      zombie.send(new ProducerRecord<>("zombie-in", 0, "k", "from-zombie"));
      assertThatThrownBy(() -> zombie.sendOffsetsToTransaction(nextOffsets(polled), stale))
          .isInstanceOf(org.apache.kafka.clients.consumer.CommitFailedException.class);
      assertThatThrownBy(zombie::commitTransaction).isInstanceOf(KafkaException.class);
      zombie.abortTransaction();
      // the current generation still commits
      zombie.beginTransaction();
      zombie.sendOffsetsToTransaction(Map.of(new TopicPartition("zombie-in", 0), new OffsetAndMetadata(3)), first.groupMetadata());
      zombie.commitTransaction();
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    assertThat(offsets).containsOnlyKeys(new TopicPartition("zombie-in", 0));
    assertThat(offsets.get(new TopicPartition("zombie-in", 0)).offset()).isEqualTo(3);
    assertThat(readAll("zombie-in", 2, true)).noneMatch(v -> v.equals("from-zombie"));
  }

  private static ConsumerRecords<String, String> pollSome(KafkaConsumer<String, String> consumer) {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      assertThat(System.nanoTime()).isLessThan(deadline);
      ConsumerRecords<String, String> r = consumer.poll(Duration.ofMillis(200));
      if (!r.isEmpty()) {
        return r;
      }
    }
  }

  private static Map<TopicPartition, OffsetAndMetadata> nextOffsets(ConsumerRecords<String, String> records) {
    Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
    for (TopicPartition tp : records.partitions()) {
      List<ConsumerRecord<String, String>> rs = records.records(tp);
      out.put(tp, new OffsetAndMetadata(rs.get(rs.size() - 1).offset() + 1));
    }
    return out;
  }

  @Test
  void adminListsAndDescribesTransactionsAndProducers() throws Exception {
    createTopic("txn-admin", 1);
    try (KafkaProducer<String, String> producer = txnProducer("listed", Map.of())) {
      producer.beginTransaction();
      producer.send(new ProducerRecord<>("txn-admin", "k", "v")).get();
      TransactionDescription d = describe("listed");
      assertThat(d.state()).isEqualTo(org.apache.kafka.clients.admin.TransactionState.ONGOING);
      assertThat(d.topicPartitions()).containsExactly(new TopicPartition("txn-admin", 0));
      assertThat(admin.listTransactions().all().get()).extracting(TransactionListing::transactionalId).contains("listed");
      List<ProducerState> producers = admin.describeProducers(List.of(new TopicPartition("txn-admin", 0))).all().get()
          .get(new TopicPartition("txn-admin", 0)).activeProducers();
      assertThat(producers).hasSize(1);
      assertThat(producers.get(0).producerId()).isEqualTo(d.producerId());
      assertThat(producers.get(0).currentTransactionStartOffset()).hasValue(0L);
      producer.commitTransaction();
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> describe("listed").state() == org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT);
    assertThat(admin.describeProducers(List.of(new TopicPartition("txn-admin", 0))).all().get()
        .get(new TopicPartition("txn-admin", 0)).activeProducers().get(0).currentTransactionStartOffset()).isEmpty();
  }

  @Test
  void javaClientsRunTransactionsV2WithAnEpochBumpPerTransaction() throws Exception {
    createTopic("txn-v2", 1);
    try (KafkaProducer<String, String> producer = txnProducer("bumped", Map.of())) {
      int initial = describe("bumped").producerEpoch();
      for (int i = 0; i < 3; i++) {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>("txn-v2", "k", "v" + i));
        producer.commitTransaction();
      }
      // V1 would keep the epoch; V2 bumps it at every EndTxn (the client never sent AddPartitionsToTxn: the leader added the partition)
      await().atMost(Duration.ofSeconds(30)).until(() -> describe("bumped").state() == org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT);
      assertThat(describe("bumped").producerEpoch()).isEqualTo(initial + 3);
    }
    assertThat(readAll("txn-v2", 1, true)).containsExactly("v0", "v1", "v2");
  }

  static <R extends org.apache.kafka.common.requests.AbstractResponse> R call(RawConnection c,
      org.apache.kafka.common.requests.AbstractRequest.Builder<?> request, int version) throws Exception {
    short v = (short) version;
    int id = c.send(request, v);
    @SuppressWarnings("unchecked")
    R response = (R) c.receive(request.apiKey(), v, id);
    return response;
  }

  static org.apache.kafka.common.protocol.Errors produce(RawConnection c, int version, String txnId, String topic, int partition,
      long pid, short epoch, int sequence, String value) throws Exception {
    var records = org.apache.kafka.common.record.internal.MemoryRecords.withTransactionalRecords(
        org.apache.kafka.common.compress.Compression.NONE, pid, epoch, sequence,
        new org.apache.kafka.common.record.internal.SimpleRecord(value.getBytes()));
    var data = new org.apache.kafka.common.message.ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000)
        .setTransactionalId(txnId);
    var topicData = new org.apache.kafka.common.message.ProduceRequestData.TopicProduceData().setName(topic);
    topicData.partitionData().add(new org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData().setIndex(partition)
        .setRecords(records));
    data.topicData().add(topicData);
    org.apache.kafka.common.requests.ProduceResponse r = call(c,
        new org.apache.kafka.common.requests.ProduceRequest.Builder((short) version, (short) version, data), version);
    return org.apache.kafka.common.protocol.Errors.forCode(
        r.data().responses().iterator().next().partitionResponses().get(0).errorCode());
  }

  static org.apache.kafka.common.message.EndTxnResponseData endTxn(RawConnection c, int version, String txnId, long pid, short epoch,
      boolean commit) throws Exception {
    var data = new org.apache.kafka.common.message.EndTxnRequestData().setTransactionalId(txnId).setProducerId(pid)
        .setProducerEpoch(epoch).setCommitted(commit);
    org.apache.kafka.common.requests.EndTxnResponse r = call(c,
        new org.apache.kafka.common.requests.EndTxnRequest.Builder(data, version >= 5), version);
    return r.data();
  }

  @Test
  void leadersVerifyV1PartitionsAndAddV2OnesAndEndTxnV5BumpsTheEpoch() throws Exception {
    createTopic("txn-raw", 2);
    TopicPartition p0 = new TopicPartition("txn-raw", 0);
    TopicPartition p1 = new TopicPartition("txn-raw", 1);
    try (RawConnection c = new RawConnection(broker.broker.port())) {
      var init = new org.apache.kafka.common.message.InitProducerIdResponseData[1];
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        org.apache.kafka.common.requests.InitProducerIdResponse r = call(c, new org.apache.kafka.common.requests.InitProducerIdRequest.Builder(
            new org.apache.kafka.common.message.InitProducerIdRequestData().setTransactionalId("raw").setTransactionTimeoutMs(60_000)), 5);
        init[0] = r.data();
        return r.error() == org.apache.kafka.common.protocol.Errors.NONE;
      });
      long pid = init[0].producerId();
      short epoch = init[0].producerEpoch();

      // V1 (Produce v11): a partition the client did not add is refused (abortable from v11 on, as Kafka 4.4), nothing written
      assertThat(produce(c, 11, "raw", "txn-raw", 0, pid, epoch, 0, "unadded"))
          .isEqualTo(org.apache.kafka.common.protocol.Errors.TRANSACTION_ABORTABLE);
      assertThat(produce(c, 10, "raw", "txn-raw", 0, pid, epoch, 0, "unadded"))
          .isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_TXN_STATE);
      assertThat(offset("txn-raw", 0, IsolationLevel.READ_UNCOMMITTED)).isZero();
      org.apache.kafka.common.requests.AddPartitionsToTxnResponse added = call(c,
          org.apache.kafka.common.requests.AddPartitionsToTxnRequest.Builder.forClient("raw", pid, epoch, List.of(p0)), 3);
      assertThat(added.errors().values().iterator().next().values()).containsOnly(org.apache.kafka.common.protocol.Errors.NONE);
      assertThat(produce(c, 11, "raw", "txn-raw", 0, pid, epoch, 0, "v1-committed")).isEqualTo(org.apache.kafka.common.protocol.Errors.NONE);
      var endV1 = endTxn(c, 4, "raw", pid, epoch, true);
      assertThat(endV1.errorCode()).isZero();
      await().atMost(Duration.ofSeconds(30)).until(() -> describe("raw").state() == org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT);
      assertThat(describe("raw").producerEpoch()).isEqualTo(epoch); // V1 keeps the epoch

      // V2 (Produce v12): the leader adds the partition itself
      assertThat(produce(c, 12, "raw", "txn-raw", 1, pid, epoch, 0, "v2-committed")).isEqualTo(org.apache.kafka.common.protocol.Errors.NONE);
      assertThat(describe("raw").topicPartitions()).containsExactly(p1);
      var endV2 = endTxn(c, 5, "raw", pid, epoch, true);
      assertThat(endV2.errorCode()).isZero();
      assertThat(endV2.producerId()).isEqualTo(pid);
      assertThat(endV2.producerEpoch()).isEqualTo((short) (epoch + 1));
      // a retry with the old epoch is recognised: the same answer
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        var retried = endTxn(c, 5, "raw", pid, epoch, true);
        assertThat(retried.errorCode()).isZero();
        assertThat(retried.producerEpoch()).isEqualTo((short) (epoch + 1));
      });
      // the marker carried the bumped epoch: a late write of the ended transaction is fenced
      assertThat(produce(c, 12, "raw", "txn-raw", 1, pid, epoch, 1, "late"))
          .isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_PRODUCER_EPOCH);
      // V2 allows an abort with nothing added; it bumps the epoch again
      short next = (short) (epoch + 1);
      var emptyAbort = endTxn(c, 5, "raw", pid, next, false);
      assertThat(emptyAbort.errorCode()).isZero();
      assertThat(emptyAbort.producerEpoch()).isEqualTo((short) (epoch + 2));
      // committing with no transaction open is refused
      await().atMost(Duration.ofSeconds(30)).until(() -> describe("raw").state() == org.apache.kafka.clients.admin.TransactionState.COMPLETE_ABORT);
      assertThat(endTxn(c, 5, "raw", pid, (short) (epoch + 2), true).errorCode())
          .isEqualTo(org.apache.kafka.common.protocol.Errors.INVALID_TXN_STATE.code());
    }
    assertThat(readAll("txn-raw", 2, true)).containsExactlyInAnyOrder("v1-committed", "v2-committed");
  }
}
