package io.tidemark.table.rest;

import static io.tidemark.table.rest.RestFixture.readAll;
import static io.tidemark.table.rest.RestFixture.row;
import static io.tidemark.table.rest.RestFixture.writeDataFile;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.table.catalog.CheckingEndpoint;
import io.tidemark.table.catalog.CheckingEndpoint.Reply;
import io.tidemark.table.catalog.CheckingEndpoint.Seen;
import io.tidemark.table.catalog.FixedCredentials;
import io.tidemark.table.catalog.SigV4Verifier;
import io.tidemark.table.config.TableCatalogConfig;
import io.tidemark.table.warehouse.LocalFileIO;
import java.io.Closeable;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.aws.glue.GlueCatalog;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Goal: each external catalog type, configured only through {@code table.catalog.*}, sends the requests its service
 * expects, checked by a local endpoint that stands where the service would: S3 Tables (SigV4 signatures recomputed
 * from the known test key), a REST catalog behind OAuth2 (token request and bearer header), Glue (SigV4, its JSON
 * operations). S3 Tables and OAuth2 forward to a real Iceberg REST catalog and read back what they wrote.
 */
class ExternalCatalogsTest {

  private static final String ACCESS_KEY = "AKIDTIDEMARKTEST";
  private static final String SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYTIDEMARK";
  private static final String BUCKET_ARN = "arn:aws:s3tables:us-west-2:111122223333:bucket/lake";

  @TempDir
  Path dir;

  @Test
  void theSigV4VerifierMatchesAwsPublishedExample() {
    // goal: the verifier's key derivation and signature are AWS's (the get-vanilla case of the SigV4 test suite)
    String canonical = "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
        + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    String stringToSign = "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
        + SigV4Verifier.hexSha256(canonical);
    assertThat(SigV4Verifier.signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830", "us-east-1", "service",
        stringToSign)).isEqualTo("5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  }

  @Test
  void s3TablesDefaultsComeFromTheBucketArn() {
    // goal: type=s3tables needs only the ARN: REST endpoint of its region, SigV4 as s3tables, S3FileIO
    Map<String, String> props = TableCatalogConfig.parse(Map.of("table.catalog.type", "s3tables",
        "table.catalog.warehouse", BUCKET_ARN)).icebergProperties();
    assertThat(props)
        .containsEntry("catalog-impl", "org.apache.iceberg.rest.RESTCatalog")
        .containsEntry("uri", "https://s3tables.us-west-2.amazonaws.com/iceberg")
        .containsEntry("warehouse", BUCKET_ARN)
        .containsEntry("rest.auth.type", "sigv4")
        .containsEntry("rest.signing-name", "s3tables")
        .containsEntry("rest.signing-region", "us-west-2")
        .containsEntry("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    assertThatThrownBy(() -> TableCatalogConfig.parse(Map.of("table.catalog.type", "s3tables")))
        .hasMessageContaining("table bucket ARN");
    assertThatThrownBy(() -> TableCatalogConfig.parse(Map.of("table.catalog.type", "s3tables",
        "table.catalog.warehouse", "s3://lake/wh"))).hasMessageContaining("is not an S3 Tables table bucket ARN");
  }

  @Test
  void s3TablesSignsEveryRequestAndLandsRows() throws Exception {
    // goal: every request to the S3 Tables endpoint carries a valid SigV4 signature for s3tables in the ARN's region
    SigV4Verifier verifier = new SigV4Verifier(ACCESS_KEY, SECRET_KEY, "us-west-2", "s3tables");
    try (RestFixture upstream = new RestFixture(dir);
        CheckingEndpoint s3tables = new CheckingEndpoint(upstream.uri(), "/iceberg", verifier::problem)) {
      Catalog catalog = TableCatalogConfig.parse(Map.of("table.catalog.type", "s3tables",
          "table.catalog.warehouse", BUCKET_ARN, "table.catalog.uri", s3tables.uri() + "/iceberg",
          "table.catalog.rest.access-key-id", ACCESS_KEY, "table.catalog.rest.secret-access-key", SECRET_KEY,
          "table.catalog.io-impl", LocalFileIO.class.getName())).open(dir, null, "unused://");
      try {
        assertThat(catalog).isInstanceOf(RESTCatalog.class);
        List<Long> ids = writeAndRead(catalog, TableIdentifier.of("sales", "orders"));
        assertThat(ids).containsExactly(1L, 2L);
        assertThat(readAll(upstream.embedded, TableIdentifier.of("sales", "orders"))).hasSize(2);
      } finally {
        ((Closeable) catalog).close();
      }
      assertThat(s3tables.refusals()).isEmpty();
      List<Seen> seen = s3tables.seen();
      assertThat(seen).first().satisfies(first -> {
        assertThat(first.rawPath()).isEqualTo("/iceberg/v1/config");
        assertThat(URLDecoder.decode(first.rawQuery(), StandardCharsets.UTF_8)).isEqualTo("warehouse=" + BUCKET_ARN);
      });
      assertThat(seen).allSatisfy(r -> assertThat(r.header("authorization")).startsWith("AWS4-HMAC-SHA256 Credential="
          + ACCESS_KEY + "/"));
      Seen post = seen.stream().filter(r -> r.method().equals("POST") && r.body().length > 0).findFirst().orElseThrow();
      assertThat(verifier.problem(post)).isNull();
      // the verifier is not a rubber stamp: one changed byte, another key or another service fails
      byte[] tampered = Arrays.copyOf(post.body(), post.body().length);
      tampered[tampered.length / 2] ^= 1;
      assertThat(verifier.problem(new Seen(post.method(), post.rawPath(), post.rawQuery(), post.headers(), tampered)))
          .isNotNull();
      assertThat(new SigV4Verifier(ACCESS_KEY, SECRET_KEY + "x", "us-west-2", "s3tables").problem(post)).isNotNull();
      assertThat(new SigV4Verifier(ACCESS_KEY, SECRET_KEY, "us-west-2", "s3").problem(post)).isNotNull();
    }
  }

  @Test
  void aRestCatalogWithOAuth2GetsATokenAndSendsItAsBearer() throws Exception {
    // goal: credential + oauth2-server-uri + scope: a client_credentials token request, then Bearer on every call
    String token = "tidemark-test-token-1";
    try (RestFixture upstream = new RestFixture(dir);
        CheckingEndpoint rest = new CheckingEndpoint(upstream.uri(), "", r -> ("Bearer " + token)
            .equals(r.header("authorization")) ? null : "Authorization is " + r.header("authorization"))) {
      rest.route("/oauth/tokens", r -> {
        Map<String, String> form = form(r.bodyText());
        boolean ok = "client_credentials".equals(form.get("grant_type")) && "tidemark".equals(form.get("client_id"))
            && "s3cret".equals(form.get("client_secret")) && "catalog:write".equals(form.get("scope"));
        return ok ? new Reply(200, "application/json", "{\"access_token\":\"" + token + "\",\"token_type\":\"bearer\","
            + "\"expires_in\":3600,\"issued_token_type\":\"urn:ietf:params:oauth:token-type:access_token\"}")
            : new Reply(401, "application/json", "{\"error\":\"invalid_client\",\"error_description\":\"bad\"}");
      });
      Map<String, String> settings = new HashMap<>(Map.of("table.catalog.type", "rest",
          "table.catalog.uri", rest.uri(), "table.catalog.credential", "tidemark:s3cret",
          "table.catalog.oauth2-server-uri", rest.uri() + "/oauth/tokens", "table.catalog.scope", "catalog:write",
          "table.catalog.io-impl", LocalFileIO.class.getName()));
      Catalog catalog = TableCatalogConfig.parse(settings).open(dir, null, "unused://");
      try {
        assertThat(writeAndRead(catalog, TableIdentifier.of("crm", "leads"))).containsExactly(1L, 2L);
      } finally {
        ((Closeable) catalog).close();
      }
      assertThat(rest.refusals()).isEmpty();
      List<Seen> seen = rest.seen();
      assertThat(seen.get(0).rawPath()).isEqualTo("/oauth/tokens");
      assertThat(seen.get(0).header("content-type")).startsWith("application/x-www-form-urlencoded");
      assertThat(seen.stream().filter(r -> !r.rawPath().equals("/oauth/tokens")).count()).isGreaterThan(3);

      settings.put("table.catalog.credential", "tidemark:wrong");
      assertThatThrownBy(() -> TableCatalogConfig.parse(settings).open(dir, null, "unused://"))
          .isInstanceOf(NotAuthorizedException.class);
    }
  }

  @Test
  void glueSignsItsOperationsWithSigV4() throws Exception {
    // goal: type=glue reaches the Glue endpoint it is given, SigV4-signed as glue, with Glue's JSON operations
    SigV4Verifier verifier = new SigV4Verifier(ACCESS_KEY, SECRET_KEY, "eu-central-1", "glue");
    try (CheckingEndpoint glue = new CheckingEndpoint(null, "", verifier::problem)) {
      glue.answerWith(r -> switch (String.valueOf(r.header("x-amz-target"))) {
        case "AWSGlue.CreateDatabase" -> new Reply(200, "application/x-amz-json-1.1", "{}");
        case "AWSGlue.GetDatabases" -> new Reply(200, "application/x-amz-json-1.1",
            "{\"DatabaseList\":[{\"Name\":\"sales\"}]}");
        default -> new Reply(400, "application/x-amz-json-1.1",
            "{\"__type\":\"InvalidInputException\",\"message\":\"unexpected " + r.header("x-amz-target") + "\"}");
      });
      Catalog catalog = TableCatalogConfig.parse(Map.of("table.catalog.type", "glue",
          "table.catalog.warehouse", "s3://lake/warehouse", "table.catalog.glue.endpoint", glue.uri(),
          "table.catalog.client.region", "eu-central-1",
          "table.catalog.client.credentials-provider", FixedCredentials.class.getName(),
          "table.catalog.client.credentials-provider.access-key-id", ACCESS_KEY,
          "table.catalog.client.credentials-provider.secret-access-key", SECRET_KEY)).open(dir, null, "unused://");
      try {
        assertThat(catalog).isInstanceOf(GlueCatalog.class);
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("sales"));
        assertThat(((SupportsNamespaces) catalog).listNamespaces()).containsExactly(Namespace.of("sales"));
      } finally {
        ((Closeable) catalog).close();
      }
      assertThat(glue.refusals()).isEmpty();
      List<Seen> seen = glue.seen();
      assertThat(seen).extracting(r -> r.header("x-amz-target"))
          .containsExactly("AWSGlue.CreateDatabase", "AWSGlue.GetDatabases");
      assertThat(seen.get(0).bodyText()).contains("\"Name\":\"sales\"");
      Seen create = seen.get(0);
      byte[] tampered = create.bodyText().replace("sales", "sa1es").getBytes(StandardCharsets.UTF_8);
      assertThat(verifier.problem(new Seen(create.method(), create.rawPath(), create.rawQuery(), create.headers(),
          tampered))).isNotNull();
    }
  }

  /** Creates a table, appends two rows through the catalog, reads them back through a fresh load; the ids. */
  private static List<Long> writeAndRead(Catalog catalog, TableIdentifier id) throws Exception {
    ((SupportsNamespaces) catalog).createNamespace(id.namespace());
    Table table = catalog.createTable(id, IcebergRestServerTest.SCHEMA,
        PartitionSpec.builderFor(IcebergRestServerTest.SCHEMA).identity("day").build());
    table.newAppend().appendFile(writeDataFile(table, "p0", List.of(row(table, 1L, "one", LocalDate.of(2026, 12, 1)),
        row(table, 2L, "two", LocalDate.of(2026, 12, 1))))).commit();
    return readAll(catalog, id).stream().map(r -> (Long) r.getField("id")).sorted().toList();
  }

  private static Map<String, String> form(String body) {
    Map<String, String> out = new HashMap<>();
    for (String pair : body.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        out.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }
}
