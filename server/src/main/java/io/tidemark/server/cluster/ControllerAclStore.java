package io.tidemark.server.cluster;

import io.tidemark.broker.acl.AclStore;
import io.tidemark.broker.acl.Acls;
import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.image.PersistentMap;
import io.tidemark.metadata.record.MetadataRecord.AccessControlEntry;
import io.tidemark.metadata.record.MetadataRecord.AclEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The broker's {@link AclStore} on the replicated controller: every ACL is an
 * {@code AccessControlEntry} record in the metadata image (Kafka's codes for types, operations and
 * permissions), written with CreateAcls / DeleteAcls controller requests; a write completes once
 * this node's image has applied it. Reads convert the image's ACL map, cached per map instance (the
 * map is persistent, so an unchanged map is the same object). Thread-safe.
 */
final class ControllerAclStore implements AclStore {
  private final ControllerClient client;
  private final MetadataReplica replica;
  private volatile Cached cached = new Cached(PersistentMap.empty(), Acls.EMPTY);

  private record Cached(PersistentMap<AclEntry, AccessControlEntry> source, Acls acls) {}

  ControllerAclStore(ControllerClient client, MetadataReplica replica) {
    this.client = client;
    this.replica = replica;
  }

  @Override
  public Acls acls() {
    PersistentMap<AclEntry, AccessControlEntry> now = replica.image().acls();
    Cached c = cached;
    if (c.source() != now) {
      List<AclBinding> bindings = new ArrayList<>(now.size());
      for (AccessControlEntry e : now.values()) {
        bindings.add(toBinding(e.entry()));
      }
      c = new Cached(now, new Acls(bindings));
      cached = c;
    }
    return c.acls();
  }

  @Override
  public CompletableFuture<Void> create(List<AclBinding> bindings) {
    return client.createAcls(bindings.stream().map(ControllerAclStore::toEntry).toList())
        .thenCompose(v -> replica.awaitOffset(client.lastWriteOffset())).thenApply(v -> null);
  }

  @Override
  public CompletableFuture<List<Boolean>> delete(List<AclBinding> bindings) {
    return client.deleteAcls(bindings.stream().map(ControllerAclStore::toEntry).toList())
        .thenCompose(present -> replica.awaitOffset(client.lastWriteOffset()).thenApply(v -> present));
  }

  static AclEntry toEntry(AclBinding b) {
    return new AclEntry(b.pattern().resourceType().code(), b.pattern().name(), b.pattern().patternType().code(),
        b.entry().principal(), b.entry().host(), b.entry().operation().code(), b.entry().permissionType().code());
  }

  static AclBinding toBinding(AclEntry e) {
    return new AclBinding(new ResourcePattern(ResourceType.fromCode(e.resourceType()), e.resourceName(),
        PatternType.fromCode(e.patternType())), new org.apache.kafka.common.acl.AccessControlEntry(e.principal(), e.host(),
        AclOperation.fromCode(e.operation()), AclPermissionType.fromCode(e.permission())));
  }
}
