package io.tidemark.server.compat;

import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AlterClientQuotasRequestData;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupStateRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DescribeAclsRequestData;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeQuorumRequestData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsRequestData;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.GetTelemetrySubscriptionsRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitializeShareGroupStateRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.ListConfigResourcesRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.PushTelemetryRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareGroupDescribeRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.message.WriteShareGroupStateRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.GetTelemetrySubscriptionsResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.ListConfigResourcesResponse;
import org.apache.kafka.common.requests.ListGroupsResponse;

/**
 * The general differential script: one request (or a few) of every API key Tidemark advertises,
 * in an order that gives each a state worth answering (a topic with records, a classic group, a
 * consumer group, an open then committed transaction, a SCRAM user, a quota, an ACL), sent to one
 * peer; every answer is recorded under a label as its JSON with the fields no two brokers agree on
 * removed ({@link Responses}) and its arrays sorted (result order is a broker's own), or as a narrower text where the full answer legitimately differs
 * (the reason is next to it). {@link #covered()} is the set of API keys sent, which the test
 * compares with the advertised set. Names start with {@code ea-}, so that the other tests sharing
 * the two nodes are not disturbed. Single-threaded; one instance per peer.
 */
final class EveryApiScript {

  /**
   * API keys advertised but not compared by this script, each with the reason; the test fails if
   * one is also covered, or no longer advertised.
   */
  static final Map<ApiKeys, String> NOT_COMPARED = Map.of();

  /**
   * Answers known to differ from Kafka 4.4's, by label, each with what differs: the test asserts that they still differ
   * (so that a fix removes its entry) and that every other answer is equal.
   */
  static final Map<String, String> KNOWN_DIFFERENCES = Map.of(
      "ReadShareGroupStateSummary known partition, written v1", "the delivery-complete count: Tidemark's coordinator counts it "
          + "from the stored batches; Kafka's reports the count the writer sent (none here: -1, answered 0)",
      "ReadShareGroupStateSummary known partition, deleted v1", "a deleted share partition keeps its state epoch here (1), so "
          + "that a leader holding the old state stays fenced after a re-initialization; Kafka forgets it (0)");

  private final int port;
  private final Function<ApiKeys, Short> version;
  private final Map<String, String> answers = new LinkedHashMap<>();
  private final Set<ApiKeys> covered = EnumSet.noneOf(ApiKeys.class);
  /** ea-topic's id on this peer (ids differ between peers; the answers' topicId fields are not compared). */
  private Uuid topicId;

  /** {@code version} gives the version to send of each key (the highest both peers support, unless a step fixes one). */
  EveryApiScript(int port, Function<ApiKeys, Short> version) {
    this.port = port;
    this.version = version;
  }

  Map<String, String> answers() {
    return answers;
  }

  Set<ApiKeys> covered() {
    return covered;
  }

  private AbstractResponse send(WireClient c, ApiMessage data, short v) throws Exception {
    covered.add(ApiKeys.forId(data.apiKey()));
    return c.call(data, v);
  }

  /** Sends {@code data} at the common version and records the whole answer, {@code ignored} fields aside. */
  private AbstractResponse record(WireClient c, String label, ApiMessage data, String... ignored) throws Exception {
    return record(c, label, data, version.apply(ApiKeys.forId(data.apiKey())), ignored);
  }

  private AbstractResponse record(WireClient c, String label, ApiMessage data, short v, String... ignored) throws Exception {
    AbstractResponse r = send(c, data, v);
    // Arrays sorted: the order of results is each broker's own (map or shard order), not part of the answer.
    answers.put(ApiKeys.forId(data.apiKey()).name + " " + label + " v" + v, sorted(Responses.json(r, v, Set.of(ignored))).toString());
    return r;
  }

  private static com.fasterxml.jackson.databind.JsonNode sorted(com.fasterxml.jackson.databind.JsonNode node) {
    if (node instanceof com.fasterxml.jackson.databind.node.ObjectNode object) {
      object.fieldNames().forEachRemaining(f -> object.set(f, sorted(object.get(f))));
    } else if (node instanceof com.fasterxml.jackson.databind.node.ArrayNode array) {
      List<com.fasterxml.jackson.databind.JsonNode> items = new ArrayList<>();
      array.forEach(n -> items.add(sorted(n)));
      items.sort(java.util.Comparator.comparing(com.fasterxml.jackson.databind.JsonNode::toString));
      array.removeAll();
      array.addAll(items);
    }
    return node;
  }

  /** Sends {@code data} and records only the count of each error code in the answer (where the rest legitimately differs). */
  private AbstractResponse recordErrors(WireClient c, String label, ApiMessage data) throws Exception {
    short v = version.apply(ApiKeys.forId(data.apiKey()));
    AbstractResponse r = send(c, data, v);
    answers.put(ApiKeys.forId(data.apiKey()).name + " " + label + " v" + v + " (error codes)", new TreeMap<>(r.errorCounts()).toString());
    return r;
  }

  private void note(String label, Object value) {
    answers.put(label, String.valueOf(value));
  }

  void run() throws Exception {
    try (WireClient c = new WireClient(port)) {
      versionsAndTopics(c);
      produceAndFetch(c);
      configs(c);
      cluster(c);
      classicGroup(c);
      consumerGroup(c);
      transaction(c);
      shareGroups(c);
      groupNamespace(c);
      shareState(c);
      security(c);
      telemetryAndFeatures(c);
    }
    sasl();
  }

  // ------------------------------------------------------------------ ApiVersions, Metadata, topics

  private void versionsAndTopics(WireClient c) throws Exception {
    // The key list legitimately differs (Kafka serves APIs Tidemark does not): compared are the error and the finalized features.
    ApiVersionsResponse versions = (ApiVersionsResponse) send(c, new ApiVersionsRequestData().setClientSoftwareName("ea")
        .setClientSoftwareVersion("1"), (short) 3);
    note("API_VERSIONS v3 error", versions.data().errorCode());
    // The configs echoed (v5+) are compared by name once below, as a known difference.
    AbstractResponse created = record(c, "create", createTopic("ea-topic", 2), "configs");
    Set<String> configNames = new TreeSet<>();
    ((org.apache.kafka.common.requests.CreateTopicsResponse) created).data().topics().forEach(t -> t.configs().forEach(
        cfg -> configNames.add(cfg.name())));
    note("CreateTopics config names", configNames);
    record(c, "create again", createTopic("ea-topic", 2), "configs");
    record(c, "create with no partitions", createTopic("ea-bad", 0), "configs");
    record(c, "create with a bad name", createTopic("ea bad!", 1), "configs");
    record(c, "create", createTopic("ea-txn-topic", 1), "configs");
    record(c, "create", createTopic("ea-doomed", 1), "configs");
    record(c, "create", createTopic("ea-grow", 1), "configs");
    MetadataRequestData metadata = new MetadataRequestData().setAllowAutoTopicCreation(false)
        .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("ea-topic"),
            new MetadataRequestData.MetadataRequestTopic().setName("ea-missing")));
    var described = (org.apache.kafka.common.requests.MetadataResponse) record(c, "two topics", metadata, "replicaNodes", "isrNodes",
        "offlineReplicas", "brokers");
    topicId = described.data().topics().find("ea-topic").topicId();
    record(c, "delete", new DeleteTopicsRequestData().setTimeoutMs(30_000).setTopics(List.of(
        new DeleteTopicsRequestData.DeleteTopicState().setName("ea-doomed"), new DeleteTopicsRequestData.DeleteTopicState().setName("ea-missing"))));
    CreatePartitionsRequestData grow = new CreatePartitionsRequestData().setTimeoutMs(30_000);
    grow.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("ea-grow").setCount(3).setAssignments(null));
    grow.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("ea-missing").setCount(3).setAssignments(null));
    record(c, "grow", grow);
    CreatePartitionsRequestData shrink = new CreatePartitionsRequestData().setTimeoutMs(30_000);
    shrink.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("ea-grow").setCount(2).setAssignments(null));
    record(c, "shrink", shrink);
    CreatePartitionsRequestData emptyAssignments = new CreatePartitionsRequestData().setTimeoutMs(30_000);
    emptyAssignments.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("ea-grow").setCount(4)
        .setAssignments(List.of()));
    record(c, "grow with an empty assignment list", emptyAssignments);
  }

  private static CreateTopicsRequestData createTopic(String name, int partitions) {
    CreateTopicsRequestData data = new CreateTopicsRequestData().setTimeoutMs(30_000);
    data.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(partitions).setReplicationFactor((short) 1));
    return data;
  }

  // ------------------------------------------------------------------ Produce, Fetch, offsets, records

  private void produceAndFetch(WireClient c) throws Exception {
    ProduceRequestData produce = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
    produce.topicData().add(new ProduceRequestData.TopicProduceData().setName("ea-topic").setPartitionData(List.of(
        new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withRecords(Compression.NONE,
            new SimpleRecord(1000L, "k1".getBytes(), "v1".getBytes()), new SimpleRecord(1005L, "k2".getBytes(), "v2".getBytes()),
            new SimpleRecord(1002L, "k3".getBytes(), "v3".getBytes()))),
        new ProduceRequestData.PartitionProduceData().setIndex(7).setRecords(MemoryRecords.withRecords(Compression.NONE,
            new SimpleRecord(1000L, "k".getBytes(), "v".getBytes()))))));
    record(c, "records and an unknown partition", produce, (short) 11); // v13 names topics by id, which differ
    FetchResponse fetched = (FetchResponse) record(c, "from 0 and an unknown partition", fetch("ea-topic", 0, 7), (short) 12, "records");
    List<String> batches = new ArrayList<>();
    for (MutableRecordBatch b : ((MemoryRecords) fetched.data().responses().get(0).partitions().get(0).records()).batches()) {
      batches.add(b.baseOffset() + "-" + b.lastOffset() + " " + b.magic() + " " + b.compressionType() + " " + b.countOrNull());
    }
    note("FETCH batches", batches);
    for (long target : new long[] {-2, -1, -3, 1003, 5000}) {
      ListOffsetsRequestData list = new ListOffsetsRequestData().setReplicaId(-1).setIsolationLevel((byte) 0);
      list.topics().add(new ListOffsetsRequestData.ListOffsetsTopic().setName("ea-topic").setPartitions(List.of(
          new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setCurrentLeaderEpoch(-1).setTimestamp(target))));
      record(c, "target " + target, list);
    }
    OffsetForLeaderEpochRequestData epochs = new OffsetForLeaderEpochRequestData().setReplicaId(-1);
    epochs.topics().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("ea-topic").setPartitions(List.of(
        new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0).setCurrentLeaderEpoch(-1).setLeaderEpoch(0),
        new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(9).setCurrentLeaderEpoch(-1).setLeaderEpoch(0))));
    record(c, "epoch 0", epochs);
    DeleteRecordsRequestData delete = new DeleteRecordsRequestData().setTimeoutMs(30_000);
    delete.topics().add(new DeleteRecordsRequestData.DeleteRecordsTopic().setName("ea-topic").setPartitions(List.of(
        new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(1),
        new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(1).setOffset(5))));
    record(c, "below and beyond the end", delete);
    record(c, "after DeleteRecords", fetch("ea-topic", 0), (short) 12, "records");
    InitProducerIdRequestData idempotent = new InitProducerIdRequestData().setTransactionalId(null).setTransactionTimeoutMs(60_000)
        .setProducerId(-1).setProducerEpoch((short) -1);
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)) // Kafka's first block of ids comes from its controller
        .until(() -> ((InitProducerIdResponse) send(c, idempotent, version.apply(ApiKeys.INIT_PRODUCER_ID))).error() == Errors.NONE);
    record(c, "idempotent", idempotent, "producerId");
  }

  private static FetchRequestData fetch(String topic, int... partitions) {
    FetchRequestData data = new FetchRequestData().setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20).setReplicaId(-1).setSessionEpoch(-1)
        .setIsolationLevel((byte) 1);
    FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic().setTopic(topic);
    for (int p : partitions) {
      t.partitions().add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0).setPartitionMaxBytes(1 << 20)
          .setLogStartOffset(-1).setCurrentLeaderEpoch(-1));
    }
    data.topics().add(t);
    return data;
  }

  // ------------------------------------------------------------------ configs

  private void configs(WireClient c) throws Exception {
    List<String> keys = List.of("cleanup.policy", "retention.ms", "max.message.bytes", "compression.type", "no.such.config");
    record(c, "segment.bytes", new DescribeConfigsRequestData().setResources(List.of(new DescribeConfigsRequestData.DescribeConfigsResource()
        .setResourceType((byte) 2).setResourceName("ea-topic").setConfigurationKeys(List.of("segment.bytes")))));
    // Kafka's topic configs that mean nothing on streams: described with Kafka's defaults and types all the same
    // (min.insync.replicas aside: Kafka's storage format writes it as a cluster-wide dynamic default).
    record(c, "compatibility configs", new DescribeConfigsRequestData().setResources(List.of(
        new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2).setResourceName("ea-topic").setConfigurationKeys(
            List.of("segment.ms", "segment.jitter.ms", "segment.index.bytes", "index.interval.bytes",
                "unclean.leader.election.enable", "flush.messages", "flush.ms", "file.delete.delay.ms", "preallocate",
                "message.timestamp.before.max.ms", "message.timestamp.after.max.ms", "local.retention.ms", "local.retention.bytes",
                "follower.replication.throttled.replicas", "leader.replication.throttled.replicas", "remote.storage.enable",
                "remote.log.copy.disable", "remote.log.delete.on.disable", "remote.copy.lag.bytes", "remote.copy.lag.ms",
                "errors.deadletterqueue.group.enable", "min.cleanable.dirty.ratio")))));
    DescribeConfigsRequestData describe = new DescribeConfigsRequestData().setIncludeSynonyms(false).setIncludeDocumentation(false)
        .setResources(List.of(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2).setResourceName("ea-topic")
            .setConfigurationKeys(keys), new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2)
            .setResourceName("ea-missing").setConfigurationKeys(keys)));
    record(c, "topic defaults", describe);
    for (String value : List.of("3600000", "abc")) {
      AlterConfigsRequestData alter = new AlterConfigsRequestData().setValidateOnly(true);
      alter.resources().add(new AlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2).setResourceName("ea-topic")
          .setConfigs(new AlterConfigsRequestData.AlterableConfigCollection(List.of(new AlterConfigsRequestData.AlterableConfig()
              .setName("retention.ms").setValue(value)).iterator())));
      alter.resources().add(new AlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2).setResourceName("ea-missing"));
      record(c, "validate retention.ms=" + value, alter);
    }
    IncrementalAlterConfigsRequestData incremental = new IncrementalAlterConfigsRequestData().setValidateOnly(false);
    incremental.resources().add(new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2)
        .setResourceName("ea-topic").setConfigs(new IncrementalAlterConfigsRequestData.AlterableConfigCollection(List.of(
            new IncrementalAlterConfigsRequestData.AlterableConfig().setName("retention.ms").setConfigOperation((byte) 0).setValue("7200000"),
            new IncrementalAlterConfigsRequestData.AlterableConfig().setName("cleanup.policy").setConfigOperation((byte) 2)
                .setValue("compact")).iterator())));
    record(c, "set and append", incremental);
    record(c, "after IncrementalAlterConfigs", describe);
    // Lists every topic, internal ones included, which differ (Kafka's __consumer_offsets...): compared are this script's.
    ListConfigResourcesResponse resources = (ListConfigResourcesResponse) send(c, new ListConfigResourcesRequestData()
        .setResourceTypes(List.of((byte) 2)), version.apply(ApiKeys.LIST_CONFIG_RESOURCES));
    Set<String> ours = new TreeSet<>();
    resources.data().configResources().stream().filter(r -> r.resourceName().startsWith("ea-"))
        .forEach(r -> ours.add(r.resourceName() + "/" + r.resourceType()));
    note("LIST_CONFIG_RESOURCES topics of this script, error " + resources.data().errorCode(), ours);
  }

  // ------------------------------------------------------------------ cluster and partition administration

  private void cluster(WireClient c) throws Exception {
    record(c, "brokers", new DescribeClusterRequestData().setEndpointType((byte) 1), "brokers");
    ElectLeadersRequestData elect = new ElectLeadersRequestData().setElectionType((byte) 0).setTimeoutMs(30_000);
    elect.topicPartitions().add(new ElectLeadersRequestData.TopicPartitions().setTopic("ea-topic").setPartitions(List.of(0)));
    elect.topicPartitions().add(new ElectLeadersRequestData.TopicPartitions().setTopic("ea-missing").setPartitions(List.of(0)));
    record(c, "preferred", elect);
    AlterPartitionReassignmentsRequestData cancel = new AlterPartitionReassignmentsRequestData().setTimeoutMs(30_000);
    cancel.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName("ea-topic").setPartitions(List.of(
        new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(0).setReplicas(null))));
    record(c, "cancel with none in progress", cancel);
    record(c, "none in progress", new ListPartitionReassignmentsRequestData().setTimeoutMs(30_000).setTopics(List.of(
        new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName("ea-topic").setPartitionIndexes(List.of(0, 1)))));
    record(c, "topic and missing topic", new DescribeTopicPartitionsRequestData().setResponsePartitionLimit(100).setTopics(List.of(
        new DescribeTopicPartitionsRequestData.TopicRequest().setName("ea-topic"),
        new DescribeTopicPartitionsRequestData.TopicRequest().setName("ea-missing"))),
        "replicaNodes", "isrNodes", "eligibleLeaderReplicas", "lastKnownElr", "offlineReplicas");
    // Paths, sizes and the directories themselves differ by design (object storage here): compared are the error codes.
    recordErrors(c, "one partition", new DescribeLogDirsRequestData().setTopics(new DescribeLogDirsRequestData.DescribableLogDirTopicCollection(
        List.of(new DescribeLogDirsRequestData.DescribableLogDirTopic().setTopic("ea-topic").setPartitions(List.of(0))).iterator())));
    // The quorum's shape (Ratis here, KRaft there): compared are the error codes and the number of voters.
    var quorum = (org.apache.kafka.common.requests.DescribeQuorumResponse) send(c, new DescribeQuorumRequestData().setTopics(List.of(
        new DescribeQuorumRequestData.TopicData().setTopicName("__cluster_metadata").setPartitions(List.of(
            new DescribeQuorumRequestData.PartitionData().setPartitionIndex(0))))), version.apply(ApiKeys.DESCRIBE_QUORUM));
    note("DESCRIBE_QUORUM errors and voters", new TreeMap<>(quorum.errorCounts()) + " voters "
        + quorum.data().topics().get(0).partitions().get(0).currentVoters().size());
  }

  // ------------------------------------------------------------------ classic group

  private void classicGroup(WireClient c) throws Exception {
    awaitCoordinator(c, (byte) 0, "ea-group");
    JoinGroupRequestData join = new JoinGroupRequestData().setGroupId("ea-group").setMemberId("").setSessionTimeoutMs(30_000)
        .setRebalanceTimeoutMs(30_000).setProtocolType("consumer");
    join.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(new byte[] {1, 2}));
    JoinGroupResponse first = (JoinGroupResponse) record(c, "without a member id", join);
    String member = first.data().memberId();
    JoinGroupResponse joined = (JoinGroupResponse) record(c, "with the member id", join.duplicate().setMemberId(member));
    int generation = joined.data().generationId();
    record(c, "leader", new SyncGroupRequestData().setGroupId("ea-group").setMemberId(member).setGenerationId(generation)
        .setProtocolType("consumer").setProtocolName("range").setAssignments(List.of(new SyncGroupRequestData.SyncGroupRequestAssignment()
            .setMemberId(member).setAssignment(new byte[] {3, 4}))));
    record(c, "stable", new HeartbeatRequestData().setGroupId("ea-group").setMemberId(member).setGenerationId(generation));
    record(c, "stale generation", new HeartbeatRequestData().setGroupId("ea-group").setMemberId(member).setGenerationId(generation + 5));
    OffsetCommitRequestData commit = new OffsetCommitRequestData().setGroupId("ea-group").setMemberId(member)
        .setGenerationIdOrMemberEpoch(generation);
    commit.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("ea-topic").setPartitions(List.of(
        new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(2).setCommittedMetadata("m"))));
    record(c, "member's", commit);
    record(c, "two partitions", new OffsetFetchRequestData().setRequireStable(true).setGroups(List.of(
        new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("ea-group").setTopics(List.of(
            new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("ea-topic").setPartitionIndexes(List.of(0, 1)))))));
    for (String group : List.of("ea-group", "ea-nogroup")) { // one by one: Kafka orders a multi-group answer by its shards
      record(c, group, new DescribeGroupsRequestData().setGroups(List.of(group)), "clientHost");
    }
    // Lists every group of the node (other tests' too): compared are this script's.
    ListGroupsResponse groups = (ListGroupsResponse) send(c, new ListGroupsRequestData(), version.apply(ApiKeys.LIST_GROUPS));
    Set<String> ours = new TreeSet<>();
    groups.data().groups().stream().filter(g -> g.groupId().startsWith("ea-"))
        .forEach(g -> ours.add(g.groupId() + " " + g.groupState() + " " + g.groupType() + " " + g.protocolType()));
    note("LIST_GROUPS groups of this script, error " + groups.data().errorCode(), ours);
    OffsetDeleteRequestData offsetDelete = new OffsetDeleteRequestData().setGroupId("ea-group");
    offsetDelete.topics().add(new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName("ea-topic").setPartitions(List.of(
        new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0))));
    record(c, "while the member is in the group", offsetDelete);
    record(c, "the member", new LeaveGroupRequestData().setGroupId("ea-group").setMembers(List.of(
        new LeaveGroupRequestData.MemberIdentity().setMemberId(member).setReason("done"))));
    record(c, "of an empty group", offsetDelete.duplicate());
    for (String group : List.of("ea-group", "ea-nogroup")) {
      record(c, group, new DeleteGroupsRequestData().setGroupsNames(List.of(group)));
    }
  }

  private void awaitCoordinator(WireClient c, byte type, String key) {
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
      FindCoordinatorResponse r = (FindCoordinatorResponse) send(c, new FindCoordinatorRequestData().setKeyType(type)
          .setCoordinatorKeys(List.of(key)), type == 2 ? (short) 6 : (short) 4); // share keys: v6+
      if (r.data().coordinators().get(0).errorCode() != Errors.NONE.code()) {
        return false;
      }
      if (type != 0) {
        return true;
      }
      var fetched = (org.apache.kafka.common.requests.OffsetFetchResponse) send(c, new OffsetFetchRequestData().setGroups(List.of(
          new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(key).setTopics(null))), (short) 8);
      return fetched.data().groups().get(0).errorCode() == Errors.NONE.code(); // Kafka's coordinator has loaded the partition
    });
    try {
      // A share key names a topic id, each peer's own: compared are the answers without the keys.
      record(c, "type " + type, new FindCoordinatorRequestData().setKeyType(type).setCoordinatorKeys(List.of(key, key + "-other")),
          type == 2 ? new String[] {"key"} : new String[0]);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  // ------------------------------------------------------------------ consumer group (KIP-848)

  private void consumerGroup(WireClient c) throws Exception {
    awaitCoordinator(c, (byte) 0, "ea-cgroup");
    String member = Uuid.randomUuid().toString();
    ConsumerGroupHeartbeatRequestData beat = new ConsumerGroupHeartbeatRequestData().setGroupId("ea-cgroup").setMemberId(member)
        .setMemberEpoch(0).setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of("ea-topic")).setTopicPartitions(List.of());
    ConsumerGroupHeartbeatResponse joined = (ConsumerGroupHeartbeatResponse) record(c, "join", beat, "assignment");
    record(c, "fenced epoch", new ConsumerGroupHeartbeatRequestData().setGroupId("ea-cgroup").setMemberId(member)
        .setMemberEpoch(joined.data().memberEpoch() + 9), "assignment");
    for (String group : List.of("ea-cgroup", "ea-nocgroup")) {
      record(c, group, new ConsumerGroupDescribeRequestData().setGroupIds(List.of(group)),
          "assignment", "targetAssignment", "groupEpoch", "assignmentEpoch", "clientHost", "authorizedOperations", "memberEpoch");
    }
    record(c, "leave", new ConsumerGroupHeartbeatRequestData().setGroupId("ea-cgroup").setMemberId(member).setMemberEpoch(-1), "assignment");
  }

  // ------------------------------------------------------------------ transaction

  private void transaction(WireClient c) throws Exception {
    awaitCoordinator(c, (byte) 1, "ea-txn");
    InitProducerIdResponse[] init = new InitProducerIdResponse[1];
    // Kafka loads the coordinator's partition after FindCoordinator names it (COORDINATOR_LOAD_IN_PROGRESS meanwhile): slow under load.
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200)).until(() -> {
      init[0] = (InitProducerIdResponse) send(c, new InitProducerIdRequestData().setTransactionalId("ea-txn").setTransactionTimeoutMs(600_000)
          .setProducerId(-1).setProducerEpoch((short) -1), version.apply(ApiKeys.INIT_PRODUCER_ID));
      return init[0].error() == Errors.NONE;
    });
    note("INIT_PRODUCER_ID transactional epoch", init[0].data().producerEpoch());
    long pid = init[0].data().producerId();
    short epoch = init[0].data().producerEpoch();
    AddPartitionsToTxnRequestData add = new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId("ea-txn")
        .setV3AndBelowProducerId(pid).setV3AndBelowProducerEpoch(epoch);
    add.v3AndBelowTopics().add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName("ea-txn-topic").setPartitions(List.of(0)));
    record(c, "one partition", add, (short) 3); // v4+ is the brokers' batched form
    ProduceRequestData produce = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000).setTransactionalId("ea-txn");
    produce.topicData().add(new ProduceRequestData.TopicProduceData().setName("ea-txn-topic").setPartitionData(List.of(
        new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withTransactionalRecords(Compression.NONE,
            pid, epoch, 0, new SimpleRecord(2000L, "t".getBytes(), "x".getBytes()))))));
    record(c, "transactional", produce, (short) 11);
    record(c, "open transaction, read committed", fetch("ea-txn-topic", 0), (short) 12, "records");
    awaitCoordinator(c, (byte) 0, "ea-txn-group");
    record(c, "group", new AddOffsetsToTxnRequestData().setTransactionalId("ea-txn").setProducerId(pid).setProducerEpoch(epoch)
        .setGroupId("ea-txn-group"));
    TxnOffsetCommitRequestData offsets = new TxnOffsetCommitRequestData().setTransactionalId("ea-txn").setGroupId("ea-txn-group")
        .setProducerId(pid).setProducerEpoch(epoch).setGenerationIdOrMemberEpoch(-1).setMemberId("");
    offsets.topics().add(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName("ea-txn-topic").setPartitions(List.of(
        new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1))));
    record(c, "one partition", offsets);
    // The __consumer_offsets partition of the group is each broker's own hash: compared are the topic names, and the rest.
    var described = (org.apache.kafka.common.requests.DescribeTransactionsResponse) record(c, "ongoing",
        new DescribeTransactionsRequestData().setTransactionalIds(List.of("ea-txn")), "producerId", "transactionStartTimeMs", "topics");
    Set<String> txnTopics = new TreeSet<>();
    described.data().transactionStates().get(0).topics().forEach(t -> txnTopics.add(t.topic()
        + (t.topic().startsWith("__") ? "" : t.partitions().toString())));
    note("DescribeTransactions ongoing topics", txnTopics);
    record(c, "missing", new DescribeTransactionsRequestData().setTransactionalIds(List.of("ea-no-txn")), "transactionStartTimeMs");
    record(c, "ea- ids", new ListTransactionsRequestData().setTransactionalIdPattern("ea-.*"), "producerId");
    record(c, "commit", new EndTxnRequestData().setTransactionalId("ea-txn").setProducerId(pid).setProducerEpoch(epoch).setCommitted(true),
        "producerId", "producerEpoch");
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> ((FetchResponse) send(c, fetch("ea-txn-topic", 0),
        (short) 12)).data().responses().get(0).partitions().get(0).lastStableOffset() == 2);
    record(c, "committed, read committed", fetch("ea-txn-topic", 0), (short) 12, "records");
    record(c, "after the commit", new DescribeProducersRequestData().setTopics(
        new DescribeProducersRequestData.TopicRequestCollection(List.of(new DescribeProducersRequestData.TopicRequest()
            .setName("ea-txn-topic").setPartitionIndexes(List.of(0))).iterator())), "producerId", "lastTimestamp", "coordinatorEpoch");
    // A marker request with no markers: the inter-broker API answered to an empty request, comparable without writing anything.
    record(c, "no markers", new WriteTxnMarkersRequestData(), (short) 1);
  }

  // ------------------------------------------------------------------ share groups

  private void shareGroups(WireClient c) throws Exception {
    awaitCoordinator(c, (byte) 0, "ea-sg");
    record(c, "unknown member", new ShareGroupHeartbeatRequestData().setGroupId("ea-sg").setMemberId(Uuid.randomUuid().toString())
        .setMemberEpoch(3), "assignment");
    record(c, "missing group", new ShareGroupDescribeRequestData().setGroupIds(List.of("ea-nosg")));
    record(c, "no session", new ShareFetchRequestData().setGroupId("ea-sg").setMemberId(Uuid.randomUuid().toString()).setShareSessionEpoch(4)
        .setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20).setMaxRecords(10).setBatchSize(10));
    record(c, "no session", new ShareAcknowledgeRequestData().setGroupId("ea-sg").setMemberId(Uuid.randomUuid().toString())
        .setShareSessionEpoch(3));
    DescribeShareGroupOffsetsRequestData describe = new DescribeShareGroupOffsetsRequestData();
    describe.groups().add(new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup().setGroupId("ea-nosg")
        .setTopics(List.of(new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic().setTopicName("ea-topic")
            .setPartitions(List.of(0)))));
    record(c, "missing group", describe);
    AlterShareGroupOffsetsRequestData alter = new AlterShareGroupOffsetsRequestData().setGroupId("ea-nosg");
    alter.topics().add(new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic().setTopicName("ea-missing")
        .setPartitions(List.of(new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition().setPartitionIndex(0)
            .setStartOffset(0))));
    record(c, "missing group and topic", alter);
    DeleteShareGroupOffsetsRequestData delete = new DeleteShareGroupOffsetsRequestData().setGroupId("ea-nosg");
    delete.topics().add(new DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic().setTopicName("ea-topic"));
    record(c, "missing group", delete);
  }

  // ------------------------------------------------------------------ one namespace for classic, consumer and share groups

  /** A live group of each type; then each type's requests for the other types' ids, and the group APIs that name them. */
  private void groupNamespace(WireClient c) throws Exception {
    for (String g : List.of("ea-ns-share", "ea-ns-classic", "ea-ns-consumer")) {
      awaitCoordinator(c, (byte) 0, g);
    }
    String shareMember = Uuid.randomUuid().toString();
    record(c, "share member of ea-ns-share", new ShareGroupHeartbeatRequestData().setGroupId("ea-ns-share").setMemberId(shareMember)
        .setMemberEpoch(0).setSubscribedTopicNames(List.of("ea-topic")), "assignment");
    JoinGroupRequestData join = new JoinGroupRequestData().setGroupId("ea-ns-classic").setMemberId("").setSessionTimeoutMs(30_000)
        .setRebalanceTimeoutMs(30_000).setProtocolType("consumer");
    join.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(new byte[] {1}));
    String classicMember = ((JoinGroupResponse) send(c, join, version.apply(ApiKeys.JOIN_GROUP))).data().memberId();
    JoinGroupResponse joined = (JoinGroupResponse) record(c, "classic member of ea-ns-classic", join.duplicate().setMemberId(classicMember));
    record(c, "leader of ea-ns-classic", new SyncGroupRequestData().setGroupId("ea-ns-classic").setMemberId(classicMember)
        .setGenerationId(joined.data().generationId()).setProtocolType("consumer").setProtocolName("range")
        .setAssignments(List.of(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(classicMember).setAssignment(new byte[] {2}))));
    String consumerMember = Uuid.randomUuid().toString();
    record(c, "consumer member of ea-ns-consumer", new ConsumerGroupHeartbeatRequestData().setGroupId("ea-ns-consumer")
        .setMemberId(consumerMember).setMemberEpoch(0).setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of("ea-topic"))
        .setTopicPartitions(List.of()), "assignment");

    JoinGroupRequestData intoShare = join.duplicate().setGroupId("ea-ns-share");
    record(c, "new member into a share group", intoShare);
    record(c, "new member into a share group", new ConsumerGroupHeartbeatRequestData().setGroupId("ea-ns-share")
        .setMemberId(Uuid.randomUuid().toString()).setMemberEpoch(0).setRebalanceTimeoutMs(30_000)
        .setSubscribedTopicNames(List.of("ea-topic")).setTopicPartitions(List.of()), "assignment");
    for (String g : List.of("ea-ns-classic", "ea-ns-consumer")) {
      record(c, "new member into " + g, new ShareGroupHeartbeatRequestData().setGroupId(g).setMemberId(Uuid.randomUuid().toString())
          .setMemberEpoch(0).setSubscribedTopicNames(List.of("ea-topic")), "assignment");
    }
    OffsetCommitRequestData commit = new OffsetCommitRequestData().setGroupId("ea-ns-share").setMemberId("").setGenerationIdOrMemberEpoch(-1);
    commit.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("ea-topic").setPartitions(List.of(
        new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1))));
    record(c, "simple commit to a share group", commit);
    record(c, "of a share group", new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup()
        .setGroupId("ea-ns-share").setTopics(null))));
    for (String g : List.of("ea-ns-share", "ea-ns-consumer")) {
      record(c, "of " + g, new DescribeGroupsRequestData().setGroups(List.of(g)), "clientHost");
    }
    for (String g : List.of("ea-ns-share", "ea-ns-classic")) {
      record(c, "of " + g, new ConsumerGroupDescribeRequestData().setGroupIds(List.of(g)),
          "assignment", "targetAssignment", "groupEpoch", "assignmentEpoch", "clientHost", "authorizedOperations", "memberEpoch");
    }
    for (String g : List.of("ea-ns-classic", "ea-ns-consumer")) {
      record(c, "of " + g, new ShareGroupDescribeRequestData().setGroupIds(List.of(g)), "groupEpoch", "assignmentEpoch", "clientHost",
          "authorizedOperations");
    }
    record(c, "of a share group with a member", new DeleteGroupsRequestData().setGroupsNames(List.of("ea-ns-share")));

    record(c, "leave ea-ns-share", new ShareGroupHeartbeatRequestData().setGroupId("ea-ns-share").setMemberId(shareMember)
        .setMemberEpoch(-1), "assignment");
    record(c, "leave ea-ns-consumer", new ConsumerGroupHeartbeatRequestData().setGroupId("ea-ns-consumer").setMemberId(consumerMember)
        .setMemberEpoch(-1), "assignment");
    record(c, "leave ea-ns-classic", new LeaveGroupRequestData().setGroupId("ea-ns-classic").setMembers(List.of(
        new LeaveGroupRequestData.MemberIdentity().setMemberId(classicMember))));
    record(c, "of the three emptied groups", new DeleteGroupsRequestData().setGroupsNames(List.of("ea-ns-share", "ea-ns-classic",
        "ea-ns-consumer")));
  }

  // ------------------------------------------------------------------ share-group state (the share coordinator's APIs)

  private void shareState(WireClient c) throws Exception {
    Uuid unknown = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAw"); // no broker knows it
    awaitCoordinator(c, (byte) 2, "ea-state:" + topicId + ":0");
    // Bad input first (an unknown topic id, an unknown partition of a known topic): answered per partition, nothing kept.
    for (Uuid id : List.of(unknown, topicId)) {
      String what = id == unknown ? "unknown topic id" : "unknown partition";
      int partition = id == unknown ? 0 : 9;
      record(c, what, new InitializeShareGroupStateRequestData().setGroupId("ea-state").setTopics(List.of(
          new InitializeShareGroupStateRequestData.InitializeStateData().setTopicId(id).setPartitions(List.of(
              new InitializeShareGroupStateRequestData.PartitionData().setPartition(partition).setStateEpoch(1).setStartOffset(0))))));
      record(c, what, writeState(id, partition, 1, 0));
      record(c, what, readState(id, partition, 0));
      record(c, what, summary(id, partition));
      record(c, what, new DeleteShareGroupStateRequestData().setGroupId("ea-state").setTopics(List.of(
          new DeleteShareGroupStateRequestData.DeleteStateData().setTopicId(id).setPartitions(List.of(
              new DeleteShareGroupStateRequestData.PartitionData().setPartition(partition))))));
      record(c, what + " after the others", summary(id, partition));
    }
    // A known partition: never initialized, initialized, written, read, fenced, deleted.
    record(c, "known partition, no state", readState(topicId, 0, 0));
    record(c, "known partition, no state", writeState(topicId, 0, 1, 0));
    record(c, "known partition, epoch 1", new InitializeShareGroupStateRequestData().setGroupId("ea-state").setTopics(List.of(
        new InitializeShareGroupStateRequestData.InitializeStateData().setTopicId(topicId).setPartitions(List.of(
            new InitializeShareGroupStateRequestData.PartitionData().setPartition(0).setStateEpoch(1).setStartOffset(1))))));
    record(c, "known partition, epoch 1", writeState(topicId, 0, 1, 0));
    record(c, "known partition, written", readState(topicId, 0, 0));
    record(c, "known partition, stale state epoch", writeState(topicId, 0, 0, 0));
    record(c, "known partition, written", summary(topicId, 0));
    record(c, "known partition", new DeleteShareGroupStateRequestData().setGroupId("ea-state").setTopics(List.of(
        new DeleteShareGroupStateRequestData.DeleteStateData().setTopicId(topicId).setPartitions(List.of(
            new DeleteShareGroupStateRequestData.PartitionData().setPartition(0))))));
    record(c, "known partition, deleted", summary(topicId, 0));
  }

  private static WriteShareGroupStateRequestData writeState(Uuid id, int partition, int stateEpoch, int leaderEpoch) {
    return new WriteShareGroupStateRequestData().setGroupId("ea-state").setTopics(List.of(
        new WriteShareGroupStateRequestData.WriteStateData().setTopicId(id).setPartitions(List.of(
            new WriteShareGroupStateRequestData.PartitionData().setPartition(partition).setStateEpoch(stateEpoch).setLeaderEpoch(leaderEpoch)
                .setStartOffset(1).setStateBatches(List.of(new WriteShareGroupStateRequestData.StateBatch().setFirstOffset(1)
                    .setLastOffset(2).setDeliveryState((byte) 2).setDeliveryCount((short) 1)))))));
  }

  private static ReadShareGroupStateRequestData readState(Uuid id, int partition, int leaderEpoch) {
    return new ReadShareGroupStateRequestData().setGroupId("ea-state").setTopics(List.of(
        new ReadShareGroupStateRequestData.ReadStateData().setTopicId(id).setPartitions(List.of(
            new ReadShareGroupStateRequestData.PartitionData().setPartition(partition).setLeaderEpoch(leaderEpoch)))));
  }

  private static ReadShareGroupStateSummaryRequestData summary(Uuid id, int partition) {
    return new ReadShareGroupStateSummaryRequestData().setGroupId("ea-state").setTopics(List.of(
        new ReadShareGroupStateSummaryRequestData.ReadStateSummaryData().setTopicId(id).setPartitions(List.of(
            new ReadShareGroupStateSummaryRequestData.PartitionData().setPartition(partition).setLeaderEpoch(0)))));
  }

  // ------------------------------------------------------------------ SCRAM, quotas, ACLs

  private void security(WireClient c) throws Exception {
    AlterUserScramCredentialsRequestData scram = new AlterUserScramCredentialsRequestData();
    scram.upsertions().add(new AlterUserScramCredentialsRequestData.ScramCredentialUpsertion().setName("ea-user").setMechanism((byte) 1)
        .setIterations(4096).setSalt("salty".getBytes()).setSaltedPassword(new byte[32]));
    record(c, "upsert", scram);
    AlterUserScramCredentialsRequestData missing = new AlterUserScramCredentialsRequestData();
    missing.deletions().add(new AlterUserScramCredentialsRequestData.ScramCredentialDeletion().setName("ea-nobody").setMechanism((byte) 1));
    record(c, "delete a missing one", missing);
    DescribeUserScramCredentialsRequestData users = new DescribeUserScramCredentialsRequestData().setUsers(List.of(
        new DescribeUserScramCredentialsRequestData.UserName().setName("ea-user"),
        new DescribeUserScramCredentialsRequestData.UserName().setName("ea-nobody")));
    awaitVisible(c, users, r -> ((org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse) r).data().results()
        .stream().anyMatch(u -> u.user().equals("ea-user") && u.errorCode() == 0)); // Kafka: once its metadata log reaches the broker
    record(c, "user and missing user", users);
    AlterClientQuotasRequestData quota = new AlterClientQuotasRequestData();
    quota.entries().add(new AlterClientQuotasRequestData.EntryData().setEntity(List.of(new AlterClientQuotasRequestData.EntityData()
        .setEntityType("user").setEntityName("ea-user"))).setOps(List.of(new AlterClientQuotasRequestData.OpData()
        .setKey("producer_byte_rate").setValue(1024))));
    record(c, "set", quota);
    DescribeClientQuotasRequestData quotas = new DescribeClientQuotasRequestData().setComponents(List.of(
        new DescribeClientQuotasRequestData.ComponentData().setEntityType("user").setMatchType((byte) 0).setMatch("ea-user")));
    awaitVisible(c, quotas, r -> !((org.apache.kafka.common.requests.DescribeClientQuotasResponse) r).data().entries().isEmpty());
    record(c, "one user", quotas);
    AlterClientQuotasRequestData remove = new AlterClientQuotasRequestData();
    remove.entries().add(new AlterClientQuotasRequestData.EntryData().setEntity(List.of(new AlterClientQuotasRequestData.EntityData()
        .setEntityType("user").setEntityName("ea-user"))).setOps(List.of(new AlterClientQuotasRequestData.OpData()
        .setKey("producer_byte_rate").setRemove(true))));
    record(c, "remove", remove);
    awaitVisible(c, quotas, r -> ((org.apache.kafka.common.requests.DescribeClientQuotasResponse) r).data().entries().isEmpty());
    record(c, "one user after removal", quotas);
    record(c, "read ea-topic", new CreateAclsRequestData().setCreations(List.of(new CreateAclsRequestData.AclCreation()
        .setResourceType((byte) 2).setResourceName("ea-topic").setResourcePatternType((byte) 3).setPrincipal("User:ea-user").setHost("*")
        .setOperation((byte) 3).setPermissionType((byte) 3))));
    DescribeAclsRequestData acls = new DescribeAclsRequestData().setResourceTypeFilter((byte) 2).setResourceNameFilter("ea-topic")
        .setPatternTypeFilter((byte) 1).setPrincipalFilter(null).setHostFilter(null).setOperation((byte) 1).setPermissionType((byte) 1);
    record(c, "on ea-topic", acls);
    record(c, "on ea-topic", new DeleteAclsRequestData().setFilters(List.of(new DeleteAclsRequestData.DeleteAclsFilter()
        .setResourceTypeFilter((byte) 2).setResourceNameFilter("ea-topic").setPatternTypeFilter((byte) 1).setPrincipalFilter(null)
        .setHostFilter(null).setOperation((byte) 1).setPermissionType((byte) 1))));
    record(c, "on ea-topic after delete", acls);
  }

  /** Waits until {@code request}'s answer passes {@code visible} (an admin change reaching the broker that serves it). */
  private void awaitVisible(WireClient c, ApiMessage request, java.util.function.Predicate<AbstractResponse> visible) {
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
        .until(() -> visible.test(send(c, request, version.apply(ApiKeys.forId(request.apiKey())))));
  }

  // ------------------------------------------------------------------ telemetry, features

  private void telemetryAndFeatures(WireClient c) throws Exception {
    GetTelemetrySubscriptionsResponse sub = (GetTelemetrySubscriptionsResponse) record(c, "new client",
        new GetTelemetrySubscriptionsRequestData().setClientInstanceId(Uuid.ZERO_UUID), "subscriptionId");
    record(c, "subscription never handed out", new PushTelemetryRequestData().setClientInstanceId(sub.data().clientInstanceId())
        .setSubscriptionId(sub.data().subscriptionId() + 1).setCompressionType((byte) 0).setMetrics(ByteBuffer.allocate(0)));
    UpdateFeaturesRequestData features = new UpdateFeaturesRequestData().setTimeoutMs(30_000).setValidateOnly(true);
    features.featureUpdates().add(new UpdateFeaturesRequestData.FeatureUpdateKey().setFeature("no.such.feature").setMaxVersionLevel((short) 1)
        .setUpgradeType((byte) 1));
    record(c, "unknown feature", features);
  }

  // ------------------------------------------------------------------ SASL on a PLAINTEXT listener

  private void sasl() throws Exception {
    for (ApiMessage request : List.of(new SaslHandshakeRequestData().setMechanism("PLAIN"),
        new SaslAuthenticateRequestData().setAuthBytes("\0u\0p".getBytes()))) {
      try (WireClient c = new WireClient(port)) { // each on its own connection: a broker may close it instead of answering
        record(c, "on PLAINTEXT", request);
      } catch (java.io.IOException closed) {
        note(ApiKeys.forId(request.apiKey()).name + " on PLAINTEXT", "connection closed: " + closed.getClass().getSimpleName());
      }
    }
  }
}
