package io.tidemark.registry.schema.json;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether every document valid under a writer JSON Schema is also valid under a reader schema, decided
 * by structural evolution rules (the ones Confluent documents for JSON Schema):
 * <ul>
 *   <li>types: a reader accepting fewer types is narrowed; integer widened to number is fine;</li>
 *   <li>objects: a property the writer may produce must be accepted by the reader: removing it from a
 *       closed reader ({@code additionalProperties: false}) is incompatible, adding a constrained
 *       property to a reader whose writer was open is incompatible (the writer could have produced
 *       anything under that name), adding one to a closed writer is fine; newly required properties,
 *       and closing an open content model, are incompatible;</li>
 *   <li>enums losing values, new or tighter bounds (maximum, minLength, maxItems...), new patterns;</li>
 *   <li>arrays by their items; oneOf/anyOf by matching each writer alternative to a reader one;</li>
 *   <li>{@code $ref}s are followed inside the document and into referenced schemas, cycles cut.</li>
 * </ul>
 * One instance per check; not thread-safe.
 */
final class JsonSchemaCompatibility {
  private static final List<String> UPPER_BOUNDS = List.of("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties");
  private static final List<String> LOWER_BOUNDS = List.of("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties");

  private final JsonSchemaDocument reader;
  private final JsonSchemaDocument writer;
  private final List<String> messages = new ArrayList<>();
  private final Set<String> visiting = new HashSet<>();

  JsonSchemaCompatibility(JsonSchemaDocument reader, JsonSchemaDocument writer) {
    this.reader = reader;
    this.writer = writer;
  }

  List<String> check() {
    compare(new Node(reader.root(), reader.root(), reader.documents()), new Node(writer.root(), writer.root(), writer.documents()), "#");
    return messages;
  }

  /** A schema node with the document its local {@code $ref}s resolve in. */
  private record Node(JsonNode schema, JsonNode document, Map<String, JsonNode> documents) {
    Node child(JsonNode child) {
      return new Node(child, document, documents);
    }
  }

  private Node resolve(Node node, int depth) {
    JsonNode schema = node.schema();
    if (depth > 32 || !schema.isObject() || !schema.has("$ref")) {
      return node;
    }
    String ref = schema.get("$ref").asText();
    int hash = ref.indexOf('#');
    String documentName = hash < 0 ? ref : ref.substring(0, hash);
    String pointer = hash < 0 ? "" : ref.substring(hash + 1);
    JsonNode document = documentName.isEmpty() ? node.document() : node.documents().get(documentName);
    if (document == null) {
      return node;
    }
    JsonNode target = pointer.isEmpty() ? document : document.at(pointer);
    if (target.isMissingNode()) {
      return node;
    }
    return resolve(new Node(target, document, node.documents()), depth + 1);
  }

  private void compare(Node readerNode, Node writerNode, String path) {
    Node r = resolve(readerNode, 0);
    Node w = resolve(writerNode, 0);
    String key = System.identityHashCode(r.schema()) + "/" + System.identityHashCode(w.schema());
    if (!visiting.add(key)) {
      return;
    }
    try {
      compareResolved(r, w, path);
    } finally {
      visiting.remove(key);
    }
  }

  private void compareResolved(Node r, Node w, String path) {
    JsonNode rs = r.schema();
    JsonNode ws = w.schema();
    if (acceptsAll(rs) || (ws.isBoolean() && !ws.asBoolean())) {
      return;
    }
    if (rs.isBoolean()) {
      report("SCHEMA_NARROWED", path, "the new schema accepts nothing where the old one accepted documents");
      return;
    }
    if (rs.has("$ref") && ws.has("$ref")) {
      if (!rs.get("$ref").equals(ws.get("$ref"))) {
        report("REFERENCE_CHANGED", path, "unresolvable $ref changed from " + ws.get("$ref") + " to " + rs.get("$ref"));
      }
      return;
    }
    if (combination(r, w, path)) {
      return;
    }
    types(rs, ws, path);
    enums(rs, ws, path);
    bounds(rs, ws, path);
    if (rs.has("properties") || ws.has("properties") || rs.has("required") || rs.has("additionalProperties")) {
      objects(r, w, path);
    }
    if (rs.has("items") || ws.has("items")) {
      arrays(r, w, path);
    }
    if (rs.has("not") && !rs.get("not").equals(ws.get("not"))) {
      report("NOT_TYPE_EXTENDED", path, "the new schema's 'not' changed");
    }
  }

  private static boolean acceptsAll(JsonNode schema) {
    if (schema.isBoolean()) {
      return schema.asBoolean();
    }
    if (!schema.isObject()) {
      return false;
    }
    for (var it = schema.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!Set.of("$schema", "$id", "id", "title", "description", "default", "examples", "$comment", "definitions", "$defs")
          .contains(name)) {
        return false;
      }
    }
    return true;
  }

  /** Handles oneOf/anyOf/allOf; returns true when the nodes were compared that way. */
  private boolean combination(Node r, Node w, String path) {
    List<JsonNode> rAlts = alternatives(r.schema());
    List<JsonNode> wAlts = alternatives(w.schema());
    if (rAlts == null && wAlts == null) {
      if (r.schema().has("allOf") || w.schema().has("allOf")) {
        JsonNode ra = r.schema().path("allOf");
        JsonNode wa = w.schema().path("allOf");
        if (ra.size() != wa.size()) {
          report("COMBINED_TYPE_CHANGED", path, "allOf changed from " + wa.size() + " to " + ra.size() + " subschemas");
          return true;
        }
        for (int i = 0; i < ra.size(); i++) {
          compare(r.child(ra.get(i)), w.child(wa.get(i)), path + "/allOf/" + i);
        }
        return true;
      }
      return false;
    }
    List<JsonNode> writerCases = wAlts == null ? List.of(w.schema()) : wAlts;
    List<JsonNode> readerCases = rAlts == null ? List.of(r.schema()) : rAlts;
    for (int i = 0; i < writerCases.size(); i++) {
      boolean matched = false;
      for (JsonNode readerCase : readerCases) {
        JsonSchemaCompatibility probe = new JsonSchemaCompatibility(reader, writer);
        probe.compare(r.child(readerCase), w.child(writerCases.get(i)), path);
        if (probe.messages.isEmpty()) {
          matched = true;
          break;
        }
      }
      if (!matched) {
        report("COMBINED_TYPE_SUBSCHEMAS_CHANGED", path, "the old schema's alternative " + i
            + " is not accepted by any alternative of the new schema");
      }
    }
    return true;
  }

  private static List<JsonNode> alternatives(JsonNode schema) {
    for (String keyword : List.of("oneOf", "anyOf")) {
      if (schema.isObject() && schema.has(keyword) && schema.get(keyword).isArray()) {
        List<JsonNode> list = new ArrayList<>();
        schema.get(keyword).forEach(list::add);
        return list;
      }
    }
    return null;
  }

  private void types(JsonNode rs, JsonNode ws, String path) {
    Set<String> rTypes = types(rs);
    if (rTypes == null) {
      return;
    }
    Set<String> wTypes = types(ws);
    if (wTypes == null) {
      report("TYPE_NARROWED", path, "the new schema restricts the type to " + rTypes + " where the old one accepted any type");
      return;
    }
    for (String t : wTypes) {
      boolean covered = rTypes.contains(t) || (t.equals("integer") && rTypes.contains("number"));
      if (!covered) {
        report(rTypes.size() < wTypes.size() ? "TYPE_NARROWED" : "TYPE_CHANGED", path,
            "type '" + t + "' of the old schema is not accepted by the new schema's " + rTypes);
      }
    }
  }

  private static Set<String> types(JsonNode schema) {
    JsonNode type = schema.get("type");
    if (type == null) {
      if (schema.has("properties") || schema.has("additionalProperties") || schema.has("required")) {
        return null;
      }
      return null;
    }
    Set<String> result = new LinkedHashSet<>();
    if (type.isArray()) {
      type.forEach(t -> result.add(t.asText()));
    } else {
      result.add(type.asText());
    }
    return result;
  }

  private void enums(JsonNode rs, JsonNode ws, String path) {
    JsonNode rEnum = rs.has("const") ? single(rs.get("const")) : rs.get("enum");
    if (rEnum == null) {
      return;
    }
    JsonNode wEnum = ws.has("const") ? single(ws.get("const")) : ws.get("enum");
    if (wEnum == null) {
      report("ENUM_ARRAY_NARROWED", path, "the new schema limits values to " + rEnum + " where the old one did not");
      return;
    }
    for (JsonNode value : wEnum) {
      boolean present = false;
      for (JsonNode candidate : rEnum) {
        present |= candidate.equals(value);
      }
      if (!present) {
        report("ENUM_ARRAY_NARROWED", path, "value " + value + " of the old schema's enum is missing from the new one");
      }
    }
  }

  private static JsonNode single(JsonNode value) {
    return JsonSchemaFormat.JSON.createArrayNode().add(value);
  }

  private void bounds(JsonNode rs, JsonNode ws, String path) {
    for (String bound : UPPER_BOUNDS) {
      if (rs.has(bound) && rs.get(bound).isNumber()
          && (!ws.has(bound) || !ws.get(bound).isNumber() || ws.get(bound).decimalValue().compareTo(rs.get(bound).decimalValue()) > 0)) {
        report(bound.toUpperCase() + "_DECREASED", path, bound + " is " + rs.get(bound) + " in the new schema, "
            + (ws.has(bound) ? ws.get(bound) : "absent") + " in the old one");
      }
    }
    for (String bound : LOWER_BOUNDS) {
      if (rs.has(bound) && rs.get(bound).isNumber()
          && (!ws.has(bound) || !ws.get(bound).isNumber() || ws.get(bound).decimalValue().compareTo(rs.get(bound).decimalValue()) < 0)) {
        report(bound.toUpperCase() + "_INCREASED", path, bound + " is " + rs.get(bound) + " in the new schema, "
            + (ws.has(bound) ? ws.get(bound) : "absent") + " in the old one");
      }
    }
    for (String exact : List.of("pattern", "multipleOf", "format")) {
      if (rs.has(exact) && !rs.get(exact).equals(ws.get(exact))) {
        report(exact.toUpperCase() + "_CHANGED", path, exact + " changed from " + ws.get(exact) + " to " + rs.get(exact));
      }
    }
    if (rs.path("uniqueItems").asBoolean(false) && !ws.path("uniqueItems").asBoolean(false)) {
      report("UNIQUE_ITEMS_ADDED", path, "the new schema requires unique items");
    }
  }

  private void objects(Node r, Node w, String path) {
    JsonNode rs = r.schema();
    JsonNode ws = w.schema();
    JsonNode rProps = rs.path("properties");
    JsonNode wProps = ws.path("properties");
    JsonNode rAdditional = rs.get("additionalProperties");
    JsonNode wAdditional = ws.get("additionalProperties");
    boolean readerClosed = rAdditional != null && rAdditional.isBoolean() && !rAdditional.asBoolean();
    boolean writerClosed = wAdditional != null && wAdditional.isBoolean() && !wAdditional.asBoolean();

    for (var it = wProps.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      String at = path + "/properties/" + name;
      if (rProps.has(name)) {
        compare(r.child(rProps.get(name)), w.child(wProps.get(name)), at);
      } else if (readerClosed) {
        report("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", at, "property '" + name + "' was removed from a closed content model");
      } else if (rAdditional != null && rAdditional.isObject()) {
        compare(r.child(rAdditional), w.child(wProps.get(name)), at);
      }
    }
    for (var it = rProps.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (wProps.has(name) || writerClosed) {
        continue;
      }
      String at = path + "/properties/" + name;
      if (wAdditional != null && wAdditional.isObject()) {
        compare(r.child(rProps.get(name)), w.child(wAdditional), at);
      } else if (!acceptsAll(resolve(r.child(rProps.get(name)), 0).schema())) {
        report("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", at, "property '" + name
            + "' was added to an open content model, where the old schema allowed any value under that name");
      }
    }
    Set<String> writerRequired = new HashSet<>();
    ws.path("required").forEach(n -> writerRequired.add(n.asText()));
    for (JsonNode n : rs.path("required")) {
      if (!writerRequired.contains(n.asText())) {
        report("REQUIRED_ATTRIBUTE_ADDED", path + "/required", "property '" + n.asText() + "' is newly required");
      }
    }
    if (readerClosed && !writerClosed) {
      report("ADDITIONAL_PROPERTIES_REMOVED", path, "the new schema closes the content model (additionalProperties: false)");
    } else if (rAdditional != null && rAdditional.isObject() && !writerClosed) {
      if (wAdditional != null && wAdditional.isObject()) {
        compare(r.child(rAdditional), w.child(wAdditional), path + "/additionalProperties");
      } else if (!acceptsAll(rAdditional)) {
        report("ADDITIONAL_PROPERTIES_NARROWED", path, "the new schema constrains additional properties");
      }
    }
  }

  private void arrays(Node r, Node w, String path) {
    JsonNode rItems = r.schema().get("items");
    JsonNode wItems = w.schema().get("items");
    if (rItems == null) {
      return;
    }
    if (wItems == null) {
      if (!acceptsAll(rItems)) {
        report("ITEMS_NARROWED", path + "/items", "the new schema constrains items the old one did not");
      }
      return;
    }
    if (rItems.isArray() || wItems.isArray()) {
      if (!rItems.isArray() || !wItems.isArray() || rItems.size() != wItems.size()) {
        report("ITEMS_CHANGED", path + "/items", "tuple items changed shape");
        return;
      }
      for (int i = 0; i < rItems.size(); i++) {
        compare(r.child(rItems.get(i)), w.child(wItems.get(i)), path + "/items/" + i);
      }
      return;
    }
    compare(r.child(rItems), w.child(wItems), path + "/items");
  }

  private void report(String type, String path, String description) {
    messages.add("{errorType:'" + type + "', description:'" + description + "', path:'" + path + "'}");
  }
}
