package io.tidemark.table.sync;

import io.tidemark.table.sync.EvolvingSchema.AddField;
import io.tidemark.table.sync.EvolvingSchema.AddNested;
import io.tidemark.table.sync.EvolvingSchema.Kind;
import io.tidemark.table.sync.EvolvingSchema.MakeOptional;
import io.tidemark.table.sync.EvolvingSchema.Step;
import io.tidemark.table.sync.EvolvingSchema.Widen;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Goal: whatever the sequence of schema versions (fields added, nested fields added, types widened,
 * fields made optional), however the producers mix the versions over the partitions, however many
 * groups or brokers convert them and in whatever order their batches interleave within the round,
 * the table holds every record value by value (read with Iceberg's generic reader). Failing tries
 * print their steps and seed; small tries by default, more under {@code -Pfull}.
 */
class SchemaEvolutionProperties {

  private static final int PARTITIONS = 4;

  @Property(tries = 4)
  void theTableHoldsEveryRecordValueByValue(@ForAll("steps") List<Step> steps, @ForAll @IntRange(min = 1, max = 4) int groups,
      @ForAll boolean brokers, @ForAll boolean flatten, @ForAll long seed) throws Exception {
    check(steps, groups, brokers, flatten, seed);
  }

  @Property(tries = 100)
  @Tag("full")
  void theTableHoldsEveryRecordValueByValueManyRuns(@ForAll("steps") List<Step> steps,
      @ForAll @IntRange(min = 1, max = 4) int groups, @ForAll boolean brokers, @ForAll boolean flatten, @ForAll long seed)
      throws Exception {
    check(steps, groups, brokers, flatten, seed);
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Integer> pick = Arbitraries.integers().between(0, 9);
    Arbitrary<Step> add = Arbitraries.of(Kind.INT, Kind.FLOAT, Kind.STRING, Kind.STRUCT).map(AddField::new);
    Arbitrary<Step> nested = Combinators.combine(pick, Arbitraries.of(Kind.INT, Kind.FLOAT, Kind.STRING)).as(AddNested::new);
    Arbitrary<Step> widen = pick.map(Widen::new);
    Arbitrary<Step> optional = pick.map(MakeOptional::new);
    return Arbitraries.oneOf(add, nested, widen, optional).list().ofMinSize(1).ofMaxSize(6);
  }

  private static Path dir;
  private static TestWarehouse warehouse;
  private static TestRegistry registry;
  private static final AtomicInteger topics = new AtomicInteger();

  /** One registry and one warehouse for every try (each try has its own topic, subject and table). */
  @BeforeContainer
  static void startWarehouseAndRegistry() throws IOException {
    dir = Files.createTempDirectory("tidemark-evolution");
    warehouse = new TestWarehouse(dir);
    registry = new TestRegistry();
  }

  @AfterContainer
  static void stopWarehouseAndRegistry() throws IOException {
    registry.close();
    warehouse.close();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private static void check(List<Step> steps, int groups, boolean brokers, boolean flatten, long seed) throws Exception {
    Random random = new Random(seed);
    EvolutionScenario scenario = new EvolutionScenario(warehouse, registry, "evolving" + topics.incrementAndGet(), steps,
        flatten);
    int batches = 2 + random.nextInt(5);
    int[][] versions = new int[PARTITIONS][batches];
    for (int[] partition : versions) {
      // producers mostly move to newer versions, now and then one still sends an older one
      int version = 0;
      for (int b = 0; b < batches; b++) {
        version = Math.max(version, random.nextInt(scenario.versions()));
        partition[b] = random.nextInt(5) == 0 ? random.nextInt(version + 1) : version;
      }
    }
    try {
      scenario.run(PARTITIONS, batches, 1 + random.nextInt(3), (p, b) -> versions[p][b], groups, brokers,
          (turn, left) -> random.nextInt(left), random);
    } finally {
      warehouse.closeCatalogs();
    }
  }
}
