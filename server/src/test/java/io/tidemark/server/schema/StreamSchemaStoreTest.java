package io.tidemark.server.schema;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.registry.store.StoredRecord;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.server.storage.MemoryStorage;
import io.tidemark.server.storage.StorageNode;
import io.tidemark.stream.config.Settings;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Goal: bad bytes in a registry-only node's schema log stream are skipped; the records around them read back. */
class StreamSchemaStoreTest {

  @TempDir Path dir;

  @Test
  void unreadableRecordsAreSkipped() throws Exception {
    ServerConfig config = ServerConfig.from(Settings.empty().with("data.dir", dir.toString()));
    StorageNode storage = new MemoryStorage().open(config, Settings.empty(), new SimpleMeterRegistry());
    StreamSchemaStore store = StreamSchemaStore.open(storage, dir.resolve("registry"));
    store.append(bytes("k0"), bytes("v0"));
    long id = Long.parseLong(Files.readString(dir.resolve("registry").resolve("schemas-stream")).trim());
    var stream = storage.streamStore().stream(id).orElseThrow();
    stream.append(1, ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).putInt(0).flip()).join(); // a 2 GiB key length
    stream.append(1, ByteBuffer.wrap(new byte[] {1, 2, 3})).join();
    stream.append(3, ByteBuffer.allocate(8).putInt(0).putInt(-1).flip()).join(); // three records in one batch
    store.append(bytes("k1"), null);
    assertThat(store.read(0, 100)).extracting(StoredRecord::offset).containsExactly(0L, 6L);
    assertThat(store.read(0, 100).get(1).value()).isNull();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
