package io.tidemark.registry.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaFormat.ResolvedReference;
import io.tidemark.registry.schema.SchemaFormats;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A client of the Confluent-compatible REST API (ours or any other), for table topics and tools.
 * Schemas by id never change, so they are cached (least recently used first out, at most
 * {@code cacheMaxSchemas} entries, raw and parsed); the latest version of a subject is always asked
 * for. Registrations are cached by subject and schema text. Thread-safe: caches are guarded by
 * their own monitors, requests run on the caller's thread.
 */
public final class SchemaRegistryClient {
  private static final String V1_JSON = "application/vnd.schemaregistry.v1+json";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A schema as the registry stores it. */
  public record RegisteredSchema(int id, SchemaType type, String schema, List<SchemaReference> references) {}

  /** A subject's version. */
  public record SubjectVersion(String subject, int version, int id, SchemaType type, String schema, List<SchemaReference> references) {}

  /**
   * Where schemas are looked up: the registry's REST API, or a registry in the same process
   * ({@link #inProcess}), which needs no address, credentials or certificates.
   */
  public interface Lookup {
    RegisteredSchema schemaById(int id);

    /** {@code subject} at {@code version} ("latest" or a number). */
    SubjectVersion version(String subject, String version);
  }

  private final URI baseUrl;
  private final Lookup lookup;
  private final HttpClient http;
  private final String authorization;
  private final Duration timeout;
  private final Lru<Integer, RegisteredSchema> byId;
  private final Lru<Integer, ParsedSchema> parsedById;
  private final Lru<String, Integer> registered;
  private final SchemaFormats formats = new SchemaFormats();

  /**
   * @param baseUrl e.g. {@code http://localhost:8081}
   * @param cacheMaxSchemas bound of each cache (schemas by id, parsed schemas, registrations)
   * @param basicAuthUserInfo {@code user:password}, or null
   */
  public SchemaRegistryClient(URI baseUrl, int cacheMaxSchemas, String basicAuthUserInfo, HttpClient http, Duration timeout) {
    this(trimSlash(baseUrl), null, cacheMaxSchemas, basicAuthUserInfo == null ? null
        : "Basic " + Base64.getEncoder().encodeToString(basicAuthUserInfo.getBytes(StandardCharsets.UTF_8)), http, timeout);
  }

  /** Over HTTP when {@code lookup} is null, else reading through {@code lookup} (no base URL then). */
  private SchemaRegistryClient(URI baseUrl, Lookup lookup, int cacheMaxSchemas, String authorization, HttpClient http,
      Duration timeout) {
    if (cacheMaxSchemas < 1) {
      throw new IllegalArgumentException("cacheMaxSchemas must be at least 1, was " + cacheMaxSchemas);
    }
    this.baseUrl = baseUrl;
    this.http = http;
    this.timeout = timeout;
    this.authorization = authorization;
    this.lookup = lookup != null ? lookup : new HttpLookup();
    this.byId = new Lru<>(cacheMaxSchemas);
    this.parsedById = new Lru<>(cacheMaxSchemas);
    this.registered = new Lru<>(cacheMaxSchemas);
  }

  private static URI trimSlash(URI baseUrl) {
    String base = baseUrl.toString();
    return URI.create(base.endsWith("/") ? base.substring(0, base.length() - 1) : base);
  }

  /** The registry's REST API as the lookup. */
  private final class HttpLookup implements Lookup {
    @Override
    public RegisteredSchema schemaById(int id) {
      JsonNode body = send("GET", "/schemas/ids/" + id, null);
      return new RegisteredSchema(id, type(body), body.path("schema").asText(), references(body));
    }

    @Override
    public SubjectVersion version(String subject, String version) {
      JsonNode body = send("GET", "/subjects/" + encode(subject) + "/versions/" + version, null);
      return new SubjectVersion(body.path("subject").asText(), body.path("version").asInt(), body.path("id").asInt(),
          type(body), body.path("schema").asText(), references(body));
    }
  }

  /**
   * A client that reads schemas from a registry of the same process through {@code lookup} (with the
   * same caches and parsing); it reads only: {@link #register} is refused.
   */
  public static SchemaRegistryClient inProcess(Lookup lookup, int cacheMaxSchemas) {
    return new SchemaRegistryClient(null, Objects.requireNonNull(lookup), cacheMaxSchemas, null, null, null);
  }

  public SchemaRegistryClient(URI baseUrl, int cacheMaxSchemas) {
    this(baseUrl, cacheMaxSchemas, null, HttpClient.newHttpClient(), Duration.ofSeconds(30));
  }

  /** The schema with this id (cached). */
  public RegisteredSchema schemaById(int id) {
    RegisteredSchema cached = byId.get(id);
    if (cached != null) {
      return cached;
    }
    RegisteredSchema schema = lookup.schemaById(id);
    byId.put(id, schema);
    return schema;
  }

  /** The schema with this id, parsed with its references resolved through the registry (cached). */
  public ParsedSchema parsedSchemaById(int id) {
    ParsedSchema cached = parsedById.get(id);
    if (cached != null) {
      return cached;
    }
    RegisteredSchema schema = schemaById(id);
    List<ResolvedReference> dependencies = new ArrayList<>();
    resolve(schema.references(), dependencies, new HashSet<>(), 0);
    ParsedSchema parsed = formats.format(schema.type()).parse(schema.schema(), schema.references(), dependencies);
    parsedById.put(id, parsed);
    return parsed;
  }

  private void resolve(List<SchemaReference> references, List<ResolvedReference> out, Set<String> seen, int depth) {
    if (depth > 32) {
      throw new SchemaRegistryClientException(0, 0, "schema references nest deeper than 32", null);
    }
    for (SchemaReference ref : references) {
      if (seen.add(ref.subject() + "/" + ref.version())) {
        SubjectVersion target = version(ref.subject(), Integer.toString(ref.version()));
        resolve(target.references(), out, seen, depth + 1);
        out.add(new ResolvedReference(ref.name(), target.schema()));
      }
    }
  }

  /** The latest live version of {@code subject} (never cached). */
  public SubjectVersion latest(String subject) {
    return version(subject, "latest");
  }

  public SubjectVersion version(String subject, String version) {
    return lookup.version(subject, version);
  }

  /** Registers (or finds) the schema under {@code subject} and returns its id. */
  public int register(String subject, SchemaType type, String schema, List<SchemaReference> references) {
    String key = subject + "\u0000" + type + "\u0000" + schema + "\u0000" + references;
    Integer cached = registered.get(key);
    if (cached != null) {
      return cached;
    }
    if (baseUrl == null) {
      throw new UnsupportedOperationException("an in-process schema registry client only reads schemas");
    }
    ObjectNode request = JSON.createObjectNode().put("schema", schema);
    if (type != SchemaType.AVRO) {
      request.put("schemaType", type.name());
    }
    if (!references.isEmpty()) {
      ArrayNode refs = request.putArray("references");
      references.forEach(r -> refs.addObject().put("name", r.name()).put("subject", r.subject()).put("version", r.version()));
    }
    int id = send("POST", "/subjects/" + encode(subject) + "/versions", request.toString()).path("id").asInt();
    registered.put(key, id);
    return id;
  }

  public int register(String subject, SchemaType type, String schema) {
    return register(subject, type, schema, List.of());
  }

  private JsonNode send(String method, String path, String body) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout)
        .header("Accept", V1_JSON + ", application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      request.header("Content-Type", V1_JSON);
    }
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new SchemaRegistryClientException(0, 0, "schema registry at " + baseUrl + " is unreachable: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SchemaRegistryClientException(0, 0, "interrupted calling the schema registry", e);
    }
    JsonNode json;
    try {
      json = JSON.readTree(response.body());
    } catch (IOException e) {
      throw new SchemaRegistryClientException(response.statusCode(), 0, "schema registry answered non-JSON: " + response.body(), e);
    }
    if (response.statusCode() != 200) {
      throw new SchemaRegistryClientException(response.statusCode(), json.path("error_code").asInt(),
          json.path("message").asText("HTTP " + response.statusCode()), null);
    }
    return json;
  }

  private static SchemaType type(JsonNode body) {
    return SchemaType.parse(body.path("schemaType").asText(null));
  }

  private static List<SchemaReference> references(JsonNode body) {
    List<SchemaReference> refs = new ArrayList<>();
    for (JsonNode r : body.path("references")) {
      refs.add(new SchemaReference(r.path("name").asText(), r.path("subject").asText(), r.path("version").asInt()));
    }
    return refs;
  }

  private static String encode(String subject) {
    return URLEncoder.encode(subject, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** Number of schemas held in the by-id cache (tests and metrics). */
  public int cachedSchemas() {
    return byId.size();
  }

  /** A bounded least-recently-used map behind its own monitor. */
  private static final class Lru<K, V> {
    private final Map<K, V> map;

    Lru(int max) {
      this.map = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
          return size() > max;
        }
      };
    }

    synchronized V get(K key) {
      return map.get(key);
    }

    synchronized void put(K key, V value) {
      map.put(key, value);
    }

    synchronized int size() {
      return map.size();
    }
  }
}
