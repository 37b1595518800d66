package io.tidemark.metadata.controller;

import static io.tidemark.metadata.controller.Checks.require;

import io.tidemark.metadata.controller.ControllerRequest.QuotaChange;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.AccessControlEntry;
import io.tidemark.metadata.record.MetadataRecord.AclEntry;
import io.tidemark.metadata.record.MetadataRecord.Config;
import io.tidemark.metadata.record.MetadataRecord.RemoveAccessControlEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Handlers for ACLs and client quotas. The broker validates bindings and matches DeleteAcls
 * filters (it knows Kafka's semantics); the controller stores exactly the entries it is given, so
 * the same request always computes the same records. An ACL is its own identity (Kafka dedups equal
 * bindings too). Client quotas are {@link Config} records of resource type
 * {@link Config#CLIENT_QUOTA}. Pure; stateless.
 */
final class AccessControl {
  /** Bound on one request's entries (Kafka's tools send a handful; a bulk import stays far below). */
  static final int MAX_ENTRIES = 10_000;

  private AccessControl() {}

  static ControllerResult createAcls(MetadataImage image, List<AclEntry> entries) {
    require(entries.size() <= MAX_ENTRIES, ErrorCode.INVALID_REQUEST,
        entries.size() + " ACLs in one request; at most " + MAX_ENTRIES);
    List<MetadataRecord> records = new ArrayList<>();
    TreeSet<AclEntry> seen = new TreeSet<>();
    for (AclEntry e : entries) {
      if (!image.acls().containsKey(e) && seen.add(e)) {
        records.add(new AccessControlEntry(e));
      }
    }
    return ControllerResult.of(records, ReplyBodies.empty());
  }

  /** Removes the entries present; the reply holds one boolean per entry: whether it was present. */
  static ControllerResult deleteAcls(MetadataImage image, List<AclEntry> entries) {
    require(entries.size() <= MAX_ENTRIES, ErrorCode.INVALID_REQUEST,
        entries.size() + " ACLs in one request; at most " + MAX_ENTRIES);
    List<MetadataRecord> records = new ArrayList<>();
    TreeSet<AclEntry> removed = new TreeSet<>();
    FieldWriter reply = new FieldWriter().writeInt(entries.size());
    for (AclEntry e : entries) {
      boolean present = image.acls().containsKey(e) && removed.add(e);
      if (present) {
        records.add(new RemoveAccessControlEntry(e));
      }
      reply.writeBoolean(present);
    }
    return ControllerResult.of(records, reply.toByteArray());
  }

  static ControllerResult alterClientQuotas(List<QuotaChange> changes) {
    require(changes.size() <= MAX_ENTRIES, ErrorCode.INVALID_REQUEST,
        changes.size() + " quota changes in one request; at most " + MAX_ENTRIES);
    List<MetadataRecord> records = new ArrayList<>(changes.size());
    for (QuotaChange c : changes) {
      require(c.entity() != null && !c.entity().isEmpty() && c.key() != null && !c.key().isEmpty(),
          ErrorCode.INVALID_REQUEST, "a client quota needs an entity and a key");
      records.add(new Config(Config.CLIENT_QUOTA, c.entity(), c.key(), c.value()));
    }
    return ControllerResult.of(records, ReplyBodies.empty());
  }

  /** Config values of any resource type but client quotas (those go through {@link #alterClientQuotas}), in one entry. */
  static ControllerResult alterConfigs(List<ControllerRequest.ConfigChange> changes) {
    require(changes.size() <= MAX_ENTRIES, ErrorCode.INVALID_REQUEST,
        changes.size() + " config changes in one request; at most " + MAX_ENTRIES);
    List<MetadataRecord> records = new ArrayList<>(changes.size());
    for (ControllerRequest.ConfigChange c : changes) {
      require(c.resourceName() != null && c.key() != null && !c.key().isEmpty() && c.resourceType() != Config.CLIENT_QUOTA,
          ErrorCode.INVALID_REQUEST, "a config change needs a resource name, a key and a resource type other than client quotas");
      records.add(new Config(c.resourceType(), c.resourceName(), c.key(), c.value()));
    }
    return ControllerResult.of(records, ReplyBodies.empty());
  }
}
