package io.tidemark.server.storage;

import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.stream.config.Settings;

/**
 * The storage assembly of the real process: object storage from its settings (local files under
 * {@code data.dir/objects} by default, S3 when configured), the block WAL under
 * {@code data.dir/wal}, the journaled metadata under {@code data.dir/meta}, and the stream engine
 * over them.
 */
public final class EmbeddedStorage implements StorageFactory {

  @Override
  public StorageNode open(ServerConfig server, Settings settings, MeterRegistry meters) {
    throw new StorageUnavailableException(
        "the stream storage engine is not part of this build yet (it lands with the stream module's engine)");
  }
}
