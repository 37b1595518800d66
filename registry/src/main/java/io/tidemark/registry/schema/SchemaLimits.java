package io.tidemark.registry.schema;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * How deep a schema may nest, checked before any parser recurses over it, so that a hostile schema
 * gets a 422 with the bound instead of a {@code StackOverflowError} in a parser, a compatibility
 * check or a table converter. Protobuf: {@value #MAX_NESTING_DEPTH} levels of nested message
 * declarations (protobuf-java's own decoder refuses messages nested deeper than 100). Avro and JSON
 * Schema: {@value #MAX_JSON_DEPTH} levels of JSON nesting, which is about {@value #MAX_NESTING_DEPTH}
 * nested Avro records (each costs an object, a fields array, a field object and its type).
 * Stateless.
 */
public final class SchemaLimits {

  /** Nested type declarations (Protobuf messages). */
  public static final int MAX_NESTING_DEPTH = 64;
  /** JSON nesting of an Avro or JSON Schema text. */
  public static final int MAX_JSON_DEPTH = 4 * MAX_NESTING_DEPTH;

  private static final JsonFactory JSON = new JsonFactory();

  private SchemaLimits() {}

  /**
   * Fails with {@link InvalidSchemaException} when {@code text} nests JSON deeper than
   * {@link #MAX_JSON_DEPTH}; text that is not JSON passes (the format's parser reports it).
   */
  public static void checkJsonDepth(String text, String what) {
    try (JsonParser parser = JSON.createParser(text)) {
      int depth = 0;
      for (JsonToken token = parser.nextToken(); token != null; token = parser.nextToken()) {
        if (token.isStructStart() && ++depth > MAX_JSON_DEPTH) {
          throw new InvalidSchemaException(what + " nests deeper than " + MAX_JSON_DEPTH + " JSON levels (line "
              + parser.currentLocation().getLineNr() + "); at most about " + MAX_NESTING_DEPTH
              + " nested types are accepted: flatten it or split it into referenced schemas");
        } else if (token.isStructEnd()) {
          depth--;
        }
      }
    } catch (IOException e) {
      // not JSON, or JSON too deep for the scanner itself (deeper than the bound anyway): the parser says which
    }
  }
}
