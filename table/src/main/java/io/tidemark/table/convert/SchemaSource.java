package io.tidemark.table.convert;

import io.tidemark.registry.schema.ParsedSchema;

/**
 * Finds registered schemas of every format (Avro, JSON Schema, Protobuf), with their references
 * resolved, for {@code by_schema_id} and {@code by_latest_schema}. Implementations cache (schemas by
 * id never change; the latest version of a subject is refreshed on an interval) and are thread-safe.
 */
public interface SchemaSource {

  /** A subject's newest version as last fetched. */
  record Latest(String subject, int version, int id, ParsedSchema schema) {}

  /**
   * The schema registered under {@code id}.
   *
   * @throws InvalidRecordException the id is unknown or its text does not parse (bad data)
   * @throws ConversionFailedException the registry could not be asked (not the record's fault)
   */
  ParsedSchema schemaById(int id) throws InvalidRecordException, ConversionFailedException;

  /**
   * The latest version of {@code subject}, at most the source's refresh interval old.
   *
   * @throws InvalidRecordException the latest version's text does not parse
   * @throws ConversionFailedException the registry could not be asked, or the subject has no live version
   */
  Latest latest(String subject) throws InvalidRecordException, ConversionFailedException;

  /**
   * Asks for the latest version of {@code subject} to be fetched again before its interval is up
   * (a record did not decode with the cached one); a source may ignore calls closer together than
   * it allows. Returns whether the next {@link #latest} call will ask the registry.
   */
  boolean refreshLatest(String subject);
}
