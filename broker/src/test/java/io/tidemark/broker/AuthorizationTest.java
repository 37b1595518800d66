package io.tidemark.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.acl.AclStore;
import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.broker.protocol.ApiRegistry;
import io.tidemark.stream.config.Settings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.*;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.*;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * For every advertised API that needs a permission: a principal without the ACL Kafka's
 * documentation names is denied with Kafka's error and nothing changes; with the ACL the same
 * request succeeds (and changes what it should). One broker with the authorizer on
 * ({@code allow.everyone.if.no.acl.found=false}), the client is {@code User:ANONYMOUS} over
 * PLAINTEXT; ACLs are written straight into the broker's ACL store. Fixtures are made with a
 * temporary ALLOW ALL for the client, removed before each denied request.
 */
class AuthorizationTest {
  private static final String ME = "User:ANONYMOUS";
  private static final String TOPIC = "auth-t";
  private static MemoryStreamStore store;
  private static SharedClusterMetadata metadata;
  private static KafkaBroker broker;
  private static AclStore acls;
  private static RawConnection raw;

  /** One table row: the API, its request, the error without {@code needed}, and what a success may answer. */
  record Case(ApiKeys api, String what, short version, Supplier<AbstractRequest.Builder<?>> request, Errors denied,
      List<AclBinding> base, List<AclBinding> needed, Runnable setup, Supplier<Object> state, Set<Errors> ok,
      Predicate<AbstractResponse> deniedCheck) {
    Case withSetup(Runnable s) {
      return new Case(api, what, version, request, denied, base, needed, s, state, ok, deniedCheck);
    }

    Case withState(Supplier<Object> s) {
      return new Case(api, what, version, request, denied, base, needed, setup, s, ok, deniedCheck);
    }

    Case withBase(AclBinding... b) {
      return new Case(api, what, version, request, denied, List.of(b), needed, setup, state, ok, deniedCheck);
    }

    Case alsoOk(Errors... e) {
      Set<Errors> s = new java.util.HashSet<>(ok);
      s.addAll(List.of(e));
      return new Case(api, what, version, request, denied, base, needed, setup, state, s, deniedCheck);
    }

    /** With the ACL, any answer but an authorization error passes (the request needs state this table does not build). */
    Case pastAuthorization() {
      return new Case(api, what, version, request, denied, base, needed, setup, state, null, deniedCheck);
    }

    Case deniedWhen(Predicate<AbstractResponse> check) {
      return new Case(api, what, version, request, denied, base, needed, setup, state, ok, check);
    }
  }

  static Case row(ApiKeys api, String what, int version, Supplier<AbstractRequest.Builder<?>> request, Errors denied,
      AclBinding... needed) {
    return new Case(api, what, (short) version, request, denied, List.of(), List.of(needed), () -> {}, null,
        Set.of(Errors.NONE), null);
  }

  static AclBinding allow(ResourceType type, String name, AclOperation op) {
    return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
        new AccessControlEntry(ME, "*", op, AclPermissionType.ALLOW));
  }

  static AclBinding topic(String name, AclOperation op) {
    return allow(ResourceType.TOPIC, name, op);
  }

  static AclBinding group(String name, AclOperation op) {
    return allow(ResourceType.GROUP, name, op);
  }

  static AclBinding cluster(AclOperation op) {
    return allow(ResourceType.CLUSTER, "kafka-cluster", op);
  }

  private static final List<AclBinding> EVERYTHING = List.of(allow(ResourceType.TOPIC, "*", AclOperation.ALL),
      allow(ResourceType.GROUP, "*", AclOperation.ALL), cluster(AclOperation.ALL),
      allow(ResourceType.TRANSACTIONAL_ID, "*", AclOperation.ALL));

  @BeforeAll
  static void start() throws Exception {
    store = new MemoryStreamStore(256L << 20);
    metadata = new SharedClusterMetadata();
    Map<String, String> s = new HashMap<>();
    s.put("kafka.listener.port", "0");
    s.put("kafka.listener.host", "127.0.0.1");
    s.put("kafka.advertised.host", "127.0.0.1");
    s.put("kafka.group.initial.rebalance.delay.ms", "0");
    s.put("kafka.authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
    broker = new KafkaBroker(new BrokerConfig(new Settings(s)), store, Time.SYSTEM, metadata);
    broker.start();
    metadata.live(0, broker.port());
    acls = metadata.aclStore();
    raw = new RawConnection(broker.port());
    asSuper(() -> {
      createTopic(TOPIC, 3);
      produce(TOPIC, 0, 2);
      commit("og", TOPIC, 1);
    });
  }

  @AfterAll
  static void stop() throws Exception {
    raw.close();
    broker.close();
    store.close();
  }

  // ---- the table

  static List<Case> cases() {
    TopicPartition tp = new TopicPartition(TOPIC, 0);
    List<Case> t = new ArrayList<>();
    t.add(row(ApiKeys.PRODUCE, "produce", 12, () -> ProduceRequest.builder(produceData(TOPIC), true),
        Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.WRITE)).withState(() -> endOffset(TOPIC, 0)));
    t.add(row(ApiKeys.FETCH, "fetch", 12, () -> FetchRequest.Builder.forConsumer((short) 12, 10, 1, Map.of(tp,
        new FetchRequest.PartitionData(Uuid.ZERO_UUID, 0, -1, 1 << 16, Optional.empty()))),
        Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.READ)));
    t.add(row(ApiKeys.LIST_OFFSETS, "list offsets", 7, () -> ListOffsetsRequest.Builder.forConsumer(false,
        IsolationLevel.READ_UNCOMMITTED).setTargetTimes(List.of(new ListOffsetsRequestData.ListOffsetsTopic().setName(TOPIC)
        .setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1))))),
        Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.OFFSET_FOR_LEADER_EPOCH, "leader epochs", 4, () -> {
      var topics = new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
      topics.add(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(TOPIC).setPartitions(List.of(
          new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0).setLeaderEpoch(0)
              .setCurrentLeaderEpoch(-1))));
      return OffsetsForLeaderEpochRequest.Builder.forConsumer(topics);
    }, Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.DELETE_RECORDS, "delete records", 2, () -> new DeleteRecordsRequest.Builder(new DeleteRecordsRequestData()
        .setTimeoutMs(10_000).setTopics(List.of(new DeleteRecordsRequestData.DeleteRecordsTopic().setName("dr-t")
            .setPartitions(List.of(new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(1)))))),
        Errors.TOPIC_AUTHORIZATION_FAILED, topic("dr-t", AclOperation.DELETE))
        .withSetup(() -> {
          createTopic("dr-t", 1);
          produce("dr-t", 0, 2);
        }).withState(() -> broker.partitionLog(new TopicPartition("dr-t", 0)).orElseThrow().logStartOffset()));
    t.add(row(ApiKeys.METADATA, "metadata of a topic", 12, () -> new MetadataRequest.Builder(new MetadataRequestData()
        .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName(TOPIC).setTopicId(Uuid.ZERO_UUID)))
        .setAllowAutoTopicCreation(false)), Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.METADATA, "auto-creation needs CREATE", 12, () -> new MetadataRequest.Builder(new MetadataRequestData()
        .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName("auto-x").setTopicId(Uuid.ZERO_UUID)))
        .setAllowAutoTopicCreation(true)), Errors.TOPIC_AUTHORIZATION_FAILED, topic("auto-x", AclOperation.CREATE))
        .withBase(topic("auto-x", AclOperation.DESCRIBE)).withState(() -> exists("auto-x"))
        .alsoOk(Errors.LEADER_NOT_AVAILABLE));
    t.add(row(ApiKeys.INIT_PRODUCER_ID, "idempotent producer id", 5, () -> new InitProducerIdRequest.Builder(
        new InitProducerIdRequestData().setTransactionalId(null).setTransactionTimeoutMs(60_000).setProducerId(-1)
            .setProducerEpoch((short) -1)), Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.IDEMPOTENT_WRITE)));
    t.add(row(ApiKeys.INIT_PRODUCER_ID, "idempotent producer id with WRITE on a topic", 5, () -> new InitProducerIdRequest.Builder(
        new InitProducerIdRequestData().setTransactionalId(null).setTransactionTimeoutMs(60_000).setProducerId(-1)
            .setProducerEpoch((short) -1)), Errors.CLUSTER_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.WRITE)));
    t.add(row(ApiKeys.FIND_COORDINATOR, "group coordinator", 4, () -> new FindCoordinatorRequest.Builder(
        new FindCoordinatorRequestData().setKeyType((byte) 0).setCoordinatorKeys(List.of("og"))),
        Errors.GROUP_AUTHORIZATION_FAILED, group("og", AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.FIND_COORDINATOR, "group coordinator (v3)", 3, () -> new FindCoordinatorRequest.Builder(
        new FindCoordinatorRequestData().setKeyType((byte) 0).setKey("og")),
        Errors.GROUP_AUTHORIZATION_FAILED, group("og", AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.CREATE_TOPICS, "create topic", 7, () -> {
      var topics = new CreateTopicsRequestData.CreatableTopicCollection();
      topics.add(new CreateTopicsRequestData.CreatableTopic().setName("ct").setNumPartitions(1).setReplicationFactor((short) 1));
      return new CreateTopicsRequest.Builder(new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(10_000));
    }, Errors.TOPIC_AUTHORIZATION_FAILED, cluster(AclOperation.CREATE)).withState(() -> exists("ct")));
    t.add(row(ApiKeys.CREATE_TOPICS, "create topic with CREATE on the topic", 7, () -> {
      var topics = new CreateTopicsRequestData.CreatableTopicCollection();
      topics.add(new CreateTopicsRequestData.CreatableTopic().setName("ct2").setNumPartitions(1).setReplicationFactor((short) 1));
      return new CreateTopicsRequest.Builder(new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(10_000));
    }, Errors.TOPIC_AUTHORIZATION_FAILED, topic("ct2", AclOperation.CREATE)).withState(() -> exists("ct2")));
    t.add(row(ApiKeys.DELETE_TOPICS, "delete topic", 6, () -> new DeleteTopicsRequest.Builder(new DeleteTopicsRequestData()
        .setTopics(List.of(new DeleteTopicsRequestData.DeleteTopicState().setName("dt"))).setTimeoutMs(10_000)),
        Errors.TOPIC_AUTHORIZATION_FAILED, topic("dt", AclOperation.DELETE))
        .withSetup(() -> createTopic("dt", 1)).withState(() -> exists("dt")));
    t.add(row(ApiKeys.CREATE_PARTITIONS, "create partitions", 3, () -> {
      var topics = new CreatePartitionsRequestData.CreatePartitionsTopicCollection();
      topics.add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("cp").setCount(2).setAssignments(null));
      return new CreatePartitionsRequest.Builder(new CreatePartitionsRequestData().setTopics(topics).setTimeoutMs(10_000));
    }, Errors.TOPIC_AUTHORIZATION_FAILED, topic("cp", AclOperation.ALTER))
        .withSetup(() -> createTopic("cp", 1)).withState(() -> partitions("cp")));
    t.add(row(ApiKeys.DESCRIBE_CONFIGS, "topic configs", 4, () -> new DescribeConfigsRequest.Builder(new DescribeConfigsRequestData()
        .setResources(List.of(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2)
            .setResourceName(TOPIC)))), Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.DESCRIBE_CONFIGS)));
    t.add(row(ApiKeys.DESCRIBE_CONFIGS, "topic configs implied by ALTER_CONFIGS", 4, () -> new DescribeConfigsRequest.Builder(
        new DescribeConfigsRequestData().setResources(List.of(new DescribeConfigsRequestData.DescribeConfigsResource()
            .setResourceType((byte) 2).setResourceName(TOPIC)))), Errors.TOPIC_AUTHORIZATION_FAILED,
        topic(TOPIC, AclOperation.ALTER_CONFIGS)));
    t.add(row(ApiKeys.DESCRIBE_CONFIGS, "broker configs", 4, () -> new DescribeConfigsRequest.Builder(new DescribeConfigsRequestData()
        .setResources(List.of(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 4)
            .setResourceName("0")))), Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.DESCRIBE_CONFIGS)));
    t.add(row(ApiKeys.ALTER_CONFIGS, "alter topic configs", 2, () -> new AlterConfigsRequest.Builder(Map.of(
        new ConfigResource(ConfigResource.Type.TOPIC, "ac"), new AlterConfigsRequest.Config(List.of(
            new AlterConfigsRequest.ConfigEntry("retention.ms", "12345")))), false),
        Errors.TOPIC_AUTHORIZATION_FAILED, topic("ac", AclOperation.ALTER_CONFIGS))
        .withSetup(() -> createTopic("ac", 1)).withState(() -> configs("ac")));
    t.add(row(ApiKeys.INCREMENTAL_ALTER_CONFIGS, "incrementally alter topic configs", 1, () -> {
      var resources = new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection();
      var configs = new IncrementalAlterConfigsRequestData.AlterableConfigCollection();
      configs.add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName("retention.ms").setConfigOperation((byte) 0)
          .setValue("54321"));
      resources.add(new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2)
          .setResourceName("iac").setConfigs(configs));
      return new IncrementalAlterConfigsRequest.Builder(new IncrementalAlterConfigsRequestData().setResources(resources));
    }, Errors.TOPIC_AUTHORIZATION_FAILED, topic("iac", AclOperation.ALTER_CONFIGS))
        .withSetup(() -> createTopic("iac", 1)).withState(() -> configs("iac")));
    t.add(row(ApiKeys.INCREMENTAL_ALTER_CONFIGS, "dynamic broker config", 1, () -> {
      var resources = new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection();
      var configs = new IncrementalAlterConfigsRequestData.AlterableConfigCollection();
      configs.add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName("log.retention.ms").setConfigOperation((byte) 0)
          .setValue("3600000"));
      resources.add(new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 4).setResourceName("")
          .setConfigs(configs));
      return new IncrementalAlterConfigsRequest.Builder(new IncrementalAlterConfigsRequestData().setResources(resources));
    }, Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.ALTER_CONFIGS))
        .withState(() -> metadata.resourceConfigs().configs((byte) 4).toString()));
    t.add(row(ApiKeys.LIST_CONFIG_RESOURCES, "list config resources", 1, () -> new ListConfigResourcesRequest.Builder(
        new ListConfigResourcesRequestData()), Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.DESCRIBE_CONFIGS)));
    t.add(row(ApiKeys.ELECT_LEADERS, "elect leaders", 2, () -> new ElectLeadersRequest.Builder(ElectionType.PREFERRED,
        List.of(tp), 10_000), Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.ALTER))
        .alsoOk(Errors.ELECTION_NOT_NEEDED));
    t.add(row(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, "reassign", 0, () -> new AlterPartitionReassignmentsRequest.Builder(
        new AlterPartitionReassignmentsRequestData().setTimeoutMs(10_000).setTopics(List.of(
            new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(TOPIC).setPartitions(List.of(
                new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(0)
                    .setReplicas(List.of(0))))))), Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.ALTER)));
    t.add(row(ApiKeys.LIST_PARTITION_REASSIGNMENTS, "list reassignments", 0, () -> new ListPartitionReassignmentsRequest.Builder(
        new ListPartitionReassignmentsRequestData().setTopics(null)), Errors.CLUSTER_AUTHORIZATION_FAILED,
        cluster(AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.DESCRIBE_PRODUCERS, "describe producers", 0, () -> {
      var topics = new DescribeProducersRequestData.TopicRequestCollection();
      topics.add(new DescribeProducersRequestData.TopicRequest().setName(TOPIC).setPartitionIndexes(List.of(0)));
      return new DescribeProducersRequest.Builder(new DescribeProducersRequestData().setTopics(topics));
    }, Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.READ)));
    t.add(row(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, "describe topic partitions", 0, () -> new DescribeTopicPartitionsRequest.Builder(
        List.of(TOPIC)), Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.DESCRIBE_LOG_DIRS, "describe log dirs", 4, () -> new DescribeLogDirsRequest.Builder(
        new DescribeLogDirsRequestData().setTopics(null)), Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.UPDATE_FEATURES, "update features", 1, () -> {
      var updates = new UpdateFeaturesRequestData.FeatureUpdateKeyCollection();
      updates.add(new UpdateFeaturesRequestData.FeatureUpdateKey().setFeature("group.version").setMaxVersionLevel((short) 1)
          .setUpgradeType((byte) 1));
      return new UpdateFeaturesRequest.Builder(new UpdateFeaturesRequestData().setFeatureUpdates(updates).setTimeoutMs(10_000));
    }, Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.ALTER)));
    // classic group: a member joined (as super user) before each denied request
    Member m = new Member();
    t.add(row(ApiKeys.JOIN_GROUP, "join group", 3, () -> new JoinGroupRequest.Builder(joinData("jg", "")),
        Errors.GROUP_AUTHORIZATION_FAILED, group("jg", AclOperation.READ)));
    t.add(row(ApiKeys.SYNC_GROUP, "sync group", 3, () -> new SyncGroupRequest.Builder(new SyncGroupRequestData().setGroupId("sg")
        .setGenerationId(m.generation).setMemberId(m.id).setAssignments(List.of(new SyncGroupRequestData.SyncGroupRequestAssignment()
            .setMemberId(m.id).setAssignment(new byte[0])))), Errors.GROUP_AUTHORIZATION_FAILED, group("sg", AclOperation.READ))
        .withSetup(() -> m.join("sg")));
    t.add(row(ApiKeys.HEARTBEAT, "heartbeat", 3, () -> new HeartbeatRequest.Builder(new HeartbeatRequestData().setGroupId("hg")
        .setGenerationId(m.generation).setMemberId(m.id)), Errors.GROUP_AUTHORIZATION_FAILED, group("hg", AclOperation.READ))
        .withSetup(() -> m.joinAndSync("hg")));
    t.add(row(ApiKeys.LEAVE_GROUP, "leave group", 3, () -> new LeaveGroupRequest.Builder("lg", List.of(
        new LeaveGroupRequestData.MemberIdentity().setMemberId(m.id))), Errors.GROUP_AUTHORIZATION_FAILED,
        group("lg", AclOperation.READ)).withSetup(() -> m.joinAndSync("lg")));
    t.add(row(ApiKeys.OFFSET_COMMIT, "commit offsets", 8, () -> OffsetCommitRequest.Builder.forTopicNames(commitData("ocg", TOPIC, 1)),
        Errors.GROUP_AUTHORIZATION_FAILED, group("ocg", AclOperation.READ), topic(TOPIC, AclOperation.READ))
        .withState(() -> committed("ocg")));
    t.add(row(ApiKeys.OFFSET_COMMIT, "commit offsets of a topic", 8, () -> OffsetCommitRequest.Builder.forTopicNames(
        commitData("ocg2", TOPIC, 1)), Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.READ))
        .withBase(group("ocg2", AclOperation.READ)).withState(() -> committed("ocg2")));
    t.add(row(ApiKeys.OFFSET_FETCH, "fetch offsets", 9, () -> OffsetFetchRequest.Builder.forTopicNames(new OffsetFetchRequestData()
        .setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("og").setTopics(null))), false),
        Errors.GROUP_AUTHORIZATION_FAILED, group("og", AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.OFFSET_FETCH, "fetch offsets (v7)", 7, () -> OffsetFetchRequest.Builder.forTopicNames(new OffsetFetchRequestData()
        .setGroupId("og").setTopics(null), false), Errors.GROUP_AUTHORIZATION_FAILED, group("og", AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.OFFSET_FETCH, "fetch offsets of a topic", 9, () -> OffsetFetchRequest.Builder.forTopicNames(
        new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("og")
            .setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(TOPIC)
                .setPartitionIndexes(List.of(0)))))), false),
        Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.DESCRIBE)).withBase(group("og", AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.DESCRIBE_GROUPS, "describe groups", 5, () -> new DescribeGroupsRequest.Builder(new DescribeGroupsRequestData()
        .setGroups(List.of("og"))), Errors.GROUP_AUTHORIZATION_FAILED, group("og", AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.LIST_GROUPS, "list groups shows only describable groups", 5, () -> new ListGroupsRequest.Builder(
        new ListGroupsRequestData()), Errors.NONE, group("og", AclOperation.DESCRIBE))
        .deniedWhen(r -> ((ListGroupsResponse) r).data().groups().stream().noneMatch(g -> g.groupId().equals("og"))));
    t.add(row(ApiKeys.LIST_GROUPS, "list groups with DESCRIBE on the cluster", 5, () -> new ListGroupsRequest.Builder(
        new ListGroupsRequestData()), Errors.NONE, cluster(AclOperation.DESCRIBE))
        .deniedWhen(r -> ((ListGroupsResponse) r).data().groups().isEmpty()));
    t.add(row(ApiKeys.DELETE_GROUPS, "delete groups", 2, () -> new DeleteGroupsRequest.Builder(new DeleteGroupsRequestData()
        .setGroupsNames(List.of("dg"))), Errors.GROUP_AUTHORIZATION_FAILED, group("dg", AclOperation.DELETE))
        .withSetup(() -> commit("dg", TOPIC, 1)).withState(() -> committed("dg")));
    t.add(row(ApiKeys.OFFSET_DELETE, "delete offsets", 0, () -> {
      var topics = new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection();
      topics.add(new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(TOPIC).setPartitions(List.of(
          new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0))));
      return new OffsetDeleteRequest.Builder(new OffsetDeleteRequestData().setGroupId("odg").setTopics(topics));
    }, Errors.GROUP_AUTHORIZATION_FAILED, group("odg", AclOperation.DELETE), topic(TOPIC, AclOperation.READ))
        .withSetup(() -> commit("odg", TOPIC, 1)).withState(() -> committed("odg")));
    String cgMember = Uuid.randomUuid().toString();
    t.add(row(ApiKeys.CONSUMER_GROUP_HEARTBEAT, "consumer group heartbeat", 1, () -> new ConsumerGroupHeartbeatRequest.Builder(
        new ConsumerGroupHeartbeatRequestData().setGroupId("cg").setMemberId(cgMember).setMemberEpoch(0)
            .setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of(TOPIC)).setTopicPartitions(List.of())),
        Errors.GROUP_AUTHORIZATION_FAILED, group("cg", AclOperation.READ), topic(TOPIC, AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.CONSUMER_GROUP_HEARTBEAT, "consumer group heartbeat subscribing to a topic", 1,
        () -> new ConsumerGroupHeartbeatRequest.Builder(new ConsumerGroupHeartbeatRequestData().setGroupId("cg2")
            .setMemberId(cgMember).setMemberEpoch(0).setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of(TOPIC))
            .setTopicPartitions(List.of())), Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.DESCRIBE))
        .withBase(group("cg2", AclOperation.READ)));
    t.add(row(ApiKeys.CONSUMER_GROUP_DESCRIBE, "consumer group describe", 1, () -> new ConsumerGroupDescribeRequest.Builder(
        new ConsumerGroupDescribeRequestData().setGroupIds(List.of("cg"))), Errors.GROUP_AUTHORIZATION_FAILED,
        group("cg", AclOperation.DESCRIBE)).alsoOk(Errors.GROUP_ID_NOT_FOUND));
    AclBinding victim = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "victim", PatternType.LITERAL),
        new AccessControlEntry("User:victim", "*", AclOperation.READ, AclPermissionType.ALLOW));
    t.add(row(ApiKeys.CREATE_ACLS, "create ACLs", 3, () -> new CreateAclsRequest.Builder(new CreateAclsRequestData()
        .setCreations(List.of(CreateAclsRequest.aclCreation(victim)))), Errors.CLUSTER_AUTHORIZATION_FAILED,
        cluster(AclOperation.ALTER)).withState(() -> acls.acls().all().contains(victim)));
    t.add(row(ApiKeys.DESCRIBE_ACLS, "describe ACLs", 3, () -> new DescribeAclsRequest.Builder(AclBindingFilter.ANY),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.DESCRIBE)));
    t.add(row(ApiKeys.DELETE_ACLS, "delete ACLs", 3, () -> new DeleteAclsRequest.Builder(new DeleteAclsRequestData()
        .setFilters(List.of(DeleteAclsRequest.deleteAclsFilter(victim.toFilter())))), Errors.CLUSTER_AUTHORIZATION_FAILED,
        cluster(AclOperation.ALTER)).withSetup(() -> acls.create(List.of(victim)).join())
        .withState(() -> acls.acls().all().contains(victim)));
    t.add(row(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, "describe SCRAM users", 0,
        () -> new DescribeUserScramCredentialsRequest.Builder(new DescribeUserScramCredentialsRequestData().setUsers(
            List.of(new DescribeUserScramCredentialsRequestData.UserName().setName("nobody")))),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.DESCRIBE)).pastAuthorization());
    t.add(row(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, "describe every SCRAM user", 0,
        () -> new DescribeUserScramCredentialsRequest.Builder(new DescribeUserScramCredentialsRequestData().setUsers(null)),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.DESCRIBE)).deniedWhen(r ->
            ((org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse) r).data().errorCode()
                == Errors.CLUSTER_AUTHORIZATION_FAILED.code()));
    t.add(row(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, "alter SCRAM users", 0,
        () -> new AlterUserScramCredentialsRequest.Builder(new AlterUserScramCredentialsRequestData().setDeletions(List.of(
            new AlterUserScramCredentialsRequestData.ScramCredentialDeletion().setName("nobody").setMechanism((byte) 1)))),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.ALTER)).pastAuthorization());
    t.add(row(ApiKeys.DESCRIBE_CLIENT_QUOTAS, "describe client quotas", 1, () -> new DescribeClientQuotasRequest.Builder(
        org.apache.kafka.common.quota.ClientQuotaFilter.all()), Errors.CLUSTER_AUTHORIZATION_FAILED,
        cluster(AclOperation.DESCRIBE_CONFIGS)));
    org.apache.kafka.common.quota.ClientQuotaEntity quotaEntity = new org.apache.kafka.common.quota.ClientQuotaEntity(
        Map.of("client-id", "quota-client"));
    t.add(row(ApiKeys.ALTER_CLIENT_QUOTAS, "alter client quotas", 1, () -> new AlterClientQuotasRequest.Builder(List.of(
        new org.apache.kafka.common.quota.ClientQuotaAlteration(quotaEntity, List.of(
            new org.apache.kafka.common.quota.ClientQuotaAlteration.Op("producer_byte_rate", 1000.0)))), false),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.ALTER_CONFIGS))
        .withState(() -> metadata.quotaStore().quotas().containsKey(quotaEntity)));
    String shareMember = Uuid.randomUuid().toString();
    t.add(row(ApiKeys.SHARE_GROUP_HEARTBEAT, "share group heartbeat", 1, () -> new ShareGroupHeartbeatRequest.Builder(
        new ShareGroupHeartbeatRequestData().setGroupId("sh").setMemberId(shareMember).setMemberEpoch(0)
            .setSubscribedTopicNames(List.of(TOPIC))), Errors.GROUP_AUTHORIZATION_FAILED, group("sh", AclOperation.READ),
        topic(TOPIC, AclOperation.DESCRIBE)).pastAuthorization());
    t.add(row(ApiKeys.SHARE_GROUP_DESCRIBE, "share group describe", 1, () -> new ShareGroupDescribeRequest.Builder(
        new ShareGroupDescribeRequestData().setGroupIds(List.of("sh"))), Errors.GROUP_AUTHORIZATION_FAILED,
        group("sh", AclOperation.DESCRIBE)).pastAuthorization());
    t.add(row(ApiKeys.SHARE_FETCH, "share fetch", 1, () -> {
      var topics = new ShareFetchRequestData.FetchTopicCollection();
      var parts = new ShareFetchRequestData.FetchPartitionCollection();
      parts.add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(0));
      topics.add(new ShareFetchRequestData.FetchTopic().setTopicId(topicId(TOPIC)).setPartitions(parts));
      return new ShareFetchRequest.Builder(new ShareFetchRequestData().setGroupId("sh").setMemberId(shareMember)
          .setShareSessionEpoch(0).setMaxWaitMs(10).setMinBytes(1).setMaxBytes(1 << 16).setMaxRecords(10).setBatchSize(10)
          .setTopics(topics));
    }, Errors.GROUP_AUTHORIZATION_FAILED, group("sh", AclOperation.READ), topic(TOPIC, AclOperation.READ)).pastAuthorization());
    t.add(row(ApiKeys.SHARE_ACKNOWLEDGE, "share acknowledge", 1, () -> {
      var topics = new ShareAcknowledgeRequestData.AcknowledgeTopicCollection();
      topics.add(new ShareAcknowledgeRequestData.AcknowledgeTopic().setTopicId(topicId(TOPIC)));
      return new ShareAcknowledgeRequest.Builder(new ShareAcknowledgeRequestData().setGroupId("sh").setMemberId(shareMember)
          .setShareSessionEpoch(1).setTopics(topics));
    }, Errors.GROUP_AUTHORIZATION_FAILED, group("sh", AclOperation.READ), topic(TOPIC, AclOperation.READ)).pastAuthorization());
    t.add(row(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, "describe share group offsets", 0,
        () -> new DescribeShareGroupOffsetsRequest.Builder(new DescribeShareGroupOffsetsRequestData().setGroups(List.of(
            new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup().setGroupId("sh")
                .setTopics(null)))), Errors.GROUP_AUTHORIZATION_FAILED, group("sh", AclOperation.DESCRIBE))
        .pastAuthorization());
    t.add(row(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, "alter share group offsets", 0, () -> {
      var topics = new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopicCollection();
      topics.add(new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic().setTopicName(TOPIC).setPartitions(
          List.of(new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition().setPartitionIndex(0)
              .setStartOffset(0))));
      return new AlterShareGroupOffsetsRequest.Builder(new AlterShareGroupOffsetsRequestData().setGroupId("sh")
          .setTopics(topics));
    }, Errors.GROUP_AUTHORIZATION_FAILED, group("sh", AclOperation.READ), topic(TOPIC, AclOperation.READ)).pastAuthorization());
    t.add(row(ApiKeys.DELETE_SHARE_GROUP_OFFSETS, "delete share group offsets", 0,
        () -> new DeleteShareGroupOffsetsRequest.Builder(new DeleteShareGroupOffsetsRequestData().setGroupId("sh")
            .setTopics(List.of(new DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic()
                .setTopicName(TOPIC)))), Errors.GROUP_AUTHORIZATION_FAILED, group("sh", AclOperation.DELETE),
        topic(TOPIC, AclOperation.READ)).pastAuthorization());
    // the share-state APIs brokers send each other: CLUSTER_ACTION
    org.apache.kafka.common.Uuid stateTopicId = org.apache.kafka.common.Uuid.randomUuid();
    t.add(row(ApiKeys.INITIALIZE_SHARE_GROUP_STATE, "initialize share group state", 0, () -> new org.apache.kafka.common.requests
        .InitializeShareGroupStateRequest.Builder(new org.apache.kafka.common.message.InitializeShareGroupStateRequestData().setGroupId("sh")
            .setTopics(List.of(new org.apache.kafka.common.message.InitializeShareGroupStateRequestData.InitializeStateData()
                .setTopicId(stateTopicId).setPartitions(List.of(new org.apache.kafka.common.message.InitializeShareGroupStateRequestData
                    .PartitionData().setPartition(0).setStateEpoch(1).setStartOffset(0)))))),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.CLUSTER_ACTION)).pastAuthorization());
    t.add(row(ApiKeys.READ_SHARE_GROUP_STATE, "read share group state", 0, () -> new org.apache.kafka.common.requests
        .ReadShareGroupStateRequest.Builder(new org.apache.kafka.common.message.ReadShareGroupStateRequestData().setGroupId("sh")
            .setTopics(List.of(new org.apache.kafka.common.message.ReadShareGroupStateRequestData.ReadStateData()
                .setTopicId(stateTopicId).setPartitions(List.of(new org.apache.kafka.common.message.ReadShareGroupStateRequestData
                    .PartitionData().setPartition(0).setLeaderEpoch(0)))))),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.CLUSTER_ACTION)).pastAuthorization());
    t.add(row(ApiKeys.WRITE_SHARE_GROUP_STATE, "write share group state", 1, () -> new org.apache.kafka.common.requests
        .WriteShareGroupStateRequest.Builder(new org.apache.kafka.common.message.WriteShareGroupStateRequestData().setGroupId("sh")
            .setTopics(List.of(new org.apache.kafka.common.message.WriteShareGroupStateRequestData.WriteStateData()
                .setTopicId(stateTopicId).setPartitions(List.of(new org.apache.kafka.common.message.WriteShareGroupStateRequestData
                    .PartitionData().setPartition(0).setStateEpoch(1).setLeaderEpoch(0).setStartOffset(0)))))),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.CLUSTER_ACTION)).pastAuthorization());
    t.add(row(ApiKeys.DELETE_SHARE_GROUP_STATE, "delete share group state", 0, () -> new org.apache.kafka.common.requests
        .DeleteShareGroupStateRequest.Builder(new org.apache.kafka.common.message.DeleteShareGroupStateRequestData().setGroupId("sh")
            .setTopics(List.of(new org.apache.kafka.common.message.DeleteShareGroupStateRequestData.DeleteStateData()
                .setTopicId(stateTopicId).setPartitions(List.of(new org.apache.kafka.common.message.DeleteShareGroupStateRequestData
                    .PartitionData().setPartition(0)))))),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.CLUSTER_ACTION)).pastAuthorization());
    t.add(row(ApiKeys.READ_SHARE_GROUP_STATE_SUMMARY, "read share group state summary", 1, () -> new org.apache.kafka.common.requests
        .ReadShareGroupStateSummaryRequest.Builder(new org.apache.kafka.common.message.ReadShareGroupStateSummaryRequestData()
            .setGroupId("sh").setTopics(List.of(new org.apache.kafka.common.message.ReadShareGroupStateSummaryRequestData
                .ReadStateSummaryData().setTopicId(stateTopicId).setPartitions(List.of(new org.apache.kafka.common.message
                    .ReadShareGroupStateSummaryRequestData.PartitionData().setPartition(0).setLeaderEpoch(-1)))))),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.CLUSTER_ACTION)).pastAuthorization());
    // transactions (the producer id and epoch are made up: with the ACLs the coordinator answers, never an authorization error)
    AclBinding txnWrite = allow(ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE);
    t.add(row(ApiKeys.ADD_PARTITIONS_TO_TXN, "add partitions", 3, () -> org.apache.kafka.common.requests.AddPartitionsToTxnRequest
        .Builder.forClient("tx", 1, (short) 0, List.of(tp)), Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, txnWrite,
        topic(TOPIC, AclOperation.WRITE)).pastAuthorization());
    t.add(row(ApiKeys.ADD_PARTITIONS_TO_TXN, "add partitions of a topic without WRITE", 3,
        () -> org.apache.kafka.common.requests.AddPartitionsToTxnRequest.Builder.forClient("tx", 1, (short) 0, List.of(tp)),
        Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.WRITE)).withBase(txnWrite).pastAuthorization());
    t.add(row(ApiKeys.ADD_OFFSETS_TO_TXN, "add offsets", 3, () -> new org.apache.kafka.common.requests.AddOffsetsToTxnRequest
        .Builder(new org.apache.kafka.common.message.AddOffsetsToTxnRequestData().setTransactionalId("tx").setProducerId(1)
            .setProducerEpoch((short) 0).setGroupId("og")), Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, txnWrite,
        group("og", AclOperation.READ)).pastAuthorization());
    t.add(row(ApiKeys.ADD_OFFSETS_TO_TXN, "add offsets of a group without READ", 3,
        () -> new org.apache.kafka.common.requests.AddOffsetsToTxnRequest.Builder(
            new org.apache.kafka.common.message.AddOffsetsToTxnRequestData().setTransactionalId("tx").setProducerId(1)
                .setProducerEpoch((short) 0).setGroupId("og")), Errors.GROUP_AUTHORIZATION_FAILED,
        group("og", AclOperation.READ)).withBase(txnWrite).pastAuthorization());
    t.add(row(ApiKeys.END_TXN, "end transaction", 3, () -> new org.apache.kafka.common.requests.EndTxnRequest.Builder(
        new org.apache.kafka.common.message.EndTxnRequestData().setTransactionalId("tx").setProducerId(1)
            .setProducerEpoch((short) 0).setCommitted(true), false), Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, txnWrite)
        .pastAuthorization());
    t.add(row(ApiKeys.TXN_OFFSET_COMMIT, "transactional offset commit", 3,
        () -> org.apache.kafka.common.requests.TxnOffsetCommitRequest.Builder.forTopicNames(
            new org.apache.kafka.common.message.TxnOffsetCommitRequestData().setTransactionalId("tx").setGroupId("og")
                .setProducerId(1).setProducerEpoch((short) 0).setGenerationIdOrMemberEpoch(-1).setMemberId("")
                .setTopics(List.of(new org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic()
                    .setName(TOPIC).setPartitions(List.of(
                        new org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                            .setPartitionIndex(0).setCommittedOffset(1))))), false),
        Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, txnWrite, group("og", AclOperation.READ), topic(TOPIC, AclOperation.READ))
        .pastAuthorization());
    t.add(row(ApiKeys.TXN_OFFSET_COMMIT, "transactional offset commit of a topic without READ", 3,
        () -> org.apache.kafka.common.requests.TxnOffsetCommitRequest.Builder.forTopicNames(
            new org.apache.kafka.common.message.TxnOffsetCommitRequestData().setTransactionalId("tx").setGroupId("og")
                .setProducerId(1).setProducerEpoch((short) 0).setGenerationIdOrMemberEpoch(-1).setMemberId("")
                .setTopics(List.of(new org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic()
                    .setName(TOPIC).setPartitions(List.of(
                        new org.apache.kafka.common.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                            .setPartitionIndex(0).setCommittedOffset(1))))), false),
        Errors.TOPIC_AUTHORIZATION_FAILED, topic(TOPIC, AclOperation.READ)).withBase(txnWrite, group("og", AclOperation.READ))
        .pastAuthorization());
    t.add(row(ApiKeys.WRITE_TXN_MARKERS, "transaction markers", 1, () -> new org.apache.kafka.common.requests
        .WriteTxnMarkersRequest.Builder(new org.apache.kafka.common.message.WriteTxnMarkersRequestData().setMarkers(List.of(
            new org.apache.kafka.common.message.WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(1)
                .setProducerEpoch((short) 0).setTransactionResult(true).setCoordinatorEpoch(0).setTopics(List.of(
                    new org.apache.kafka.common.message.WriteTxnMarkersRequestData.WritableTxnMarkerTopic()
                        .setName("no-such-topic").setPartitionIndexes(List.of(0))))))),
        Errors.CLUSTER_AUTHORIZATION_FAILED, cluster(AclOperation.CLUSTER_ACTION)).pastAuthorization());
    t.add(row(ApiKeys.DESCRIBE_TRANSACTIONS, "describe transactions", 0, () -> new org.apache.kafka.common.requests
        .DescribeTransactionsRequest.Builder(new org.apache.kafka.common.message.DescribeTransactionsRequestData()
            .setTransactionalIds(List.of("tx"))), Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        allow(ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.DESCRIBE)).pastAuthorization());
    t.add(row(ApiKeys.LIST_TRANSACTIONS, "list transactions shows only describable ids", 0, () -> new org.apache.kafka.common
        .requests.ListTransactionsRequest.Builder(new org.apache.kafka.common.message.ListTransactionsRequestData()),
        Errors.NONE, allow(ResourceType.TRANSACTIONAL_ID, "tx-listed", AclOperation.DESCRIBE))
        .withSetup(AuthorizationTest::initTransactionalId)
        .deniedWhen(r -> ((org.apache.kafka.common.requests.ListTransactionsResponse) r).data().transactionStates().stream()
            .anyMatch(x -> x.transactionalId().equals("tx-listed")) == false));
    return t;
  }

  /** Gives the transactional id "tx-listed" a producer id (as a super user), so ListTransactions has it to list. */
  private static void initTransactionalId() {
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(() -> {
      org.apache.kafka.common.requests.InitProducerIdResponse r = call(new InitProducerIdRequest.Builder(
          new InitProducerIdRequestData().setTransactionalId("tx-listed").setTransactionTimeoutMs(60_000).setProducerId(-1)
              .setProducerEpoch((short) -1)), ApiKeys.INIT_PRODUCER_ID, 5);
      return r.data().errorCode() == Errors.NONE.code() || r.data().errorCode() == Errors.CONCURRENT_TRANSACTIONS.code();
    });
  }

  private static Uuid topicId(String topic) {
    return broker.topics().stream().filter(x -> x.name().equals(topic)).findFirst().orElseThrow().id();
  }

  @Test
  void everyApiDeniesWithoutItsAclAndSucceedsWithIt() throws Exception {
    // Goal: each row is denied with Kafka's error and changes nothing without the ACL, and succeeds with it.
    List<String> failures = new ArrayList<>();
    for (Case c : cases()) {
      String label = c.api() + " (" + c.what() + ")";
      asSuper(c.setup());
      Object before = c.state() == null ? null : asSuper(c.state());
      setAcls(c.base());
      AbstractResponse denied = send(c);
      boolean deniedOk = c.deniedCheck() != null ? c.deniedCheck().test(denied)
          : denied.errorCounts().containsKey(c.denied());
      if (!deniedOk) {
        failures.add(label + ": without the ACL expected " + c.denied() + ", got " + denied.errorCounts());
      }
      if (c.state() != null && !Objects.equals(before, asSuper(c.state()))) {
        failures.add(label + ": a denied request changed the state from " + before + " to " + asSuper(c.state()));
      }
      List<AclBinding> granted = new ArrayList<>(c.base());
      granted.addAll(c.needed());
      setAcls(granted);
      AbstractResponse allowed = send(c);
      Set<Errors> unexpected = new TreeSet<>(allowed.errorCounts().keySet());
      if (c.ok() == null) {
        unexpected.removeIf(e -> !e.name().endsWith("_AUTHORIZATION_FAILED"));
      } else {
        unexpected.removeAll(c.ok());
      }
      if (!unexpected.isEmpty() || (c.deniedCheck() != null && c.deniedCheck().test(allowed))) {
        failures.add(label + ": with " + c.needed() + " expected success, got " + allowed.errorCounts());
      }
      if (c.state() != null && Objects.equals(before, asSuper(c.state()))) {
        failures.add(label + ": an allowed request did not change the state (" + before + ")");
      }
      setAcls(List.of());
    }
    assertThat(failures).isEmpty();
  }

  @Test
  void everyAdvertisedApiHasARuleAndARow() {
    // Goal: no advertised API escapes authorization, and the table covers every API that needs a permission.
    ApiRegistry apis = broker.apis();
    assertThat(broker.requestAuthorizer().missingRules(apis)).isEmpty();
    Set<ApiKeys> covered = new TreeSet<>();
    cases().forEach(c -> covered.add(c.api()));
    Set<ApiKeys> open = Set.of(ApiKeys.API_VERSIONS, ApiKeys.DESCRIBE_CLUSTER, ApiKeys.GET_TELEMETRY_SUBSCRIPTIONS,
        ApiKeys.PUSH_TELEMETRY, ApiKeys.SASL_HANDSHAKE, ApiKeys.SASL_AUTHENTICATE);
    List<ApiKeys> missing = apis.all().stream().map(ApiRegistry.Registration::key)
        .filter(k -> !open.contains(k) && !covered.contains(k)).toList();
    assertThat(missing).isEmpty();
  }

  // ---- helpers

  private static AbstractResponse send(Case c) throws Exception {
    int id = raw.send(c.request().get(), c.version());
    return raw.receive(c.api(), c.version(), id);
  }

  private static void setAcls(List<AclBinding> wanted) {
    List<AclBinding> current = acls.acls().all().stream()
        .filter(b -> b.entry().principal().equals(ME)).toList();
    if (!current.isEmpty()) {
      acls.delete(current).join();
    }
    if (!wanted.isEmpty()) {
      acls.create(wanted).join();
    }
  }

  private static void asSuper(Runnable r) {
    asSuper(() -> {
      r.run();
      return null;
    });
  }

  private static <T> T asSuper(Supplier<T> s) {
    setAcls(EVERYTHING);
    try {
      return s.get();
    } finally {
      setAcls(List.of());
    }
  }

  private static <T extends AbstractResponse> T call(AbstractRequest.Builder<?> b, ApiKeys key, int version) {
    try {
      int id = raw.send(b, (short) version);
      @SuppressWarnings("unchecked")
      T r = (T) raw.receive(key, (short) version, id);
      return r;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void createTopic(String name, int partitions) {
    var topics = new CreateTopicsRequestData.CreatableTopicCollection();
    topics.add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(partitions)
        .setReplicationFactor((short) 1));
    CreateTopicsResponse r = call(new CreateTopicsRequest.Builder(new CreateTopicsRequestData().setTopics(topics)
        .setTimeoutMs(10_000)), ApiKeys.CREATE_TOPICS, 7);
    assertThat(r.errorCounts()).containsOnlyKeys(Errors.NONE);
  }

  private static ProduceRequestData produceData(String topic) {
    ProduceRequestData d = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000);
    d.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
        new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withRecords(Compression.NONE,
            new SimpleRecord("k".getBytes(), "v".getBytes()))))));
    return d;
  }

  private static void produce(String topic, int partition, int count) {
    for (int i = 0; i < count; i++) {
      ProduceResponse r = call(ProduceRequest.builder(produceData(topic), true), ApiKeys.PRODUCE, 12);
      assertThat(r.errorCounts()).containsOnlyKeys(Errors.NONE);
    }
  }

  private static OffsetCommitRequestData commitData(String group, String topic, long offset) {
    return new OffsetCommitRequestData().setGroupId(group).setGenerationIdOrMemberEpoch(-1).setMemberId("")
        .setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(topic).setPartitions(List.of(
            new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(offset)))));
  }

  private static void commit(String group, String topic, long offset) {
    OffsetCommitResponse r = call(OffsetCommitRequest.Builder.forTopicNames(commitData(group, topic, offset)),
        ApiKeys.OFFSET_COMMIT, 8);
    assertThat(r.errorCounts()).containsOnlyKeys(Errors.NONE);
  }

  private static Object committed(String group) {
    OffsetFetchResponse r = call(OffsetFetchRequest.Builder.forTopicNames(new OffsetFetchRequestData().setGroups(List.of(
        new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(group).setTopics(null))), false),
        ApiKeys.OFFSET_FETCH, 9);
    return r.data().groups().get(0).topics().toString();
  }

  private static long endOffset(String topic, int partition) {
    return broker.partitionLog(new TopicPartition(topic, partition)).orElseThrow().highWatermark();
  }

  private static boolean exists(String topic) {
    return broker.topics().stream().anyMatch(t -> t.name().equals(topic));
  }

  private static int partitions(String topic) {
    return broker.topics().stream().filter(t -> t.name().equals(topic)).findFirst().orElseThrow().partitions().size();
  }

  private static Object configs(String topic) {
    return broker.topics().stream().filter(t -> t.name().equals(topic)).findFirst().orElseThrow().configs().toString();
  }

  private static JoinGroupRequestData joinData(String group, String memberId) {
    var protocols = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
    protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(new byte[0]));
    return new JoinGroupRequestData().setGroupId(group).setMemberId(memberId).setProtocolType("consumer")
        .setSessionTimeoutMs(30_000).setRebalanceTimeoutMs(30_000).setProtocols(protocols);
  }

  /** A classic group member joined (and synced) through the raw connection. */
  private static final class Member {
    volatile String id = "";
    volatile int generation = -1;

    void join(String group) {
      JoinGroupResponse r = call(new JoinGroupRequest.Builder(joinData(group, "")), ApiKeys.JOIN_GROUP, 3);
      assertThat(r.error()).isEqualTo(Errors.NONE);
      id = r.data().memberId();
      generation = r.data().generationId();
    }

    void joinAndSync(String group) {
      join(group);
      SyncGroupResponse r = call(new SyncGroupRequest.Builder(new SyncGroupRequestData().setGroupId(group)
          .setGenerationId(generation).setMemberId(id).setAssignments(List.of(new SyncGroupRequestData.SyncGroupRequestAssignment()
              .setMemberId(id).setAssignment(new byte[0])))), ApiKeys.SYNC_GROUP, 3);
      assertThat(r.error()).isEqualTo(Errors.NONE);
    }
  }
}
