package io.tidemark.table.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.table.catalog.CheckingEndpoint;
import io.tidemark.table.catalog.CheckingEndpoint.Reply;
import io.tidemark.table.catalog.CheckingEndpoint.Seen;
import io.tidemark.table.config.TableCatalogConfig;
import java.io.Closeable;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: {@code table.catalog.type=nessie}, configured only through {@code table.catalog.*}, reaches the Nessie
 * server it is given with Nessie's API v2 requests on the configured branch, each carrying the configured bearer
 * token (all but the unauthenticated config probe), checked by a local endpoint that stands where Nessie would (Iceberg's {@code NessieCatalog} with the Nessie
 * client, as a deployment that adds those jars gets).
 */
class NessieCatalogConfigTest {

  private static final String TOKEN = "nessie-test-token";
  private static final String HASH = "2e1cfa82b035c26cbbbdae632cea070514eb8b773f616aaeaf668e2f0be8f10d";

  @TempDir
  Path dir;

  @Test
  void nessieSendsApiV2RequestsOnTheConfiguredBranchWithTheBearerToken() throws Exception {
    // the Nessie client asks for the server's config (API versions) before it authenticates; every other request
    // must carry the token
    try (CheckingEndpoint nessie = new CheckingEndpoint(null, "", r -> r.rawPath().equals("/api/v2/config")
        || ("Bearer " + TOKEN).equals(r.header("authorization")) ? null : "no bearer token: " + r.header("authorization"))) {
      nessie.answerWith(NessieCatalogConfigTest::answer);
      Catalog catalog = TableCatalogConfig.parse(Map.of("table.catalog.type", "nessie",
          "table.catalog.uri", nessie.uri() + "/api/v2", "table.catalog.ref", "lake",
          "table.catalog.warehouse", dir.resolve("warehouse").toUri().toString(),
          "table.catalog.authentication.type", "BEARER", "table.catalog.authentication.token", TOKEN))
          .open(dir, null, "unused://");
      try {
        assertThat(catalog.getClass().getName()).isEqualTo("org.apache.iceberg.nessie.NessieCatalog");
        assertThat(((SupportsNamespaces) catalog).listNamespaces()).containsExactly(Namespace.of("sales"));
      } finally {
        ((Closeable) catalog).close();
      }
      List<Seen> seen = nessie.seen();
      assertThat(nessie.refusals()).isEmpty();
      assertThat(seen).extracting(s -> s.method() + " " + s.rawPath())
          .startsWith("GET /api/v2/config", "GET /api/v2/trees/lake");
      assertThat(seen).extracting(Seen::rawPath).allMatch(p -> p.startsWith("/api/v2/"));
      assertThat(seen).extracting(s -> s.method() + " " + s.rawPath())
          .anyMatch(p -> p.startsWith("GET /api/v2/trees/lake") && p.endsWith("/entries"))
          .anyMatch(p -> p.startsWith("POST /api/v2/trees/lake") && p.endsWith("/contents"));
      assertThat(seen).filteredOn(s -> s.method().equals("POST")).extracting(NessieCatalogConfigTest::body)
          .allMatch(b -> b.replaceAll("\\s", "").contains("\"requestedKeys\":[{\"elements\":[\"sales\"]}]"),
              "asks for the namespace it listed");
    }
  }

  /** Nessie's answers to what the catalog asks for here (API v2 JSON). */
  private static Reply answer(Seen r) {
    String path = r.rawPath();
    if (path.equals("/api/v2/config")) {
      return json("{\"defaultBranch\":\"main\",\"minSupportedApiVersion\":1,\"maxSupportedApiVersion\":2,"
          + "\"actualApiVersion\":2,\"specVersion\":\"2.2.0\",\"noAncestorHash\":\"" + "0".repeat(64) + "\","
          + "\"repositoryCreationTimestamp\":\"2026-12-01T00:00:00Z\","
          + "\"oldestPossibleCommitTimestamp\":\"2026-12-01T00:00:00Z\",\"additionalProperties\":{}}");
    }
    if (path.equals("/api/v2/trees/lake")) {
      return json("{\"reference\":{\"type\":\"BRANCH\",\"name\":\"lake\",\"hash\":\"" + HASH + "\"}}");
    }
    if (path.startsWith("/api/v2/trees/lake") && path.endsWith("/entries")) {
      return json("{\"token\":null,\"hasMore\":false,\"effectiveReference\":{\"type\":\"BRANCH\",\"name\":\"lake\","
          + "\"hash\":\"" + HASH + "\"},\"entries\":[{\"type\":\"NAMESPACE\",\"name\":{\"elements\":[\"sales\"]}}]}");
    }
    if (r.method().equals("POST") && path.startsWith("/api/v2/trees/lake") && path.endsWith("/contents")
        && body(r).contains("\"sales\"")) {
      return json("{\"contents\":[{\"key\":{\"elements\":[\"sales\"]},\"content\":{\"type\":\"NAMESPACE\","
          + "\"id\":\"5f3e0a8c-4b8e-4c1e-9d6a-0c7b2e1f9a11\",\"elements\":[\"sales\"],\"properties\":{}}}],"
          + "\"effectiveReference\":{\"type\":\"BRANCH\",\"name\":\"lake\",\"hash\":\"" + HASH + "\"}}");
    }
    return new Reply(404, "application/json", "{\"status\":404,\"reason\":\"Not Found\",\"message\":\"unexpected "
        + r.method() + " " + path + "\",\"errorCode\":\"UNKNOWN\"}");
  }

  /** The request body as text, gunzipped when the client compressed it (the Nessie client does). */
  static String body(Seen r) {
    if (!"gzip".equals(r.header("content-encoding"))) {
      return r.bodyText();
    }
    try (java.util.zip.GZIPInputStream in = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(r.body()))) {
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      return "(not gzip: " + e + ")";
    }
  }

  private static Reply json(String body) {
    return new Reply(200, "application/json", body);
  }
}
