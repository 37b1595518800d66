package io.tidemark.registry.schema;

import java.util.List;

/**
 * A schema the registry understood: its language, the canonical text that is stored and compared
 * (so that whitespace or key order does not create new versions), its references, and the rules of
 * its language for reading data written with another schema. Immutable and thread-safe.
 */
public interface ParsedSchema {

  SchemaType type();

  /** The text stored in the log and returned by the API. */
  String canonical();

  List<SchemaReference> references();

  /** The form {@code normalize=true} registers: equivalent schemas normalize to the same text. */
  ParsedSchema normalize();

  /**
   * Why data written with {@code writer} cannot be read with this schema as the reader; empty when it
   * can. {@code writer} is of the same {@link #type()}.
   */
  List<String> readerIncompatibilities(ParsedSchema writer);
}
