package io.tidemark.registry.bench;

import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.SchemaRequest;
import io.tidemark.registry.client.SchemaRegistryClient;
import io.tidemark.registry.http.RegistryHttpServer;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.store.MemorySchemaStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Registrations per second and lookups per second (cached in the client, and uncached: a REST call
 * per lookup) against an in-process registry on the in-memory log, over real HTTP on localhost.
 *
 * <p>Run: {@code mvn -o -q -pl registry -am test-compile && java -cp "registry/target/test-classes:registry/target/classes:$(cat /tmp/registry.cp)"
 * io.tidemark.registry.bench.RegistryBenchmark [schemas] [lookups]} after
 * {@code mvn -o -q -pl registry dependency:build-classpath -Dmdep.outputFile=/tmp/registry.cp}.
 */
public final class RegistryBenchmark {

  private static String schema(String name, int fields) {
    StringBuilder s = new StringBuilder("{\"type\":\"record\",\"name\":\"" + name + "\",\"namespace\":\"bench\",\"fields\":[");
    for (int i = 0; i < fields; i++) {
      s.append(i == 0 ? "" : ",").append("{\"name\":\"f").append(i).append("\",\"type\":\"long\",\"default\":0}");
    }
    return s.append("]}").toString();
  }

  public static void main(String[] args) throws Exception {
    int schemas = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int lookups = args.length > 1 ? Integer.parseInt(args[1]) : 20000;
    System.out.println("command: java ... io.tidemark.registry.bench.RegistryBenchmark " + schemas + " " + lookups);
    RegistryConfig config = RegistryConfig.defaults(0);
    try (SchemaRegistry registry = new SchemaRegistry(config, new MemorySchemaStore())) {
      registry.start();
      RegistryHttpServer server = new RegistryHttpServer(registry, config).start();
      URI base = URI.create("http://localhost:" + server.port());
      SchemaRegistryClient client = new SchemaRegistryClient(base, schemas + 10);

      // warm-up: JIT, connections
      for (int i = 0; i < 200; i++) {
        client.register("warm-" + i, SchemaType.AVRO, schema("Warm" + i, 3));
      }

      long t0 = System.nanoTime();
      int[] ids = new int[schemas];
      for (int i = 0; i < schemas; i++) {
        ids[i] = client.register("subject-" + i, SchemaType.AVRO, schema("S" + i, 5));
      }
      report("registrations/s (REST, new subject each)", schemas, System.nanoTime() - t0);

      int evolutions = Math.min(schemas, 500);
      t0 = System.nanoTime();
      for (int i = 1; i <= evolutions; i++) {
        client.register("evolving", SchemaType.AVRO, schema("Evolving", i));
      }
      report("registrations/s (REST, new version of one subject, BACKWARD check)", evolutions, System.nanoTime() - t0);

      t0 = System.nanoTime();
      for (int i = 0; i < schemas; i++) {
        registry.register("inproc-" + i, SchemaRequest.of(SchemaType.AVRO, schema("P" + i, 5)), false);
      }
      report("registrations/s (in-process, no HTTP)", schemas, System.nanoTime() - t0);

      HttpClient http = HttpClient.newHttpClient();
      SplittableRandom random = new SplittableRandom(42);
      t0 = System.nanoTime();
      for (int i = 0; i < lookups; i++) {
        int id = ids[random.nextInt(schemas)];
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/schemas/ids/" + id)).build(),
            HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
          throw new IllegalStateException("lookup failed: " + r.body());
        }
      }
      report("lookups/s uncached (GET /schemas/ids/{id} over REST)", lookups, System.nanoTime() - t0);

      t0 = System.nanoTime();
      int postLookups = Math.min(lookups, 2000);
      for (int i = 0; i < postLookups; i++) {
        int n = random.nextInt(schemas);
        String body = "{\"schema\":" + new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(schema("S" + n, 5)) + "}";
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/subjects/subject-" + n))
            .header("Content-Type", "application/vnd.schemaregistry.v1+json")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
          throw new IllegalStateException("lookup failed: " + r.body());
        }
      }
      report("lookups/s by schema (POST /subjects/{s}, parses the schema)", postLookups, System.nanoTime() - t0);

      for (int id : ids) {
        client.schemaById(id);
      }
      t0 = System.nanoTime();
      long checksum = 0;
      int cachedLookups = lookups * 100;
      for (int i = 0; i < cachedLookups; i++) {
        checksum += client.schemaById(ids[random.nextInt(schemas)]).id();
      }
      report("lookups/s cached (client cache hit)", cachedLookups, System.nanoTime() - t0);
      System.out.println("checksum " + checksum);
      server.close();
    }
  }

  private static void report(String what, int count, long nanos) {
    double perSecond = count / (nanos / 1e9);
    System.out.println(String.format(Locale.ROOT, "%-70s %,12.0f  (%d ops in %.2f s)", what, perSecond, count, nanos / 1e9));
  }
}
