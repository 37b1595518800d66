package io.tidemark.registry.schema;

import java.util.Locale;

/** The schema languages the registry understands; the names are those of the Confluent API. */
public enum SchemaType {
  AVRO,
  JSON,
  PROTOBUF;

  /** The type named in a request; null or empty means AVRO (the API default); unknown names return null. */
  public static SchemaType parse(String name) {
    if (name == null || name.isEmpty()) {
      return AVRO;
    }
    try {
      return valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
