package io.tidemark.registry.http;

import io.tidemark.broker.acl.Authorizer;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Which Kafka ACL a schema registry request needs. Kafka's ACLs have no subject resource, so a
 * subject is authorized as the topic it describes under Confluent's default TopicNameStrategy:
 * {@code <topic>-key} and {@code <topic>-value} are the topic {@code <topic>}, any other subject
 * (RecordNameStrategy's {@code com.example.Order}) the topic of the subject's own name. So a
 * producer allowed to WRITE a topic may register its schemas, and a consumer allowed to READ it
 * may read them, with nothing to grant beyond the topic's ACLs; {@code kafka-acls --topic} grants
 * the rest.
 *
 * <table>
 *   <caption>requests and the ACL each needs</caption>
 *   <tr><th>request</th><th>operation</th><th>resource</th></tr>
 *   <tr><td>POST /subjects/S/versions (register)</td><td>WRITE</td><td>topic of S</td></tr>
 *   <tr><td>GET /subjects/S/versions..., POST /subjects/S (lookup), POST /compatibility/subjects/S/...</td>
 *       <td>READ</td><td>topic of S</td></tr>
 *   <tr><td>DELETE /subjects/S, DELETE /subjects/S/versions/V</td><td>DELETE</td><td>topic of S</td></tr>
 *   <tr><td>GET /config/S, GET /mode/S</td><td>DESCRIBE_CONFIGS</td><td>topic of S</td></tr>
 *   <tr><td>PUT or DELETE /config/S, /mode/S</td><td>ALTER_CONFIGS</td><td>topic of S</td></tr>
 *   <tr><td>GET /config, GET /mode</td><td>DESCRIBE_CONFIGS</td><td>cluster</td></tr>
 *   <tr><td>PUT or DELETE /config, /mode</td><td>ALTER_CONFIGS</td><td>cluster</td></tr>
 *   <tr><td>GET /subjects, GET /schemas, GET /schemas/ids/I/subjects|versions</td><td colspan=2>answered with
 *       the subjects the principal may DESCRIBE (READ for /schemas) only</td></tr>
 *   <tr><td>GET /schemas/ids/I[/schema]</td><td colspan=2>READ on the topic of some subject holding schema I</td></tr>
 *   <tr><td>GET /, GET /schemas/types</td><td colspan=2>authentication only</td></tr>
 * </table>
 *
 * Pure functions; thread-safe.
 */
public final class RegistryPermissions {

  /** One ACL a request needs: {@code op} on the resource. */
  public record Needed(AclOperation op, ResourceType type, String name) {}

  private RegistryPermissions() {}

  /** The topic whose ACLs authorize {@code subject}. */
  public static String topicOf(String subject) {
    if (subject.endsWith("-value") && subject.length() > "-value".length()) {
      return subject.substring(0, subject.length() - "-value".length());
    }
    if (subject.endsWith("-key") && subject.length() > "-key".length()) {
      return subject.substring(0, subject.length() - "-key".length());
    }
    return subject;
  }

  /**
   * The ACL a request needs before it runs, or empty when it needs none before it runs
   * (authentication only, or filtered or checked against the stored schemas by the handler).
   *
   * @param method the HTTP method, upper case
   * @param rawPath the request path as sent (percent-encoded)
   */
  public static Optional<Needed> needed(String method, String rawPath) {
    String[] p = segments(rawPath);
    if (p.length == 0) {
      return Optional.empty();
    }
    boolean read = method.equals("GET") || method.equals("HEAD");
    switch (p[0]) {
      case "subjects" -> {
        if (p.length < 2) {
          return Optional.empty(); // the list, filtered
        }
        String topic = topicOf(p[1]);
        if (p.length == 2) {
          return switch (method) {
            case "POST" -> topic(AclOperation.READ, topic); // lookup
            case "DELETE" -> topic(AclOperation.DELETE, topic);
            default -> topic(AclOperation.READ, topic);
          };
        }
        return switch (method) {
          case "POST" -> topic(AclOperation.WRITE, topic); // register
          case "DELETE" -> topic(AclOperation.DELETE, topic);
          default -> topic(AclOperation.READ, topic);
        };
      }
      case "config", "mode" -> {
        AclOperation op = read ? AclOperation.DESCRIBE_CONFIGS : AclOperation.ALTER_CONFIGS;
        return p.length == 1
            ? Optional.of(new Needed(op, ResourceType.CLUSTER, Authorizer.CLUSTER_NAME))
            : topic(op, topicOf(p[1]));
      }
      case "compatibility" -> {
        return p.length >= 3 && p[1].equals("subjects") ? topic(AclOperation.READ, topicOf(p[2])) : Optional.empty();
      }
      default -> {
        return Optional.empty();
      }
    }
  }

  private static Optional<Needed> topic(AclOperation op, String topic) {
    return Optional.of(new Needed(op, ResourceType.TOPIC, topic));
  }

  /** The path's segments, percent-decoded ('+' stays a plus: it is not a space in a path). */
  static String[] segments(String rawPath) {
    String trimmed = rawPath.startsWith("/") ? rawPath.substring(1) : rawPath;
    if (trimmed.endsWith("/")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1);
    }
    if (trimmed.isEmpty()) {
      return new String[0];
    }
    String[] parts = trimmed.split("/", -1);
    for (int i = 0; i < parts.length; i++) {
      parts[i] = URLDecoder.decode(parts[i].replace("+", "%2B"), StandardCharsets.UTF_8);
    }
    return parts;
  }
}
