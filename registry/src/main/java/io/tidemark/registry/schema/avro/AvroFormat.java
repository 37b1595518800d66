package io.tidemark.registry.schema.avro;

import com.fasterxml.jackson.core.JacksonException;
import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaFormat;
import io.tidemark.registry.schema.SchemaLimits;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;

/**
 * Avro schemas, parsed by Avro itself with default values validated. Referenced schemas are parsed
 * first into the same parser so their named types resolve; the stored text leaves them out again
 * (they stay references). Compatibility is Avro's reader/writer resolution
 * ({@link org.apache.avro.SchemaCompatibility}).
 */
public final class AvroFormat implements SchemaFormat {

  @Override
  public SchemaType type() {
    return SchemaType.AVRO;
  }

  @Override
  public ParsedSchema parse(String text, List<SchemaReference> references, List<ResolvedReference> dependencies) {
    Schema.Parser parser = new Schema.Parser().setValidateDefaults(true);
    List<Schema> referenced = new ArrayList<>();
    for (ResolvedReference dependency : dependencies) {
      SchemaLimits.checkJsonDepth(dependency.schema(), "the referenced Avro schema " + dependency.name());
    }
    SchemaLimits.checkJsonDepth(text, "the Avro schema");
    try {
      for (ResolvedReference dependency : dependencies) {
        referenced.add(parser.parse(dependency.schema()));
      }
    } catch (RuntimeException e) {
      throw new InvalidSchemaException("a referenced Avro schema does not parse: " + reason(e), e);
    }
    try {
      Schema schema = parser.parse(text);
      return new AvroSchema(schema, referenced, references);
    } catch (RuntimeException e) {
      throw new InvalidSchemaException("Invalid Avro schema: " + reason(e), e);
    }
  }

  /** Avro wraps Jackson's parse errors with the exception's class name in front; keep only Jackson's words. */
  private static String reason(RuntimeException e) {
    return e.getCause() instanceof JacksonException json ? "not JSON: " + json.getOriginalMessage() : e.getMessage();
  }
}
