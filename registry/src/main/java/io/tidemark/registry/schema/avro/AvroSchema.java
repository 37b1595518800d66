package io.tidemark.registry.schema.avro;

import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.Incompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityResult;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;

/** A parsed Avro schema with the referenced schemas it was parsed against. Immutable. */
public final class AvroSchema implements ParsedSchema {
  private final Schema schema;
  private final List<Schema> referenced;
  private final List<SchemaReference> references;
  private final String canonical;

  AvroSchema(Schema schema, List<Schema> referenced, List<SchemaReference> references) {
    this.schema = schema;
    this.referenced = List.copyOf(referenced);
    this.references = List.copyOf(references);
    this.canonical = referenced.isEmpty() ? schema.toString() : schema.toString(referenced, false);
  }

  /** The Avro schema, for encoders and decoders. */
  public Schema schema() {
    return schema;
  }

  @Override
  public SchemaType type() {
    return SchemaType.AVRO;
  }

  @Override
  public String canonical() {
    return canonical;
  }

  @Override
  public List<SchemaReference> references() {
    return references;
  }

  /** Avro's own printing is already canonical in key order and spacing; names stay as written. */
  @Override
  public ParsedSchema normalize() {
    return this;
  }

  @Override
  public List<String> readerIncompatibilities(ParsedSchema writer) {
    Schema writerSchema = ((AvroSchema) writer).schema;
    SchemaCompatibilityResult result =
        SchemaCompatibility.checkReaderWriterCompatibility(schema, writerSchema).getResult();
    if (result.getCompatibility() == SchemaCompatibilityType.COMPATIBLE) {
      return List.of();
    }
    List<String> messages = new ArrayList<>();
    for (Incompatibility i : result.getIncompatibilities()) {
      messages.add("{errorType:'" + i.getType() + "', description:'" + i.getMessage() + "', location:'"
          + i.getLocation() + "'}");
    }
    return messages;
  }
}
