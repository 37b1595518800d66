package io.tidemark.stream.wal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The WAL settings are declared with defaults and validation, and the factory builds the selected WAL. */
class WalConfigTest {

  @TempDir
  Path dir;

  @Test
  void everyKeyIsDeclaredOnceWithADocAndAValidDefault() {
    // Goal: KEYS lists every WAL setting, names are unique, defaults pass their own validation.
    assertThat(WalConfig.KEYS).extracting(ConfigKey::name).doesNotHaveDuplicates().contains("wal.type", "wal.path",
        "wal.capacity.bytes", "wal.direct.io", "wal.block.size.bytes", "wal.max.pending.bytes", "wal.append.timeout.ms",
        "wal.object.batch.interval.ms", "wal.object.batch.max.bytes", "wal.object.max.inflight");
    for (ConfigKey<?> key : WalConfig.KEYS) {
      assertThat(key.doc()).isNotBlank();
      assertThat(key.parse(String.valueOf(key.defaultValue()))).isEqualTo(key.defaultValue());
    }
    assertThat(Settings.empty().get(WalConfig.CAPACITY_BYTES)).isEqualTo(2L << 30);
    assertThat(Settings.empty().get(WalConfig.OBJECT_BATCH_INTERVAL_MS)).isEqualTo(250);
  }

  @Test
  void badValuesAreRejectedNamingTheSetting() {
    // Goal: out-of-range values fail with a ConfigException that names the key.
    Settings small = Settings.empty().with("wal.capacity.bytes", "1048576");
    assertThatThrownBy(() -> small.get(WalConfig.CAPACITY_BYTES)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("wal.capacity.bytes");
    Settings type = Settings.empty().with("wal.type", "tape");
    assertThatThrownBy(() -> type.get(WalConfig.TYPE)).isInstanceOf(ConfigException.class).hasMessageContaining("wal.type");
    Settings block = Settings.empty().with("wal.block.size.bytes", "3000");
    assertThatThrownBy(() -> block.get(WalConfig.BLOCK_SIZE_BYTES)).hasMessageContaining("power of two");
  }

  @Test
  void theFactoryBuildsTheSelectedWalThatWorks() {
    // Goal: WriteAheadLogs.create returns a block WAL at wal.path or an object WAL, each able to append and recover.
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    MemoryObjectStorage storage = new MemoryObjectStorage();
    try {
      Settings settings = Settings.empty().with("wal.path", dir.resolve("w/wal.log").toString())
          .with("wal.capacity.bytes", String.valueOf(16 << 20));
      try (WriteAheadLog block = WriteAheadLogs.create(settings, storage, 3, 1, Clock.systemUTC(), scheduler)) {
        assertThat(block).isInstanceOf(BlockWriteAheadLog.class);
        block.recover();
        block.start();
        assertThat(block.append(ByteBuffer.wrap(new byte[] {1})).join()).isZero();
      }
      assertThat(dir.resolve("w/wal.log")).hasSize(16 << 20);
      try (WriteAheadLog object = WriteAheadLogs.create(settings.with("wal.type", "object")
          .with("wal.object.batch.interval.ms", "5"), storage, 3, 1, Clock.systemUTC(), scheduler)) {
        assertThat(object).isInstanceOf(ObjectWriteAheadLog.class);
        object.recover();
        object.start();
        assertThat(object.append(ByteBuffer.wrap(new byte[] {1})).join()).isZero();
      }
      assertThat(storage.list("wal/3/").join()).isNotEmpty();
    } finally {
      scheduler.shutdownNow();
    }
  }
}
