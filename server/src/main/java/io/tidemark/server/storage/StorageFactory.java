package io.tidemark.server.storage;

import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.stream.config.Settings;

/**
 * Assembles and recovers a {@link StorageNode} from validated settings. The process uses
 * {@link EmbeddedStorage}; tests may hand in another assembly.
 */
@FunctionalInterface
public interface StorageFactory {

  /**
   * Builds the node, recovers its WAL and uploads what recovery found; returns once it serves.
   * Throws {@link io.tidemark.stream.config.ConfigException} naming the setting when a setting
   * is unusable (wrong endpoint, bucket, credentials, path).
   */
  StorageNode open(ServerConfig server, Settings settings, MeterRegistry meters);
}
