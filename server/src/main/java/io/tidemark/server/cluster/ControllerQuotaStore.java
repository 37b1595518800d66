package io.tidemark.server.cluster;

import io.tidemark.broker.quota.QuotaEntities;
import io.tidemark.broker.quota.QuotaStore;
import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.ControllerRequest;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord.Config;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * The broker's {@link QuotaStore} on the replicated controller: each quota value is a config record
 * of resource type {@link Config#CLIENT_QUOTA}, named by the entity's text form
 * ({@link QuotaEntities}), written with one AlterClientQuotas controller request; a write completes
 * once this node's image applied it. Reads are converted once per image. Thread-safe.
 */
final class ControllerQuotaStore implements QuotaStore {
  private final ControllerClient client;
  private final MetadataReplica replica;
  private volatile Cached cached = new Cached(null, Map.of());

  private record Cached(MetadataImage image, Map<ClientQuotaEntity, Map<String, Double>> quotas) {}

  ControllerQuotaStore(ControllerClient client, MetadataReplica replica) {
    this.client = client;
    this.replica = replica;
  }

  @Override
  public Map<ClientQuotaEntity, Map<String, Double>> quotas() {
    MetadataImage image = replica.image();
    Cached c = cached;
    if (c.image() != image) {
      Map<ClientQuotaEntity, Map<String, Double>> out = new HashMap<>();
      for (Config q : image.configsOf(Config.CLIENT_QUOTA)) {
        try {
          out.computeIfAbsent(QuotaEntities.decode(q.resourceName()), e -> new HashMap<>())
              .put(q.key(), Double.parseDouble(q.value()));
        } catch (RuntimeException e) {
          // a value the broker validated cannot fail to parse; skip rather than stop serving
        }
      }
      Map<ClientQuotaEntity, Map<String, Double>> frozen = new HashMap<>();
      out.forEach((e, v) -> frozen.put(e, Map.copyOf(v)));
      c = new Cached(image, Map.copyOf(frozen));
      cached = c;
    }
    return c.quotas();
  }

  @Override
  public CompletableFuture<Void> alter(List<Change> changes) {
    List<ControllerRequest.QuotaChange> asked = changes.stream().map(ch -> new ControllerRequest.QuotaChange(
        QuotaEntities.encode(ch.entity()), ch.key(), ch.value() == null ? null : Double.toString(ch.value()))).toList();
    return client.alterClientQuotas(asked).thenCompose(v -> replica.awaitOffset(client.lastWriteOffset()))
        .thenApply(v -> null);
  }
}
