package io.tidemark.table.convert;

import org.apache.avro.Schema;

/** Finds the Avro writer schema of a schema-registry id (for {@code by_schema_id}). Implementations cache and are thread-safe. */
public interface AvroSchemaSource {

  /**
   * The Avro schema registered under {@code id}.
   *
   * @throws InvalidRecordException the id is unknown or is not an Avro schema (bad data)
   * @throws ConversionFailedException the registry could not be asked (not the record's fault)
   */
  Schema avroSchema(int id) throws InvalidRecordException, ConversionFailedException;
}
