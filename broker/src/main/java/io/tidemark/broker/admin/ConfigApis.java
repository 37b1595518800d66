package io.tidemark.broker.admin;

import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.topic.InvalidTopicConfigException;
import io.tidemark.broker.topic.TopicConfigs;
import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicLifecycle;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.message.ListConfigResourcesRequestData;
import org.apache.kafka.common.message.ListConfigResourcesResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigType;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.ListConfigResourcesRequest;

/**
 * DescribeConfigs (v1–4), AlterConfigs (v0–2) and IncrementalAlterConfigs (v0–1). Topic configs
 * are validated by {@link TopicConfigs} and applied to open partitions at once; broker configs
 * are described under Kafka's names ({@link BrokerConfigView}); the broker-level topic defaults
 * Kafka lets change at run time are altered through {@link DynamicBrokerConfigs} (a broker id, or
 * {@code ""} for the cluster default), anything else gets INVALID_REQUEST naming the keys, as Kafka
 * refuses a key it cannot change dynamically. Each resource succeeds or fails whole.
 */
public final class ConfigApis {

  private final TopicLifecycle lifecycle;
  private final int nodeId;
  private final BrokerConfigView broker;
  private final java.util.function.Supplier<List<Integer>> liveBrokers;
  private final DynamicBrokerConfigs dynamic;
  private io.tidemark.broker.share.ShareGroupCoordinator groups;
  private io.tidemark.broker.telemetry.ClientMetricsSubscriptions clientMetrics;

  public ConfigApis(TopicLifecycle lifecycle, int nodeId, Map<String, String> brokerValues, Set<String> explicitBrokerKeys,
      java.util.function.Supplier<List<Integer>> liveBrokers, DynamicBrokerConfigs dynamic) {
    this.lifecycle = lifecycle;
    this.nodeId = nodeId;
    this.liveBrokers = liveBrokers;
    this.dynamic = dynamic;
    this.broker = new BrokerConfigView(brokerValues, explicitBrokerKeys, lifecycle.configs());
  }

  /** Client-metrics subscriptions (resource type CLIENT_METRICS, KIP-714) are kept by {@code subscriptions}. Returns this. */
  public ConfigApis clientMetrics(io.tidemark.broker.telemetry.ClientMetricsSubscriptions subscriptions) {
    this.clientMetrics = subscriptions;
    return this;
  }

  /** Group configs (resource type GROUP) are kept by the share group coordinator. Returns this. */
  public ConfigApis groupConfigs(io.tidemark.broker.share.ShareGroupCoordinator coordinator) {
    this.groups = coordinator;
    return this;
  }

  public CompletableFuture<ApiMessage> describeConfigs(RequestContext context, AbstractRequest request) {
    DescribeConfigsRequestData req = ((DescribeConfigsRequest) request).data();
    short v = request.version();
    DescribeConfigsResponseData body = new DescribeConfigsResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    for (DescribeConfigsRequestData.DescribeConfigsResource res : req.resources()) {
      DescribeConfigsResponseData.DescribeConfigsResult r = new DescribeConfigsResponseData.DescribeConfigsResult()
          .setResourceType(res.resourceType()).setResourceName(res.resourceName());
      body.results().add(r);
      Set<String> keys = res.configurationKeys() == null ? null : new LinkedHashSet<>(res.configurationKeys());
      ConfigResource.Type type = ConfigResource.Type.forId(res.resourceType());
      if (type == ConfigResource.Type.TOPIC) {
        Optional<TopicInfo> topic = lifecycle.registry().topic(res.resourceName());
        if (topic.isEmpty()) {
          r.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()).setErrorMessage("topic '" + res.resourceName() + "' does not exist");
          continue;
        }
        describeTopic(r, topic.get(), keys, req.includeSynonyms(), req.includeDocumentation(), v);
      } else if (type == ConfigResource.Type.BROKER) {
        if (!res.resourceName().isEmpty() && !res.resourceName().equals(Integer.toString(nodeId))) {
          r.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("unknown broker '" + res.resourceName() + "'");
          continue;
        }
        describeBroker(r, res.resourceName(), keys, req.includeSynonyms(), req.includeDocumentation(), v);
      } else if (type == ConfigResource.Type.CLIENT_METRICS && clientMetrics != null) {
        describeClientMetrics(r, res.resourceName(), keys, req.includeSynonyms());
      } else if (type == ConfigResource.Type.GROUP && groups != null) {
        waits.add(groups.describeConfigs(res.resourceName()).handle((set, e) -> {
          if (e != null) {
            r.setErrorCode(ErrorMapping.toErrors(e).code()).setErrorMessage(ErrorMapping.message(e));
            return null;
          }
          describeGroup(r, set, keys, req.includeSynonyms(), req.includeDocumentation(), v);
          return null;
        }));
      } else {
        r.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("config resource type " + type + " is not supported");
      }
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> body);
  }

  /**
   * A broker resource as Kafka describes it: the cluster default ({@code ""}) lists only its dynamic
   * values; a broker lists every config, a dynamic value over the static one, with the synonyms in
   * precedence order (this broker's dynamic value, the cluster default, the static or declared one).
   */
  private void describeBroker(DescribeConfigsResponseData.DescribeConfigsResult r, String name, Set<String> keys, boolean synonyms,
      boolean documentation, short v) {
    if (name.isEmpty()) {
      new java.util.TreeMap<>(dynamic.stored("")).forEach((k, value) -> {
        if (keys == null || keys.contains(k)) {
          String shown = dynamic.sensitive(k) ? null : value;
          DescribeConfigsResponseData.DescribeConfigsResourceResult c = brokerEntry(k, shown, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
              false, BrokerConfigView.type(dynamic.type(k))).setIsSensitive(dynamic.sensitive(k));
          if (synonyms) {
            c.synonyms().add(synonym(k, shown, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));
          }
          r.configs().add(c);
        }
      });
      return;
    }
    Set<String> listed = new java.util.HashSet<>();
    List<BrokerConfigView.Entry> entries = new ArrayList<>(broker.entries());
    for (String k : DynamicBrokerConfigs.TOPIC_DEFAULTS.keySet()) {
      if (entries.stream().noneMatch(e -> e.name().equals(k))) {
        entries.add(new BrokerConfigView.Entry(k, dynamic.declaredDefault(k), ConfigSource.DEFAULT_CONFIG,
            BrokerConfigView.type(dynamic.type(k)), null));
      }
    }
    dynamic.staticValues().forEach((k, value) -> {
      if (entries.stream().noneMatch(e -> e.name().equals(k))) {
        String staticKey = dynamic.staticKey(k);
        entries.add(new BrokerConfigView.Entry(k, value, broker.source(staticKey), BrokerConfigView.type(dynamic.type(k)), staticKey));
      }
    });
    Set<String> setOnly = new java.util.HashSet<>();
    dynamic.setKeys().forEach(k -> { // dynamic keys listed only when set (a listener's key stores), as Kafka lists them
      if (entries.stream().noneMatch(e -> e.name().equals(k)) && setOnly.add(k)) {
        entries.add(new BrokerConfigView.Entry(k, null, ConfigSource.DEFAULT_CONFIG, BrokerConfigView.type(dynamic.type(k)), null));
      }
    });
    for (BrokerConfigView.Entry e : entries) {
      if ((keys != null && !keys.contains(e.name())) || !listed.add(e.name())) {
        continue;
      }
      boolean isDynamic = dynamic.dynamic(e.name());
      boolean sensitive = dynamic.sensitive(e.name());
      DynamicBrokerConfigs.Value set = isDynamic ? dynamic.value(e.name()) : null;
      DescribeConfigsResponseData.DescribeConfigsResourceResult c = set == null
          ? brokerEntry(e.name(), sensitive ? null : e.value(), e.source(), !isDynamic, e.type())
          : brokerEntry(e.name(), sensitive ? null : set.value(), set.source(), false, e.type());
      c.setIsSensitive(sensitive);
      if (synonyms) {
        if (set != null && set.source() == ConfigSource.DYNAMIC_BROKER_CONFIG) {
          c.synonyms().add(synonym(e.name(), sensitive ? null : set.value(), ConfigSource.DYNAMIC_BROKER_CONFIG));
        }
        String clusterDefault = isDynamic ? dynamic.stored("").get(e.name()) : null;
        if (clusterDefault != null) {
          c.synonyms().add(synonym(e.name(), sensitive ? null : clusterDefault, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));
        }
        if (!setOnly.contains(e.name())) {
          c.synonyms().add(synonym(e.synonym() == null ? e.name() : e.synonym(), sensitive ? null : e.value(), e.source()));
        }
      }
      r.configs().add(c);
    }
  }

  /** A client-metrics subscription: its three keys, each set value with source CLIENT_METRICS_CONFIG. */
  private void describeClientMetrics(DescribeConfigsResponseData.DescribeConfigsResult r, String name, Set<String> keys, boolean synonyms) {
    Map<String, String> set = clientMetrics.stored(name);
    io.tidemark.broker.telemetry.ClientMetricsSubscriptions.defaults().forEach((k, d) -> {
      if (keys != null && !keys.contains(k)) {
        return;
      }
      boolean isSet = set.containsKey(k);
      ConfigSource source = isSet ? ConfigSource.CLIENT_METRICS_CONFIG : ConfigSource.DEFAULT_CONFIG;
      DescribeConfigsResponseData.DescribeConfigsResourceResult c = brokerEntry(k, isSet ? set.get(k) : d, source, false,
          k.equals(io.tidemark.broker.telemetry.ClientMetricsSubscriptions.INTERVAL_MS) ? ConfigType.INT : ConfigType.LIST);
      if (synonyms && isSet) {
        c.synonyms().add(synonym(k, set.get(k), source));
      }
      r.configs().add(c);
    });
  }

  private static DescribeConfigsResponseData.DescribeConfigsResourceResult brokerEntry(String name, String value, ConfigSource source,
      boolean readOnly, ConfigType type) {
    return new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(name).setValue(value).setReadOnly(readOnly)
        .setIsSensitive(false).setConfigSource(source.id()).setConfigType(type.id());
  }

  private static DescribeConfigsResponseData.DescribeConfigsSynonym synonym(String name, String value, ConfigSource source) {
    return new DescribeConfigsResponseData.DescribeConfigsSynonym().setName(name).setValue(value).setSource(source.id());
  }

  private void describeGroup(DescribeConfigsResponseData.DescribeConfigsResult r, Map<String, String> set, Set<String> keys,
      boolean synonyms, boolean documentation, short v) {
    for (io.tidemark.broker.share.ShareGroupConfigs.Definition d : groups.configDefinitions().definitions()) {
      if (keys != null && !keys.contains(d.name())) {
        continue;
      }
      boolean isSet = set.containsKey(d.name());
      String value = isSet ? set.get(d.name()) : d.defaultValue();
      ConfigSource source = isSet ? ConfigSource.GROUP_CONFIG : ConfigSource.DEFAULT_CONFIG;
      DescribeConfigsResponseData.DescribeConfigsResourceResult c = new DescribeConfigsResponseData.DescribeConfigsResourceResult()
          .setName(d.name()).setValue(value).setReadOnly(false).setIsSensitive(false).setConfigSource(source.id())
          .setConfigType(BrokerConfigView.type(d.type()).id());
      c.setDocumentation(documentation && v >= 3 ? d.doc() : null); // null when not asked for, as Kafka answers
      if (synonyms && isSet) {
        c.synonyms().add(new DescribeConfigsResponseData.DescribeConfigsSynonym().setName(d.name()).setValue(value).setSource(source.id()));
      }
      r.configs().add(c);
    }
  }

  private void describeTopic(DescribeConfigsResponseData.DescribeConfigsResult r, TopicInfo topic, Set<String> keys,
      boolean synonyms, boolean documentation, short v) {
    TopicConfigs defs = lifecycle.configs();
    Map<String, String> set = topic.configs();
    for (TopicConfigs.Definition d : defs.definitions()) {
      if (keys != null && !keys.contains(d.name())) {
        continue;
      }
      boolean isSet = set.containsKey(d.name());
      String brokerName = DynamicBrokerConfigs.brokerNameOf(d.name());
      DynamicBrokerConfigs.Value inherited = brokerName == null ? null : dynamic.value(brokerName);
      String value = isSet ? set.get(d.name()) : inherited != null ? inherited.value() : d.defaultValue();
      ConfigSource source = isSet ? ConfigSource.TOPIC_CONFIG : inherited != null ? inherited.source() : ConfigSource.DEFAULT_CONFIG;
      DescribeConfigsResponseData.DescribeConfigsResourceResult c = new DescribeConfigsResponseData.DescribeConfigsResourceResult()
          .setName(d.name()).setValue(value).setReadOnly(false).setIsSensitive(false)
          .setConfigSource(source.id())
          .setConfigType(BrokerConfigView.type(d.type()).id());
      c.setDocumentation(documentation && v >= 3 ? d.doc() : null); // null when not asked for, as Kafka answers
      if (synonyms && isSet) {
        c.synonyms().add(synonym(d.name(), value, ConfigSource.TOPIC_CONFIG));
      }
      if (synonyms && brokerName != null) { // the dynamic values under it, in precedence order (as Kafka lists them)
        if (inherited != null && inherited.source() == ConfigSource.DYNAMIC_BROKER_CONFIG) {
          c.synonyms().add(synonym(brokerName, inherited.value(), ConfigSource.DYNAMIC_BROKER_CONFIG));
        }
        String clusterDefault = dynamic.stored("").get(brokerName);
        if (clusterDefault != null) {
          c.synonyms().add(synonym(brokerName, clusterDefault, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));
        }
      }
      r.configs().add(c);
    }
    set.forEach((k, value) -> {
      if (TopicConfigs.reserved(k) && (keys == null || keys.contains(k))) {
        r.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult().setName(k).setValue(value)
            .setReadOnly(false).setIsSensitive(false).setConfigSource(ConfigSource.TOPIC_CONFIG.id())
            .setConfigType(ConfigType.STRING.id()));
      }
    });
  }

  /**
   * ListConfigResources (v0–1): the resources whose configs can be described here: every topic,
   * every live broker and every client-metrics subscription (v1, filtered by the requested types; none
   * asked means all); v0 lists the client-metrics subscriptions only, as Kafka's v0 does.
   */
  public CompletableFuture<ApiMessage> listConfigResources(RequestContext context, AbstractRequest request) {
    ListConfigResourcesRequestData req = ((ListConfigResourcesRequest) request).data();
    ListConfigResourcesResponseData body = new ListConfigResourcesResponseData();
    Set<Byte> types = new java.util.HashSet<>();
    if (request.version() == 0) {
      types.add(ConfigResource.Type.CLIENT_METRICS.id());
    } else if (req.resourceTypes() == null || req.resourceTypes().isEmpty()) {
      types.add(ConfigResource.Type.TOPIC.id());
      types.add(ConfigResource.Type.BROKER.id());
      types.add(ConfigResource.Type.CLIENT_METRICS.id());
    } else {
      for (byte t : req.resourceTypes()) {
        if (ConfigResource.Type.forId(t) == ConfigResource.Type.UNKNOWN) {
          return CompletableFuture.completedFuture(body.setErrorCode(Errors.INVALID_REQUEST.code()));
        }
        types.add(t);
      }
    }
    if (types.contains(ConfigResource.Type.TOPIC.id())) {
      lifecycle.registry().state().topics().keySet().stream().sorted().forEach(t -> body.configResources().add(
          new ListConfigResourcesResponseData.ConfigResource().setResourceName(t).setResourceType(ConfigResource.Type.TOPIC.id())));
    }
    if (types.contains(ConfigResource.Type.CLIENT_METRICS.id()) && clientMetrics != null) {
      clientMetrics.all().keySet().forEach(n -> body.configResources().add(new ListConfigResourcesResponseData.ConfigResource()
          .setResourceName(n).setResourceType(ConfigResource.Type.CLIENT_METRICS.id())));
    }
    if (types.contains(ConfigResource.Type.BROKER.id())) {
      liveBrokers.get().forEach(id -> body.configResources().add(new ListConfigResourcesResponseData.ConfigResource()
          .setResourceName(Integer.toString(id)).setResourceType(ConfigResource.Type.BROKER.id())));
    }
    return CompletableFuture.completedFuture(body);
  }

  public CompletableFuture<ApiMessage> incrementalAlterConfigs(RequestContext context, AbstractRequest request) {
    IncrementalAlterConfigsRequestData req = ((IncrementalAlterConfigsRequest) request).data();
    IncrementalAlterConfigsResponseData body = new IncrementalAlterConfigsResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    for (IncrementalAlterConfigsRequestData.AlterConfigsResource res : req.resources()) {
      IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse r = new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
          .setResourceType(res.resourceType()).setResourceName(res.resourceName());
      body.responses().add(r);
      if (clearsUnsetThrottles(res)) {
        continue; // kafka-reassign-partitions --verify clears throttles that can never be set here: a no-op, as in Kafka
      }
      if (ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.CLIENT_METRICS && clientMetrics != null) {
        waits.add(report(() -> {
          Map<String, String> next = new LinkedHashMap<>(clientMetrics.stored(res.resourceName()));
          for (IncrementalAlterConfigsRequestData.AlterableConfig c : res.configs()) {
            switch (c.configOperation()) {
              case 0 -> next.put(c.name(), c.value() == null ? "" : c.value());
              case 1 -> next.remove(c.name());
              case 2, 3 -> next.put(c.name(), applyListOp(next.getOrDefault(c.name(), ""), c));
              default -> throw new org.apache.kafka.common.errors.InvalidRequestException("unknown config operation " + c.configOperation());
            }
          }
          return clientMetrics.replace(res.resourceName(), next, req.validateOnly());
        }, r::setErrorCode, r::setErrorMessage));
        continue;
      }
      if (ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.BROKER) {
        waits.add(alterBroker(res.resourceName(), current -> {
          Map<String, String> next = new LinkedHashMap<>(current);
          for (IncrementalAlterConfigsRequestData.AlterableConfig c : res.configs()) {
            switch (c.configOperation()) {
              case 0 -> next.put(c.name(), c.value() == null ? "" : c.value());
              case 1 -> next.remove(c.name());
              case 2, 3 -> next.put(c.name(), brokerListOp(current, c));
              default -> throw new org.apache.kafka.common.errors.InvalidRequestException("unknown config operation " + c.configOperation());
            }
          }
          return next;
        }, req.validateOnly(), r::setErrorCode, r::setErrorMessage));
        continue;
      }
      waits.add(alterTopic(res.resourceType(), res.resourceName(), current -> {
        Map<String, String> next = new LinkedHashMap<>(current);
        for (IncrementalAlterConfigsRequestData.AlterableConfig c : res.configs()) {
          switch (c.configOperation()) {
            case 0 -> next.put(c.name(), c.value());
            case 1 -> next.remove(c.name());
            case 2, 3 -> next.put(c.name(), listOp(lifecycle.configs(), current, c));
            default -> throw new InvalidTopicConfigException("unknown config operation " + c.configOperation());
          }
        }
        return next;
      }, req.validateOnly(), res.configs().stream().map(c -> c.name()).toList()).handle((x, e) -> {
        if (e != null) {
          r.setErrorCode(ErrorMapping.toErrors(e).code()).setErrorMessage(ErrorMapping.message(e));
        }
        return null;
      }));
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> body);
  }

  /** Broker-level replication throttles: Tidemark copies no data between brokers, so they are never set. */
  static final java.util.Set<String> BROKER_THROTTLES = java.util.Set.of("leader.replication.throttled.rate",
      "follower.replication.throttled.rate", "replica.alter.log.dirs.io.max.bytes.per.second");

  /** Whether the resource is a broker and every operation deletes a replication throttle. */
  private static boolean clearsUnsetThrottles(IncrementalAlterConfigsRequestData.AlterConfigsResource res) {
    return ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.BROKER && !res.configs().isEmpty()
        && res.configs().stream().allMatch(c -> c.configOperation() == 1 && BROKER_THROTTLES.contains(c.name()));
  }

  private static String listOp(TopicConfigs defs, Map<String, String> current, IncrementalAlterConfigsRequestData.AlterableConfig c) {
    TopicConfigs.Definition d = defs.definition(c.name());
    if (d == null || !d.type().equals("list")) {
      throw new InvalidTopicConfigException("APPEND and SUBTRACT apply only to list configs; '" + c.name() + "' is not one");
    }
    return applyListOp(current.getOrDefault(c.name(), d.defaultValue() == null ? "" : d.defaultValue()), c);
  }

  /** {@code base} with the items of {@code c}'s value appended (APPEND) or removed (SUBTRACT), each once. */
  private static String applyListOp(String base, IncrementalAlterConfigsRequestData.AlterableConfig c) {
    LinkedHashSet<String> items = new LinkedHashSet<>();
    for (String s : base.split(",")) {
      if (!s.isBlank()) {
        items.add(s.trim());
      }
    }
    for (String s : (c.value() == null ? "" : c.value()).split(",")) {
      if (!s.isBlank()) {
        if (c.configOperation() == 2) {
          items.add(s.trim());
        } else {
          items.remove(s.trim());
        }
      }
    }
    return String.join(",", items);
  }

  public CompletableFuture<ApiMessage> alterConfigs(RequestContext context, AbstractRequest request) {
    AlterConfigsRequestData req = ((AlterConfigsRequest) request).data();
    AlterConfigsResponseData body = new AlterConfigsResponseData();
    List<CompletableFuture<?>> waits = new ArrayList<>();
    for (AlterConfigsRequestData.AlterConfigsResource res : req.resources()) {
      AlterConfigsResponseData.AlterConfigsResourceResponse r = new AlterConfigsResponseData.AlterConfigsResourceResponse()
          .setResourceType(res.resourceType()).setResourceName(res.resourceName());
      body.responses().add(r);
      if (ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.CLIENT_METRICS && clientMetrics != null) {
        waits.add(report(() -> {
          Map<String, String> next = new LinkedHashMap<>();
          res.configs().forEach(c -> next.put(c.name(), c.value() == null ? "" : c.value()));
          return clientMetrics.replace(res.resourceName(), next, req.validateOnly());
        }, r::setErrorCode, r::setErrorMessage));
        continue;
      }
      if (ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.BROKER) {
        waits.add(alterBroker(res.resourceName(), current -> {
          Map<String, String> next = new LinkedHashMap<>();
          res.configs().forEach(c -> next.put(c.name(), c.value() == null ? "" : c.value()));
          return next;
        }, req.validateOnly(), r::setErrorCode, r::setErrorMessage));
        continue;
      }
      waits.add(alterTopic(res.resourceType(), res.resourceName(), current -> {
        Map<String, String> next = new LinkedHashMap<>();
        res.configs().forEach(c -> next.put(c.name(), c.value()));
        return next;
      }, req.validateOnly(), res.configs().stream().map(c -> c.name()).toList()).handle((x, e) -> {
        if (e != null) {
          r.setErrorCode(ErrorMapping.toErrors(e).code()).setErrorMessage(ErrorMapping.message(e));
        }
        return null;
      }));
    }
    return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenApply(x -> body);
  }

  /** Alters one broker resource's dynamic values and reports the outcome through the two setters. */
  private CompletableFuture<?> alterBroker(String name, java.util.function.UnaryOperator<Map<String, String>> change,
      boolean validateOnly, java.util.function.Consumer<Short> errorCode, java.util.function.Consumer<String> errorMessage) {
    return report(() -> dynamic.replace(name, change.apply(dynamic.stored(name)), validateOnly), errorCode, errorMessage);
  }

  /** Runs {@code change} and reports its outcome (an exception thrown or completed with) through the two setters. */
  private static CompletableFuture<?> report(java.util.function.Supplier<CompletableFuture<Void>> change,
      java.util.function.Consumer<Short> errorCode, java.util.function.Consumer<String> errorMessage) {
    CompletableFuture<Void> done;
    try {
      done = change.get();
    } catch (RuntimeException e) {
      done = CompletableFuture.failedFuture(e);
    }
    return done.handle((x, e) -> {
      if (e != null) {
        errorCode.accept(ErrorMapping.toErrors(e).code());
        errorMessage.accept(ErrorMapping.message(e));
      }
      return null;
    });
  }

  /** APPEND or SUBTRACT on a dynamic broker config of list type (log.cleanup.policy), from its stored or declared value. */
  private String brokerListOp(Map<String, String> current, IncrementalAlterConfigsRequestData.AlterableConfig c) {
    if (!dynamic.dynamic(c.name()) || !dynamic.type(c.name()).equals("list")) {
      throw new InvalidConfigurationException("APPEND and SUBTRACT apply only to list configs; '" + c.name() + "' is not one");
    }
    String declared = dynamic.declaredDefault(c.name());
    return applyListOp(current.getOrDefault(c.name(), declared == null ? "" : declared), c);
  }

  private CompletableFuture<?> alterTopic(byte resourceType, String name,
      java.util.function.UnaryOperator<Map<String, String>> change, boolean validateOnly, List<String> keys) {
    ConfigResource.Type type = ConfigResource.Type.forId(resourceType);
    if (type == ConfigResource.Type.GROUP && groups != null) {
      return groups.alterConfigs(name, change, validateOnly);
    }
    if (type != ConfigResource.Type.TOPIC) {
      return CompletableFuture.failedFuture(Errors.INVALID_REQUEST.exception("config resource type " + type + " is not supported"));
    }
    Optional<TopicInfo> topic = lifecycle.registry().topic(name);
    if (topic.isEmpty()) {
      return CompletableFuture.failedFuture(Errors.UNKNOWN_TOPIC_OR_PARTITION.exception("topic '" + name + "' does not exist"));
    }
    Map<String, String> next;
    try {
      next = change.apply(topic.get().configs());
      lifecycle.configs().validate(next);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (validateOnly) {
      return CompletableFuture.completedFuture(null);
    }
    return lifecycle.replaceConfigs(name, next);
  }
}
