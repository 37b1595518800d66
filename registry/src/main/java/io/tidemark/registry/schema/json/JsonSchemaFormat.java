package io.tidemark.registry.schema.json;

import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaFormat;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.List;

/** JSON Schema documents. */
public final class JsonSchemaFormat implements SchemaFormat {
  @Override
  public SchemaType type() {
    return SchemaType.JSON;
  }

  @Override
  public ParsedSchema parse(String text, List<SchemaReference> references, List<ResolvedReference> dependencies) {
    throw new InvalidSchemaException("JSON Schema not yet supported");
  }
}
