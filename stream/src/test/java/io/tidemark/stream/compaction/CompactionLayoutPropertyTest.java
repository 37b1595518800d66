package io.tidemark.stream.compaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.object.StreamRecordBatch;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** Properties of the pure planning ({@link CompactionLayout}) and its check ({@link CoverageCheck}). */
class CompactionLayoutPropertyTest {

  /** Input data: per stream, chunks of consecutive batches, some held by the inputs, some elsewhere. */
  record Inputs(Map<Long, List<StreamRecordBatch>> batches, List<CoverageCheck.Span> spans, Set<Long> dead) {}

  static Inputs generate(long seed) {
    Random random = new Random(seed);
    Map<Long, List<StreamRecordBatch>> batches = new HashMap<>();
    List<CoverageCheck.Span> spans = new ArrayList<>();
    Set<Long> dead = new HashSet<>();
    int streams = 1 + random.nextInt(6);
    for (long s = 0; s < streams; s++) {
      long offset = random.nextInt(50);
      int chunks = 1 + random.nextInt(5);
      for (int c = 0; c < chunks; c++) {
        int count = 1 + random.nextInt(6);
        boolean inInputs = random.nextInt(4) != 0;
        long chunkStart = offset;
        for (int b = 0; b < count; b++) {
          StreamRecordBatch batch = new StreamRecordBatch(s, 1, offset, 1 + random.nextInt(4),
              ByteBuffer.wrap(new byte[random.nextInt(300)]));
          offset = batch.nextOffset();
          if (inInputs) {
            batches.computeIfAbsent(s, k -> new ArrayList<>()).add(batch);
          }
        }
        if (inInputs) {
          spans.add(new CoverageCheck.Span(100 + c, s, chunkStart, offset));
        }
      }
      if (random.nextInt(5) == 0) {
        dead.add(s);
      }
    }
    batches.values().forEach(list -> java.util.Collections.shuffle(list, random));
    return new Inputs(batches, spans, dead);
  }

  static List<CoverageCheck.Span> outputSpans(CompactionLayout.Layout layout) {
    List<CoverageCheck.Span> out = new ArrayList<>();
    for (CompactionLayout.Run r : layout.streamSetRuns()) {
      out.add(new CoverageCheck.Span(1, r.streamId(), r.startOffset(), r.endOffset()));
    }
    long id = 2;
    for (CompactionLayout.Run r : layout.streamObjectRuns()) {
      out.add(new CoverageCheck.Span(id++, r.streamId(), r.startOffset(), r.endOffset()));
    }
    return out;
  }

  @Property(tries = 200)
  void everyLiveBatchLandsExactlyOnceAndPassesTheCheck(@ForAll long seed,
      @ForAll @IntRange(min = 1, max = 4000) int splitBytes, @ForAll boolean splitAll) {
    // Goal: the plan keeps every batch of live streams exactly once in gap-free runs (one range per
    // stream in the stream-set object), drops dead streams, and its outputs pass the coverage check.
    Inputs in = generate(seed);
    CompactionLayout.Layout layout = CompactionLayout.plan(in.batches(), in.dead(), Map.of(), splitBytes, splitAll);

    Map<Long, List<Long>> planned = new HashMap<>();
    List<CompactionLayout.Run> all = new ArrayList<>(layout.streamSetRuns());
    all.addAll(layout.streamObjectRuns());
    for (CompactionLayout.Run run : all) {
      assertThat(in.dead()).doesNotContain(run.streamId());
      for (int i = 1; i < run.batches().size(); i++) {
        assertThat(run.batches().get(i).baseOffset()).isEqualTo(run.batches().get(i - 1).nextOffset());
      }
      run.batches().forEach(b -> planned.computeIfAbsent(b.streamId(), k -> new ArrayList<>()).add(b.baseOffset()));
    }
    assertThat(layout.streamSetRuns().stream().map(CompactionLayout.Run::streamId).distinct().count())
        .isEqualTo(layout.streamSetRuns().size());
    if (splitAll) {
      assertThat(layout.streamSetRuns()).isEmpty();
    }
    in.batches().forEach((stream, list) -> {
      if (!in.dead().contains(stream)) {
        assertThat(planned.get(stream)).containsExactlyInAnyOrderElementsOf(
            list.stream().map(StreamRecordBatch::baseOffset).toList());
      }
    });
    List<CoverageCheck.Span> kept = in.spans().stream().filter(sp -> !in.dead().contains(sp.streamId())).toList();
    CoverageCheck.verify(kept, in.spans(), outputSpans(layout));
  }

  @Property(tries = 150)
  void checkRejectsOutputsMissingAnyLiveBatchOrHoldingForeignData(@ForAll long seed, @ForAll int pick) {
    // Goal: the coverage check is not vacuous: losing one live batch, or writing offsets no input
    // had, is caught before commit.
    Inputs in = generate(seed);
    CompactionLayout.Layout layout = CompactionLayout.plan(in.batches(), in.dead(), Map.of(), 1000, false);
    List<CoverageCheck.Span> outputs = outputSpans(layout);
    List<CoverageCheck.Span> kept = in.spans().stream().filter(sp -> !in.dead().contains(sp.streamId())).toList();
    if (outputs.isEmpty()) {
      return;
    }
    CoverageCheck.Span victim = outputs.get(Math.floorMod(pick, outputs.size()));
    List<CoverageCheck.Span> shortened = new ArrayList<>(outputs);
    shortened.remove(victim);
    if (victim.endOffset() - victim.startOffset() > 1) {
      shortened.add(new CoverageCheck.Span(victim.objectId(), victim.streamId(), victim.startOffset(),
          victim.endOffset() - 1));
    }
    assertThatThrownBy(() -> CoverageCheck.verify(kept, in.spans(), shortened))
        .isInstanceOf(CompactionAbortedException.class).hasMessageContaining("stream " + victim.streamId());

    List<CoverageCheck.Span> extended = new ArrayList<>(outputs);
    extended.remove(victim);
    extended.add(new CoverageCheck.Span(victim.objectId(), victim.streamId(), victim.startOffset(),
        victim.endOffset() + 1_000_000));
    assertThatThrownBy(() -> CoverageCheck.verify(kept, in.spans(), extended))
        .isInstanceOf(CompactionAbortedException.class).hasMessageContaining("no input held");
  }
}
