package io.tidemark.registry.schema.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SpecVersion.VersionFlag;
import com.networknt.schema.SpecVersionDetector;
import com.networknt.schema.ValidationMessage;
import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaFormat;
import io.tidemark.registry.schema.SchemaLimits;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * JSON Schema documents (drafts 4, 6, 7, 2019-09, 2020-12; draft-07 when {@code $schema} is absent).
 * A schema is valid when it is a JSON object or boolean that validates against its draft's
 * meta-schema (checked with networknt's json-schema-validator, meta-schemas from its jar, never the
 * network). Referenced schemas are kept by reference name so {@code $ref}s to them resolve for the
 * compatibility rules in {@link JsonSchemaCompatibility}.
 */
public final class JsonSchemaFormat implements SchemaFormat {
  static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  private static final Map<VersionFlag, JsonSchema> META_SCHEMAS = new EnumMap<>(VersionFlag.class);

  @Override
  public SchemaType type() {
    return SchemaType.JSON;
  }

  @Override
  public ParsedSchema parse(String text, List<SchemaReference> references, List<ResolvedReference> dependencies) {
    JsonNode root = read(text, "schema");
    validate(root, "schema");
    Map<String, JsonNode> documents = new LinkedHashMap<>();
    for (ResolvedReference dependency : dependencies) {
      documents.put(dependency.name(), read(dependency.schema(), "referenced schema " + dependency.name()));
    }
    return new JsonSchemaDocument(root, references, documents);
  }

  private static JsonNode read(String text, String what) {
    SchemaLimits.checkJsonDepth(text, "the JSON Schema (" + what + ")");
    try {
      JsonNode node = JSON.readTree(text);
      if (node == null || !(node.isObject() || node.isBoolean())) {
        throw new InvalidSchemaException("Invalid JSON Schema: the " + what + " must be a JSON object or boolean");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw new InvalidSchemaException("Invalid JSON Schema: the " + what + " is not JSON: " + e.getOriginalMessage(), e);
    }
  }

  private static void validate(JsonNode root, String what) {
    if (root.isBoolean()) {
      return;
    }
    VersionFlag version;
    try {
      version = SpecVersionDetector.detectOptionalVersion(root, false).orElse(VersionFlag.V7);
    } catch (RuntimeException e) {
      throw new InvalidSchemaException("Invalid JSON Schema: unsupported $schema " + root.path("$schema"), e);
    }
    Set<ValidationMessage> problems;
    try {
      problems = metaSchema(version).validate(root);
    } catch (RuntimeException e) {
      throw new InvalidSchemaException("Invalid JSON Schema: " + e.getMessage(), e);
    }
    if (!problems.isEmpty()) {
      throw new InvalidSchemaException("Invalid JSON Schema (" + what + "): " + problems.stream()
          .map(ValidationMessage::getMessage).sorted().collect(Collectors.joining("; ")));
    }
  }

  private static JsonSchema metaSchema(VersionFlag version) {
    synchronized (META_SCHEMAS) {
      return META_SCHEMAS.computeIfAbsent(version,
          v -> JsonSchemaFactory.getInstance(v).getSchema(SchemaLocation.of(v.getId())));
    }
  }
}
