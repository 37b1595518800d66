package io.tidemark.registry.schema.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/** A parsed JSON Schema with the documents its references name. Immutable. */
public final class JsonSchemaDocument implements ParsedSchema {
  private final JsonNode root;
  private final List<SchemaReference> references;
  private final Map<String, JsonNode> documents;
  private final String canonical;

  JsonSchemaDocument(JsonNode root, List<SchemaReference> references, Map<String, JsonNode> documents) {
    this.root = root;
    this.references = List.copyOf(references);
    this.documents = Map.copyOf(documents);
    try {
      this.canonical = JsonSchemaFormat.JSON.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The schema document, for validators and converters. */
  public JsonNode root() {
    return root;
  }

  /** The referenced schemas by reference name, for $refs into them (converters). */
  public Map<String, JsonNode> documents() {
    return documents;
  }

  @Override
  public SchemaType type() {
    return SchemaType.JSON;
  }

  @Override
  public String canonical() {
    return canonical;
  }

  @Override
  public List<SchemaReference> references() {
    return references;
  }

  /** Object keys sorted at every level; array order (enum, required, items) kept as written. */
  @Override
  public ParsedSchema normalize() {
    return new JsonSchemaDocument(sorted(root), references, documents);
  }

  private static JsonNode sorted(JsonNode node) {
    if (node.isObject()) {
      List<String> names = new ArrayList<>();
      node.fieldNames().forEachRemaining(names::add);
      names.sort(null);
      ObjectNode copy = JsonSchemaFormat.JSON.createObjectNode();
      for (String name : names) {
        copy.set(name, sorted(node.get(name)));
      }
      return copy;
    }
    if (node.isArray()) {
      var copy = JsonSchemaFormat.JSON.createArrayNode();
      for (Iterator<JsonNode> it = node.elements(); it.hasNext(); ) {
        copy.add(sorted(it.next()));
      }
      return copy;
    }
    return node;
  }

  @Override
  public List<String> readerIncompatibilities(ParsedSchema writer) {
    return new JsonSchemaCompatibility(this, (JsonSchemaDocument) writer).check();
  }
}
