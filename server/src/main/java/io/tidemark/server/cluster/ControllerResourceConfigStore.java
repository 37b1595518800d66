package io.tidemark.server.cluster;

import io.tidemark.broker.cluster.ResourceConfigStore;
import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.ControllerRequest;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.image.MetadataListener;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.Config;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The broker's {@link ResourceConfigStore} on the replicated controller: each value is a config
 * record of its resource type (4 for a broker, 16 for client metrics), written with one AlterConfigs
 * controller request per change set; a write completes once this node's image applied it. Reads
 * are converted once per image and type; listeners hear of every image whose configs changed.
 * Thread-safe.
 */
final class ControllerResourceConfigStore implements ResourceConfigStore {
  private final ControllerClient client;
  private final MetadataReplica replica;
  private volatile Cached cached = new Cached(null, Map.of());

  private record Cached(Object configs, Map<Byte, Map<String, Map<String, String>>> byType) {}

  ControllerResourceConfigStore(ControllerClient client, MetadataReplica replica) {
    this.client = client;
    this.replica = replica;
  }

  @Override
  public Map<String, Map<String, String>> configs(byte resourceType) {
    MetadataImage image = replica.image();
    Cached c = cached;
    if (c.configs() != image.configs()) {
      c = new Cached(image.configs(), new java.util.concurrent.ConcurrentHashMap<>());
      cached = c;
    }
    Map<Byte, Map<String, Map<String, String>>> byType = c.byType();
    Map<String, Map<String, String>> found = byType.get(resourceType);
    if (found == null) {
      Map<String, Map<String, String>> out = new HashMap<>();
      for (Config v : image.configsOf(resourceType)) {
        out.computeIfAbsent(v.resourceName(), n -> new HashMap<>()).put(v.key(), v.value());
      }
      Map<String, Map<String, String>> frozen = new HashMap<>();
      out.forEach((n, v) -> frozen.put(n, Map.copyOf(v)));
      found = Map.copyOf(frozen);
      byType.put(resourceType, found);
    }
    return found;
  }

  @Override
  public CompletableFuture<Void> alter(List<Change> changes) {
    List<ControllerRequest.ConfigChange> asked = changes.stream().map(ch -> new ControllerRequest.ConfigChange(ch.resourceType(),
        ch.resourceName(), ch.key(), ch.value())).toList();
    return client.alterConfigs(asked).thenCompose(v -> replica.awaitOffset(client.lastWriteOffset())).thenApply(v -> null);
  }

  @Override
  public void onChange(Runnable listener) {
    replica.addListener(new MetadataListener() {
      private Object seen;

      @Override
      public void onImage(MetadataImage image, List<MetadataRecord> records) {
        if (image.configs() != seen) {
          seen = image.configs();
          listener.run();
        }
      }
    });
  }
}
