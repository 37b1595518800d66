package io.tidemark.broker.group;

import io.tidemark.broker.topic.TopicInfo;
import io.tidemark.broker.topic.TopicRegistry;
import java.util.Collection;
import java.util.Optional;
import org.apache.kafka.common.Uuid;

/**
 * What the group coordinator needs to know about topics: names, ids and partition counts, read
 * from the topic registry's current immutable state. Callable from any thread.
 */
interface TopicView {

  /** One topic: its name, permanent id, partition count and whether it is internal. */
  record Topic(String name, Uuid id, int partitions, boolean internal) {}

  Optional<Topic> byName(String name);

  Optional<Topic> byId(Uuid id);

  Collection<Topic> all();

  /** A value that changes whenever any topic changes (for caches). */
  Object version();

  static TopicView of(TopicRegistry registry) {
    return new TopicView() {
      @Override
      public Optional<Topic> byName(String name) {
        return registry.topic(name).map(TopicView::topic);
      }

      @Override
      public Optional<Topic> byId(Uuid id) {
        return registry.topic(id).map(TopicView::topic);
      }

      @Override
      public Collection<Topic> all() {
        return registry.state().topics().values().stream().map(TopicView::topic).toList();
      }

      @Override
      public Object version() {
        return registry.state();
      }
    };
  }

  private static Topic topic(TopicInfo t) {
    return new Topic(t.name(), t.id(), t.partitions().size(), t.internal());
  }
}
