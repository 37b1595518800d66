package io.tidemark.server.config;

import io.tidemark.broker.BrokerConfig;
import io.tidemark.broker.security.SecurityConfig;
import io.tidemark.metadata.raft.ControllerConfig;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.stream.compaction.CompactionConfig;
import io.tidemark.stream.engine.StreamEngineConfig;
import io.tidemark.stream.objectstore.ObjectStorageConfig;
import io.tidemark.stream.read.ReadConfig;
import io.tidemark.stream.wal.WalConfig;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.rest.RestCatalogConfig;
import io.tidemark.table.config.TableServiceConfig;
import java.util.List;

/**
 * The other modules' declared settings, one section per component, in the order of the data path.
 * Kept apart from {@link ConfigCatalog} so that wiring in a newly landed module is one line here.
 */
final class ModuleKeys {

  private ModuleKeys() {}

  static List<ConfigCatalog.Section> sections() {
    return List.of(
        new ConfigCatalog.Section("Object storage",
            "Where stream data lives: the local filesystem (embedded default, under data.dir/objects unless "
                + "storage.local.path is set), S3 or an S3-compatible store, or memory (tests).",
            ObjectStorageConfig.KEYS),
        new ConfigCatalog.Section("Write-ahead log",
            "The node's WAL: a preallocated block file written with O_DIRECT (embedded default, "
                + "data.dir/wal/wal.log unless wal.path is set) or batched objects in object storage.",
            WalConfig.KEYS),
        new ConfigCatalog.Section("Stream engine",
            "The log cache, uploads to object storage (stream-set and stream objects) and their retries.",
            StreamEngineConfig.KEYS),
        new ConfigCatalog.Section("Cold reads",
            "The read path for data no longer in the log cache: block cache, index cache, adaptive read-ahead, "
                + "cold-read executor.",
            ReadConfig.KEYS),
        new ConfigCatalog.Section("Compaction",
            "Background merging of the node's stream-set objects (large streams split into stream objects) and of "
                + "small stream objects of each open stream, bounded per run.",
            CompactionConfig.KEYS),
        new ConfigCatalog.Section("Controller quorum",
            "The Raft-replicated metadata controller (Apache Ratis) and its clients. A node with the controller "
                + "role runs one voter (controller.node.id defaults to node.id, controller.voters to that node alone "
                + "on 127.0.0.1:9093, controller.dir to data.dir/controller); every node registers with the quorum "
                + "and commits its streams and objects there.",
            ControllerConfig.KEYS),
        new ConfigCatalog.Section("Kafka broker",
            "The Kafka protocol listener, topics, fetch sessions and consumer groups "
                + "(kafka.node.id defaults to node.id, kafka.data.dir to data.dir/kafka).",
            BrokerConfig.KEYS),
        new ConfigCatalog.Section("Kafka listeners and authentication",
            "Named listeners (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), TLS key and trust stores, mutual TLS principals "
                + "and SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) under Kafka's own names (docs/security.md). Every ssl.*, "
                + "sasl.* and connections.max.reauth.ms key may be set per listener as listener.name.<listener>.<key>; "
                + "listener.name.<listener>.plain.sasl.jaas.config names PLAIN users and "
                + "listener.name.<listener>.<mechanism>.sasl.jaas.config the username and password of Tidemark's own "
                + "clients, as in Kafka.",
            SecurityConfig.KEYS),
        new ConfigCatalog.Section("SASL OAUTHBEARER",
            "JWT validation for OAUTHBEARER on the Kafka listeners and bearer tokens on the HTTP endpoints, under the "
                + "names of Kafka's OAuthBearerValidatorCallbackHandler: a token's signature is checked against the "
                + "identity provider's JSON Web Key Set, then its exp, nbf, iat, iss and aud (docs/security.md#oauthbearer).",
            io.tidemark.broker.security.OAuthBearerConfig.KEYS),
        new ConfigCatalog.Section("Authorization",
            "ACL authorization of the Kafka API with Kafka's semantics (docs/authorization.md); off by default.",
            io.tidemark.broker.acl.AuthorizerConfig.KEYS),
        new ConfigCatalog.Section("Client quotas",
            "How produce and fetch byte-rate quotas are measured (docs/authorization.md#quotas); the quotas themselves "
                + "are set per user and client id with kafka-configs or AlterClientQuotas.",
            io.tidemark.broker.quota.QuotaConfig.KEYS),
        new ConfigCatalog.Section("Connection limits",
            "Kafka's limits on the connections of the Kafka listeners: per client address, in total (per listener as "
                + "listener.name.<listener>.max.connections) and per second (listener.name.<listener>."
                + "max.connection.creation.rate), with Kafka's semantics (docs/authorization.md#connection-limits).",
            io.tidemark.broker.network.ConnectionLimits.KEYS),
        new ConfigCatalog.Section("HTTP authentication",
            "Who may call the schema registry, the Iceberg REST catalog and the admin endpoint: the Kafka users (HTTP "
                + "basic) authorized through the Kafka ACLs (docs/security.md#http-endpoints).",
            io.tidemark.registry.http.HttpSecurity.KEYS),
        new ConfigCatalog.Section("Schema registry",
            "The Confluent-compatible schema registry REST API; schemas live in the _schemas topic.",
            RegistryConfig.KEYS),
        new ConfigCatalog.Section("Table topics",
            "Topics kept as Apache Iceberg tables (topic config table.topic.enable=true; docs/table-topics.md). Every "
                + "table.catalog.* key other than table.catalog.type is passed to the Iceberg catalog as a property "
                + "(uri, warehouse, credential, ...); with none, the catalog is SQLite under data.dir and the warehouse "
                + "lives in the streams' object storage.",
            TableServiceConfig.KEYS),
        new ConfigCatalog.Section("Table maintenance",
            "Built-in maintenance of the table topics' tables (docs/table-topics.md#maintenance), run by each topic's "
                + "coordinator: how often, and how much one run may do. What it does per table is set by the topic "
                + "configs table.topic.maintenance.enable, table.topic.compaction.target.file.bytes, "
                + "table.topic.expire.snapshot.* and table.topic.orphan.files.older.than.hours.",
            io.tidemark.table.maintenance.MaintenanceConfig.KEYS),
        new ConfigCatalog.Section("Iceberg REST catalog",
            "The built-in Iceberg REST catalog endpoint serving the table topics' catalog (broker role). "
                + "Every table.rest.client.* key is handed to REST clients as a catalog property override "
                + "(e.g. table.rest.client.s3.access-key-id).",
            RestCatalogConfig.KEYS));
  }

  /** Prefixes whose keys are handed to a library unchanged and therefore not validated one by one. */
  static List<String> passThroughPrefixes() {
    return List.of(RestCatalogConfig.CLIENT_PREFIX, TableCatalogConfig.PREFIX, SecurityConfig.LISTENER_PREFIX);
  }
}
