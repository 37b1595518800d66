package io.tidemark.server.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.table.rest.CatalogAccess;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/** Goal: the REST catalog authorizes a table as the table topic that writes it, else as the topic {@code <namespace>.<table>}. */
class TableTopicsAclTest {

  @Test
  void aTableIsAuthorizedAsTheTopicThatWritesIt() {
    List<TopicInfo> topics = List.of(
        topic("orders", Map.of("table.topic.enable", "true")),
        topic("clicks", Map.of("table.topic.enable", "true", "table.topic.namespace", "web", "table.topic.table.name", "events")),
        topic("plain", Map.of()));
    CatalogAccess.TableTopics resolve = TableRestEndpoint.tableTopics(() -> topics);
    assertThat(resolve.apply(TableIdentifier.of("default", "orders"))).isEqualTo("orders");
    assertThat(resolve.apply(TableIdentifier.of("web", "events"))).isEqualTo("clicks");
    // a table topic's name in another namespace, and a topic that writes no table, are not that topic
    assertThat(resolve.apply(TableIdentifier.of("web", "orders"))).isEqualTo("web.orders");
    assertThat(resolve.apply(TableIdentifier.of("default", "plain"))).isEqualTo("default.plain");
  }

  private static TopicInfo topic(String name, Map<String, String> configs) {
    return new TopicInfo(name, Uuid.randomUuid(), false, configs, List.of());
  }
}
