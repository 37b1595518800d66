package io.tidemark.metadata.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControllerConfigTest {

  @Test
  void keysAreDeclaredOnceWithDocsAndValidDefaults() {
    // Goal: every key in KEYS has a unique controller.* name, a doc, and a default that passes its own validation.
    assertThat(ControllerConfig.KEYS).extracting(ConfigKey::name).doesNotHaveDuplicates()
        .allMatch(n -> n.startsWith("controller."));
    for (ConfigKey<?> key : ControllerConfig.KEYS) {
      assertThat(key.doc()).as(key.name()).isNotBlank();
      assertThat(key.parse(String.valueOf(key.defaultValue()))).as(key.name()).isEqualTo(key.defaultValue());
    }
    ControllerConfig defaults = new ControllerConfig(Settings.empty());
    assertThat(defaults.voters()).containsExactly(Map.entry(1, "127.0.0.1:9093"));
    assertThat(defaults.nodeAddress()).isEqualTo("127.0.0.1:9093");
  }

  @Test
  void votersAreParsedAndBadOnesNamed() {
    // Goal: id@host:port lists parse in order; malformed entries, duplicate ids and a node outside the voters fail clearly.
    ControllerConfig three = new ControllerConfig(new Settings(Map.of("controller.voters",
        "1@127.0.0.1:9093, 2@127.0.0.1:9094,3@localhost:9095", "controller.node.id", "2")));
    assertThat(three.voters().keySet()).containsExactly(1, 2, 3);
    assertThat(three.nodeAddress()).isEqualTo("127.0.0.1:9094");
    for (String bad : new String[] {"", "1@", "x@h:1", "1@h:0", "1@h:1,1@h:2", "1@h"}) {
      assertThatThrownBy(() -> new ControllerConfig(new Settings(Map.of("controller.voters", bad))))
          .as(bad).isInstanceOf(ConfigException.class).hasMessageContaining("controller.voters");
    }
    assertThatThrownBy(() -> new ControllerConfig(new Settings(Map.of("controller.node.id", "9"))).nodeAddress())
        .isInstanceOf(ConfigException.class).hasMessageContaining("node 9");
    assertThatThrownBy(() -> new ControllerConfig(new Settings(Map.of("controller.session.timeout.ms", "5"))))
        .isInstanceOf(ConfigException.class);
  }
}
