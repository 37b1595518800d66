package io.tidemark.registry.log;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.registry.log.RegistryRecord.ConfigRecord;
import io.tidemark.registry.log.RegistryRecord.DeleteSubjectRecord;
import io.tidemark.registry.log.RegistryRecord.Ignored;
import io.tidemark.registry.log.RegistryRecord.ModeRecord;
import io.tidemark.registry.log.RegistryRecord.SchemaRecord;
import io.tidemark.registry.log.RegistryRecord.SchemaTombstone;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes {@link RegistryRecord}s as the key/value JSON Confluent's registry writes to {@code _schemas}
 * (key {@code {"keytype":"SCHEMA","subject":..,"version":..,"magic":1}}, value with subject, version,
 * id, schemaType, references, schema, deleted; CONFIG, MODE and DELETE_SUBJECT likewise) and decodes
 * them back. Stateless and thread-safe.
 */
public final class RecordCodec {
  private static final ObjectMapper JSON = new ObjectMapper();

  private RecordCodec() {}

  /** The {@code [key, value]} bytes of a record; value is null for tombstones. */
  public static byte[][] encode(RegistryRecord record) {
    ObjectNode key = JSON.createObjectNode();
    ObjectNode value = JSON.createObjectNode();
    switch (record) {
      case SchemaRecord s -> {
        schemaKey(key, s.subject(), s.version());
        value.put("subject", s.subject());
        value.put("version", s.version());
        value.put("id", s.id());
        if (s.type() != SchemaType.AVRO) {
          value.put("schemaType", s.type().name());
        }
        if (!s.references().isEmpty()) {
          ArrayNode refs = value.putArray("references");
          for (SchemaReference r : s.references()) {
            refs.addObject().put("name", r.name()).put("subject", r.subject()).put("version", r.version());
          }
        }
        value.put("schema", s.schema());
        value.put("deleted", s.deleted());
      }
      case SchemaTombstone t -> {
        schemaKey(key, t.subject(), t.version());
        value = null;
      }
      case ConfigRecord c -> {
        key.put("keytype", "CONFIG");
        putSubject(key, c.subject());
        key.put("magic", 0);
        if (c.compatibilityLevel() == null) {
          value = null;
        } else {
          value.put("compatibilityLevel", c.compatibilityLevel());
        }
      }
      case ModeRecord m -> {
        key.put("keytype", "MODE");
        putSubject(key, m.subject());
        key.put("magic", 0);
        if (m.mode() == null) {
          value = null;
        } else {
          value.put("mode", m.mode());
        }
      }
      case DeleteSubjectRecord d -> {
        key.put("keytype", "DELETE_SUBJECT");
        key.put("subject", d.subject());
        key.put("magic", 0);
        value.put("subject", d.subject());
        value.put("version", d.version());
      }
      case Ignored i -> {
        key.put("keytype", i.keyType());
        key.put("magic", 0);
        value = null;
      }
    }
    return new byte[][] {bytes(key), value == null ? null : bytes(value)};
  }

  /** Decodes one stored record; throws {@link IllegalArgumentException} when the bytes are not a registry record. */
  public static RegistryRecord decode(byte[] keyBytes, byte[] valueBytes) {
    JsonNode key = tree(keyBytes);
    JsonNode value = valueBytes == null ? null : tree(valueBytes);
    String keyType = key.path("keytype").asText("");
    String subject = key.hasNonNull("subject") ? key.get("subject").asText() : null;
    return switch (keyType) {
      case "SCHEMA" -> value == null
          ? new SchemaTombstone(subject, key.path("version").asInt())
          : schemaValue(value);
      case "CONFIG" -> new ConfigRecord(subject, value == null ? null : value.path("compatibilityLevel").asText(null));
      case "MODE" -> new ModeRecord(subject, value == null ? null : value.path("mode").asText(null));
      case "DELETE_SUBJECT" -> value == null
          ? new Ignored(keyType)
          : new DeleteSubjectRecord(value.path("subject").asText(subject), value.path("version").asInt());
      default -> new Ignored(keyType);
    };
  }

  private static SchemaRecord schemaValue(JsonNode value) {
    List<SchemaReference> refs = new ArrayList<>();
    for (JsonNode r : value.path("references")) {
      refs.add(new SchemaReference(r.path("name").asText(), r.path("subject").asText(), r.path("version").asInt()));
    }
    SchemaType type = SchemaType.parse(value.path("schemaType").asText(null));
    if (type == null) {
      throw new IllegalArgumentException("unknown schemaType " + value.path("schemaType"));
    }
    return new SchemaRecord(value.path("subject").asText(), value.path("version").asInt(), value.path("id").asInt(),
        type, value.path("schema").asText(), refs, value.path("deleted").asBoolean(false));
  }

  private static void schemaKey(ObjectNode key, String subject, int version) {
    key.put("keytype", "SCHEMA");
    key.put("subject", subject);
    key.put("version", version);
    key.put("magic", 1);
  }

  private static void putSubject(ObjectNode key, String subject) {
    if (subject == null) {
      key.putNull("subject");
    } else {
      key.put("subject", subject);
    }
  }

  private static byte[] bytes(JsonNode node) {
    try {
      return JSON.writeValueAsBytes(node);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonNode tree(byte[] bytes) {
    try {
      JsonNode node = JSON.readTree(bytes);
      if (node == null || !node.isObject()) {
        throw new IllegalArgumentException("a _schemas record must be a JSON object");
      }
      return node;
    } catch (IOException e) {
      throw new IllegalArgumentException("a _schemas record is not JSON: " + e.getMessage(), e);
    }
  }
}
