package io.tidemark.broker;

import io.tidemark.broker.acl.AclApis;
import io.tidemark.broker.acl.Authorizer;
import io.tidemark.broker.acl.RequestAuthorizer;
import io.tidemark.broker.quota.ClientQuotaApis;
import io.tidemark.broker.quota.ClientQuotaManager;
import io.tidemark.broker.admin.ConfigApis;
import io.tidemark.broker.admin.DynamicBrokerConfigs;
import io.tidemark.broker.admin.TopicAdminApis;
import io.tidemark.broker.cluster.ClusterApis;
import io.tidemark.broker.cluster.ClusterMetadata;
import io.tidemark.broker.cluster.ClusterView;
import io.tidemark.broker.cluster.DescribeQuorumHandler;
import io.tidemark.broker.cluster.DescribeTopicPartitionsHandler;
import io.tidemark.broker.cluster.FindCoordinatorHandler;
import io.tidemark.broker.cluster.GroupCoordinators;
import io.tidemark.broker.cluster.InterBrokerClient;
import io.tidemark.broker.cluster.MetadataHandler;
import io.tidemark.broker.cluster.ReassignmentApis;
import io.tidemark.broker.fetch.FetchHandler;
import io.tidemark.broker.group.GroupApis;
import io.tidemark.broker.group.GroupCoordinator;
import io.tidemark.broker.logdir.DescribeLogDirsHandler;
import io.tidemark.broker.metrics.BrokerMeters;
import io.tidemark.broker.metrics.ConsumerLagMeters;
import io.tidemark.broker.metrics.RemoteEndOffsets;
import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.broker.network.KafkaServer;
import io.tidemark.broker.offset.DeleteRecordsHandler;
import io.tidemark.broker.offset.ListOffsetsHandler;
import io.tidemark.broker.offset.OffsetForLeaderEpochHandler;
import io.tidemark.broker.offset.PartitionLookup;
import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.partition.RetentionTask;
import io.tidemark.broker.produce.ProduceHandler;
import io.tidemark.broker.share.ShareApis;
import io.tidemark.broker.share.ShareCoordinator;
import io.tidemark.broker.share.ShareStateApis;
import io.tidemark.broker.share.ShareGroupConfigs;
import io.tidemark.broker.share.ShareGroupCoordinator;
import io.tidemark.broker.share.SharePartitionManager;
import io.tidemark.broker.telemetry.ClientMetricsSubscriptions;
import io.tidemark.broker.telemetry.ClientTelemetryApis;
import io.tidemark.broker.producer.InitProducerIdHandler;
import io.tidemark.broker.producer.ProducerIdAllocator;
import io.tidemark.broker.protocol.ApiRegistry;
import io.tidemark.broker.protocol.ApiVersionsHandler;
import io.tidemark.broker.protocol.FeatureLevels;
import io.tidemark.broker.protocol.RequestDecoder;
import io.tidemark.broker.protocol.RequestDispatcher;
import io.tidemark.broker.security.Listener;
import io.tidemark.broker.security.ListenerSecurity;
import io.tidemark.broker.security.PasswordCheck;
import io.tidemark.broker.security.ScramApis;
import io.tidemark.broker.security.ScramBootstrap;
import io.tidemark.broker.security.ScramCredentialStore;
import io.tidemark.broker.topic.FileTopicStore;
import io.tidemark.broker.topic.TopicConfigs;
import io.tidemark.broker.topic.TopicException;
import io.tidemark.broker.topic.TopicLifecycle;
import io.tidemark.broker.topic.TopicRegistry;
import io.tidemark.broker.topic.TopicStore;
import io.tidemark.broker.transaction.LocalMarkers;
import io.tidemark.broker.transaction.TransactionApis;
import io.tidemark.broker.transaction.TransactionCoordinator;
import io.tidemark.broker.transaction.WriteTxnMarkersHandler;
import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.config.Settings;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka-compatible broker on streams: wires the topic registry, the partitions, the API
 * handlers and the Netty listener. Topics and partition leaders come from {@link ClusterMetadata}:
 * alone, this broker leads every partition and coordinates every group, with topic metadata in
 * {@code topics.registry} under {@code kafka.data.dir} (or in memory when it is empty); in a
 * cluster, the controller's image says which partitions this broker leads, and it coordinates
 * the groups whose {@code __consumer_offsets} partition it leads.
 *
 * <p>States: NEW → STARTED ({@link #start()}: listens at once, reopens every partition led here with
 * a bumped leader epoch, loads the groups, then follows the cluster's changes) → CLOSED ({@link #close()}: stops
 * listening, closes partitions, writing their snapshots). Not restartable. {@code start} and
 * {@code close} are called by one thread.
 */
public final class KafkaBroker implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KafkaBroker.class);
  /** How long the lag meters wait for another broker's end offsets before leaving its partitions out. */
  private static final int LAG_END_OFFSETS_TIMEOUT_MS = 5_000;

  private enum State { NEW, STARTED, CLOSED }

  private final BrokerConfig config;
  private final StreamStore store;
  private final boolean ownsStore;
  private final Time time;
  private final TopicRegistry registry;
  private final Partitions partitions = new Partitions();
  private final TopicLifecycle lifecycle;
  private final DynamicBrokerConfigs dynamicConfigs;
  private final io.tidemark.broker.network.NetworkThreads networkThreads;
  private final ClientMetricsSubscriptions clientMetrics;
  private final ClusterView cluster;
  private final FetchHandler fetch;
  private final ProduceHandler produce;
  private final ApiRegistry apis = new ApiRegistry();
  private final GroupApis groups;
  private final TransactionApis transactions;
  private final ShareGroupCoordinator shareGroups;
  private final SharePartitionManager sharePartitions;
  private final ShareCoordinator shareCoordinator;
  private final InterBrokerClient interBroker;
  private final RetentionTask retention;
  /** The log cleaner of compacted topics; absent when the stream store keeps no data in object storage (memory store). */
  private final java.util.Optional<io.tidemark.broker.cleaner.LogCleaner> cleaner;
  private final KafkaServer server;
  private final BrokerMeters meters;
  private final ConsumerLagMeters lagMeters;
  /** Asks other brokers for the end offsets of the partitions they lead, for the lag meters only. */
  private final InterBrokerClient lagNetwork;
  private final Authorizer authorizer;
  private final ScramCredentialStore scram;
  private final PasswordCheck passwords;
  private final List<ListenerSecurity> listeners;
  /** The OAUTHBEARER key set and validator (sasl.oauthbearer.jwks.endpoint.url), when configured. */
  private final Optional<io.tidemark.broker.security.OAuthBearerConfig.BearerTokens> bearerTokens;
  private static final long JWKS_INITIAL_LOAD_WAIT_MS = 10_000;
  private State state = State.NEW;
  private volatile int port = -1;
  /** Set once the groups are loaded at start; group APIs answer COORDINATOR_LOAD_IN_PROGRESS before. */
  private volatile boolean groupsLoaded;
  /** Set once the transactional ids are loaded at start. */
  private volatile boolean transactionsLoaded;

  /** A broker alone on the given stream store (the engine), which the caller keeps owning. */
  public KafkaBroker(BrokerConfig config, StreamStore store, Time time) {
    this(config, store, false, time, localMetadata(config), null);
  }

  /** A broker alone, recording its Kafka-level meters (docs/metrics.md) into {@code meters}. */
  public KafkaBroker(BrokerConfig config, StreamStore store, Time time, MeterRegistry meters) {
    this(config, store, false, time, localMetadata(config), meters);
  }

  /** A broker of the cluster described by {@code metadata}, on the given stream store, which the caller keeps owning. */
  public KafkaBroker(BrokerConfig config, StreamStore store, Time time, ClusterMetadata metadata) {
    this(config, store, false, time, metadata, null);
  }

  /** A broker of a cluster, recording its Kafka-level meters into {@code meters}. */
  public KafkaBroker(BrokerConfig config, StreamStore store, Time time, ClusterMetadata metadata, MeterRegistry meters) {
    this(config, store, false, time, metadata, meters);
  }

  private static ClusterMetadata localMetadata(BrokerConfig config) {
    TopicStore topicStore = config.dataDir.isEmpty() ? TopicStore.memory() : new FileTopicStore(Path.of(config.dataDir));
    return ClusterMetadata.local(topicStore, config.clusterId);
  }

  private KafkaBroker(BrokerConfig config, StreamStore store, boolean ownsStore, Time time, ClusterMetadata metadata,
      MeterRegistry meterRegistry) {
    this.config = config;
    this.meters = meterRegistry == null ? BrokerMeters.noop() : new BrokerMeters(meterRegistry, config.metricsTopicsMax);
    this.store = store;
    this.ownsStore = ownsStore;
    this.time = time;
    this.registry = new TopicRegistry(metadata);
    this.cluster = new ClusterView(registry::clusterId, config.nodeId, config.advertisedHost, metadata);
    SecureRandom random = new SecureRandom();
    this.produce = new ProduceHandler(registry, partitions, meters);
    produce.openingWait(config.produceOpeningWaitMs);
    partitions.trackOpening(config.produceOpeningWaitMs > 0);
    this.fetch = new FetchHandler(registry, partitions, config.fetchSessionCacheSlots, config.maxDelayedFetches,
        config.fetchMaxWaitMs, () -> random.nextInt(Integer.MAX_VALUE), meters);
    meters.purgatory("produce", produce::waiting);
    meters.purgatory("fetch", fetch::delayedFetches);
    this.lifecycle = new TopicLifecycle(registry, new TopicConfigs(config.maxMessageBytes), store, partitions, time,
        fetch.appendListener(), config.maxPartitionsPerTopic, 10_000, config.nodeId, cluster::liveBrokerIds);
    metadata.onChange(lifecycle::reconcile);
    this.dynamicConfigs = new DynamicBrokerConfigs(metadata.resourceConfigs(), lifecycle.configs(), config.nodeId);
    dynamicConfigs.onApplied(lifecycle::reconcile); // open partitions take the new defaults
    this.clientMetrics = new ClientMetricsSubscriptions(metadata.resourceConfigs());
    this.groups = new GroupApis(partitions, registry, config.offsetsTopicPartitions, time, new GroupCoordinator.Settings(
        config.groupInitialRebalanceDelayMs, config.groupMinSessionTimeoutMs, config.groupMaxSessionTimeoutMs,
        config.groupMaxSize, config.maxGroups, config.groupConsumerSessionTimeoutMs, config.groupConsumerHeartbeatIntervalMs));
    ProducerIdAllocator producerIds = new ProducerIdAllocator(registry);
    LocalMarkers markers = new LocalMarkers(partitions::get, GroupApis.offsetsTopic(), groups::completeTransaction);
    this.transactions = new TransactionApis(registry, partitions, config.nodeId, config.transactionStateLogPartitions, time,
        new TransactionCoordinator.Settings(config.transactionMaxTimeoutMs, config.transactionAbortCheckIntervalMs,
            config.transactionMaxIds), producerIds::nextProducerId, markers,
        new InterBrokerClient("txn", id -> cluster.broker(id, config.security.interBrokerListenerName()),
            config.security::internalClientConfigs, 30_000, time), GroupApis.offsetsTopic(),
        group -> GroupApis.offsetsPartitionFor(group, config.offsetsTopicPartitions));
    produce.verifyTransactionsWith(transactions::addOrVerifyOnce);
    ShareGroupConfigs shareConfigs = new ShareGroupConfigs(new ShareGroupConfigs.BrokerDefaults(config.shareRecordLockDurationMs,
        config.shareMinRecordLockDurationMs, config.shareMaxRecordLockDurationMs, config.shareDeliveryCountLimit,
        config.sharePartitionMaxRecordLocks, config.shareSessionTimeoutMs, config.shareHeartbeatIntervalMs));
    this.shareGroups = new ShareGroupCoordinator(partitions, registry, GroupApis.offsetsTopic(),
        g -> GroupApis.offsetsPartitionFor(g, config.offsetsTopicPartitions), shareConfigs, time, config.shareMaxSize, groups::exists);
    this.shareCoordinator = new ShareCoordinator(partitions, registry, config.shareStateTopicPartitions, time);
    this.interBroker = new InterBrokerClient("share", id -> cluster.broker(id, config.security.interBrokerListenerName()),
        config.security::internalClientConfigs, 30_000, time);
    shareGroups.remoteConfigs(config.nodeId, interBroker);
    this.sharePartitions = new SharePartitionManager(partitions, registry, shareCoordinator, config.nodeId, interBroker, 20_000,
        shareConfigs, shareGroups::configs, shareGroups::freshConfigs, time, config.shareMaxSessions, 2L * config.shareSessionTimeoutMs);
    shareGroups.partitionSide(sharePartitions);
    registerApis(producerIds, markers);
    metadata.quorum().ifPresent(q -> apis.register(ApiKeys.DESCRIBE_QUORUM, 0, 2, new DescribeQuorumHandler(q)));
    this.retention = new RetentionTask(partitions, tp -> registry.topic(tp.topic()).filter(t -> !t.internal())
        .filter(t -> TopicConfigs.deletes(lifecycle.configs().effective(t.configs(), TopicConfigs.CLEANUP_POLICY)))
        .map(t -> new RetentionTask.Limits(
        Long.parseLong(lifecycle.configs().effective(t.configs(), TopicConfigs.RETENTION_MS).trim()),
        Long.parseLong(lifecycle.configs().effective(t.configs(), TopicConfigs.RETENTION_BYTES).trim()))).orElse(null), time);
    this.cleaner = store.rewriter().map(rewriter -> new io.tidemark.broker.cleaner.LogCleaner(partitions,
        tp -> registry.topic(tp.topic()).map(t -> lifecycle.configs().cleanerPolicy(t.configs())).orElse(null), rewriter, time,
        new io.tidemark.broker.cleaner.LogCleaner.Limits(config.logCleanerDedupeBufferBytes, config.logCleanerMaxRewriteBytes,
            config.logCleanerMaxBytesPerRun), config.logCleanerThreads));
    cleaner.ifPresent(c -> dynamicConfigs.register(c.dynamicConfig())); // log.cleaner.threads
    this.scram = metadata.scramCredentials().orElseGet(ScramCredentialStore::memory);
    ScramApis scramApis = new ScramApis(scram);
    apis.register(ApiKeys.SASL_HANDSHAKE, 0, 1, ScramApis::handshakeOutOfTurn)
        .register(ApiKeys.SASL_AUTHENTICATE, 0, 2, ScramApis::authenticateOutOfTurn)
        .register(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0, scramApis::describe)
        .register(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, 0, 0, scramApis::alter);
    RequestDispatcher dispatcher = new RequestDispatcher(apis, meters);
    dispatcher.onConnectionClosed(sharePartitions::connectionClosed);
    this.lagNetwork = new InterBrokerClient("lag", id -> cluster.broker(id, config.security.interBrokerListenerName()),
        config.security::internalClientConfigs, LAG_END_OFFSETS_TIMEOUT_MS, time);
    this.lagMeters = new ConsumerLagMeters(meters.registry(), groups::committedOffsets, this::logEndOffset,
        new RemoteEndOffsets(config.nodeId, tp -> leaderOf(tp.topic(), tp.partition()), lagNetwork, LAG_END_OFFSETS_TIMEOUT_MS),
        t -> registry.topic(t).isPresent(), () -> meters.retainTopics(t -> registry.topic(t).isPresent()),
        config.metricsLagMaxGroups, config.metricsLagMaxPartitions);
    metadata.onChange(lagMeters::topicsChanged); // deleted topics' series go at once
    this.authorizer = new Authorizer(config.authorization, () -> metadata.aclStore().acls());
    registerSecurityApis(metadata, dispatcher); // last: the authorization rules cover every API registered before
    this.bearerTokens = new io.tidemark.broker.security.OAuthBearerConfig(config.security.settings())
        .open(time::milliseconds, JWKS_INITIAL_LOAD_WAIT_MS);
    Optional<io.tidemark.broker.security.JwtValidator> tokenValidator =
        bearerTokens.map(io.tidemark.broker.security.OAuthBearerConfig.BearerTokens::validator);
    this.listeners = config.security.listeners().stream()
        .map(l -> new ListenerSecurity(l, config.security, scram, tokenValidator, time::milliseconds, System::nanoTime))
        .toList();
    Map<String, String> plainUsers = new java.util.LinkedHashMap<>();
    listeners.forEach(l -> l.plainUsers().forEach(plainUsers::putIfAbsent));
    this.passwords = new PasswordCheck(plainUsers, scram);
    this.server = new KafkaServer(listeners, config.maxRequestBytes, config.maxInflightRequests,
        new RequestDecoder(apis), dispatcher, new io.tidemark.broker.network.ConnectionLimits(config.security.settings(),
            config.security.listeners().stream().map(io.tidemark.broker.security.Listener::name).toList(),
            config.quotas.windowNum, config.quotas.windowMs, time::milliseconds, () -> metadata.quotaStore().quotas()));
    this.networkThreads = new io.tidemark.broker.network.NetworkThreads(config.networkThreads, config.nodeId);
    server.networkThreads(networkThreads);
    meters.registry().gauge("tidemark.kafka.network.threads", networkThreads, t -> t.active());
    dynamicConfigs.register(networkThreads.dynamicConfig()); // num.network.threads
    dynamicConfigs.register(new io.tidemark.broker.security.DynamicListenerStores(listeners)); // listener.name.<l>.ssl.*store*
  }

  /** A broker keeping its partitions in memory ({@code kafka.storage=memory}); for tests and demos. */
  public static KafkaBroker inMemory(Settings settings) {
    BrokerConfig config = new BrokerConfig(settings);
    return new KafkaBroker(config, new MemoryStreamStore(config.memoryStorageMaxBytes), true, Time.SYSTEM,
        localMetadata(config), null);
  }

  private void registerApis(ProducerIdAllocator producerIds, LocalMarkers markers) {
    GroupCoordinators coordinators = new GroupCoordinators(registry, partitions, config.nodeId, config.offsetsTopicPartitions,
        p -> !groupsLoaded || groups.loading(p));
    PartitionLookup lookup = new PartitionLookup(registry, partitions);
    // requests for a partition opening here wait for the open (Metadata already names this broker its leader)
    io.tidemark.broker.partition.OpeningGate opening = new io.tidemark.broker.partition.OpeningGate(partitions,
        id -> registry.topic(id).map(io.tidemark.broker.topic.TopicInfo::name).orElse(null), config.produceOpeningWaitMs);
    apis.register(ApiKeys.API_VERSIONS, 0, 4, new ApiVersionsHandler(apis))
        .register(ApiKeys.METADATA, 0, 13, new MetadataHandler(cluster, registry, lifecycle, partitions, config.autoCreateTopics,
            config.defaultPartitions))
        .register(ApiKeys.PRODUCE, 0, 3, 13, produce)
        .register(ApiKeys.FETCH, 4, 18, opening.gate(fetch))
        .register(ApiKeys.LIST_OFFSETS, 1, 11, opening.gate(new ListOffsetsHandler(lookup)))
        .register(ApiKeys.OFFSET_FOR_LEADER_EPOCH, 2, 4, opening.gate(new OffsetForLeaderEpochHandler(lookup)))
        .register(ApiKeys.DELETE_RECORDS, 0, 2, opening.gate(new DeleteRecordsHandler(lookup)))
        .register(ApiKeys.INIT_PRODUCER_ID, 0, 5, new InitProducerIdHandler(producerIds, transactionGate(transactions::initProducerId)))
        .register(ApiKeys.FIND_COORDINATOR, 0, 6, new FindCoordinatorHandler(cluster, coordinators, transactions::coordinatorOf,
            shareCoordinator::coordinatorOf));
    apis.register(ApiKeys.ADD_PARTITIONS_TO_TXN, 0, 5, transactionGate(transactions::addPartitionsToTxn))
        .register(ApiKeys.ADD_OFFSETS_TO_TXN, 0, 4, transactionGate(transactions::addOffsetsToTxn))
        .register(ApiKeys.END_TXN, 0, 5, transactionGate(transactions::endTxn))
        .register(ApiKeys.TXN_OFFSET_COMMIT, 0, 5, coordinators.gate(transactions.txnOffsetCommitInTransaction(groups::txnOffsetCommit)))
        .register(ApiKeys.WRITE_TXN_MARKERS, 1, 1, opening.gate(new WriteTxnMarkersHandler(registry, markers)))
        .register(ApiKeys.DESCRIBE_TRANSACTIONS, 0, 0, transactionGate(transactions::describeTransactions))
        .register(ApiKeys.LIST_TRANSACTIONS, 0, 2, transactionGate(transactions::listTransactions));
    TopicAdminApis topicAdmin = new TopicAdminApis(lifecycle, config.nodeId, config.defaultPartitions);
    apis.register(ApiKeys.CREATE_TOPICS, 2, 7, topicAdmin::createTopics)
        .register(ApiKeys.DELETE_TOPICS, 1, 6, topicAdmin::deleteTopics)
        .register(ApiKeys.CREATE_PARTITIONS, 0, 3, topicAdmin::createPartitions);
    ConfigApis configApis = new ConfigApis(lifecycle, config.nodeId, config.effectiveValues, config.explicitKeys,
        cluster::liveBrokerIds, dynamicConfigs).groupConfigs(shareGroups).clientMetrics(clientMetrics);
    apis.register(ApiKeys.DESCRIBE_CONFIGS, 1, 4, configApis::describeConfigs)
        .register(ApiKeys.ALTER_CONFIGS, 0, 2, configApis::alterConfigs)
        .register(ApiKeys.INCREMENTAL_ALTER_CONFIGS, 0, 1, configApis::incrementalAlterConfigs)
        .register(ApiKeys.LIST_CONFIG_RESOURCES, 0, 1, configApis::listConfigResources);
    ClusterApis clusterApis = new ClusterApis(cluster, registry, lookup);
    ReassignmentApis moves = new ReassignmentApis(registry, lifecycle);
    apis.register(ApiKeys.DESCRIBE_CLUSTER, 0, 2, clusterApis::describeCluster)
        .register(ApiKeys.ELECT_LEADERS, 0, 2, moves::electLeaders)
        .register(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, 0, 1, moves::alterPartitionReassignments)
        .register(ApiKeys.LIST_PARTITION_REASSIGNMENTS, 0, 0, moves::listPartitionReassignments)
        .register(ApiKeys.DESCRIBE_PRODUCERS, 0, 0, opening.gate(clusterApis::describeProducers))
        .register(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, 0, 0, new DescribeTopicPartitionsHandler(cluster, registry, partitions))
        .register(ApiKeys.DESCRIBE_LOG_DIRS, 1, 5, new DescribeLogDirsHandler(partitions, config.dataDir))
        .register(ApiKeys.UPDATE_FEATURES, 0, 2, FeatureLevels::updateFeatures);
    ClientTelemetryApis telemetry = new ClientTelemetryApis(Uuid::randomUuid, clientMetrics);
    apis.register(ApiKeys.GET_TELEMETRY_SUBSCRIPTIONS, 0, 0, telemetry::getTelemetrySubscriptions)
        .register(ApiKeys.PUSH_TELEMETRY, 0, 0, telemetry::pushTelemetry);
    ShareApis share = new ShareApis(shareGroups, sharePartitions, registry);
    apis.register(ApiKeys.JOIN_GROUP, 0, 9, coordinators.gate(share.joinGroup(groups::joinGroup)))
        .register(ApiKeys.SYNC_GROUP, 0, 5, coordinators.gate(groups::syncGroup))
        .register(ApiKeys.HEARTBEAT, 0, 4, coordinators.gate(groups::heartbeat))
        .register(ApiKeys.LEAVE_GROUP, 0, 5, coordinators.gate(groups::leaveGroup))
        .register(ApiKeys.OFFSET_COMMIT, 2, 9, coordinators.gate(share.offsetCommit(groups::offsetCommit)))
        .register(ApiKeys.OFFSET_FETCH, 1, 9, coordinators.gate(groups::offsetFetch))
        .register(ApiKeys.DESCRIBE_GROUPS, 0, 6, coordinators.gate(share.describeGroups(groups::describeGroups)))
        .register(ApiKeys.LIST_GROUPS, 0, 5, share.listGroups(groups::listGroups))
        .register(ApiKeys.DELETE_GROUPS, 0, 2, coordinators.gate(share.deleteGroups(groups::deleteGroups)))
        .register(ApiKeys.OFFSET_DELETE, 0, 0, coordinators.gate(groups::offsetDelete))
        .register(ApiKeys.CONSUMER_GROUP_HEARTBEAT, 0, 1, coordinators.gate(share.consumerGroupHeartbeat(groups::consumerGroupHeartbeat)))
        .register(ApiKeys.CONSUMER_GROUP_DESCRIBE, 0, 1, coordinators.gate(groups::consumerGroupDescribe));
    if (!config.shareEnable) {
      return;
    }
    apis.register(ApiKeys.SHARE_GROUP_HEARTBEAT, 1, 1, coordinators.gate(share::heartbeat))
        .register(ApiKeys.SHARE_GROUP_DESCRIBE, 1, 1, coordinators.gate(share::describe))
        .register(ApiKeys.SHARE_FETCH, 1, 2, share::fetch)
        .register(ApiKeys.SHARE_ACKNOWLEDGE, 1, 2, share::acknowledge)
        .register(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, 0, 1, coordinators.gate(share::describeOffsets))
        .register(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, 0, 0, coordinators.gate(share::alterOffsets))
        .register(ApiKeys.DELETE_SHARE_GROUP_OFFSETS, 0, 0, coordinators.gate(share::deleteOffsets));
    ShareStateApis state = new ShareStateApis(shareCoordinator);
    apis.register(ApiKeys.INITIALIZE_SHARE_GROUP_STATE, 0, 0, state::initialize)
        .register(ApiKeys.READ_SHARE_GROUP_STATE, 0, 0, state::read)
        .register(ApiKeys.WRITE_SHARE_GROUP_STATE, 0, 1, state::write)
        .register(ApiKeys.DELETE_SHARE_GROUP_STATE, 0, 0, state::delete)
        .register(ApiKeys.READ_SHARE_GROUP_STATE_SUMMARY, 0, 1, state::summary);
  }

  /** {@code api}, answered COORDINATOR_LOAD_IN_PROGRESS until the transactional ids are loaded at start. */
  private io.tidemark.broker.protocol.ApiHandler transactionGate(io.tidemark.broker.protocol.ApiHandler api) {
    return (context, request) -> transactionsLoaded ? api.handle(context, request)
        : CompletableFuture.completedFuture((org.apache.kafka.common.protocol.ApiMessage) request.getErrorResponse(0,
            org.apache.kafka.common.protocol.Errors.COORDINATOR_LOAD_IN_PROGRESS.exception()).data());
  }

  /**
   * The client quota APIs, the byte-rate quotas around Produce and Fetch and the request-time quota of every request, the ACL APIs, and (authorizer on) the authorization rules in front of every registered API;
   * registered last, so that every API is covered.
   */
  private void registerSecurityApis(ClusterMetadata metadata, RequestDispatcher dispatcher) {
    ClientQuotaApis quotas = new ClientQuotaApis(metadata.quotaStore(),
        new ClientQuotaManager(config.quotas, () -> metadata.quotaStore().quotas(), time::milliseconds));
    apis.register(ApiKeys.DESCRIBE_CLIENT_QUOTAS, ApiKeys.DESCRIBE_CLIENT_QUOTAS.oldestVersion(),
            ApiKeys.DESCRIBE_CLIENT_QUOTAS.latestVersion(), quotas::describe)
        .register(ApiKeys.ALTER_CLIENT_QUOTAS, ApiKeys.ALTER_CLIENT_QUOTAS.oldestVersion(),
            ApiKeys.ALTER_CLIENT_QUOTAS.latestVersion(), quotas::alter);
    quotas.enforce(apis, dispatcher.throttles());
    quotas.enforceMutations(apis, dispatcher.throttles(), registry);
    dispatcher.requestTimeQuota(quotas.requestTimeQuota());
    AclApis acls = new AclApis(authorizer, metadata.aclStore());
    apis.register(ApiKeys.CREATE_ACLS, ApiKeys.CREATE_ACLS.oldestVersion(), ApiKeys.CREATE_ACLS.latestVersion(),
            acls::createAcls)
        .register(ApiKeys.DESCRIBE_ACLS, ApiKeys.DESCRIBE_ACLS.oldestVersion(), ApiKeys.DESCRIBE_ACLS.latestVersion(),
            acls::describeAcls)
        .register(ApiKeys.DELETE_ACLS, ApiKeys.DELETE_ACLS.oldestVersion(), ApiKeys.DELETE_ACLS.latestVersion(),
            acls::deleteAcls);
    if (authorizer.enabled()) {
      requestAuthorizer().install(apis);
    }
  }

  /** The authorization rules over this broker's topics (also used by the test that keeps them complete). */
  public RequestAuthorizer requestAuthorizer() {
    return new RequestAuthorizer(authorizer, new RequestAuthorizer.Topics() {
      @Override
      public String nameOf(Uuid topicId) {
        return registry.topic(topicId).map(io.tidemark.broker.topic.TopicInfo::name).orElse(null);
      }

      @Override
      public boolean exists(String name) {
        return registry.topic(name).isPresent();
      }
    });
  }

  /** The authorizer, for in-process endpoints (schema registry, REST catalog) that authorize through the same ACLs. */
  public Authorizer authorizer() {
    return authorizer;
  }

  /**
   * Starts listening, then reopens the partitions led here and loads the groups. The listener comes
   * first so that a restart serves each partition as soon as it is open: a partition still opening
   * is not in {@link Partitions} yet and answers NOT_LEADER_OR_FOLLOWER (clients retry), a group
   * COORDINATOR_LOAD_IN_PROGRESS until the groups are loaded. Returns once everything is open.
   */
  public synchronized void start() {
    if (state != State.NEW) {
      throw new IllegalStateException("broker is " + state + "; start() is allowed once, from NEW");
    }
    try {
      ScramBootstrap.apply(config.security.scramBootstrap(), scram);
      CompletableFuture<Void> opened = lifecycle.openAll();
      port = server.start();
      cluster.bound(config.security.interBrokerListenerName(), advertised());
      opened.get(5, TimeUnit.MINUTES);
      if (registry.topic(GroupApis.offsetsTopic()).isEmpty()) {
        createIfAbsent(GroupApis.offsetsTopic(), config.offsetsTopicPartitions, false).get(1, TimeUnit.MINUTES);
      }
      if (registry.topic(SharePartitionManager.stateTopic()).isEmpty()) {
        createIfAbsent(SharePartitionManager.stateTopic(), config.shareStateTopicPartitions, false).get(1, TimeUnit.MINUTES);
      }
      groups.load().get(5, TimeUnit.MINUTES);
      groupsLoaded = true;
      if (registry.topic(TransactionApis.stateTopic()).isEmpty()) {
        createIfAbsent(TransactionApis.stateTopic(), config.transactionStateLogPartitions, false).get(1, TimeUnit.MINUTES);
      }
      transactions.load().get(5, TimeUnit.MINUTES);
      transactionsLoaded = true;
      lifecycle.reconcile(); // changes made by other brokers while this one started
      retention.start(config.retentionCheckIntervalMs);
      if (config.metricsLagIntervalMs > 0 && meters.exported()) {
        lagMeters.start(config.metricsLagIntervalMs);
      }
      if (config.logCleanerIntervalMs > 0) {
        cleaner.ifPresent(c -> c.start(config.logCleanerIntervalMs));
      }
    } catch (Exception e) {
      closeQuietly();
      throw new IllegalStateException("broker failed to start: " + e.getMessage(), e);
    }
    state = State.STARTED;
    log.info("broker {} of cluster {} started on port {}", config.nodeId, registry.clusterId(), port);
  }

  /** Partitions led here that failed on a storage error and stay failed until a restart (for /health). */
  public List<TopicPartition> failedPartitions() {
    return partitions.failedForGood();
  }

  /** The partitions served and opening here (tests). */
  Partitions partitions() {
    return partitions;
  }

  /** The bound port of the first listener (after {@link #start()}). */
  public int port() {
    return port;
  }

  /** Every listener as bound and advertised, by name (after {@link #start()}). */
  /** The event loops serving Kafka connections ({@code num.network.threads}). */
  public io.tidemark.broker.network.NetworkThreads networkThreads() {
    return networkThreads;
  }

  public Map<String, Listener> listeners() {
    Map<String, Integer> bound = server.boundPorts();
    Map<String, Listener> out = new java.util.LinkedHashMap<>();
    for (ListenerSecurity l : listeners) {
      Integer p = bound.get(l.listener().name());
      out.put(l.listener().name(), p == null ? l.listener() : l.listener().bound(p));
    }
    return out;
  }

  private Map<String, ClusterView.Endpoint> advertised() {
    Map<String, ClusterView.Endpoint> out = new java.util.LinkedHashMap<>();
    listeners().forEach((name, l) -> out.put(name, new ClusterView.Endpoint(l.advertisedHost(), l.advertisedPort())));
    return out;
  }

  /** host:port of the inter-broker listener as advertised: where Tidemark's own clients connect. */
  public String bootstrapServers() {
    Listener l = listeners().get(config.security.interBrokerListenerName());
    return l.advertisedHost() + ":" + (l.advertisedPort() == 0 ? l.port() : l.advertisedPort());
  }

  /** The kafka-clients properties Tidemark's own clients need for the inter-broker listener (security protocol, TLS, SASL). */
  public Map<String, Object> internalClientConfigs() {
    return config.security.internalClientConfigs();
  }

  /** The SCRAM credentials this broker authenticates against (HTTP basic on the other endpoints uses them too). */
  public ScramCredentialStore scramCredentials() {
    return scram;
  }

  /**
   * Checks a user's password as SASL PLAIN does (the PLAIN users of every listener's JAAS config,
   * the first listener naming a user winning, then the SCRAM users), for the HTTP endpoints.
   */
  public PasswordCheck passwordCheck() {
    return passwords;
  }

  /** The validator of OAUTHBEARER tokens (JWTs against sasl.oauthbearer.jwks.endpoint.url), for the HTTP endpoints too. */
  public Optional<io.tidemark.broker.security.JwtValidator> tokenValidator() {
    return bearerTokens.map(io.tidemark.broker.security.OAuthBearerConfig.BearerTokens::validator);
  }

  public String clusterId() {
    return registry.clusterId();
  }

  /** This broker's node id. */
  public int nodeId() {
    return config.nodeId;
  }

  /**
   * The node id of the broker leading {@code topic}-{@code partition} as this broker currently
   * knows it; empty for an unknown topic or partition, or one without a leader yet.
   */
  public OptionalInt leaderOf(String topic, int partition) {
    return registry.topic(topic).flatMap(t -> t.partitions().stream().filter(p -> p.partition() == partition).findFirst())
        .filter(p -> p.leader() >= 0).map(p -> OptionalInt.of(p.leader())).orElse(OptionalInt.empty());
  }

  /** The log cleaner of compacted topics, when the stream store keeps data in object storage. */
  public java.util.Optional<io.tidemark.broker.cleaner.LogCleaner> logCleaner() {
    return cleaner;
  }

  /** Which APIs and versions this broker advertises. */
  public ApiRegistry apis() {
    return apis;
  }

  /**
   * Partition 0 of an internal topic, created here with one partition if it does not exist yet, for
   * in-process services that keep their log in a topic (the schema registry's {@code _schemas}).
   * Internal topics are not subject to retention. Call after {@link #start()}.
   */
  public CompletableFuture<PartitionLog> internalPartition(String topic) {
    return internalPartition(topic, INTERNAL_TOPIC_CONFIGS);
  }

  /** As {@link #internalPartition(String)}, created (if it does not exist) with {@code configs}. */
  public CompletableFuture<PartitionLog> internalPartition(String topic, Map<String, String> configs) {
    TopicPartition tp = new TopicPartition(topic, 0);
    Optional<PartitionLog> open = partitions.get(tp);
    if (open.isPresent()) {
      return CompletableFuture.completedFuture(open.get());
    }
    CompletableFuture<?> created = registry.topic(topic).isPresent()
        ? CompletableFuture.completedFuture(null)
        : createIfAbsent(topic, 1, true, configs);
    return created.thenApply(ignored -> partitions.require(tp));
  }

  /** Creates an internal topic unless it exists (another broker of the cluster may create it at the same time). */
  private CompletableFuture<Void> createIfAbsent(String topic, int partitionCount, boolean here) {
    return createIfAbsent(topic, partitionCount, here, INTERNAL_TOPIC_CONFIGS);
  }

  /**
   * The configs every internal topic is created with: compacted, because each holds keyed state whose
   * latest value per key is all its loader needs ({@code __consumer_offsets}, {@code _schemas}, the table
   * control topic); a service that needs others passes them to {@link #internalPartition(String, Map)}.
   */
  public static final Map<String, String> INTERNAL_TOPIC_CONFIGS = Map.of(TopicConfigs.CLEANUP_POLICY, TopicConfigs.COMPACT);

  private CompletableFuture<Void> createIfAbsent(String topic, int partitionCount, boolean here, Map<String, String> configs) {
    return lifecycle.create(topic, partitionCount, configs, true, here).handle((t, e) -> {
      Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
      if (cause == null || (cause instanceof TopicException te && te.outcome() == TopicException.Outcome.ALREADY_EXISTS)) {
        return null;
      }
      throw new java.util.concurrent.CompletionException(cause);
    });
  }

  /** Topics as the registry knows them now, for in-process services that follow topics (table topics). */
  public java.util.Collection<io.tidemark.broker.topic.TopicInfo> topics() {
    return registry.state().topics().values();
  }

  /** The open log of a partition this broker leads, if any. */
  public Optional<PartitionLog> partitionLog(TopicPartition tp) {
    return partitions.get(tp);
  }

  /**
   * Damaged ranges found in the partitions this broker leads now (each a stored batch that is not a
   * valid record batch; see {@link PartitionLog}), for the metrics endpoint.
   */
  public long damagedRanges() {
    long n = 0;
    for (PartitionLog log : partitions.all()) {
      n += log.damagedRangesFound();
    }
    return n;
  }

  /** The topic configs this broker accepts; a feature module plugs in the checks of its reserved names here. */
  public TopicConfigs topicConfigs() {
    return lifecycle.configs();
  }

  @Override
  public synchronized void close() {
    if (state == State.CLOSED) {
      return;
    }
    if (state == State.STARTED) {
      drain();
    }
    closeQuietly();
    state = State.CLOSED;
  }

  /**
   * Controlled shutdown in a cluster: the partitions led here move to other live brokers (each
   * closes here first: appends stop, its data is uploaded, its streams are closed) while this
   * broker still serves the rest, so clients see only leader changes. Waits at most
   * {@code kafka.controlled.shutdown.timeout.ms}; what is still here afterwards closes with the broker.
   */
  private void drain() {
    if (config.controlledShutdownTimeoutMs <= 0 || partitions.all().isEmpty()) {
      return;
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.controlledShutdownTimeoutMs);
    try {
      long moved = registry.metadata().drain(config.controlledShutdownTimeoutMs);
      if (moved == 0) {
        return;
      }
      log.info("controlled shutdown of broker {}: {} partitions move to other brokers", config.nodeId, moved);
      while (!partitions.all().isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(20); // the lifecycle closes each partition as this broker's image learns its new leader
      }
      log.info("controlled shutdown of broker {}: {} partitions still here", config.nodeId, partitions.all().size());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      log.warn("controlled shutdown of broker {} could not move its partitions ({}); closing them here", config.nodeId,
          e.toString());
    }
  }

  /** The log end offset of a partition led here (its high watermark), empty when it is not open here. */
  private java.util.OptionalLong logEndOffset(TopicPartition tp) {
    return partitions.get(tp).map(p -> java.util.OptionalLong.of(p.highWatermark())).orElse(java.util.OptionalLong.empty());
  }

  private void closeQuietly() {
    lagMeters.close();
    lagNetwork.close();
    retention.close();
    cleaner.ifPresent(io.tidemark.broker.cleaner.LogCleaner::close);
    server.close();
    bearerTokens.ifPresent(io.tidemark.broker.security.OAuthBearerConfig.BearerTokens::close);
    try {
      lifecycle.closeAll().get(1, TimeUnit.MINUTES);
    } catch (Exception e) {
      log.warn("partitions did not close cleanly: {}", e.toString());
    }
    lifecycle.shutdown();
    fetch.close();
    produce.close();
    groups.close();
    transactions.close();
    shareGroups.close();
    sharePartitions.close();
    interBroker.close();
    shareCoordinator.close();
    if (ownsStore) {
      store.close();
    }
  }
}
