package io.tidemark.server.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractResponse;

/**
 * Responses as JSON trees, through kafka-clients' generated {@code *JsonConverter} of each message,
 * with the fields that legitimately differ between two brokers removed (throttle times, error
 * message texts, ids, hosts and ports, times): what is left must be equal field by field. Stateless.
 */
final class Responses {

  /** Fields no two brokers agree on; removed at every depth. */
  static final Set<String> IGNORED = Set.of("throttleTimeMs", "errorMessage", "clusterId", "topicId", "memberId", "leaderId",
      "controllerId", "host", "port", "nodeId", "clientInstanceId", "logAppendTimeMs", "timestamp", "memberEpoch", "leader",
      "skipAssignment");

  private Responses() {}

  static JsonNode json(AbstractResponse response, short version, Set<String> alsoIgnored) {
    ApiMessage data = response.data();
    JsonNode node;
    try {
      Class<?> converter = Class.forName(data.getClass().getName() + "JsonConverter");
      node = (JsonNode) converter.getMethod("write", data.getClass(), short.class).invoke(null, data, version);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("no JSON converter for " + data.getClass().getName(), e);
    }
    strip(node, alsoIgnored);
    return node;
  }

  private static void strip(JsonNode node, Set<String> alsoIgnored) {
    if (node instanceof ObjectNode object) {
      Iterator<Map.Entry<String, JsonNode>> fields = object.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> f = fields.next();
        if (IGNORED.contains(f.getKey()) || alsoIgnored.contains(f.getKey())) {
          fields.remove();
        } else {
          strip(f.getValue(), alsoIgnored);
        }
      }
    } else if (node instanceof ArrayNode array) {
      array.forEach(n -> strip(n, alsoIgnored));
    }
  }
}
