package io.tidemark.table.sync;

import io.tidemark.table.config.TableTopicConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/** Base of the table tests that need a real schema registry: a warehouse and a registry per test. */
abstract class RegistryTableTest {

  @TempDir
  Path dir;
  TestWarehouse warehouse;
  TestRegistry registry;
  private final AtomicInteger ids = new AtomicInteger();

  @BeforeEach
  void startWarehouseAndRegistry() {
    warehouse = new TestWarehouse(dir);
    registry = new TestRegistry();
  }

  @AfterEach
  void stopWarehouseAndRegistry() throws Exception {
    registry.close();
    warehouse.close();
  }

  static TableTopicConfig config(Map<String, String> configs) {
    Map<String, String> all = new HashMap<>(configs);
    all.put(TableTopicConfig.ENABLE, "true");
    return TableTopicConfig.parse(all);
  }

  /** A table sync of {@code topic} with the registry's schema source and table.topic.enable=true. */
  TableSync sync(TestTopic topic, Map<String, String> configs) {
    return new TableSync(topic.name, config(configs), warehouse.freshCatalog(), topic.sources(), registry.schemas,
        () -> "c" + ids.incrementAndGet(), 1 << 20, 64L << 20);
  }
}
