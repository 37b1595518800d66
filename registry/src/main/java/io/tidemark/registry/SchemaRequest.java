package io.tidemark.registry;

import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.List;

/**
 * A schema as a client sends it to register, look up or check: text, type, references, and in IMPORT
 * mode the id and version to use (null: the registry picks).
 */
public record SchemaRequest(String schema, SchemaType type, List<SchemaReference> references, Integer id, Integer version) {
  public SchemaRequest {
    references = references == null ? List.of() : List.copyOf(references);
  }

  public static SchemaRequest of(SchemaType type, String schema) {
    return new SchemaRequest(schema, type, List.of(), null, null);
  }
}
