package io.tidemark.registry.schema;

import java.util.List;

/** Parses one schema language. Stateless and thread-safe. */
public interface SchemaFormat {

  SchemaType type();

  /**
   * Parses {@code text}. {@code dependencies} are the referenced schemas (transitively, each after
   * the ones it references), each with the name the referring schema uses for it.
   *
   * @throws InvalidSchemaException when the text is not a valid schema of this language
   */
  ParsedSchema parse(String text, List<SchemaReference> references, List<ResolvedReference> dependencies);

  /** A referenced schema's text under the name its referrer uses. */
  record ResolvedReference(String name, String schema) {}
}
