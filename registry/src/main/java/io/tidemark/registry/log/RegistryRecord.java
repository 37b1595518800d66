package io.tidemark.registry.log;

import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.List;

/**
 * One decoded record of the {@code _schemas} log. Each kind matches a Confluent key type so that the
 * log has the layout Confluent's registry writes; {@link RecordCodec} turns them into bytes and back.
 */
public sealed interface RegistryRecord {

  /** A schema registered as {@code subject}/{@code version} with global {@code id}; {@code deleted} marks a soft delete. */
  record SchemaRecord(String subject, int version, int id, SchemaType type, String schema,
                      List<SchemaReference> references, boolean deleted) implements RegistryRecord {
    public SchemaRecord {
      references = List.copyOf(references);
    }

    public SchemaRecord softDeleted() {
      return new SchemaRecord(subject, version, id, type, schema, references, true);
    }
  }

  /** Permanent delete of one version (a tombstone on the SCHEMA key). */
  record SchemaTombstone(String subject, int version) implements RegistryRecord {}

  /** Compatibility level of a subject, or global when {@code subject} is null; a null level removes it. */
  record ConfigRecord(String subject, String compatibilityLevel) implements RegistryRecord {}

  /** Mode of a subject, or global when {@code subject} is null; a null mode removes it. */
  record ModeRecord(String subject, String mode) implements RegistryRecord {}

  /** Soft delete of every version of {@code subject} up to {@code version}. */
  record DeleteSubjectRecord(String subject, int version) implements RegistryRecord {}

  /** A record kind this registry does not use (NOOP, or a newer Confluent key type): skipped on replay. */
  record Ignored(String keyType) implements RegistryRecord {}
}
