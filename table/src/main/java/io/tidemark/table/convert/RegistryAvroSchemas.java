package io.tidemark.table.convert;

import io.tidemark.registry.client.SchemaRegistryClient;
import io.tidemark.registry.client.SchemaRegistryClientException;
import io.tidemark.registry.schema.SchemaType;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;

/**
 * {@link AvroSchemaSource} over the built-in schema registry's client (which caches by id).
 * Schemas with references are not resolved yet. Thread-safe like the client.
 */
public final class RegistryAvroSchemas implements AvroSchemaSource {

  private final SchemaRegistryClient client;

  public RegistryAvroSchemas(SchemaRegistryClient client) {
    this.client = client;
  }

  @Override
  public Schema avroSchema(int id) throws InvalidRecordException, ConversionFailedException {
    SchemaRegistryClient.RegisteredSchema registered;
    try {
      registered = client.schemaById(id);
    } catch (SchemaRegistryClientException e) {
      if (e.httpStatus() == 404) {
        throw new InvalidRecordException("schema id " + id + " is not registered", e);
      }
      throw new ConversionFailedException("schema registry lookup of id " + id + " failed: " + e.getMessage(), e);
    }
    if (registered.type() != SchemaType.AVRO) {
      throw new InvalidRecordException("schema id " + id + " is " + registered.type() + "; only Avro is converted yet");
    }
    try {
      return new Schema.Parser().parse(registered.schema());
    } catch (SchemaParseException e) {
      throw new InvalidRecordException("schema id " + id + " does not parse as Avro: " + e.getMessage(), e);
    }
  }
}
