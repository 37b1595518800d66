package io.tidemark.stream.compaction;

import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.api.StreamRewriter;
import io.tidemark.stream.metadata.CommitStreamObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.metadata.StreamRange;
import io.tidemark.stream.object.EncodedObject;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.object.ObjectWriter;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

/**
 * {@link StreamRewriter} over object storage and the metadata authority. The pieces are every
 * committed object holding the stream's data, stream objects and stream-set objects alike, whoever
 * wrote them (the node that uploaded a stream-set object may be gone). A rewrite reads only the
 * stream's blocks of its pieces with ranged reads (bypassing the block cache, as compaction does), applies the caller's rewrite, checks that
 * the result tiles the pieces' offsets exactly, writes one stream object, checks its index covers
 * exactly the inputs ({@link CoverageCheck}) and commits it with {@link ObjectManager#commitStreamObject}
 * in place of the pieces: the same checked, atomic replacement the stream-object merge uses (the
 * authority rejects it when a piece is no longer committed, so a rewrite racing a merge or another
 * rewrite changes nothing). A stream-set object piece only loses this stream's range and stays for
 * the other streams; a stream-set compaction that read it before loses the race the same way (its
 * outputs would hold a range the inputs no longer list, which the authority rejects). Outputs of a failed rewrite are deleted unless the commit's outcome is
 * unknown ({@link CompactionOutcome}). Stateless apart from the read bound; thread-safe.
 */
public final class ObjectStreamRewriter implements StreamRewriter {

  private final NodeRef node;
  private final ObjectManager objects;
  private final StreamManager streams;
  private final CompactionIo io;
  private final CompactionConfig config;
  private final BiConsumer<Long, Long> rewritten;

  public ObjectStreamRewriter(NodeRef node, ObjectManager objects, StreamManager streams, ObjectStorage storage,
      ObjectKeys keys, CompactionConfig config) {
    this(node, objects, streams, storage, keys, config, (stream, end) -> {});
  }

  /** With {@code rewritten} told (stream id, end offset) after each committed rewrite, e.g. to drop cached copies. */
  public ObjectStreamRewriter(NodeRef node, ObjectManager objects, StreamManager streams, ObjectStorage storage,
      ObjectKeys keys, CompactionConfig config, BiConsumer<Long, Long> rewritten) {
    this.rewritten = rewritten;
    this.node = node;
    this.objects = objects;
    this.streams = streams;
    this.io = new CompactionIo(storage, keys, config);
    this.config = config;
  }

  @Override
  public CompletableFuture<List<Piece>> pieces(long streamId) {
    return streams.getStreams(List.of(streamId)).thenCompose(found -> {
      Long start = StreamSetObjectCompactor.startOffsets(found).get(streamId);
      if (start == null) {
        return CompletableFuture.completedFuture(List.of());
      }
      return objects.getObjects(streamId, start, Long.MAX_VALUE, MAX_PIECES_PER_REWRITE).thenApply(os -> run(os, streamId, start));
    });
  }

  /**
   * The gap-free run of committed objects (stream objects and stream-set objects alike) from the
   * one holding {@code start}. A stream-set object's piece is sized by its share of the object's
   * offsets (the metadata keeps no per-range size): an estimate, used for the caller's bounds and
   * ratios, never for correctness. Pure.
   */
  static List<Piece> run(List<ObjectMetadata> found, long streamId, long start) {
    List<ObjectMetadata> sorted = new ArrayList<>(found);
    sorted.removeIf(o -> o.rangeOf(streamId) == null);
    sorted.sort(Comparator.comparingLong(o -> o.rangeOf(streamId).startOffset()));
    List<Piece> run = new ArrayList<>();
    for (ObjectMetadata o : sorted) {
      StreamRange r = o.rangeOf(streamId);
      if (r.endOffset() <= start) {
        continue;
      }
      long expected = run.isEmpty() ? start : run.getLast().endOffset();
      boolean touches = run.isEmpty() ? r.startOffset() <= start : r.startOffset() == expected;
      if (!touches) {
        break;
      }
      run.add(new Piece(o.objectId(), r.startOffset(), r.endOffset(), estimatedBytes(o, r), o.committedAtMs()));
    }
    return run;
  }

  /** The bytes of {@code range} in {@code o}: all of a stream object, a share by offsets of a stream-set object. */
  static long estimatedBytes(ObjectMetadata o, StreamRange range) {
    if (o.ranges().size() <= 1) {
      return o.sizeBytes();
    }
    long offsets = 0;
    for (StreamRange r : o.ranges()) {
      offsets += r.endOffset() - r.startOffset();
    }
    long share = offsets == 0 ? 0 : Math.round((double) o.sizeBytes() * (range.endOffset() - range.startOffset()) / offsets);
    return Math.max(1, share);
  }

  @Override
  public CompletableFuture<Rewritten> rewrite(long streamId, List<Piece> pieces, BatchRewrite rewrite) {
    if (pieces.isEmpty()) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("nothing to rewrite in stream " + streamId));
    }
    if (pieces.size() > MAX_PIECES_PER_REWRITE) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("a rewrite replaces at most " + MAX_PIECES_PER_REWRITE
          + " objects; " + pieces.size() + " given for stream " + streamId));
    }
    for (int i = 1; i < pieces.size(); i++) {
      if (pieces.get(i).startOffset() != pieces.get(i - 1).endOffset()) {
        return CompletableFuture.failedFuture(new IllegalArgumentException("pieces of stream " + streamId
            + " are not consecutive at " + pieces.get(i - 1).endOffset()));
      }
    }
    long start = pieces.getFirst().startOffset();
    long end = pieces.getLast().endOffset();
    return objects.getObjects(streamId, start, end, pieces.size() + 1).thenCompose(found -> {
      Map<Long, ObjectMetadata> byId = new HashMap<>();
      found.forEach(o -> byId.put(o.objectId(), o));
      List<ObjectMetadata> sources = new ArrayList<>();
      for (Piece p : pieces) {
        ObjectMetadata o = byId.get(p.objectId());
        StreamRange r = o == null ? null : o.rangeOf(streamId);
        if (r == null || r.startOffset() != p.startOffset() || r.endOffset() != p.endOffset()) {
          throw new CompactionAbortedException("object " + p.objectId() + " of stream " + streamId
              + " was replaced before the rewrite read it");
        }
        sources.add(o);
      }
      return io.readStream(sources, streamId).thenCompose(batches -> write(streamId, pieces, sources, batches, rewrite));
    });
  }

  private CompletableFuture<Rewritten> write(long streamId, List<Piece> pieces, List<ObjectMetadata> sources,
      List<StreamRecordBatch> read, BatchRewrite rewrite) {
    long start = pieces.getFirst().startOffset();
    long end = pieces.getLast().endOffset();
    List<StreamRecordBatch> sorted = new ArrayList<>(read);
    sorted.sort(Comparator.comparingLong(StreamRecordBatch::baseOffset));
    List<StreamBatch> in = new ArrayList<>(sorted.size());
    sorted.forEach(b -> in.add(b.toStreamBatch()));
    checkTiles(streamId, in, start, end, "the pieces read");
    List<StreamBatch> out = rewrite.rewrite(in);
    checkTiles(streamId, out, start, end, "the rewritten batches");
    long epoch = StreamSetObjectCompactor.epochs(sources).getOrDefault(streamId, 0L);
    ObjectWriter writer = new ObjectWriter(config.blockSizeBytes());
    for (StreamBatch b : out) {
      writer.append(new StreamRecordBatch(streamId, epoch, b.baseOffset(), b.recordCount(), b.payload()));
    }
    EncodedObject encoded = writer.finish();
    List<Long> sourceIds = pieces.stream().map(Piece::objectId).toList();
    long bytesRead = read.stream().mapToLong(b -> b.payload().remaining()).sum();
    return objects.prepareObjects(node, 1, config.prepareTtlMs()).thenCompose(id -> {
      List<CoverageCheck.Span> inputs = StreamSetObjectCompactor.allSpans(sources).stream()
          .filter(span -> span.streamId() == streamId).toList();
      CoverageCheck.verify(inputs, inputs, CoverageCheck.spans(id, encoded.index()));
      AtomicBoolean committing = new AtomicBoolean();
      CommitStreamObjectRequest request = new CommitStreamObjectRequest(id, encoded.sizeBytes(),
          new StreamRange(streamId, epoch, start, end), sourceIds);
      return io.upload(id, encoded)
          .thenCompose(v -> {
            committing.set(true);
            return objects.commitStreamObject(node, request);
          })
          .handle((v, error) -> CompactionOutcome.settle(io, List.of(id), committing.get(), error))
          .thenCompose(f -> f)
          .thenApply(v -> {
            rewritten.accept(streamId, end);
            return new Rewritten(start, end, bytesRead, encoded.sizeBytes(), id);
          });
    });
  }

  /** Throws unless {@code batches} cover {@code [start, end)} exactly, in order. */
  private static void checkTiles(long streamId, List<StreamBatch> batches, long start, long end, String what) {
    long expected = start;
    for (StreamBatch b : batches) {
      if (b.baseOffset() != expected || b.recordCount() < 1) {
        throw new CompactionAbortedException(what + " of stream " + streamId + " do not tile [" + start + ", " + end
            + "): a batch of " + b.recordCount() + " at " + b.baseOffset() + " where " + expected + " was expected");
      }
      expected = b.nextOffset();
    }
    if (expected != end) {
      throw new CompactionAbortedException(what + " of stream " + streamId + " end at " + expected + ", not " + end);
    }
  }
}
