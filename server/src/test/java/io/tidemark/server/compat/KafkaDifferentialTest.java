package io.tidemark.server.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.server.TidemarkServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.ListConfigResourcesRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.GetTelemetrySubscriptionsRequestData;
import org.apache.kafka.common.message.PushTelemetryRequestData;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareGroupDescribeRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsRequest;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsResponse;
import org.apache.kafka.common.requests.PushTelemetryRequest;
import org.apache.kafka.common.requests.UpdateFeaturesRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.ListConfigResourcesRequest;
import org.apache.kafka.common.requests.ListConfigResourcesResponse;
import org.apache.kafka.common.requests.DescribeQuorumRequest;
import org.apache.kafka.common.requests.DescribeQuorumResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: for the same request bytes, Tidemark answers what Apache Kafka 4.4 answers, field by field
 * (ids, times, hosts, throttle times and message texts aside). One Kafka node (child JVM, Maven jars)
 * and one Tidemark node are started once for the class; every test sends one scripted sequence to
 * both and compares the answers (or what they store).
 */
class KafkaDifferentialTest {

  @TempDir static Path dir;
  static KafkaReference kafka;
  static TidemarkServer tidemark;

  /** The two brokers under comparison, in a fixed order: Kafka first. */
  record Peer(String name, int port, int nodeId) {}

  static List<Peer> peers;

  @BeforeAll
  static void start() throws Exception {
    CompletableFuture<KafkaReference> kafkaStarting = KafkaReference.startInBackground(dir.resolve("kafka"),
        Map.of("group.initial.rebalance.delay.ms", "0", "num.network.threads", "3"));
    tidemark = TidemarkPeer.start(dir.resolve("tidemark"), "kafka.group.initial.rebalance.delay.ms=0", "kafka.network.threads=3");
    long started = System.nanoTime();
    kafka = kafkaStarting.join();
    System.out.printf("Kafka ready %d ms after Tidemark%n", (System.nanoTime() - started) / 1_000_000);
    peers = List.of(new Peer("kafka", kafka.port(), 1), new Peer("tidemark", tidemark.kafkaPort().orElseThrow(), 0));
  }

  @AfterAll
  static void stop() throws Exception {
    if (tidemark != null) {
      tidemark.close();
    }
    if (kafka != null) {
      kafka.close();
    }
  }

  /** Runs {@code script} against each peer and asserts that the answers are equal. */
  private static <T> void sameAnswers(String what, Script<T> script) throws Exception {
    Map<String, T> answers = new LinkedHashMap<>();
    for (Peer p : peers) {
      long started = System.nanoTime();
      answers.put(p.name(), script.run(p));
      System.out.printf("%s on %s: %d ms%n", what, p.name(), (System.nanoTime() - started) / 1_000_000);
    }
    assertThat(answers.get("tidemark")).as(what + ": Tidemark's answer (expected: Kafka 4.4's)").isEqualTo(answers.get("kafka"));
  }

  @FunctionalInterface
  interface Script<T> {
    T run(Peer peer) throws Exception;
  }

  private static JsonNode json(AbstractResponse r, short v, String... alsoIgnored) {
    return Responses.json(r, v, Set.of(alsoIgnored));
  }

  private static JsonNode createTopic(WireClient c, String name, int partitions, Map<String, String> configs) throws Exception {
    CreateTopicsRequestData.CreatableTopic t = new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(partitions)
        .setReplicationFactor((short) 1);
    configs.forEach((k, v) -> t.configs().add(new CreateTopicsRequestData.CreatableTopicConfig().setName(k).setValue(v)));
    CreateTopicsRequestData data = new CreateTopicsRequestData().setTimeoutMs(30_000);
    data.topics().add(t);
    short v = 7;
    // The configs echoed back (v5+) list every topic config of the implementation; compared elsewhere.
    return json(c.call(new CreateTopicsRequest.Builder(data), v), v, "configs", "topicConfigErrorCode");
  }

  // ------------------------------------------------------------------ every advertised API

  @Test
  void everyAdvertisedApiAnswersLikeKafka() throws Exception {
    // Goal: one scripted sequence touching every API key Tidemark advertises gets Kafka 4.4's answers, field by field; an
    // advertised key the script does not send (and that is not in its reasoned allow-list) fails the test.
    Map<String, ApiVersionsResponse> advertised = new LinkedHashMap<>();
    for (Peer p : peers) {
      try (WireClient c = new WireClient(p.port())) {
        advertised.put(p.name(), (ApiVersionsResponse) c.call(new ApiVersionsRequest.Builder(), (short) 3));
      }
    }
    java.util.function.Function<org.apache.kafka.common.protocol.ApiKeys, Short> common = key -> {
      var ours = advertised.get("tidemark").data().apiKeys().find(key.id);
      var theirs = advertised.get("kafka").data().apiKeys().find(key.id);
      assertThat(ours).as("Tidemark advertises " + key).isNotNull();
      return theirs == null ? ours.maxVersion() : (short) Math.min(ours.maxVersion(), theirs.maxVersion());
    };
    Map<String, EveryApiScript> scripts = new LinkedHashMap<>();
    for (Peer p : peers) {
      long started = System.nanoTime();
      EveryApiScript script = new EveryApiScript(p.port(), common);
      script.run();
      scripts.put(p.name(), script);
      System.out.printf("every API on %s: %d ms, %d answers%n", p.name(), (System.nanoTime() - started) / 1_000_000, script.answers().size());
    }
    Set<org.apache.kafka.common.protocol.ApiKeys> keys = java.util.EnumSet.noneOf(org.apache.kafka.common.protocol.ApiKeys.class);
    advertised.get("tidemark").data().apiKeys().forEach(k -> keys.add(org.apache.kafka.common.protocol.ApiKeys.forId(k.apiKey())));
    Set<org.apache.kafka.common.protocol.ApiKeys> covered = scripts.get("tidemark").covered();
    assertThat(covered.stream().filter(EveryApiScript.NOT_COMPARED::containsKey).toList()).as("keys both sent and allow-listed").isEmpty();
    Set<org.apache.kafka.common.protocol.ApiKeys> accounted = java.util.EnumSet.copyOf(covered);
    accounted.addAll(EveryApiScript.NOT_COMPARED.keySet());
    assertThat(accounted).as("API keys covered by EveryApiScript or allow-listed with a reason, against the advertised ones")
        .containsExactlyInAnyOrderElementsOf(keys);
    Map<String, String> ours = scripts.get("tidemark").answers();
    Map<String, String> theirs = scripts.get("kafka").answers();
    List<String> differences = new ArrayList<>();
    for (String label : new java.util.LinkedHashSet<>(theirs.keySet()) {
      {
        addAll(ours.keySet());
      }
    }) {
      boolean differs = !java.util.Objects.equals(ours.get(label), theirs.get(label));
      if (differs) {
        System.out.printf("differs: %s%n  kafka:    %s%n  tidemark: %s%n", label, theirs.get(label), ours.get(label));
      }
      if (differs != EveryApiScript.KNOWN_DIFFERENCES.containsKey(label)) {
        differences.add((differs ? "" : "(now equal: remove from KNOWN_DIFFERENCES) ") + label + "\n  kafka:    " + theirs.get(label)
            + "\n  tidemark: " + ours.get(label));
      }
    }
    assertThat(theirs.keySet()).as("known differences the script still produces").containsAll(EveryApiScript.KNOWN_DIFFERENCES.keySet());
    assertThat(differences).as("answers that differ from Kafka 4.4's:\n" + String.join("\n", differences)).isEmpty();
  }

  // ------------------------------------------------------------------ compression.type

  @Test
  void topicCompressionTypeIsAcceptedAndAppliedLikeKafka() throws Exception {
    // Goal: every compression.type value is accepted (bad ones refused alike) and stored batches take the topic's codec.
    List<String> codecs = List.of("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd");
    sameAnswers("CreateTopics with compression configs", p -> {
      List<JsonNode> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        for (String codec : codecs) {
          out.add(createTopic(c, "comp-" + codec, 1, Map.of("compression.type", codec)));
        }
        out.add(createTopic(c, "comp-bad", 1, Map.of("compression.type", "brotli")));
        out.add(createTopic(c, "comp-bad-level", 1, Map.of("compression.type", "gzip", "compression.gzip.level", "10")));
        out.add(createTopic(c, "comp-level", 1, Map.of("compression.type", "zstd", "compression.zstd.level", "-3")));
      }
      return out;
    });
    sameAnswers("stored codec and records after producing lz4 and uncompressed batches", p -> {
      List<String> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        for (String codec : codecs) {
          String topic = "comp-" + codec;
          produce(c, topic, MemoryRecords.withRecords(Compression.lz4().build(), new SimpleRecord(1000L, "k1".getBytes(), "v1".getBytes()),
              new SimpleRecord(1001L, "k2".getBytes(), "v2".getBytes())));
          produce(c, topic, MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(1002L, "k3".getBytes(), "v3".getBytes())));
          for (MutableRecordBatch b : fetch(c, topic).batches()) {
            StringBuilder s = new StringBuilder(topic + " " + b.compressionType().name + " " + b.baseOffset() + "-" + b.lastOffset()
                + " " + b.timestampType() + " max=" + b.maxTimestamp() + ":");
            for (Record r : b) {
              s.append(' ').append(r.offset()).append('@').append(r.timestamp()).append('=').append(str(r.key())).append('/').append(str(r.value()));
            }
            out.add(s.toString());
          }
        }
      }
      return out;
    });
  }

  private static String str(java.nio.ByteBuffer b) {
    byte[] bytes = new byte[b.remaining()];
    b.duplicate().get(bytes);
    return new String(bytes);
  }

  private static void produce(WireClient c, String topic, MemoryRecords records) throws Exception {
    ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
    data.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic)
        .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records))));
    short v = 11;
    var resp = c.call(ProduceRequest.builder(data, true), v);
    short error = ((org.apache.kafka.common.requests.ProduceResponse) resp).data().responses().iterator().next().partitionResponses().get(0).errorCode();
    assertThat(Errors.forCode(error)).as("produce to " + topic).isEqualTo(Errors.NONE);
  }

  private static MemoryRecords fetch(WireClient c, String topic) throws Exception {
    FetchRequestData data = new FetchRequestData().setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20).setReplicaId(-1)
        .setSessionEpoch(-1);
    data.topics().add(new FetchRequestData.FetchTopic().setTopic(topic).setPartitions(List.of(new FetchRequestData.FetchPartition()
        .setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20).setLogStartOffset(-1).setCurrentLeaderEpoch(-1))));
    short v = 12;
    FetchResponse resp = (FetchResponse) c.call(new FetchRequest.SimpleBuilder(data), v);
    var partition = resp.data().responses().get(0).partitions().get(0);
    assertThat(Errors.forCode(partition.errorCode())).as("fetch " + topic).isEqualTo(Errors.NONE);
    return (MemoryRecords) partition.records();
  }

  // ------------------------------------------------------------------ transactions V2 (KIP-890)

  @Test
  void transactionsV2AndLeaderVerificationAnswerLikeKafka() throws Exception {
    // Goal: transaction.version is reported alike; a V1 write to a partition never added is refused alike (leader verification);
    // a V2 write adds its partition; EndTxn v5 bumps the epoch, recognises a retry, fences the old epoch's late write, lets an
    // empty abort through and refuses a commit with nothing open; TxnOffsetCommit v5 adds the offsets partition by itself.
    sameAnswers("transaction.version in ApiVersions", p -> {
      try (WireClient c = new WireClient(p.port())) {
        ApiVersionsResponse r = (ApiVersionsResponse) c.call(new ApiVersionsRequest.Builder(), (short) 4);
        return List.of(String.valueOf(r.data().supportedFeatures().find("transaction.version")),
            String.valueOf(r.data().finalizedFeatures().find("transaction.version")));
      }
    });
    sameAnswers("a transaction through V1 verification and V2 epoch bumps", p -> {
      List<String> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        out.add(createTopic(c, "txv2", 2, Map.of()).toString());
        awaitTransactionCoordinator(p, "txv2-id");
        org.apache.kafka.common.message.InitProducerIdResponseData[] init = new org.apache.kafka.common.message.InitProducerIdResponseData[1];
        // With the coordinator loaded, only a retriable answer (a producer-id block still on its way) is retried; the
        // transaction timeout outlasts the script however slow the machine.
        try {
          await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(250)).until(() -> {
            init[0] = ((org.apache.kafka.common.requests.InitProducerIdResponse) c.call(new org.apache.kafka.common.message.InitProducerIdRequestData()
                .setTransactionalId("txv2-id").setTransactionTimeoutMs(600_000).setProducerId(-1).setProducerEpoch((short) -1), (short) 5)).data();
            Errors e = Errors.forCode(init[0].errorCode());
            if (e != Errors.NONE && !(e.exception() instanceof org.apache.kafka.common.errors.RetriableException)) {
              throw new AssertionError("InitProducerId on " + p.name() + ": " + e);
            }
            return e == Errors.NONE;
          });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
          throw new AssertionError("InitProducerId on " + p.name() + " still answers " + Errors.forCode(init[0].errorCode()), e);
        }
        long pid = init[0].producerId();
        short epoch = init[0].producerEpoch();
        out.add("init epoch " + epoch);
        out.add("v1 unadded: " + txnProduce(c, 11, 0, pid, epoch, 0));
        out.add("v2 added by the leader: " + txnProduce(c, 12, 1, pid, epoch, 0));
        var described = (org.apache.kafka.common.requests.DescribeTransactionsResponse) c.call(
            new org.apache.kafka.common.message.DescribeTransactionsRequestData().setTransactionalIds(List.of("txv2-id")), (short) 0);
        var state = described.data().transactionStates().get(0);
        out.add("ongoing: " + state.transactionState() + " " + state.topics());
        awaitCoordinator(c, "txv2-group"); // found and loaded: Kafka answers NOT_COORDINATOR while its shard loads
        var offsets = new org.apache.kafka.common.message.TxnOffsetCommitRequestData().setTransactionalId("txv2-id").setGroupId("txv2-group")
            .setProducerId(pid).setProducerEpoch(epoch).setGenerationIdOrMemberEpoch(-1).setMemberId("");
        offsets.topics().add(new org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName("txv2")
            .setPartitions(List.of(new org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                .setPartitionIndex(0).setCommittedOffset(1))));
        out.add("txn offset commit v5 without AddOffsetsToTxn: " + json(c.call(offsets, (short) 5), (short) 5));
        out.add("commit: " + endTxn(c, pid, epoch, true));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> ((org.apache.kafka.common.requests.DescribeTransactionsResponse)
            c.call(new org.apache.kafka.common.message.DescribeTransactionsRequestData().setTransactionalIds(List.of("txv2-id")), (short) 0))
            .data().transactionStates().get(0).transactionState().equals("CompleteCommit"));
        out.add("retried commit: " + endTxn(c, pid, epoch, true));
        out.add("late write at the old epoch: " + txnProduce(c, 12, 1, pid, epoch, 1));
        out.add("abort with nothing open: " + endTxn(c, pid, (short) (epoch + 1), false));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> ((org.apache.kafka.common.requests.DescribeTransactionsResponse)
            c.call(new org.apache.kafka.common.message.DescribeTransactionsRequestData().setTransactionalIds(List.of("txv2-id")), (short) 0))
            .data().transactionStates().get(0).transactionState().equals("CompleteAbort"));
        out.add("commit with nothing open: " + endTxn(c, pid, (short) (epoch + 2), true));
        out.add("commit at a fenced epoch: " + endTxn(c, pid, epoch, true));
      }
      return out;
    });
  }

  /**
   * Waits until {@code peer} names a loaded coordinator for {@code transactionalId} (Kafka creates {@code __transaction_state},
   * 50 partitions, on the first FindCoordinator and loads them: slow on a loaded machine). Each try is a new connection, so
   * a try that times out leaves no answer behind to be read by the next request.
   */
  private static void awaitTransactionCoordinator(Peer peer, String transactionalId) {
    String[] last = {"no answer yet"};
    try {
      await().atMost(Duration.ofMinutes(4)).pollInterval(Duration.ofMillis(500)).until(() -> {
        try (WireClient c = new WireClient(peer.port())) {
          var found = ((FindCoordinatorResponse) c.call(new FindCoordinatorRequestData().setKeyType((byte) 1)
              .setCoordinatorKeys(List.of(transactionalId)), (short) 4)).data().coordinators().get(0);
          last[0] = Errors.forCode(found.errorCode()).name();
          return found.errorCode() == Errors.NONE.code();
        } catch (java.io.IOException e) {
          last[0] = e.toString();
          return false;
        }
      });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError("no transaction coordinator on " + peer.name() + " for " + transactionalId + ": " + last[0], e);
    }
  }

  /** A one-record transactional batch into partition {@code partition} of txv2; its error and message. */
  private static String txnProduce(WireClient c, int version, int partition, long pid, short epoch, int sequence) throws Exception {
    ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000).setTransactionalId("txv2-id");
    data.topicData().add(new ProduceRequestData.TopicProduceData().setName("txv2").setPartitionData(List.of(
        new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(MemoryRecords.withTransactionalRecords(
            Compression.NONE, pid, epoch, sequence, new SimpleRecord(2000L, "k".getBytes(), "v".getBytes()))))));
    var r = (org.apache.kafka.common.requests.ProduceResponse) c.call(data, (short) version);
    var pr = r.data().responses().iterator().next().partitionResponses().get(0);
    return Errors.forCode(pr.errorCode()) + (pr.errorCode() == 0 ? " at " + pr.baseOffset() : "");
  }

  /** EndTxn v5: its error and the epoch it answers (producer ids are each broker's own: compared only as kept or not). */
  private static String endTxn(WireClient c, long pid, short epoch, boolean commit) throws Exception {
    var r = (org.apache.kafka.common.requests.EndTxnResponse) c.call(new org.apache.kafka.common.message.EndTxnRequestData()
        .setTransactionalId("txv2-id").setProducerId(pid).setProducerEpoch(epoch).setCommitted(commit), (short) 5);
    return Errors.forCode(r.data().errorCode()) + " epoch " + r.data().producerEpoch() + " producer "
        + (r.data().producerId() == pid ? "same" : String.valueOf(r.data().producerId()));
  }

  // ------------------------------------------------------------------ features and client telemetry

  @Test
  void featureLevelsAndUpdateFeaturesAnswerLikeKafka() throws Exception {
    // Goal: group.version is reported (supported and finalized) as Kafka reports it; a no-op update and an unknown feature answer alike.
    sameAnswers("group.version in ApiVersions", p -> {
      try (WireClient c = new WireClient(p.port())) {
        ApiVersionsResponse r = (ApiVersionsResponse) c.call(new ApiVersionsRequest.Builder(), (short) 4);
        return List.of(String.valueOf(r.data().supportedFeatures().find("group.version")),
            String.valueOf(r.data().finalizedFeatures().find("group.version")));
      }
    });
    sameAnswers("UpdateFeatures", p -> {
      List<JsonNode> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        for (short v = 1; v <= 2; v++) {
          for (String feature : List.of("group.version", "no.such.feature")) {
            UpdateFeaturesRequestData data = new UpdateFeaturesRequestData().setTimeoutMs(30_000).setValidateOnly(false);
            data.featureUpdates().add(new UpdateFeaturesRequestData.FeatureUpdateKey().setFeature(feature).setMaxVersionLevel((short) 1)
                .setUpgradeType((byte) 1));
            out.add(json(c.call(new UpdateFeaturesRequest.Builder(data), v), v));
          }
        }
      }
      return out;
    });
  }

  @Test
  void telemetrySubscriptionIsKafkasEmptyOne() throws Exception {
    // Goal: with no client-metrics resource, GetTelemetrySubscriptions answers Kafka's empty subscription; a push with a
    // subscription id never handed out is refused alike.
    sameAnswers("GetTelemetrySubscriptions and PushTelemetry", p -> {
      List<JsonNode> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        GetTelemetrySubscriptionsResponse sub = (GetTelemetrySubscriptionsResponse) c.call(new GetTelemetrySubscriptionsRequest.Builder(
            new GetTelemetrySubscriptionsRequestData().setClientInstanceId(Uuid.ZERO_UUID), true), (short) 0);
        out.add(json(sub, (short) 0, "subscriptionId"));
        assertThat(sub.data().clientInstanceId()).isNotEqualTo(Uuid.ZERO_UUID);
        assertThat(sub.error()).isEqualTo(Errors.NONE);
        PushTelemetryRequestData push = new PushTelemetryRequestData().setClientInstanceId(sub.data().clientInstanceId())
            .setSubscriptionId(sub.data().subscriptionId() + 1).setCompressionType((byte) 0).setMetrics(java.nio.ByteBuffer.allocate(0));
        out.add(json(c.call(new PushTelemetryRequest.Builder(push, true), (short) 0), (short) 0));
      }
      return out;
    });
  }

  @Test
  void clientMetricsSubscriptionsAreStoredListedAndHandedOutLikeKafka() throws Exception {
    // Goal: client-metrics resources (KIP-714) are created, refused when bad, described and listed, and a client that
    // matches one gets its metrics and interval from GetTelemetrySubscriptions, as Kafka 4.4 answers; deleting its values
    // removes the resource.
    sameAnswers("client-metrics resources and subscriptions", p -> {
      List<String> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        try {
          out.add("create: " + alterClientMetrics(c, "cm-sub", 0, "metrics", "org.apache.kafka.producer.,org.apache.kafka.consumer.",
              0, "interval.ms", "60000", 0, "match", "client_id=differential-.*"));
          out.add("other: " + alterClientMetrics(c, "cm-other", 0, "metrics", "*", 0, "interval.ms", "120000", 0, "match",
              "client_id=nobody"));
          out.add("bad interval: " + alterClientMetrics(c, "cm-bad", 0, "interval.ms", "10"));
          out.add("bad key: " + alterClientMetrics(c, "cm-bad", 0, "no.such.key", "1"));
          out.add("bad selector: " + alterClientMetrics(c, "cm-bad", 0, "match", "colour=red"));
          out.add("bad regex: " + alterClientMetrics(c, "cm-bad", 0, "match", "client_id=[unclosed"));
          out.add("described: " + describe(c, ConfigResource.Type.CLIENT_METRICS.id(), "cm-sub", null));
          for (short v = 0; v <= 1; v++) {
            out.add("listed v" + v + ": " + listClientMetrics(c, v, 2));
          }
          GetTelemetrySubscriptionsResponse sub = (GetTelemetrySubscriptionsResponse) c.call(new GetTelemetrySubscriptionsRequest.Builder(
              new GetTelemetrySubscriptionsRequestData().setClientInstanceId(Uuid.ZERO_UUID), true), (short) 0);
          out.add("subscription: " + json(sub, (short) 0, "subscriptionId"));
          PushTelemetryRequestData push = new PushTelemetryRequestData().setClientInstanceId(sub.data().clientInstanceId())
              .setSubscriptionId(sub.data().subscriptionId()).setCompressionType((byte) 0).setMetrics(java.nio.ByteBuffer.allocate(0));
          out.add("push: " + json(c.call(new PushTelemetryRequest.Builder(push, true), (short) 0), (short) 0));
        } finally {
          out.add("delete: " + alterClientMetrics(c, "cm-sub", 1, "metrics", null, 1, "interval.ms", null, 1, "match", null));
          out.add("delete other: " + alterClientMetrics(c, "cm-other", 1, "metrics", null, 1, "interval.ms", null, 1, "match", null));
        }
        out.add("listed after delete: " + listClientMetrics(c, (short) 1, 0));
      }
      return out;
    });
  }

  @Test
  void clientMetricsSelectorsMatchSoftwareAndPortLikeKafka() throws Exception {
    // Goal: client_software_name/version match what the connection's ApiVersions said ("unknown" before one; an invalid
    // one or one below v3 as Kafka takes it) and client_source_port the connection's own port, as Kafka 4.4 matches them.
    sameAnswers("client-metrics selectors on software and port", p -> {
      List<String> out = new ArrayList<>();
      try (WireClient admin = new WireClient(p.port()); WireClient silent = new WireClient(p.port())) {
        try {
          out.add("software: " + alterClientMetrics(admin, "cm-soft", 0, "metrics", "org.apache.kafka.consumer.", 0, "interval.ms", "30000",
              0, "match", "client_software_name=difftest-client,client_software_version=1\\.2\\..*"));
          out.add("unknown: " + alterClientMetrics(admin, "cm-unknown", 0, "metrics", "org.apache.kafka.producer.", 0, "interval.ms", "45000",
              0, "match", "client_software_name=unknown,client_software_version=unknown"));
          out.add("port: " + alterClientMetrics(admin, "cm-port", 0, "metrics", "org.apache.kafka.port.", 0, "interval.ms", "20000",
              0, "match", "client_source_port=" + silent.localPort()));
          out.add("listed: " + listClientMetrics(admin, (short) 1, 3));
          out.add("no ApiVersions, this port: " + subscription(silent));
          try (WireClient c = new WireClient(p.port())) {
            out.add("no ApiVersions: " + subscription(c));
          }
          out.add("v3 difftest-client 1.2.3: " + subscriptionAfter(p, (short) 3, "difftest-client", "1.2.3"));
          out.add("v4 difftest-client 1.2.7: " + subscriptionAfter(p, (short) 4, "difftest-client", "1.2.7"));
          out.add("v3 difftest-client 2.0: " + subscriptionAfter(p, (short) 3, "difftest-client", "2.0"));
          out.add("v3 invalid name: " + subscriptionAfter(p, (short) 3, "-difftest-", "1.2.3"));
          out.add("v2 (no software fields): " + subscriptionAfter(p, (short) 2, "", ""));
          try (WireClient c = new WireClient(p.port())) {
            out.add("v3 then invalid: " + apiVersions(c, (short) 3, "difftest-client", "1.2.3") + " "
                + apiVersions(c, (short) 3, "difftest-client", "1.2.3!") + " " + subscription(c));
          }
          try (WireClient c = new WireClient(p.port())) {
            out.add("v3 then v2: " + apiVersions(c, (short) 3, "difftest-client", "1.2.3") + " " + apiVersions(c, (short) 2, "", "")
                + " " + subscription(c));
          }
        } finally {
          for (String name : List.of("cm-soft", "cm-unknown", "cm-port")) {
            out.add("delete " + name + ": " + alterClientMetrics(admin, name, 1, "metrics", null, 1, "interval.ms", null, 1, "match", null));
          }
        }
        out.add("listed after delete: " + listClientMetrics(admin, (short) 1, 0));
      }
      return out;
    });
  }

  /** The subscription a new connection gets after one ApiVersions request naming the client software as given. */
  private static String subscriptionAfter(Peer p, short version, String software, String softwareVersion) throws Exception {
    try (WireClient c = new WireClient(p.port())) {
      return apiVersions(c, version, software, softwareVersion) + " " + subscription(c);
    }
  }

  /** ApiVersions at {@code version} (software fields from v3); its error. */
  private static String apiVersions(WireClient c, short version, String software, String softwareVersion) throws Exception {
    ApiVersionsResponse r = (ApiVersionsResponse) c.call(new org.apache.kafka.common.message.ApiVersionsRequestData()
        .setClientSoftwareName(software).setClientSoftwareVersion(softwareVersion), version);
    return Errors.forCode(r.data().errorCode()).name();
  }

  /** GetTelemetrySubscriptions for a new client instance: its error, requested metrics (sorted) and push interval. */
  private static String subscription(WireClient c) throws Exception {
    GetTelemetrySubscriptionsResponse sub = (GetTelemetrySubscriptionsResponse) c.call(new GetTelemetrySubscriptionsRequest.Builder(
        new GetTelemetrySubscriptionsRequestData().setClientInstanceId(Uuid.ZERO_UUID), true), (short) 0);
    return sub.error() + " " + sub.data().requestedMetrics().stream().sorted().toList() + " every " + sub.data().pushIntervalMs() + " ms";
  }

  /**
   * The listed client-metrics resources, once {@code expected} of them are listed or after 15 s (Kafka applies a change
   * after answering it, asynchronously; a real difference still shows in the comparison).
   */
  private static List<String> listClientMetrics(WireClient c, short v, int expected) throws Exception {
    List<List<String>> last = new ArrayList<>(List.of(List.of()));
    try {
      await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).until(() -> {
        ListConfigResourcesResponse listed = (ListConfigResourcesResponse) c.call(new ListConfigResourcesRequest.Builder(
            new ListConfigResourcesRequestData().setResourceTypes(List.of(ConfigResource.Type.CLIENT_METRICS.id()))), v);
        last.set(0, listed.data().configResources().stream().map(x -> x.resourceType() + ":" + x.resourceName()).sorted().toList());
        return last.get(0).size() == expected;
      });
    } catch (org.awaitility.core.ConditionTimeoutException notSettled) {
      // compared as it is
    }
    return last.get(0);
  }

  private static String alterClientMetrics(WireClient c, String name, Object... opKeyValue) throws Exception {
    IncrementalAlterConfigsRequestData.AlterConfigsResource r = brokerResource(name, opKeyValue)
        .setResourceType(ConfigResource.Type.CLIENT_METRICS.id());
    IncrementalAlterConfigsRequestData alter = new IncrementalAlterConfigsRequestData();
    alter.resources().add(r);
    return json(c.call(new IncrementalAlterConfigsRequest.Builder(alter), (short) 1), (short) 1).toString();
  }

  // ------------------------------------------------------------------ metadata quorum

  @Test
  void describeQuorumHasKafkasShape() throws Exception {
    // Goal: DescribeQuorum describes the single-voter quorum as Kafka does (the values themselves are each log's own).
    sameAnswers("DescribeQuorum v0-2", p -> {
      List<String> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        for (short version = 0; version <= 2; version++) {
          short v = version;
          DescribeQuorumResponse r = (DescribeQuorumResponse) c.call(new DescribeQuorumRequest.Builder(DescribeQuorumRequest.singletonRequest(
              new org.apache.kafka.common.TopicPartition("__cluster_metadata", 0))), v);
          var topic = r.data().topics().get(0);
          var part = topic.partitions().get(0);
          var leader = part.currentVoters().stream().filter(x -> x.replicaId() == part.leaderId()).findFirst();
          out.add("v" + v + " " + Errors.forCode(r.data().errorCode()) + " " + topic.topicName() + "-" + part.partitionIndex() + " "
              + Errors.forCode(part.errorCode()) + " voters=" + part.currentVoters().size() + " observers=" + part.observers().size()
              + " leaderIsVoter=" + leader.isPresent() + " epoch>0=" + (part.leaderEpoch() > 0) + " hw>0=" + (part.highWatermark() > 0)
              + " leaderLogEnd>=hw=" + leader.map(x -> x.logEndOffset() >= part.highWatermark()).orElse(false)
              + " leaderFetchTime=" + leader.map(x -> v >= 1 ? x.lastFetchTimestamp() > 0 : x.lastFetchTimestamp() == -1).orElse(false)
              + " nodes=" + r.data().nodes().size() + " listeners=" + r.data().nodes().stream()
                  .map(n -> n.listeners().stream().map(l -> l.name()).toList().toString()).toList());
        }
        DescribeQuorumResponse wrong = (DescribeQuorumResponse) c.call(new DescribeQuorumRequest.Builder(DescribeQuorumRequest.singletonRequest(
            new org.apache.kafka.common.TopicPartition("__cluster_metadata", 1))), (short) 2);
        out.add("partition 1: " + Errors.forCode(wrong.data().errorCode()) + "/" + wrong.data().topics().stream()
            .flatMap(t -> t.partitions().stream()).map(x -> Errors.forCode(x.errorCode())).toList());
      }
      return out;
    });
  }

  @Test
  void kafkaMetadataQuorumToolDescribesBothAlike() throws Exception {
    // Goal: kafka-metadata-quorum describe --status and --replication run against Tidemark and print what they print for Kafka.
    sameAnswers("kafka-metadata-quorum describe", p -> {
      List<String> out = new ArrayList<>();
      for (String what : List.of("--status", "--replication")) {
        Tool.Run run = Tool.run("org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server", "127.0.0.1:" + p.port(),
            "describe", what);
        assertThat(run.code()).as("kafka-metadata-quorum describe " + what + " on " + p.name() + ":\n" + run.out()).isZero();
        out.add(what + " exit " + run.code());
        // Keys of --status ("LeaderId:" ...), and the header and row count of --replication: the values are each log's own.
        run.out().lines().map(l -> l.contains(":") && what.equals("--status") ? l.substring(0, l.indexOf(':'))
            : l.trim().split("\\s+")[0].matches("\\d+") ? "row" : l.trim().replaceAll("\\s+", " ")).forEach(out::add);
      }
      return out;
    });
  }

  // ------------------------------------------------------------------ broker configs

  /** Kafka broker configs that mean something in Tidemark and have the same default in both. */
  static final List<String> BROKER_KEYS = List.of("message.max.bytes", "auto.create.topics.enable", "num.partitions", "log.retention.ms",
      "log.retention.hours", "log.retention.bytes", "compression.type", "log.message.timestamp.type", "log.cleanup.policy",
      "group.initial.rebalance.delay.ms",
      "group.min.session.timeout.ms", "group.max.session.timeout.ms", "socket.request.max.bytes", "log.retention.check.interval.ms",
      "group.consumer.session.timeout.ms", "group.consumer.heartbeat.interval.ms", "compression.gzip.level", "compression.lz4.level",
      "compression.zstd.level");

  @Test
  void brokerConfigsAreDescribedUnderKafkasNamesAndReadOnlyOnesRefusedAlike() throws Exception {
    // Goal: DescribeConfigs of a broker lists Kafka's keys with the same values, sources and types; altering a key that
    // cannot change at run time fails whole with INVALID_REQUEST; ListConfigResources lists the broker.
    sameAnswers("broker DescribeConfigs, IncrementalAlterConfigs, ListConfigResources", p -> {
      List<String> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        DescribeConfigsRequestData d = new DescribeConfigsRequestData();
        d.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType(ConfigResource.Type.BROKER.id())
            .setResourceName(Integer.toString(p.nodeId())).setConfigurationKeys(BROKER_KEYS));
        DescribeConfigsResponse described = (DescribeConfigsResponse) c.call(new DescribeConfigsRequest.Builder(d), (short) 4);
        described.data().results().get(0).configs().stream().map(x -> x.name() + "=" + x.value() + " source " + x.configSource()
            + " type " + x.configType()).sorted().forEach(out::add);
        IncrementalAlterConfigsRequestData alter = new IncrementalAlterConfigsRequestData();
        IncrementalAlterConfigsRequestData.AlterConfigsResource r = new IncrementalAlterConfigsRequestData.AlterConfigsResource()
            .setResourceType(ConfigResource.Type.BROKER.id()).setResourceName(Integer.toString(p.nodeId()));
        r.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName("log.dirs").setValue("/elsewhere")
            .setConfigOperation((byte) 0));
        alter.resources().add(r);
        out.add("alter log.dirs: " + json(c.call(new IncrementalAlterConfigsRequest.Builder(alter), (short) 1), (short) 1, "resourceName"));
        ListConfigResourcesResponse listed = (ListConfigResourcesResponse) c.call(new ListConfigResourcesRequest.Builder(
            new ListConfigResourcesRequestData().setResourceTypes(List.of(ConfigResource.Type.BROKER.id()))), (short) 1);
        out.add("list brokers: " + Errors.forCode(listed.data().errorCode()) + " " + listed.data().configResources().stream()
            .map(x -> x.resourceType() + ":" + (x.resourceName().equals(Integer.toString(p.nodeId())) ? "self" : "other")).toList());
        createTopic(c, "cfg-listed", 1, Map.of());
        ListConfigResourcesResponse topics = (ListConfigResourcesResponse) c.call(new ListConfigResourcesRequest.Builder(
            new ListConfigResourcesRequestData().setResourceTypes(List.of(ConfigResource.Type.TOPIC.id()))), (short) 1);
        out.add("list topics has cfg-listed: " + topics.data().configResources().stream().anyMatch(x -> x.resourceName().equals("cfg-listed")));
      }
      return out;
    });
  }

  private static IncrementalAlterConfigsRequestData.AlterConfigsResource brokerResource(String name, Object... opKeyValue) {
    IncrementalAlterConfigsRequestData.AlterConfigsResource r = new IncrementalAlterConfigsRequestData.AlterConfigsResource()
        .setResourceType(ConfigResource.Type.BROKER.id()).setResourceName(name);
    for (int i = 0; i < opKeyValue.length; i += 3) {
      r.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setConfigOperation((byte) (int) opKeyValue[i])
          .setName((String) opKeyValue[i + 1]).setValue((String) opKeyValue[i + 2]));
    }
    return r;
  }

  private static String alterBroker(WireClient c, boolean validateOnly, IncrementalAlterConfigsRequestData.AlterConfigsResource r)
      throws Exception {
    IncrementalAlterConfigsRequestData alter = new IncrementalAlterConfigsRequestData().setValidateOnly(validateOnly);
    alter.resources().add(r);
    return json(c.call(new IncrementalAlterConfigsRequest.Builder(alter), (short) 1), (short) 1, "resourceName").toString();
  }

  /** name=value source readOnly, with the dynamic synonyms (the static ones name each broker's own keys). */
  private static List<String> describe(WireClient c, byte type, String name, List<String> keys) throws Exception {
    DescribeConfigsRequestData d = new DescribeConfigsRequestData().setIncludeSynonyms(true);
    d.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType(type).setResourceName(name)
        .setConfigurationKeys(keys));
    DescribeConfigsResponse described = (DescribeConfigsResponse) c.call(new DescribeConfigsRequest.Builder(d), (short) 4);
    var result = described.data().results().get(0);
    List<String> out = new ArrayList<>();
    out.add("error " + Errors.forCode(result.errorCode()));
    result.configs().stream().map(x -> x.name() + "=" + x.value() + " source " + x.configSource() + " readOnly " + x.readOnly()
        + " synonyms " + x.synonyms().stream().filter(y -> y.source() == DescribeConfigsResponse.ConfigSource.DYNAMIC_BROKER_CONFIG.id()
            || y.source() == DescribeConfigsResponse.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.id() || y.source()
            == DescribeConfigsResponse.ConfigSource.TOPIC_CONFIG.id())
            .map(y -> y.name() + "=" + y.value() + "@" + y.source()).toList()).sorted().forEach(out::add);
    return out;
  }

  /** Waits until the broker describes {@code expected} (Kafka applies a dynamic change after answering, asynchronously). */
  private static void settled(WireClient c, String self, String expected) {
    String key = expected.substring(0, expected.indexOf('='));
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> describe(c, ConfigResource.Type.BROKER.id(),
        self, List.of(key)).stream().anyMatch(x -> x.startsWith(expected + " ")));
  }

  static final List<String> DYNAMIC_KEYS = List.of("log.retention.ms", "compression.type", "message.max.bytes", "log.cleanup.policy",
      "log.cleaner.delete.retention.ms", "max.decompressed.message.bytes");

  @Test
  void dynamicBrokerConfigsAreAlteredDescribedAndAppliedLikeKafka() throws Exception {
    // Goal: broker-level topic defaults change at run time per broker and cluster-wide as in Kafka: the answers to
    // IncrementalAlterConfigs (good, read-only, unknown and bad values, validate-only), DescribeConfigs of the broker, of the
    // cluster default and of a topic (values, sources, dynamic synonyms) match, and the new default applies to an existing
    // topic at once (a batch produced uncompressed is stored in the cluster default's codec).
    sameAnswers("dynamic broker configs", p -> {
      List<String> out = new ArrayList<>();
      String self = Integer.toString(p.nodeId());
      try (WireClient c = new WireClient(p.port())) {
        createTopic(c, "dyn-topic", 1, Map.of());
        createTopic(c, "dyn-own", 1, Map.of("retention.ms", "5000"));
        try {
          out.add("default: " + alterBroker(c, false, brokerResource("", 0, "log.retention.ms", "3600000", 0, "compression.type", "gzip",
              0, "log.cleaner.delete.retention.ms", "1000")));
          settled(c, self, "compression.type=gzip");
          out.add("broker: " + alterBroker(c, false, brokerResource(self, 0, "log.retention.ms", "7200000", 0, "message.max.bytes",
              "2000000")));
          settled(c, self, "message.max.bytes=2000000");
          out.add("append list: " + alterBroker(c, false, brokerResource(self, 2, "log.cleanup.policy", "compact")));
          settled(c, self, "log.cleanup.policy=delete,compact");
          out.add("validate only: " + alterBroker(c, true, brokerResource(self, 0, "log.retention.bytes", "1000")));
          out.add("read-only: " + alterBroker(c, false, brokerResource(self, 0, "num.partitions", "3")));
          out.add("bad value: " + alterBroker(c, false, brokerResource("", 0, "log.retention.ms", "soon")));
          out.add("bad compression: " + alterBroker(c, false, brokerResource("", 0, "compression.type", "brotli")));
          out.add("bad name: " + alterBroker(c, false, brokerResource("x1", 0, "log.retention.ms", "1")));
          out.add("broker: " + describe(c, ConfigResource.Type.BROKER.id(), self, DYNAMIC_KEYS.stream().toList()));
          out.add("log.retention.bytes untouched: " + describe(c, ConfigResource.Type.BROKER.id(), self, List.of("log.retention.bytes")));
          // Allowed difference: Kafka's storage format writes min.insync.replicas=1 as a cluster default of its own.
          out.add("cluster default: " + describe(c, ConfigResource.Type.BROKER.id(), "", null).stream()
              .filter(x -> !x.startsWith("min.insync.replicas=")).toList());
          out.add("topic: " + describe(c, ConfigResource.Type.TOPIC.id(), "dyn-topic", List.of("retention.ms", "compression.type",
              "cleanup.policy", "delete.retention.ms", "max.message.bytes")));
          out.add("topic with its own: " + describe(c, ConfigResource.Type.TOPIC.id(), "dyn-own", List.of("retention.ms")));
          produce(c, "dyn-topic", MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(1000L, "k".getBytes(), "v".getBytes())));
          for (MutableRecordBatch b : fetch(c, "dyn-topic").batches()) {
            out.add("stored codec " + b.compressionType().name);
          }
          out.add("delete: " + alterBroker(c, false, brokerResource(self, 1, "log.retention.ms", null, 1, "message.max.bytes", null,
              1, "log.cleanup.policy", null)));
          settled(c, self, "message.max.bytes=1048588");
          settled(c, self, "log.retention.ms=3600000");
          out.add("after delete: " + describe(c, ConfigResource.Type.BROKER.id(), self, List.of("log.retention.ms", "message.max.bytes")));
        } finally {
          out.add("reset: " + alterBroker(c, false, brokerResource("", 1, "log.retention.ms", null, 1, "compression.type", null,
              1, "log.cleaner.delete.retention.ms", null)));
        }
      }
      return out;
    });
  }

  @Test
  void dynamicThreadCountsAreValidatedAndDescribedLikeKafka() throws Exception {
    // Goal: num.network.threads and log.cleaner.threads change at run time as in Kafka (both start at 3 and 1): the answers
    // to good, too large, too small and malformed counts, per broker and cluster-wide, and the descriptions (values, sources,
    // dynamic synonyms) match; a listener's key store key at the cluster default is refused as Kafka refuses it.
    List<String> keys = List.of("num.network.threads", "log.cleaner.threads");
    sameAnswers("dynamic thread counts", p -> {
      List<String> out = new ArrayList<>();
      String self = Integer.toString(p.nodeId());
      try (WireClient c = new WireClient(p.port())) {
        try {
          out.add("describe: " + describe(c, ConfigResource.Type.BROKER.id(), self, keys));
          out.add("too many: " + alterBroker(c, false, brokerResource(self, 0, "num.network.threads", "7")));
          out.add("zero: " + alterBroker(c, false, brokerResource(self, 0, "num.network.threads", "0")));
          out.add("malformed: " + alterBroker(c, false, brokerResource(self, 0, "num.network.threads", "abc")));
          out.add("cleaner too many: " + alterBroker(c, false, brokerResource("", 0, "log.cleaner.threads", "3")));
          out.add("cleaner zero: " + alterBroker(c, false, brokerResource("", 0, "log.cleaner.threads", "0")));
          out.add("store at default: " + alterBroker(c, false, brokerResource("", 0, "listener.name.plaintext.ssl.keystore.location",
              "/nowhere.p12")));
          out.add("default: " + alterBroker(c, false, brokerResource("", 0, "num.network.threads", "2", 0, "log.cleaner.threads", "2")));
          settled(c, self, "log.cleaner.threads=2");
          out.add("broker: " + alterBroker(c, false, brokerResource(self, 0, "num.network.threads", "4")));
          settled(c, self, "num.network.threads=4");
          out.add("described: " + describe(c, ConfigResource.Type.BROKER.id(), self, keys));
          out.add("cluster default: " + describe(c, ConfigResource.Type.BROKER.id(), "", keys));
        } finally {
          out.add("reset broker: " + alterBroker(c, false, brokerResource(self, 1, "num.network.threads", null)));
          out.add("reset: " + alterBroker(c, false, brokerResource("", 1, "num.network.threads", null, 1, "log.cleaner.threads", null)));
        }
      }
      return out;
    });
  }

  @Test
  void maxDecompressedMessageBytesRefusesALargeRecordInASmallBatchLikeKafka() throws Exception {
    // Goal: max.decompressed.message.bytes (a topic config and a dynamic broker default) refuses a compressed batch whose
    // record is larger, decompressed, than the bound with INVALID_RECORD, and accepts one within it, as Kafka does.
    sameAnswers("max.decompressed.message.bytes", p -> {
      List<String> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        out.add(createTopic(c, "decomp", 1, Map.of("max.decompressed.message.bytes", "1000")).toString());
        out.add(createTopic(c, "decomp-bad", 1, Map.of("max.decompressed.message.bytes", "-1")).toString());
        for (int size : new int[] {100, 50_000}) {
          ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
          data.topicData().add(new ProduceRequestData.TopicProduceData().setName("decomp").setPartitionData(List.of(
              new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withRecords(Compression.gzip().build(),
                  new SimpleRecord(1000L, "k".getBytes(), new byte[size]))))));
          var resp = (org.apache.kafka.common.requests.ProduceResponse) c.call(ProduceRequest.builder(data, true), (short) 11);
          out.add(size + " bytes: " + Errors.forCode(resp.data().responses().iterator().next().partitionResponses().get(0).errorCode()));
        }
      }
      return out;
    });
  }

  // ------------------------------------------------------------------ OffsetCommit

  @Test
  void offsetCommitToUnknownTopicsAndPartitionsIsRefusedPerPartition() throws Exception {
    // Goal: UNKNOWN_TOPIC_OR_PARTITION for a missing topic or partition, the rest committed, as Kafka answers.
    sameAnswers("OffsetCommit with unknown topic and partition", p -> {
      List<JsonNode> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        out.add(createTopic(c, "oc-known", 2, Map.of()));
        for (short v : new short[] {2, 8, 9}) {
          String group = "oc-simple-" + v;
          awaitCoordinator(c, group);
          OffsetCommitRequestData data = new OffsetCommitRequestData().setGroupId(group).setGenerationIdOrMemberEpoch(-1);
          data.topics().add(topic("oc-known", 0, 1, 7));
          data.topics().add(topic("oc-missing", 0));
          data.topics().add(topic("oc-known", 1));
          out.add(json(c.call(OffsetCommitRequest.Builder.forTopicNames(data), v), v));
        }
      }
      return out;
    });
  }

  private static OffsetCommitRequestData.OffsetCommitRequestTopic topic(String name, int... partitions) {
    OffsetCommitRequestData.OffsetCommitRequestTopic t = new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(name);
    for (int p : partitions) {
      t.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(p).setCommittedOffset(5 + p));
    }
    return t;
  }

  @Test
  void classicGroupOffsetCommitFollowsKafkaInEveryStateAndGeneration() throws Exception {
    // Goal: a classic group's commits are accepted or refused as Kafka 4.4 does: before the group exists, in
    // CompletingRebalance, Stable, PreparingRebalance (a cooperative rebalance: the member's generation still commits).
    sameAnswers("classic group commits through a rebalance", p -> {
      List<String> out = new ArrayList<>();
      String group = "cg-commits";
      try (WireClient a = new WireClient(p.port()); WireClient b = new WireClient(p.port())) {
        createTopic(a, "cg-topic", 2, Map.of());
        awaitCoordinator(a, group);
        out.add("no group, gen 1, v8: " + commit(a, group, "", 1, (short) 8));
        out.add("no group, gen 1, v9: " + commit(a, group, "", 1, (short) 9));
        JoinGroupResponse first = join(a, group, "");
        out.add("join without id: " + first.error());
        String memberA = first.data().memberId();
        JoinGroupResponse joinedA = join(a, group, memberA);
        int gen1 = joinedA.data().generationId();
        out.add("joined: " + joinedA.error() + " generation " + gen1 + " leader " + joinedA.isLeader());
        out.add("completing, gen current: " + commit(a, group, memberA, gen1, (short) 8));
        out.add("completing, gen stale: " + commit(a, group, memberA, gen1 - 1, (short) 8));
        out.add("completing, unknown member: " + commit(a, group, "nobody", gen1, (short) 8));
        out.add("completing, no member, no gen: " + commit(a, group, "", -1, (short) 8));
        out.add("sync: " + sync(a, group, memberA, gen1, true));
        out.add("stable: " + commit(a, group, memberA, gen1, (short) 8));
        out.add("stable, v9: " + commit(a, group, memberA, gen1, (short) 9));
        out.add("stable, gen ahead: " + commit(a, group, memberA, gen1 + 1, (short) 8));
        String memberB = join(b, group, "").data().memberId();
        CompletableFuture<JoinGroupResponse> joiningB = CompletableFuture.supplyAsync(() -> {
          try {
            return join(b, group, memberB);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
        await().atMost(Duration.ofSeconds(30)).until(() -> state(a, group).equals("PreparingRebalance"));
        out.add("preparing, gen current: " + commit(a, group, memberA, gen1, (short) 8));
        out.add("preparing, gen current, v9: " + commit(a, group, memberA, gen1, (short) 9));
        out.add("preparing, gen stale: " + commit(a, group, memberA, gen1 - 1, (short) 8));
        out.add("preparing, heartbeat: " + heartbeat(a, group, memberA, gen1));
        JoinGroupResponse rejoinedA = join(a, group, memberA);
        JoinGroupResponse joinedB = joiningB.join();
        int gen2 = rejoinedA.data().generationId();
        out.add("rejoined: " + rejoinedA.error() + "/" + joinedB.error() + " generation +" + (gen2 - gen1));
        out.add("completing 2, gen current: " + commit(a, group, memberA, gen2, (short) 8));
        out.add("completing 2, gen previous: " + commit(a, group, memberA, gen1, (short) 8));
        out.add("sync 2: " + sync(a, group, memberA, gen2, rejoinedA.isLeader()) + "/" + sync(b, group, memberB, gen2, joinedB.isLeader()));
        out.add("stable 2: " + commit(a, group, memberA, gen2, (short) 8) + "/" + commit(b, group, memberB, gen2, (short) 8));
      }
      return out;
    });
  }

  // ------------------------------------------------------------------ share groups (KIP-932)

  @Test
  void shareGroupApisAnswerLikeKafka() throws Exception {
    // Goal: the share-group APIs are advertised with Kafka's versions, and heartbeats (join, fenced, unknown member, leave),
    // ShareGroupDescribe, share-session errors of ShareFetch/ShareAcknowledge and the offsets APIs of unknown or busy
    // groups are answered as Kafka 4.4 answers them.
    sameAnswers("share APIs in ApiVersions", p -> {
      try (WireClient c = new WireClient(p.port())) {
        ApiVersionsResponse r = (ApiVersionsResponse) c.call(new ApiVersionsRequest.Builder(), (short) 4);
        List<String> out = new ArrayList<>();
        for (short key : new short[] {76, 77, 78, 79, 90, 91, 92}) {
          out.add(String.valueOf(r.data().apiKeys().find(key)));
        }
        return out;
      }
    });
    sameAnswers("share group requests", p -> {
      List<JsonNode> out = new ArrayList<>();
      try (WireClient c = new WireClient(p.port())) {
        createTopic(c, "diff-share", 2, Map.of());
        awaitCoordinator(c, "diff-sg");
        String member = Uuid.randomUuid().toString();
        ShareGroupHeartbeatResponse joined = shareHeartbeat(c, "diff-sg", member, 0, List.of("diff-share"));
        out.add(json(joined, (short) 1, "assignment"));
        int[] epoch = {joined.data().memberEpoch()};
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> { // until the member has its partitions
          ShareGroupHeartbeatResponse beat = shareHeartbeat(c, "diff-sg", member, epoch[0], null);
          epoch[0] = beat.data().memberEpoch();
          ShareGroupDescribeResponse d = (ShareGroupDescribeResponse) c.call(new ShareGroupDescribeRequest.Builder(
              new ShareGroupDescribeRequestData().setGroupIds(List.of("diff-sg"))), (short) 1);
          return d.data().groups().get(0).members().size() == 1 && d.data().groups().get(0).members().get(0).assignment()
              .topicPartitions().stream().mapToInt(t -> t.partitions().size()).sum() == 2;
        });
        out.add(json(shareHeartbeat(c, "diff-sg", member, epoch[0] + 7, null), (short) 1, "assignment"));
        out.add(json(shareHeartbeat(c, "diff-sg", Uuid.randomUuid().toString(), 3, null), (short) 1, "assignment"));
        out.add(json(shareHeartbeat(c, "", member, 0, List.of("diff-share")), (short) 1, "assignment"));
        for (String group : List.of("diff-sg", "diff-no-such-sg")) { // one by one: Kafka orders a multi-group answer by its shards
          ShareGroupDescribeResponse described = (ShareGroupDescribeResponse) c.call(new ShareGroupDescribeRequest.Builder(
              new ShareGroupDescribeRequestData().setGroupIds(List.of(group))), (short) 1);
          out.add(json(described, (short) 1, "groupEpoch", "assignmentEpoch", "clientHost", "authorizedOperations"));
        }
        ShareFetchRequestData fetch = new ShareFetchRequestData().setGroupId("diff-sg").setMemberId(member).setShareSessionEpoch(4)
            .setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20).setMaxRecords(10).setBatchSize(10);
        out.add(json(c.call(new ShareFetchRequest.Builder(fetch), (short) 1), (short) 1));
        ShareAcknowledgeRequestData ack = new ShareAcknowledgeRequestData().setGroupId("diff-sg").setMemberId(member).setShareSessionEpoch(3);
        out.add(json(c.call(new ShareAcknowledgeRequest.Builder(ack), (short) 1), (short) 1));
        DescribeShareGroupOffsetsRequestData offsets = new DescribeShareGroupOffsetsRequestData();
        offsets.groups().add(new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup().setGroupId("diff-sg")
            .setTopics(List.of(new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic().setTopicName("diff-missing")
                .setPartitions(List.of(0)))));
        out.add(json(c.call(new DescribeShareGroupOffsetsRequest.Builder(offsets), (short) 1), (short) 1));
        AlterShareGroupOffsetsRequestData alter = new AlterShareGroupOffsetsRequestData().setGroupId("diff-sg");
        alter.topics().add(new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic().setTopicName("diff-share")
            .setPartitions(List.of(new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition().setPartitionIndex(0)
                .setStartOffset(0))));
        out.add(json(c.call(new AlterShareGroupOffsetsRequest.Builder(alter), (short) 0), (short) 0));
        out.add(json(shareHeartbeat(c, "diff-sg", member, -1, null), (short) 1, "assignment"));
      }
      return out;
    });
  }

  @Test
  void recordsOfAShareConsumerWhoseConnectionDropsComeBackLikeKafka() throws Exception {
    // Goal: a share consumer that dies (its connection drops: no leave, no acknowledgement) while it holds records under a
    // 60 s lock gives them back as Kafka 4.4 does: another consumer gets them, delivery count 2, before the lock or the
    // dead member's session could expire.
    sameAnswers("records held by a share consumer whose connection dropped", p -> {
      List<String> out = new ArrayList<>();
      String bootstrap = "127.0.0.1:" + p.port();
      try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(Map.of("bootstrap.servers", bootstrap))) {
        admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("share-drop", 1, (short) 1))).all().get();
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, "sg-drop"), List.of(
            new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"),
                org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET),
            new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry("share.record.lock.duration.ms", "60000"),
                org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get();
      }
      try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<String, String>(Map.of("bootstrap.servers", bootstrap,
          "linger.ms", 50), new org.apache.kafka.common.serialization.StringSerializer(), new org.apache.kafka.common.serialization.StringSerializer())) {
        for (String v : List.of("d0", "d1", "d2")) {
          producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("share-drop", 0, null, v)).get();
        }
      }
      long[] dropped = new long[1];
      try (WireClient dying = new WireClient(p.port())) {
        awaitCoordinator(dying, "sg-drop");
        out.add("held by the dying member: " + acquireAll(dying, "sg-drop", 3));
        dropped[0] = System.nanoTime();
      } // the connection drops: no ShareGroupHeartbeat leave, no ShareAcknowledge, no closing ShareFetch
      Map<String, Short> redelivered = new java.util.TreeMap<>();
      Map<String, Object> props = Map.of("bootstrap.servers", bootstrap, "group.id", "sg-drop", "share.acknowledgement.mode", "explicit");
      try (org.apache.kafka.clients.consumer.KafkaShareConsumer<String, String> next = new org.apache.kafka.clients.consumer.KafkaShareConsumer<>(
          props, new org.apache.kafka.common.serialization.StringDeserializer(), new org.apache.kafka.common.serialization.StringDeserializer())) {
        next.subscribe(List.of("share-drop"));
        try {
          // well inside the 60 s lock and the dead member's 45 s session timeout
          await().atMost(Duration.ofSeconds(25)).until(() -> {
            for (var r : next.poll(Duration.ofMillis(200))) {
              redelivered.put(r.value(), r.deliveryCount().orElseThrow());
              next.acknowledge(r, org.apache.kafka.clients.consumer.AcknowledgeType.ACCEPT);
            }
            next.commitSync();
            return redelivered.size() == 3;
          });
        } catch (org.awaitility.core.ConditionTimeoutException notBack) {
          // compared as it is
        }
      }
      System.out.printf("share records back on %s %d ms after the connection dropped%n", p.name(),
          java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - dropped[0]));
      out.add("another consumer got, before any lock or session expired: " + redelivered);
      return out;
    });
  }

  /**
   * Joins share group {@code group} as a new member over {@code c} and ShareFetches until {@code count} records are
   * acquired; returns their offsets and delivery counts. The member never leaves.
   */
  private static String acquireAll(WireClient c, String group, int count) throws Exception {
    String member = Uuid.randomUuid().toString();
    int[] epoch = {0};
    Uuid[] topicId = {null};
    await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200)).until(() -> {
      ShareGroupHeartbeatResponse hb = shareHeartbeat(c, group, member, epoch[0], epoch[0] == 0 ? List.of("share-drop") : null);
      assertThat(hb.data().errorCode()).as("share heartbeat").isEqualTo(Errors.NONE.code());
      epoch[0] = hb.data().memberEpoch();
      if (hb.data().assignment() != null && !hb.data().assignment().topicPartitions().isEmpty()) {
        topicId[0] = hb.data().assignment().topicPartitions().get(0).topicId();
      }
      return topicId[0] != null;
    });
    List<String> acquired = new ArrayList<>();
    int[] sessionEpoch = {0};
    await().atMost(Duration.ofMinutes(2)).until(() -> {
      ShareFetchRequestData fetch = new ShareFetchRequestData().setGroupId(group).setMemberId(member).setShareSessionEpoch(sessionEpoch[0])
          .setMaxWaitMs(1000).setMinBytes(1).setMaxBytes(1 << 20).setMaxRecords(count).setBatchSize(count);
      if (sessionEpoch[0] == 0) {
        fetch.topics().add(new ShareFetchRequestData.FetchTopic().setTopicId(topicId[0])
            .setPartitions(new ShareFetchRequestData.FetchPartitionCollection(List.of(new ShareFetchRequestData.FetchPartition()
                .setPartitionIndex(0)).iterator())));
      }
      var resp = (org.apache.kafka.common.requests.ShareFetchResponse) c.call(new ShareFetchRequest.Builder(fetch), (short) 1);
      assertThat(Errors.forCode(resp.data().errorCode())).as("ShareFetch").isEqualTo(Errors.NONE);
      sessionEpoch[0]++;
      for (var t : resp.data().responses()) {
        for (var part : t.partitions()) {
          for (var a : part.acquiredRecords()) {
            acquired.add(a.firstOffset() + "-" + a.lastOffset() + " x" + a.deliveryCount());
          }
        }
      }
      return acquired.stream().mapToLong(a -> {
        String[] range = a.substring(0, a.indexOf(' ')).split("-");
        return Long.parseLong(range[1]) - Long.parseLong(range[0]) + 1;
      }).sum() >= count;
    });
    return acquired.toString();
  }

  private static ShareGroupHeartbeatResponse shareHeartbeat(WireClient c, String group, String member, int epoch, List<String> topics)
      throws Exception {
    return (ShareGroupHeartbeatResponse) c.call(new ShareGroupHeartbeatRequest.Builder(new ShareGroupHeartbeatRequestData()
        .setGroupId(group).setMemberId(member).setMemberEpoch(epoch).setSubscribedTopicNames(topics)), (short) 1);
  }

  /**
   * Waits until the peer coordinates {@code group} and has loaded it (Kafka creates its offsets topic on the first
   * FindCoordinator, then answers NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS until the partition is loaded).
   */
  private static void awaitCoordinator(WireClient c, String group) {
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(100)).until(() -> {
      FindCoordinatorResponse r = (FindCoordinatorResponse) c.call(new FindCoordinatorRequest.Builder(new FindCoordinatorRequestData()
          .setKeyType((byte) 0).setCoordinatorKeys(List.of(group))), (short) 4);
      if (r.data().coordinators().get(0).errorCode() != Errors.NONE.code()) {
        return false;
      }
      OffsetFetchResponse fetched = (OffsetFetchResponse) c.call(OffsetFetchRequest.Builder.forTopicNames(new OffsetFetchRequestData().setGroups(
          List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(group).setTopics(null))), false), (short) 8);
      return fetched.data().groups().get(0).errorCode() == Errors.NONE.code();
    });
  }

  private static JoinGroupResponse join(WireClient c, String group, String memberId) throws Exception {
    JoinGroupRequestData data = new JoinGroupRequestData().setGroupId(group).setMemberId(memberId).setSessionTimeoutMs(30_000)
        .setRebalanceTimeoutMs(30_000).setProtocolType("consumer");
    data.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(new byte[0]));
    return (JoinGroupResponse) c.call(new JoinGroupRequest.Builder(data), (short) 9);
  }

  private static Errors sync(WireClient c, String group, String memberId, int generation, boolean leader) throws Exception {
    SyncGroupRequestData data = new SyncGroupRequestData().setGroupId(group).setMemberId(memberId).setGenerationId(generation)
        .setProtocolType("consumer").setProtocolName("range");
    return ((SyncGroupResponse) c.call(new SyncGroupRequest.Builder(data), (short) 5)).error();
  }

  private static Errors heartbeat(WireClient c, String group, String memberId, int generation) throws Exception {
    return ((HeartbeatResponse) c.call(new HeartbeatRequest.Builder(new HeartbeatRequestData().setGroupId(group).setMemberId(memberId)
        .setGenerationId(generation)), (short) 4)).error();
  }

  private static String state(WireClient c, String group) throws Exception {
    DescribeGroupsResponse r = (DescribeGroupsResponse) c.call(new DescribeGroupsRequest.Builder(new DescribeGroupsRequestData()
        .setGroups(List.of(group))), (short) 5);
    return r.data().groups().get(0).groupState();
  }

  private static String commit(WireClient c, String group, String memberId, int generation, short v) throws Exception {
    OffsetCommitRequestData data = new OffsetCommitRequestData().setGroupId(group).setMemberId(memberId).setGenerationIdOrMemberEpoch(generation);
    data.topics().add(topic("cg-topic", 0, 1));
    OffsetCommitResponse r = (OffsetCommitResponse) c.call(OffsetCommitRequest.Builder.forTopicNames(data), v);
    return r.errorCounts().toString();
  }
}
