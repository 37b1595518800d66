package io.tidemark.table.convert;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * JSON values of one JSON Schema. Objects with {@code properties} become structs (properties in
 * schema order), objects with only {@code additionalProperties} maps of string to that schema,
 * arrays with one {@code items} schema lists; {@code string} is string ({@code format: date-time} →
 * timestamptz, {@code date} → date, {@code contentEncoding: base64} → binary), {@code integer}
 * long, {@code number} double, {@code boolean} boolean, {@code enum} string. A type list or
 * {@code oneOf}/{@code anyOf} with one non-null member is that member; with several, a struct with
 * one optional field per member (its {@code title}, else its type name, made unique), of which the
 * first member matching the value's JSON type is set. {@code allOf} of objects merges their
 * properties. {@code $ref} resolves inside the document ({@code #/...}) and to referenced schemas
 * by name; recursion is refused (bad data). Anything else (no type, tuples, empty objects) is kept
 * as its JSON text. Values are checked only as far as the column types need. Immutable and
 * thread-safe.
 */
final class JsonSchemaDecoder implements ValueDecoder {

  private static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private final Node root;

  /** @param documents referenced schemas by reference name */
  JsonSchemaDecoder(JsonNode schema, Map<String, JsonNode> documents) throws InvalidRecordException {
    Node node = new Compiler(documents).compile(schema, schema, new HashSet<>());
    this.root = node == null ? new LeafNode(Kind.JSON_TEXT) : node;
  }

  @Override
  public Type type() {
    return root.type;
  }

  @Override
  public Object decode(ByteBuffer payload) throws InvalidRecordException {
    byte[] bytes = new byte[payload.remaining()];
    payload.duplicate().get(bytes);
    JsonNode value;
    try {
      value = JSON.readTree(bytes);
    } catch (JsonProcessingException e) {
      throw new InvalidRecordException("the bytes are not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new InvalidRecordException("the bytes are not valid JSON: " + e.getMessage(), e);
    }
    return root.convert(value, "$");
  }

  /** One schema position compiled: its column type and how a JSON value becomes a column value. */
  private abstract static class Node {
    final Type type;

    Node(Type type) {
      this.type = type;
    }

    abstract Object convertPresent(JsonNode v, String path) throws InvalidRecordException;

    /** Whether a value of this JSON shape belongs to this node (for unions). */
    abstract boolean accepts(JsonNode v);

    final Object convert(JsonNode v, String path) throws InvalidRecordException {
      if (v == null || v.isNull() || v.isMissingNode()) {
        return null;
      }
      return convertPresent(v, path);
    }

    static InvalidRecordException mismatch(String path, String expected, JsonNode v) {
      return new InvalidRecordException("field " + path + " should be " + expected + " but is " + v.getNodeType());
    }
  }

  private static final class StructNode extends Node {
    final Map<String, Node> fields;

    StructNode(Types.StructType type, Map<String, Node> fields) {
      super(type);
      this.fields = fields;
    }

    @Override
    Object convertPresent(JsonNode v, String path) throws InvalidRecordException {
      if (!v.isObject()) {
        throw mismatch(path, "an object", v);
      }
      Map<String, Object> out = new LinkedHashMap<>();
      for (Map.Entry<String, Node> f : fields.entrySet()) {
        out.put(f.getKey(), f.getValue().convert(v.get(f.getKey()), path + "." + f.getKey()));
      }
      return out;
    }

    @Override
    boolean accepts(JsonNode v) {
      return v.isObject();
    }
  }

  private static final class ListNode extends Node {
    final Node element;

    ListNode(Type type, Node element) {
      super(type);
      this.element = element;
    }

    @Override
    Object convertPresent(JsonNode v, String path) throws InvalidRecordException {
      if (!v.isArray()) {
        throw mismatch(path, "an array", v);
      }
      List<Object> out = new ArrayList<>(v.size());
      for (int i = 0; i < v.size(); i++) {
        out.add(element.convert(v.get(i), path + "[" + i + "]"));
      }
      return out;
    }

    @Override
    boolean accepts(JsonNode v) {
      return v.isArray();
    }
  }

  private static final class MapNode extends Node {
    final Node value;

    MapNode(Type type, Node value) {
      super(type);
      this.value = value;
    }

    @Override
    Object convertPresent(JsonNode v, String path) throws InvalidRecordException {
      if (!v.isObject()) {
        throw mismatch(path, "an object", v);
      }
      Map<Object, Object> out = new LinkedHashMap<>();
      for (Map.Entry<String, JsonNode> e : v.properties()) {
        out.put(e.getKey(), value.convert(e.getValue(), path + "." + e.getKey()));
      }
      return out;
    }

    @Override
    boolean accepts(JsonNode v) {
      return v.isObject();
    }
  }

  private static final class UnionNode extends Node {
    final List<String> names;
    final List<Node> members;

    UnionNode(Type type, List<String> names, List<Node> members) {
      super(type);
      this.names = names;
      this.members = members;
    }

    @Override
    Object convertPresent(JsonNode v, String path) throws InvalidRecordException {
      Map<String, Object> out = new LinkedHashMap<>();
      boolean matched = false;
      for (int i = 0; i < members.size(); i++) {
        Node m = members.get(i);
        boolean take = !matched && m.accepts(v);
        out.put(names.get(i), take ? m.convert(v, path) : null);
        matched |= take;
      }
      if (!matched) {
        throw new InvalidRecordException("field " + path + " matches none of its oneOf/anyOf members (" + v.getNodeType() + ")");
      }
      return out;
    }

    @Override
    boolean accepts(JsonNode v) {
      return members.stream().anyMatch(m -> m.accepts(v));
    }
  }

  /** Leaf kinds. */
  private enum Kind { STRING, LONG, DOUBLE, BOOLEAN, TIMESTAMPTZ, DATE, BASE64, JSON_TEXT }

  private static final class LeafNode extends Node {
    final Kind kind;

    LeafNode(Kind kind) {
      super(switch (kind) {
        case STRING, JSON_TEXT -> Types.StringType.get();
        case LONG -> Types.LongType.get();
        case DOUBLE -> Types.DoubleType.get();
        case BOOLEAN -> Types.BooleanType.get();
        case TIMESTAMPTZ -> Types.TimestampType.withZone();
        case DATE -> Types.DateType.get();
        case BASE64 -> Types.BinaryType.get();
      });
      this.kind = kind;
    }

    @Override
    Object convertPresent(JsonNode v, String path) throws InvalidRecordException {
      switch (kind) {
        case JSON_TEXT:
          return v.isTextual() ? v.textValue() : v.toString();
        case STRING:
          if (!v.isTextual()) {
            throw mismatch(path, "a string", v);
          }
          return v.textValue();
        case LONG:
          if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw mismatch(path, "an integer of at most 64 bits", v);
          }
          return v.longValue();
        case DOUBLE:
          if (!v.isNumber()) {
            throw mismatch(path, "a number", v);
          }
          return v.doubleValue();
        case BOOLEAN:
          if (!v.isBoolean()) {
            throw mismatch(path, "a boolean", v);
          }
          return v.booleanValue();
        case TIMESTAMPTZ:
          try {
            return OffsetDateTime.parse(text(v, path)).withOffsetSameInstant(ZoneOffset.UTC);
          } catch (DateTimeParseException e) {
            throw new InvalidRecordException("field " + path + " is not an RFC 3339 date-time: " + v.textValue(), e);
          }
        case DATE:
          try {
            return LocalDate.parse(text(v, path));
          } catch (DateTimeParseException e) {
            throw new InvalidRecordException("field " + path + " is not an RFC 3339 full-date: " + v.textValue(), e);
          }
        case BASE64:
          try {
            return ByteBuffer.wrap(java.util.Base64.getDecoder().decode(text(v, path)));
          } catch (IllegalArgumentException e) {
            throw new InvalidRecordException("field " + path + " is not base64", e);
          }
        default:
          throw new IllegalStateException(kind.name());
      }
    }

    private static String text(JsonNode v, String path) throws InvalidRecordException {
      if (!v.isTextual()) {
        throw mismatch(path, "a string", v);
      }
      return v.textValue();
    }

    @Override
    boolean accepts(JsonNode v) {
      return switch (kind) {
        case JSON_TEXT -> true;
        case STRING, TIMESTAMPTZ, DATE, BASE64 -> v.isTextual();
        case LONG -> v.isIntegralNumber();
        case DOUBLE -> v.isNumber();
        case BOOLEAN -> v.isBoolean();
      };
    }
  }

  /** Compiles schema positions; holds the documents $refs point into. One per decoder. */
  private static final class Compiler {
    final Map<String, JsonNode> documents;
    final FieldIds ids = new FieldIds();

    Compiler(Map<String, JsonNode> documents) {
      this.documents = documents;
    }

    /** @param document the document {@code s} sits in (local $refs resolve against it) */
    Node compile(JsonNode s, JsonNode document, Set<String> refs) throws InvalidRecordException {
      if (s == null || s.isBoolean() || !s.isObject()) {
        return new LeafNode(Kind.JSON_TEXT);
      }
      if (s.has("$ref")) {
        String ref = s.get("$ref").asText();
        if (!refs.add(ref)) {
          throw new InvalidRecordException("JSON Schema $ref " + ref + " is recursive; it cannot be a table column");
        }
        JsonNode target;
        JsonNode targetDocument;
        int hash = ref.indexOf('#');
        String docName = hash < 0 ? ref : ref.substring(0, hash);
        String pointer = hash < 0 ? "" : ref.substring(hash + 1);
        if (docName.isEmpty()) {
          targetDocument = document;
        } else {
          targetDocument = documents.get(docName);
          if (targetDocument == null) {
            throw new InvalidRecordException("JSON Schema $ref " + ref + " names no referenced schema");
          }
        }
        target = pointer.isEmpty() ? targetDocument : targetDocument.at(pointer);
        if (target.isMissingNode()) {
          throw new InvalidRecordException("JSON Schema $ref " + ref + " points at nothing");
        }
        Node n = compile(target, targetDocument, refs);
        refs.remove(ref);
        return n;
      }
      for (String keyword : List.of("oneOf", "anyOf")) {
        if (s.path(keyword).isArray()) {
          return union(s.get(keyword), document, refs);
        }
      }
      if (s.path("allOf").isArray()) {
        return allOf(s.get("allOf"), document, refs);
      }
      JsonNode typeNode = s.get("type");
      if (typeNode != null && typeNode.isArray()) {
        List<JsonNode> members = new ArrayList<>();
        for (JsonNode t : typeNode) {
          if (!"null".equals(t.asText())) {
            members.add(((com.fasterxml.jackson.databind.node.ObjectNode) s.deepCopy()).put("type", t.asText()));
          }
        }
        return union(JSON.valueToTree(members), document, refs);
      }
      String type = typeNode != null ? typeNode.asText()
          : s.has("properties") ? "object" : s.has("items") ? "array" : s.has("enum") ? "string" : "";
      return switch (type) {
        case "object" -> object(s, document, refs);
        case "array" -> array(s, document, refs);
        case "string" -> new LeafNode(stringKind(s));
        case "integer" -> new LeafNode(Kind.LONG);
        case "number" -> new LeafNode(Kind.DOUBLE);
        case "boolean" -> new LeafNode(Kind.BOOLEAN);
        case "null" -> null;
        default -> new LeafNode(Kind.JSON_TEXT);
      };
    }

    private static Kind stringKind(JsonNode s) {
      String format = s.path("format").asText("");
      if (format.equals("date-time")) {
        return Kind.TIMESTAMPTZ;
      }
      if (format.equals("date")) {
        return Kind.DATE;
      }
      return s.path("contentEncoding").asText("").equals("base64") ? Kind.BASE64 : Kind.STRING;
    }

    private Node object(JsonNode s, JsonNode document, Set<String> refs) throws InvalidRecordException {
      JsonNode props = s.path("properties");
      if (props.isObject() && !props.isEmpty()) {
        Map<String, Node> fields = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> p : props.properties()) {
          Node n = compile(p.getValue(), document, refs);
          if (n != null) {
            fields.put(p.getKey(), n);
          }
        }
        return struct(fields);
      }
      JsonNode additional = s.get("additionalProperties");
      if (additional != null && additional.isObject()) {
        Node value = orText(compile(additional, document, refs));
        return new MapNode(Types.MapType.ofOptional(ids.next(), ids.next(), Types.StringType.get(), value.type), value);
      }
      return new LeafNode(Kind.JSON_TEXT);
    }

    private StructNode struct(Map<String, Node> fields) {
      List<Types.NestedField> columns = new ArrayList<>();
      fields.forEach((name, n) -> columns.add(Types.NestedField.optional(ids.next(), name, n.type)));
      return new StructNode(Types.StructType.of(columns), fields);
    }

    private Node array(JsonNode s, JsonNode document, Set<String> refs) throws InvalidRecordException {
      JsonNode items = s.get("items");
      if (items == null || !items.isObject() || s.has("prefixItems")) {
        return new LeafNode(Kind.JSON_TEXT);
      }
      Node element = orText(compile(items, document, refs));
      return new ListNode(Types.ListType.ofOptional(ids.next(), element.type), element);
    }

    private Node union(JsonNode members, JsonNode document, Set<String> refs) throws InvalidRecordException {
      List<Node> nodes = new ArrayList<>();
      List<String> names = new ArrayList<>();
      for (JsonNode m : members) {
        Node n = compile(m, document, refs);
        if (n != null) {
          nodes.add(n);
          String base = m.path("title").asText(m.path("type").asText("member"));
          String name = base;
          for (int i = 2; names.contains(name); i++) {
            name = base + i;
          }
          names.add(name);
        }
      }
      if (nodes.isEmpty()) {
        return null;
      }
      if (nodes.size() == 1) {
        return nodes.get(0);
      }
      List<Types.NestedField> columns = new ArrayList<>();
      for (int i = 0; i < nodes.size(); i++) {
        columns.add(Types.NestedField.optional(ids.next(), names.get(i), nodes.get(i).type));
      }
      return new UnionNode(Types.StructType.of(columns), names, nodes);
    }

    private Node allOf(JsonNode members, JsonNode document, Set<String> refs) throws InvalidRecordException {
      Map<String, Node> fields = new LinkedHashMap<>();
      Node only = null;
      for (JsonNode m : members) {
        Node n = compile(m, document, refs);
        if (n instanceof StructNode sn) {
          sn.fields.forEach(fields::putIfAbsent);
        } else if (n != null) {
          only = n;
        }
      }
      if (!fields.isEmpty()) {
        return struct(fields);
      }
      return only == null ? new LeafNode(Kind.JSON_TEXT) : only;
    }

    private static Node orText(Node n) {
      return n == null ? new LeafNode(Kind.JSON_TEXT) : n;
    }
  }
}
