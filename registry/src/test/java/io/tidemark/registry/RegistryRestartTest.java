package io.tidemark.registry;

import static io.tidemark.registry.http.RegistryHarness.schemaBody;
import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.registry.http.RegistryHarness;
import io.tidemark.registry.store.MemorySchemaStore;
import io.tidemark.registry.store.SchemaStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Goal: a registry started on an existing _schemas log rebuilds the same ids, versions, deletions and settings, and continues dense ids. */
class RegistryRestartTest {

  private static String record(String name, int fields) {
    StringBuilder s = new StringBuilder("{\"type\":\"record\",\"name\":\"" + name + "\",\"fields\":[");
    for (int i = 0; i < fields; i++) {
      s.append(i == 0 ? "" : ",").append("{\"name\":\"f").append(i).append("\",\"type\":\"int\",\"default\":0}");
    }
    return s.append("]}").toString();
  }

  @Test
  void replayRestoresEverythingTheApiShows() {
    // Goal: every GET answer is identical before and after a restart on the same log.
    SchemaStore store = new MemorySchemaStore();
    List<String> paths = new ArrayList<>(List.of("/subjects", "/subjects?deleted=true", "/config", "/mode", "/config/b",
        "/mode/c", "/schemas/ids/1", "/schemas/ids/2", "/schemas/ids/3", "/schemas/ids/4"));
    List<String> before = new ArrayList<>();
    try (RegistryHarness h = new RegistryHarness(store, RegistryConfig.defaults(0))) {
      for (int v = 1; v <= 3; v++) {
        h.register("a", null, record("A", v));
      }
      h.register("b", "JSON", "{\"type\":\"object\"}");
      h.register("c", "PROTOBUF", "syntax = \"proto3\"; message C { string x = 1; }");
      h.delete("/subjects/a/versions/2");
      h.put("/config", "{\"compatibility\":\"FULL\"}");
      h.put("/config/b", "{\"compatibility\":\"NONE\"}");
      h.put("/mode/c", "{\"mode\":\"READONLY\"}");
      h.delete("/subjects/b");
      for (String subject : List.of("a", "b", "c")) {
        paths.add("/subjects/" + subject + "/versions?deleted=true");
        paths.add("/subjects/" + subject + "/versions");
        paths.add("/subjects/" + subject + "/versions/1?deleted=true");
      }
      paths.add("/subjects/a/versions/latest");
      for (String path : paths) {
        before.add(h.get(path).text());
      }
    }
    try (RegistryHarness h = new RegistryHarness(store, RegistryConfig.defaults(0))) {
      List<String> after = new ArrayList<>();
      for (String path : paths) {
        after.add(h.get(path).text());
      }
      assertThat(after).containsExactlyElementsOf(before);
      assertThat(h.register("d", null, "\"string\"")).as("ids continue densely after replay").isEqualTo(6);
      assertThat(h.post("/subjects/a/versions", schemaBody(null, record("A", 4))).json().get("id").asInt()).isEqualTo(7);
      assertThat(h.get("/subjects/a/versions").json().toString()).isEqualTo("[1,3,4]");
    }
  }

  @Test
  void aSecondRegistryOnTheSameLogFollowsTheWriter() {
    // Goal: a registry that does not write (a follower broker) sees another registry's writes after replayNewRecords.
    SchemaStore store = new MemorySchemaStore();
    try (SchemaRegistry leader = new SchemaRegistry(RegistryConfig.defaults(0), store);
         SchemaRegistry follower = new SchemaRegistry(RegistryConfig.defaults(0), store)) {
      leader.start();
      follower.start();
      int id = leader.register("s", SchemaRequest.of(io.tidemark.registry.schema.SchemaType.AVRO, "\"int\""), false);
      assertThat(follower.subjects(false, null)).isEmpty();
      follower.replayNewRecords();
      assertThat(follower.schemaById(id).schema()).isEqualTo("\"int\"");
      assertThat(follower.register("t", SchemaRequest.of(io.tidemark.registry.schema.SchemaType.AVRO, "\"long\""), false))
          .as("a write on the follower catches up first, so ids stay unique").isEqualTo(id + 1);
    }
  }

  @Test
  void randomHistoriesReplayToTheSameState() {
    // Goal: for seeded random sequences of registrations and deletes, a replayed registry answers like the original.
    long seed = Long.getLong("tidemark.test.seed", System.nanoTime());
    int steps = "full".equals(System.getProperty("tidemark.test.scale")) ? 400 : 60;
    Random random = new Random(seed);
    SchemaStore store = new MemorySchemaStore();
    SchemaRegistry original = new SchemaRegistry(RegistryConfig.defaults(0), store);
    original.start();
    original.setCompatibility(null, "NONE");
    for (int i = 0; i < steps; i++) {
      String subject = "s" + random.nextInt(4);
      try {
        switch (random.nextInt(4)) {
          case 0, 1 -> original.register(subject, SchemaRequest.of(io.tidemark.registry.schema.SchemaType.AVRO,
              record("R" + random.nextInt(3), 1 + random.nextInt(5))), false);
          case 2 -> original.deleteVersion(subject, "latest", false);
          default -> original.deleteSubject(subject, random.nextBoolean());
        }
      } catch (RegistryException expected) {
        // bad requests change nothing; the replay below checks that too
      }
    }
    SchemaRegistry replayed = new SchemaRegistry(RegistryConfig.defaults(0), store);
    replayed.start();
    assertThat(replayed.subjects(true, null)).as("seed " + seed).isEqualTo(original.subjects(true, null));
    for (String subject : original.subjects(true, null)) {
      assertThat(replayed.versions(subject, true)).as("seed " + seed).isEqualTo(original.versions(subject, true));
      for (int v : original.versions(subject, true)) {
        assertThat(replayed.version(subject, Integer.toString(v), true))
            .as("seed " + seed).isEqualTo(original.version(subject, Integer.toString(v), true));
      }
    }
    original.close();
    replayed.close();
  }
}
