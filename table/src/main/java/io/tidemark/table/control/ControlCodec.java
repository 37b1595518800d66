package io.tidemark.table.control;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.table.control.ControlMessage.CommitEnd;
import io.tidemark.table.control.ControlMessage.CommitStart;
import io.tidemark.table.control.ControlMessage.FilesWritten;
import io.tidemark.table.control.ControlMessage.WorkerRound;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;

/**
 * The control topic's record format: key = the table topic's name, value = one JSON object with a
 * {@code type} field. Data files travel as Base64 of Iceberg's own Java serialization of
 * {@link DataFile} (the form Iceberg's engines ship files between processes in), so every column
 * statistic survives. Stateless and thread-safe.
 */
public final class ControlCodec {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<TreeMap<Integer, Long>> OFFSETS = new TypeReference<>() {};
  /** Only Iceberg's file classes and the JDK types they hold are ever deserialized from the control topic. */
  private static final ObjectInputFilter FILES_ONLY =
      ObjectInputFilter.Config.createFilter("maxdepth=20;maxrefs=1000000;org.apache.iceberg.**;java.**;[*;!*");

  private ControlCodec() {}

  /**
   * The record key: one per message of a round (topic, commit id, kind and, for files written, the
   * node), because the control topic is compacted: the cleaner keeps the latest record per key, so
   * a key shared by several messages of one round would lose all but the last. Rounds are trimmed
   * away by the coordinator ({@link ControlLog#trimBefore}) once they are in the table.
   */
  public static byte[] key(ControlMessage message) {
    String kind = switch (message) {
      case ControlMessage.CommitStart s -> "start";
      case ControlMessage.CommitEnd e -> "end";
      case ControlMessage.FilesWritten w -> "written/" + w.node();
    };
    return (message.topic() + "/" + message.commitId() + "/" + kind).getBytes(StandardCharsets.UTF_8);
  }

  public static byte[] encode(ControlMessage message) {
    ObjectNode node = JSON.createObjectNode();
    node.put("topic", message.topic());
    node.put("commitId", message.commitId());
    switch (message) {
      case CommitStart s -> node.put("type", "start").put("startedAtMs", s.startedAtMs());
      case CommitEnd e -> node.put("type", "end").put("landed", e.landed()).put("snapshotId", e.snapshotId());
      case FilesWritten w -> {
        node.put("type", "written").put("node", w.node()).put("error", w.error());
        WorkerRound r = w.round();
        node.set("base", JSON.valueToTree(new TreeMap<>(r.baseOffsets())));
        node.set("next", JSON.valueToTree(new TreeMap<>(r.nextOffsets())));
        node.set("hw", JSON.valueToTree(new TreeMap<>(r.highWatermarks())));
        node.put("files", files(r.files()));
        if (!r.deleteFiles().isEmpty()) {
          node.put("deleteFiles", files(r.deleteFiles()));
        }
        node.set("dlqBase", JSON.valueToTree(new TreeMap<>(r.dlqBaseOffsets())));
        node.set("dlqNext", JSON.valueToTree(new TreeMap<>(r.dlqNextOffsets())));
        node.put("dlqFiles", files(r.dlqFiles()));
        node.put("rows", r.rows()).put("skipped", r.skipped()).put("moreData", r.moreData());
      }
    }
    try {
      return JSON.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode control message " + message.commitId(), e);
    }
  }

  /** Decodes a control record; a value that is not a control message is rejected with the reason. */
  public static ControlMessage decode(byte[] value) {
    try {
      JsonNode n = JSON.readTree(value);
      String topic = n.path("topic").asText();
      String commitId = n.path("commitId").asText();
      return switch (n.path("type").asText()) {
        case "start" -> new CommitStart(topic, commitId, n.path("startedAtMs").asLong());
        case "end" -> new CommitEnd(topic, commitId, n.path("landed").asBoolean(), n.path("snapshotId").asLong());
        case "written" -> new FilesWritten(topic, commitId, n.path("node").asInt(), new WorkerRound(
            offsets(n.get("base")), offsets(n.get("next")), offsets(n.get("hw")), files(n.path("files").asText(), DataFile.class),
            n.has("deleteFiles") ? files(n.path("deleteFiles").asText(), DeleteFile.class) : List.of(),
            offsets(n.get("dlqBase")), offsets(n.get("dlqNext")), files(n.path("dlqFiles").asText(), DataFile.class),
            n.path("rows").asLong(), n.path("skipped").asLong(), n.path("moreData").asBoolean()), n.path("error").asText());
        default -> throw new IllegalArgumentException("unknown control message type '" + n.path("type").asText() + "'");
      };
    } catch (IOException e) {
      throw new IllegalArgumentException("control record is not JSON: " + e.getMessage(), e);
    }
  }

  private static Map<Integer, Long> offsets(JsonNode node) {
    return node == null ? Map.of() : JSON.convertValue(node, OFFSETS);
  }

  private static String files(List<? extends org.apache.iceberg.ContentFile<?>> files) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(new ArrayList<>(files));
    } catch (IOException e) {
      throw new IllegalStateException("cannot serialize data files", e);
    }
    return Base64.getEncoder().encodeToString(bytes.toByteArray());
  }

  private static <F> List<F> files(String base64, Class<F> type) {
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(Base64.getDecoder().decode(base64)))) {
      in.setObjectInputFilter(FILES_ONLY);
      List<F> out = new ArrayList<>();
      for (Object o : (List<?>) in.readObject()) {
        if (!type.isInstance(o)) {
          throw new IllegalArgumentException("control record holds unreadable data files: a " + o.getClass().getName()
              + " where a " + type.getSimpleName() + " belongs");
        }
        out.add(type.cast(o));
      }
      return out;
    } catch (IOException | ClassNotFoundException e) {
      throw new IllegalArgumentException("control record holds unreadable data files: " + e.getMessage(), e);
    }
  }
}
