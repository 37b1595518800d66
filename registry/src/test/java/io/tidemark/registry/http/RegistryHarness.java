package io.tidemark.registry.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.cluster.WriteLeader;
import io.tidemark.registry.store.MemorySchemaStore;
import io.tidemark.registry.store.SchemaStore;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

/** A registry with its REST server on an ephemeral port, and a real HTTP client to call it. */
public final class RegistryHarness implements AutoCloseable {
  public static final ObjectMapper JSON = new ObjectMapper();
  public static final String V1 = "application/vnd.schemaregistry.v1+json";

  public final SchemaStore store;
  public final SchemaRegistry registry;
  public final RegistryHttpServer server;
  private final HttpClient http;
  private final String scheme;

  public RegistryHarness() {
    this(new MemorySchemaStore(), RegistryConfig.defaults(0));
  }

  public RegistryHarness(SchemaStore store, RegistryConfig config) {
    this(store, config, HttpClient.newHttpClient());
  }

  public RegistryHarness(SchemaStore store, RegistryConfig config, HttpClient http) {
    this(store, config, http, WriteLeader.self());
  }

  /** A registry that forwards its writes whenever {@code leader} names another node. */
  public RegistryHarness(SchemaStore store, RegistryConfig config, WriteLeader leader) {
    this(store, config, HttpClient.newHttpClient(), leader);
  }

  private RegistryHarness(SchemaStore store, RegistryConfig config, HttpClient http, WriteLeader leader) {
    this.store = store;
    this.registry = new SchemaRegistry(config, store);
    registry.start();
    this.server = new RegistryHttpServer(registry, config, leader).start();
    this.http = http;
    this.scheme = config.tlsEnabled() ? "https" : "http";
  }

  public String baseUrl() {
    return scheme + "://localhost:" + server.port();
  }

  /** One HTTP exchange's outcome. */
  public record Reply(int status, String contentType, String text) {
    public JsonNode json() {
      try {
        return JSON.readTree(text);
      } catch (IOException e) {
        throw new AssertionError("not JSON: " + text, e);
      }
    }

    public int errorCode() {
      return json().path("error_code").asInt();
    }
  }

  public Reply call(String method, String path, String body, Map<String, String> headers) {
    HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(baseUrl() + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      builder.header("Content-Type", V1);
    }
    builder.header("Accept", V1 + ", application/vnd.schemaregistry+json, application/json");
    headers.forEach(builder::setHeader);
    try {
      HttpResponse<String> response = http.send(builder.build(), HttpResponse.BodyHandlers.ofString());
      return new Reply(response.statusCode(), response.headers().firstValue("Content-Type").orElse(""), response.body());
    } catch (IOException e) {
      throw new AssertionError(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  public Reply get(String path) {
    return call("GET", path, null, Map.of());
  }

  public Reply delete(String path) {
    return call("DELETE", path, null, Map.of());
  }

  public Reply post(String path, String body) {
    return call("POST", path, body, Map.of());
  }

  public Reply put(String path, String body) {
    return call("PUT", path, body, Map.of());
  }

  /** The request body registering {@code schema} of {@code type} (null type: the AVRO default). */
  public static String schemaBody(String type, String schema) {
    ObjectNode body = JSON.createObjectNode().put("schema", schema);
    if (type != null) {
      body.put("schemaType", type);
    }
    return body.toString();
  }

  public static String schemaBody(String type, String schema, String referenceName, String subject, int version) {
    ObjectNode body = JSON.createObjectNode().put("schema", schema);
    if (type != null) {
      body.put("schemaType", type);
    }
    body.putArray("references").addObject().put("name", referenceName).put("subject", subject).put("version", version);
    return body.toString();
  }

  /** Registers and returns the id, failing the test on any error. */
  public int register(String subject, String type, String schema) {
    Reply reply = post("/subjects/" + subject + "/versions", schemaBody(type, schema));
    if (reply.status() != 200) {
      throw new AssertionError("register failed: " + reply);
    }
    return reply.json().get("id").asInt();
  }

  @Override
  public void close() {
    server.close();
    registry.close();
  }
}
