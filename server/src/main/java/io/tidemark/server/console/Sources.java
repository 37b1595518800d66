package io.tidemark.server.console;

import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.broker.KafkaBroker;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.server.admin.Health;
import io.tidemark.server.cluster.ControllerLink;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.server.table.TableTopicsService;

/**
 * What the console's pages read, as attached when one request began (each source may be null: the
 * node has not that role, or it is still starting). The {@code require*} accessors throw
 * {@link Console.Missing}, answered 503 with the reason.
 */
record Sources(ServerConfig config, Health health, MeterRegistry meters, KafkaBroker broker, ControllerLink controller,
    SchemaRegistry registry, TableTopicsService tables, Integer tableRestPort, KafkaReads kafka, Rates rates,
    LocalLoad localLoad, RecentMoves recentMoves, long startedAtMs, long nowMs) {

  KafkaBroker requireBroker() {
    if (broker == null) {
      throw new Console.Missing("this node runs no broker (process.roles), or it is still starting");
    }
    return broker;
  }

  KafkaReads requireKafka() {
    requireBroker();
    return kafka;
  }

  SchemaRegistry requireRegistry() {
    if (registry == null) {
      throw new Console.Missing("this node runs no schema registry (process.roles), or it is still starting");
    }
    return registry;
  }

  TableTopicsService requireTables() {
    if (tables == null) {
      throw new Console.Missing("table topics do not run on this node (no broker role, table.enable=false, or still starting)");
    }
    return tables;
  }

  /** This node's copy of the controller's metadata image; null when the node commits to no controller quorum. */
  MetadataImage image() {
    return controller == null ? null : controller.replica().image();
  }
}
