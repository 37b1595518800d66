package io.tidemark.registry.schema;

import java.util.Objects;

/**
 * A schema's use of another registered schema: {@code name} is how the referring schema names it
 * (an Avro full name, a JSON Schema {@code $ref} URL, a Protobuf import path), {@code subject} and
 * {@code version} say which registered schema it is.
 */
public record SchemaReference(String name, String subject, int version) {
  public SchemaReference {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(subject, "subject");
  }
}
