package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.convert.KafkaColumns;
import io.tidemark.table.warehouse.Warehouse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads a table topic's table from a server's data directory (embedded catalog) with Iceberg's
 * generic reader, and the topic itself with a Kafka consumer, both by partition and offset, for
 * tests that check the table equals the log.
 */
final class TableFiles {

  private TableFiles() {}

  /** Where a record is: partition and offset. */
  record Position(int partition, long offset) {}

  /** The rows by their Kafka partition and offset columns (raw value converter); fails on a position written twice. */
  static Map<Position, String> byPosition(List<Record> rows, String context) {
    Map<Position, String> table = new HashMap<>();
    for (Record r : rows) {
      Position at = new Position((Integer) r.getField(KafkaColumns.PARTITION), (Long) r.getField(KafkaColumns.OFFSET));
      assertThat(table.put(at, (String) r.getField(KafkaColumns.VALUE))).as("row at %s written twice (%s)", at, context)
          .isNull();
    }
    return table;
  }

  /** Every record of {@code topic}'s partitions {@code 0..partitions-1} from the start; fails unless offsets are dense. */
  static Map<Position, String> readLog(String bootstrap, String topic, int partitions) {
    return readLog(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), topic, partitions);
  }

  /** {@link #readLog(String, String, int)} with a client's whole config (bootstrap servers, security). */
  static Map<Position, String> readLog(Map<String, Object> clientConfigs, String topic, int partitions) {
    Properties props = new Properties();
    props.putAll(clientConfigs);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    Map<Position, String> out = new HashMap<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        tps.add(new TopicPartition(topic, p));
      }
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
      long stop = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < stop) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          out.put(new Position(r.partition(), r.offset()), r.value());
        }
      }
      for (TopicPartition tp : tps) {
        for (long o = 0; o < ends.get(tp); o++) {
          assertThat(out).as("dense offsets: %s at %d", tp, o).containsKey(new Position(tp.partition(), o));
        }
      }
    }
    return out;
  }

  /** Every row of {@code default.<table>}, or an empty list while the table does not exist. */
  static List<Record> rows(Path dataDir, String table) {
    return rows(dataDir.resolve(TableCatalogConfig.EMBEDDED_DB_FILE), dataDir.resolve("objects"), table);
  }

  /** Every row of {@code default.<table>} of the embedded catalog in {@code catalogDb} over the objects in {@code objects}. */
  static List<Record> rows(Path catalogDb, Path objects, String table) {
    TableIdentifier id = TableIdentifier.of("default", table);
    try {
      // plain files only: opening a second object store on a running server's directory would clean its temporary files
      Catalog catalog = TableCatalogConfig.parse(Map.of(TableCatalogConfig.EMBEDDED_DB, catalogDb.toString()))
          .open(catalogDb.getParent(), Warehouse.inDirectory(objects.resolve(Warehouse.ROOT_NAME), null));
      try {
        if (!catalog.tableExists(id)) {
          return List.of();
        }
        List<Record> out = new ArrayList<>();
        try (CloseableIterable<Record> rows = IcebergGenerics.read(catalog.loadTable(id)).build()) {
          rows.forEach(r -> out.add(r.copy()));
        }
        return out;
      } finally {
        if (catalog instanceof AutoCloseable c) {
          c.close();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
