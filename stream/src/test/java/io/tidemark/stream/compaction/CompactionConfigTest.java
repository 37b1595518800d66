package io.tidemark.stream.compaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.read.ReadConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CompactionConfigTest {

  @Test
  void keysAreDeclaredWithUnitsAndParsedFromSettings() {
    // Goal: the read-path and compaction settings are declared once, with units in their names, and read from Settings.
    assertThat(CompactionConfig.KEYS).extracting(ConfigKey::name).contains("stream.compaction.interval.ms",
        "stream.compaction.max.objects", "stream.compaction.max.bytes", "stream.compaction.split.bytes");
    assertThat(ReadConfig.KEYS).extracting(ConfigKey::name).contains("stream.block.cache.size.bytes",
        "stream.readahead.max.bytes", "stream.cold.read.threads");
    assertThat(CompactionConfig.KEYS).allMatch(k -> !k.doc().isBlank());
    assertThat(ReadConfig.KEYS).allMatch(k -> !k.doc().isBlank());
    CompactionConfig c = CompactionConfig.from(new Settings(Map.of("stream.compaction.max.objects", "7",
        "stream.compaction.split.bytes", "1_048_576")));
    assertThat(c.maxObjects()).isEqualTo(7);
    assertThat(c.splitBytes()).isEqualTo(1 << 20);
    assertThat(ReadConfig.from(new Settings(Map.of("stream.cold.read.threads", "3"))).coldReadThreads()).isEqualTo(3);
  }

  @Test
  void badValuesAreRejectedNamingTheSetting() {
    // Goal: an unusable value fails with the setting's name, and read-ahead bounds must be ordered.
    assertThatThrownBy(() -> CompactionConfig.from(new Settings(Map.of("stream.compaction.max.objects", "1"))))
        .isInstanceOf(ConfigException.class).hasMessageContaining("stream.compaction.max.objects");
    assertThatThrownBy(() -> ReadConfig.from(new Settings(Map.of("stream.block.cache.size.bytes", "lots"))))
        .isInstanceOf(ConfigException.class).hasMessageContaining("stream.block.cache.size.bytes");
    assertThatThrownBy(() -> ReadConfig.from(new Settings(Map.of("stream.readahead.initial.bytes", "1048576",
        "stream.readahead.max.bytes", "65536")))).isInstanceOf(ConfigException.class)
        .hasMessageContaining("stream.readahead.max.bytes");
  }
}
