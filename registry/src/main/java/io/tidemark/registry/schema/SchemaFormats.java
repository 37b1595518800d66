package io.tidemark.registry.schema;

import io.tidemark.registry.schema.avro.AvroFormat;
import io.tidemark.registry.schema.json.JsonSchemaFormat;
import io.tidemark.registry.schema.protobuf.ProtobufFormat;
import java.util.EnumMap;
import java.util.Map;

/** The parser of each {@link SchemaType}. Immutable. */
public final class SchemaFormats {
  private final Map<SchemaType, SchemaFormat> formats = new EnumMap<>(SchemaType.class);

  public SchemaFormats() {
    register(new AvroFormat());
    register(new JsonSchemaFormat());
    register(new ProtobufFormat());
  }

  private void register(SchemaFormat format) {
    formats.put(format.type(), format);
  }

  public SchemaFormat format(SchemaType type) {
    return formats.get(type);
  }
}
