package io.tidemark.registry.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.tidemark.registry.CompatibilityResult;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.RegistryError;
import io.tidemark.registry.RegistryException;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.SchemaRequest;
import io.tidemark.registry.cluster.WriteForwarder;
import io.tidemark.registry.cluster.WriteLeader;
import io.tidemark.registry.log.RegistryRecord.SchemaRecord;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.state.RegistryState.StoredSchema;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Confluent Schema Registry REST API (v1) over a {@link SchemaRegistry}, on Javalin: same paths,
 * JSON bodies, content types and {@code {"error_code":..,"message":..}} error bodies. Optional HTTP
 * basic authentication and TLS come from {@link RegistryConfig}. The limits (bodies, chunked ones
 * included, over {@link RegistryConfig#maxRequestBytes()} get 413; headers; idle timeouts; JSON
 * depth) and the error discipline (no internals in any error body) are {@link HttpGuard}'s.
 *
 * <p>In a cluster, writes (register, deletes, config and mode changes) that reach a node which does
 * not lead the schema log are forwarded to the one that does ({@link WriteLeader}) and its answer is
 * relayed unchanged; reads are answered locally.
 *
 * <p>States: created, started ({@link #start()}), stopped ({@link #close()}). Handlers run on Jetty's
 * request threads and only call the registry, which owns all state.
 */
public final class RegistryHttpServer implements AutoCloseable {
  static final String V1_JSON = "application/vnd.schemaregistry.v1+json";
  private static final Set<String> ACCEPTED_BODY_TYPES = Set.of(
      "application/vnd.schemaregistry.v1+json", "application/vnd.schemaregistry+json", "application/json",
      "application/octet-stream");
  private static final Set<String> REQUEST_FIELDS = Set.of(
      "schema", "schemaType", "references", "id", "version", "metadata", "ruleSet", "subject");

  private final SchemaRegistry registry;
  private final RegistryConfig config;
  private final ObjectMapper json;
  private static final Pattern REGISTER_PATH = Pattern.compile("^/subjects/[^/]+/versions/?$");
  private static final Logger LOG = LoggerFactory.getLogger(RegistryHttpServer.class);

  private final Javalin app;
  private final HttpGuard guard;
  private final WriteLeader leader;
  private final WriteForwarder forwarder;
  private final HttpAccess access;

  /** A registry that writes itself (a single node). */
  public RegistryHttpServer(SchemaRegistry registry, RegistryConfig config) {
    this(registry, config, WriteLeader.self());
  }

  /** A registry that forwards writes to {@code leader} whenever that is another node. */
  public RegistryHttpServer(SchemaRegistry registry, RegistryConfig config, WriteLeader leader) {
    this(registry, config, leader, HttpAccess.endpointUsersOnly(config.basicAuthUsers()));
  }

  /**
   * A registry whose requests are authenticated and authorized by {@code access} (the node's Kafka
   * users and ACLs; see {@link RegistryPermissions} for the ACL each request needs).
   */
  public RegistryHttpServer(SchemaRegistry registry, RegistryConfig config, WriteLeader leader, HttpAccess access) {
    this.access = access;
    this.registry = registry;
    this.config = config;
    this.leader = leader;
    this.forwarder = new WriteForwarder(Duration.ofMillis(config.writeTimeoutMs()));
    this.json = HttpGuard.bounded(new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS),
        config.maxRequestBytes());
    this.guard = new HttpGuard(RegistryConfig.MAX_REQUEST_BYTES.name(), config.maxRequestBytes(), this::errorBody, LOG);
    this.app = Javalin.create(cfg -> {
      cfg.showJavalinBanner = false;
      guard.configure(cfg);
      cfg.router.ignoreTrailingSlashes = true;
      cfg.jetty.defaultHost = config.host();
      cfg.jetty.defaultPort = config.port();
      if (config.tlsEnabled()) {
        cfg.jetty.addConnector((server, httpConfig) -> HttpSecurity.tlsConnector(server, httpConfig, config.host(),
            config.port(), config.tlsKeystorePath(), config.tlsKeystorePassword(), config.tlsKeystoreType(),
            access.clientCertificates()));
      }
    });
    routes();
  }

  /** Binds the port and serves; returns this for chaining. */
  public RegistryHttpServer start() {
    app.start();
    return this;
  }

  /** The bound port (useful when configured with 0). */
  public int port() {
    return app.port();
  }

  @Override
  public void close() {
    app.stop();
  }


  private void routes() {
    guard.install(app);
    app.before(this::guard);
    app.exception(RegistryException.class, (e, ctx) -> {
      if (e.error().httpStatus() >= 500) {
        LOG.warn("{} {} failed: {}", ctx.method(), ctx.path(), e.getMessage(), e);
      }
      error(ctx, e.error(), e.getMessage());
    });
    app.exception(Exception.class, (e, ctx) -> error(ctx, RegistryError.STORE_ERROR, guard.internalError(ctx, e)));
    app.error(404, ctx -> {
      if (ctx.result() == null || ctx.result().isEmpty()) {
        error(ctx, RegistryError.BAD_REQUEST, "HTTP 404 Not Found", 404, 404);
      }
    });
    app.error(405, ctx -> error(ctx, RegistryError.BAD_REQUEST, "HTTP 405 Method Not Allowed", 405, 405));

    app.get("/", ctx -> respond(ctx, json.createObjectNode()));
    app.get("/schemas/types", ctx -> respond(ctx, registry.schemaTypes()));
    app.get("/schemas", this::listSchemas);
    app.get("/schemas/ids/{id}", this::schemaById);
    app.get("/schemas/ids/{id}/schema", ctx -> {
      String schema = registry.schemaById(id(ctx)).schema();
      checkSchemaReadable(ctx, id(ctx));
      respondRaw(ctx, schema);
    });
    app.get("/schemas/ids/{id}/subjects", ctx -> respond(ctx, registry.subjectsOfSchema(id(ctx), flag(ctx, "deleted"))
        .stream().filter(s -> describable(ctx, s)).toList()));
    app.get("/schemas/ids/{id}/versions", this::versionsOfSchema);

    app.get("/subjects", ctx -> respond(ctx, registry.subjects(flag(ctx, "deleted"), ctx.queryParam("subjectPrefix"))
        .stream().filter(s -> describable(ctx, s)).toList()));
    app.post("/subjects/{subject}", this::lookup);
    app.delete("/subjects/{subject}", ctx ->
        respond(ctx, registry.deleteSubject(ctx.pathParam("subject"), flag(ctx, "permanent"))));
    app.get("/subjects/{subject}/versions", ctx ->
        respond(ctx, registry.versions(ctx.pathParam("subject"), flag(ctx, "deleted"))));
    app.post("/subjects/{subject}/versions", this::register);
    app.get("/subjects/{subject}/versions/{version}", ctx -> respond(ctx, versionBody(
        registry.version(ctx.pathParam("subject"), ctx.pathParam("version"), flag(ctx, "deleted")))));
    app.get("/subjects/{subject}/versions/{version}/schema", ctx -> respondRaw(ctx,
        registry.version(ctx.pathParam("subject"), ctx.pathParam("version"), flag(ctx, "deleted")).schema()));
    app.get("/subjects/{subject}/versions/{version}/referencedby", ctx ->
        respond(ctx, registry.referencedBy(ctx.pathParam("subject"), ctx.pathParam("version"))));
    app.delete("/subjects/{subject}/versions/{version}", ctx -> respond(ctx,
        registry.deleteVersion(ctx.pathParam("subject"), ctx.pathParam("version"), flag(ctx, "permanent"))));

    app.get("/config", ctx -> respond(ctx, level("compatibilityLevel", registry.globalCompatibility())));
    app.put("/config", ctx -> respond(ctx, level("compatibility", registry.setCompatibility(null, levelField(ctx)))));
    app.delete("/config", ctx -> respond(ctx, level("compatibilityLevel", registry.deleteCompatibility(null))));
    app.get("/config/{subject}", ctx -> respond(ctx, level("compatibilityLevel",
        registry.subjectCompatibility(ctx.pathParam("subject"), flag(ctx, "defaultToGlobal")))));
    app.put("/config/{subject}", ctx -> respond(ctx, level("compatibility",
        registry.setCompatibility(ctx.pathParam("subject"), levelField(ctx)))));
    app.delete("/config/{subject}", ctx -> respond(ctx, level("compatibilityLevel",
        registry.deleteCompatibility(ctx.pathParam("subject")))));

    app.get("/mode", ctx -> respond(ctx, level("mode", registry.globalMode())));
    app.put("/mode", ctx -> respond(ctx, level("mode", registry.setMode(null, modeField(ctx), flag(ctx, "force")))));
    app.delete("/mode", ctx -> respond(ctx, level("mode", registry.deleteMode(null))));
    app.get("/mode/{subject}", ctx -> respond(ctx, level("mode",
        registry.subjectMode(ctx.pathParam("subject"), flag(ctx, "defaultToGlobal")))));
    app.put("/mode/{subject}", ctx -> respond(ctx, level("mode",
        registry.setMode(ctx.pathParam("subject"), modeField(ctx), flag(ctx, "force")))));
    app.delete("/mode/{subject}", ctx -> respond(ctx, level("mode", registry.deleteMode(ctx.pathParam("subject")))));

    app.post("/compatibility/subjects/{subject}/versions/{version}", ctx ->
        compatibility(ctx, ctx.pathParam("version")));
    app.post("/compatibility/subjects/{subject}/versions", ctx -> compatibility(ctx, null));
  }

  // ---------------------------------------------------------------- guards

  private void guard(Context ctx) {
    try {
      access.authenticate(ctx);
    } catch (HttpAccess.Unauthenticated e) {
      ctx.header("WWW-Authenticate", "Basic realm=\"tidemark-schema-registry\"");
      throw RegistryError.UNAUTHORIZED.exception(e.getMessage());
    }
    // Authorized here, before a write is forwarded, so the ACL sees this client's address.
    RegistryPermissions.needed(ctx.method().name(), ctx.path()).ifPresent(needed -> {
      if (!access.allowed(ctx, needed.op(), needed.type(), needed.name())) {
        throw denied(ctx, needed.op() + " on " + needed.type().name().toLowerCase(Locale.ROOT) + " '" + needed.name() + "'");
      }
    });
    String method = ctx.method().name();
    if ((method.equals("POST") || method.equals("PUT")) && ctx.contentType() != null) {
      String raw = ctx.contentType();
      int semicolon = raw.indexOf(';');
      String type = (semicolon < 0 ? raw : raw.substring(0, semicolon)).trim().toLowerCase(Locale.ROOT);
      if (!type.isEmpty() && !ACCEPTED_BODY_TYPES.contains(type)) {
        throw RegistryError.UNSUPPORTED_MEDIA_TYPE.exception("HTTP 415 Unsupported Media Type: " + type);
      }
    }
    if (isWrite(ctx)) {
      forwardIfElsewhere(ctx);
    }
  }

  private RegistryException denied(Context ctx, String what) {
    return RegistryError.FORBIDDEN.exception("User " + HttpAccess.principal(ctx) + " is denied " + what
        + " (docs/authorization.md: registry subjects are authorized as topics)");
  }

  /** Whether the principal may see {@code subject} in a listing. */
  private boolean describable(Context ctx, String subject) {
    return access.allowed(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, RegistryPermissions.topicOf(subject));
  }

  private boolean readable(Context ctx, String subject) {
    return access.allowed(ctx, AclOperation.READ, ResourceType.TOPIC, RegistryPermissions.topicOf(subject));
  }

  /** A schema by id may be read by whoever may read a subject (deleted ones included) that holds it. */
  private void checkSchemaReadable(Context ctx, int id) {
    if (!access.authorizing()) {
      return;
    }
    if (registry.subjectsOfSchema(id, true).stream().noneMatch(s -> readable(ctx, s))) {
      throw denied(ctx, "READ on every subject holding schema " + id);
    }
  }

  /** Register, deletes and config/mode changes; lookups and compatibility checks (POSTs too) are reads. */
  private static boolean isWrite(Context ctx) {
    String method = ctx.method().name();
    return method.equals("PUT") || method.equals("DELETE")
        || (method.equals("POST") && REGISTER_PATH.matcher(ctx.path()).matches());
  }

  private void forwardIfElsewhere(Context ctx) {
    Optional<URI> remote = leader.remote();
    if (remote.isEmpty()) {
      return;
    }
    if (ctx.header(WriteForwarder.FORWARDED_HEADER) != null) {
      throw RegistryError.NOT_LEADER.exception("this node no longer leads the schema log; retry the request");
    }
    String query = ctx.queryString();
    WriteForwarder.Answer answer = forwarder.forward(remote.get(), ctx.method().name(),
        ctx.path() + (query == null || query.isEmpty() ? "" : "?" + query), ctx.bodyAsBytes(), ctx::header);
    if (answer.succeeded()) {
      try {
        registry.replayNewRecords(); // read-your-writes on this node: the leader answered after its record was durable
      } catch (RuntimeException e) {
        LOG.warn("could not replay the schema log after a forwarded write: {}", e.toString());
      }
    }
    ctx.status(answer.status()).contentType(answer.contentType()).result(answer.body());
    ctx.skipRemainingHandlers();
  }


  // ---------------------------------------------------------------- handlers

  private void schemaById(Context ctx) {
    StoredSchema stored = registry.schemaById(id(ctx));
    checkSchemaReadable(ctx, id(ctx));
    ObjectNode body = json.createObjectNode();
    if (stored.type() != SchemaType.AVRO) {
      body.put("schemaType", stored.type().name());
    }
    body.put("schema", stored.schema());
    putReferences(body, stored.references());
    respond(ctx, body);
  }

  private void listSchemas(Context ctx) {
    List<SchemaRecord> all = registry.allVersions(ctx.queryParam("subjectPrefix"), flag(ctx, "deleted"), flag(ctx, "latestOnly"))
        .stream().filter(r -> readable(ctx, r.subject())).toList();
    int offset = Math.max(0, intParam(ctx, "offset", 0));
    int limit = intParam(ctx, "limit", -1);
    ArrayNode body = json.createArrayNode();
    for (int i = offset; i < all.size() && (limit < 0 || body.size() < limit); i++) {
      body.add(versionBody(all.get(i)));
    }
    respond(ctx, body);
  }

  private static int intParam(Context ctx, String name, int fallback) {
    String raw = ctx.queryParam(name);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    try {
      return Integer.parseInt(raw.trim());
    } catch (NumberFormatException e) {
      throw RegistryError.UNPROCESSABLE_ENTITY.exception("query parameter " + name + " must be an integer, was '" + raw + "'");
    }
  }

  private void versionsOfSchema(Context ctx) {
    ArrayNode body = json.createArrayNode();
    for (SchemaRecord r : registry.versionsOfSchema(id(ctx), flag(ctx, "deleted"))) {
      if (!describable(ctx, r.subject())) {
        continue;
      }
      body.addObject().put("subject", r.subject()).put("version", r.version());
    }
    respond(ctx, body);
  }

  private void register(Context ctx) {
    int id = registry.register(ctx.pathParam("subject"), schemaRequest(ctx), flag(ctx, "normalize"));
    respond(ctx, json.createObjectNode().put("id", id));
  }

  private void lookup(Context ctx) {
    SchemaRecord found = registry.lookup(ctx.pathParam("subject"), schemaRequest(ctx), flag(ctx, "normalize"),
        flag(ctx, "deleted"));
    respond(ctx, versionBody(found));
  }

  private void compatibility(Context ctx, String version) {
    CompatibilityResult result = registry.checkCompatibility(ctx.pathParam("subject"), version, schemaRequest(ctx),
        flag(ctx, "normalize"), flag(ctx, "verbose"));
    ObjectNode body = json.createObjectNode().put("is_compatible", result.compatible());
    if (flag(ctx, "verbose")) {
      ArrayNode messages = body.putArray("messages");
      result.messages().forEach(messages::add);
    }
    respond(ctx, body);
  }

  private ObjectNode versionBody(SchemaRecord r) {
    ObjectNode body = json.createObjectNode();
    body.put("subject", r.subject());
    body.put("version", r.version());
    body.put("id", r.id());
    if (r.type() != SchemaType.AVRO) {
      body.put("schemaType", r.type().name());
    }
    putReferences(body, r.references());
    body.put("schema", r.schema());
    return body;
  }

  private void putReferences(ObjectNode body, List<SchemaReference> references) {
    if (references.isEmpty()) {
      return;
    }
    ArrayNode refs = body.putArray("references");
    for (SchemaReference ref : references) {
      refs.addObject().put("name", ref.name()).put("subject", ref.subject()).put("version", ref.version());
    }
  }

  // ---------------------------------------------------------------- request bodies

  private JsonNode body(Context ctx) {
    // JSON is UTF-8 (RFC 8259) whatever charset the Content-Type names; bounded by HttpGuard (413 past
    // registry.max.request.bytes, chunked or not).
    String text = new String(ctx.bodyAsBytes(), StandardCharsets.UTF_8);
    if (text.isBlank()) {
      throw RegistryError.UNPROCESSABLE_ENTITY.exception("Request body is empty; a JSON object was expected");
    }
    try {
      JsonNode node = json.readTree(text);
      if (!node.isObject()) {
        throw RegistryError.UNPROCESSABLE_ENTITY.exception("Request body must be a JSON object");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw RegistryError.BAD_REQUEST.exception(HttpGuard.describe(e));
    }
  }

  private SchemaRequest schemaRequest(Context ctx) {
    JsonNode body = body(ctx);
    body.fieldNames().forEachRemaining(name -> {
      if (!REQUEST_FIELDS.contains(name)) {
        throw RegistryError.UNPROCESSABLE_ENTITY.exception("Unrecognized field: " + name);
      }
    });
    JsonNode schema = body.get("schema");
    if (schema == null || !schema.isTextual()) {
      throw RegistryError.INVALID_SCHEMA.exception("Invalid schema: the field \"schema\" must be a string holding the schema");
    }
    JsonNode typeNode = body.get("schemaType");
    String typeName = typeNode == null || typeNode.isNull() ? null : typeNode.asText();
    SchemaType type = SchemaType.parse(typeName);
    if (type == null) {
      throw RegistryError.INVALID_SCHEMA.exception("Invalid schema type " + typeName + "; valid types are AVRO, JSON, PROTOBUF");
    }
    List<SchemaReference> references = new ArrayList<>();
    JsonNode refs = body.get("references");
    if (refs != null && !refs.isNull()) {
      if (!refs.isArray()) {
        throw RegistryError.UNPROCESSABLE_ENTITY.exception("\"references\" must be an array");
      }
      for (JsonNode ref : refs) {
        if (!ref.path("name").isTextual() || !ref.path("subject").isTextual() || !ref.path("version").canConvertToInt()) {
          throw RegistryError.UNPROCESSABLE_ENTITY.exception("each reference needs a string name, a string subject and an int version");
        }
        references.add(new SchemaReference(ref.get("name").asText(), ref.get("subject").asText(), ref.get("version").asInt()));
      }
    }
    return new SchemaRequest(schema.asText(), type, references, optionalInt(body, "id"), optionalInt(body, "version"));
  }

  private static Integer optionalInt(JsonNode body, String field) {
    JsonNode node = body.get(field);
    if (node == null || node.isNull()) {
      return null;
    }
    if (!node.canConvertToInt() || !node.isIntegralNumber()) {
      throw RegistryError.UNPROCESSABLE_ENTITY.exception("\"" + field + "\" must be an integer");
    }
    return node.asInt();
  }

  private String levelField(Context ctx) {
    JsonNode node = body(ctx).get("compatibility");
    if (node == null || !node.isTextual()) {
      throw RegistryError.INVALID_COMPATIBILITY_LEVEL.exception("Invalid compatibility level: the body needs {\"compatibility\": LEVEL}");
    }
    return node.asText();
  }

  private String modeField(Context ctx) {
    JsonNode node = body(ctx).get("mode");
    if (node == null || !node.isTextual()) {
      throw RegistryError.INVALID_MODE.exception("Invalid mode: the body needs {\"mode\": MODE}");
    }
    return node.asText();
  }

  private static int id(Context ctx) {
    try {
      return Integer.parseInt(ctx.pathParam("id"));
    } catch (NumberFormatException e) {
      throw RegistryError.SCHEMA_NOT_FOUND.exception("Schema " + ctx.pathParam("id") + " not found");
    }
  }

  private static boolean flag(Context ctx, String name) {
    return Boolean.parseBoolean(ctx.queryParam(name));
  }

  private static ObjectNode level(String field, String value) {
    return new ObjectMapper().createObjectNode().put(field, value);
  }

  // ---------------------------------------------------------------- responses

  private void respond(Context ctx, Object body) {
    try {
      ctx.contentType(responseType(ctx)).result(json.writeValueAsString(body));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private void respondRaw(Context ctx, String schema) {
    ctx.contentType(responseType(ctx)).result(schema);
  }

  private static String responseType(Context ctx) {
    String accept = ctx.header("Accept");
    if (accept != null && accept.contains("application/json") && !accept.contains("schemaregistry")) {
      return "application/json";
    }
    return V1_JSON;
  }

  /** The registry's error body for a status answered by the shared HTTP layer (413, 431, 500, ...). */
  private String errorBody(int status, String message) {
    int code = switch (status) {
      case 413 -> RegistryError.REQUEST_TOO_LARGE.errorCode();
      case 500 -> RegistryError.STORE_ERROR.errorCode();
      default -> status;
    };
    return json.createObjectNode().put("error_code", code).put("message", message).toString();
  }

  private void error(Context ctx, RegistryError error, String message) {
    error(ctx, error, message, error.httpStatus(), error.errorCode());
  }

  private void error(Context ctx, RegistryError error, String message, int status, int code) {
    // Every error leaves here, its message checked once more for internals (a path may echo anything).
    String safe = HttpGuard.publicMessage(message, error.name().toLowerCase(Locale.ROOT).replace('_', ' '));
    ObjectNode body = json.createObjectNode().put("error_code", code).put("message", safe);
    ctx.status(status);
    respond(ctx, body);
  }
}
