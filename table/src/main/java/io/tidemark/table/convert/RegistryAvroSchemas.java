package io.tidemark.table.convert;

import io.tidemark.registry.client.SchemaRegistryClient;
import io.tidemark.registry.schema.ParsedSchema;
import org.apache.avro.Schema;

/**
 * The schema registry client as a schema source, kept under its first name for callers that pass it
 * where an {@link AvroSchemaSource} is expected: it serves every format ({@link SchemaSource}),
 * delegating to {@link RegistrySchemas} with the default refresh interval on the system clock.
 * Thread-safe.
 */
public final class RegistryAvroSchemas implements AvroSchemaSource, SchemaSource {

  private final RegistrySchemas schemas;

  public RegistryAvroSchemas(SchemaRegistryClient client) {
    this.schemas = new RegistrySchemas(client, System::currentTimeMillis);
  }

  @Override
  public Schema avroSchema(int id) throws InvalidRecordException, ConversionFailedException {
    return schemas.avroSchema(id);
  }

  @Override
  public ParsedSchema schemaById(int id) throws InvalidRecordException, ConversionFailedException {
    return schemas.schemaById(id);
  }

  @Override
  public Latest latest(String subject) throws InvalidRecordException, ConversionFailedException {
    return schemas.latest(subject);
  }

  @Override
  public boolean refreshLatest(String subject) {
    return schemas.refreshLatest(subject);
  }
}
