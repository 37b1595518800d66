package io.tidemark.registry.schema.protobuf;

import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaFormat;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.List;

/** Protobuf schemas. */
public final class ProtobufFormat implements SchemaFormat {
  @Override
  public SchemaType type() {
    return SchemaType.PROTOBUF;
  }

  @Override
  public ParsedSchema parse(String text, List<SchemaReference> references, List<ResolvedReference> dependencies) {
    throw new InvalidSchemaException("JSON Schema not yet supported");
  }
}
