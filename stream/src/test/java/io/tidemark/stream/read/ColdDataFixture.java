package io.tidemark.stream.read;

import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.MemoryStreamMetadata;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadataConfig;
import io.tidemark.stream.metadata.StreamRange;
import io.tidemark.stream.object.EncodedObject;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.object.ObjectUploader;
import io.tidemark.stream.object.ObjectWriter;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Test fixture: streams whose data is uploaded as real objects (ObjectWriter + ObjectUploader)
 * into a {@link MemoryObjectStorage} and committed through {@link MemoryStreamMetadata}, exactly
 * like the upload path does, and a record of every batch written, to compare reads against.
 * Seeded; not thread-safe (tests drive it from one thread).
 */
public final class ColdDataFixture {

  public final AtomicLong clockMs = new AtomicLong(1_000_000);
  public final ObjectStorage store;
  public final ObjectKeys keys = ObjectKeys.defaults();
  public final MemoryStreamMetadata metadata;
  public final NodeRef node;
  public final long seed;
  private final Random random;
  private final Map<Long, List<StreamRecordBatch>> written = new TreeMap<>();
  private final Map<Long, Long> epochs = new HashMap<>();
  private final int maxPayloadBytes;

  public ColdDataFixture(long seed, int maxPayloadBytes) {
    this(seed, maxPayloadBytes, null);
  }

  /** A fixture over {@code storage} (null: a fresh in-memory store). */
  public ColdDataFixture(long seed, int maxPayloadBytes, ObjectStorage storage) {
    this.store = storage != null ? storage : new MemoryObjectStorage(clockMs::get);
    this.metadata = new MemoryStreamMetadata(clockMs::get, store, keys, StreamMetadataConfig.defaults());
    this.node = metadata.registerNode(1);
    this.seed = seed;
    this.random = new Random(seed);
    this.maxPayloadBytes = maxPayloadBytes;
  }

  /** Creates and opens {@code count} streams with epoch 1. */
  public List<Long> createStreams(int count) {
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      long id = metadata.createStream(node, Map.of()).join();
      metadata.openStream(node, id, 1).join();
      epochs.put(id, 1L);
      written.put(id, new ArrayList<>());
      ids.add(id);
    }
    return ids;
  }

  /**
   * Uploads one stream-set object holding {@code batches.get(s)} new random batches of each
   * stream {@code s}, except that the streams in {@code split} get a stream object each; commits
   * it as an upload. Returns the ids used (stream-set first, if any).
   */
  public List<Long> upload(Map<Long, Integer> batches, Set<Long> split, int blockSizeBytes) {
    Map<Long, List<StreamRecordBatch>> fresh = new TreeMap<>();
    batches.forEach((stream, count) -> {
      List<StreamRecordBatch> list = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        list.add(nextBatch(stream));
      }
      fresh.put(stream, list);
    });
    boolean hasSet = fresh.keySet().stream().anyMatch(s -> !split.contains(s) && !fresh.get(s).isEmpty());
    int soCount = (int) fresh.keySet().stream().filter(s -> split.contains(s) && !fresh.get(s).isEmpty()).count();
    int count = (hasSet ? 1 : 0) + soCount;
    long next = metadata.prepareObjects(node, count, 3_600_000).join();
    List<Long> ids = new ArrayList<>();
    long setId = hasSet ? next++ : -1;
    ObjectWriter setWriter = new ObjectWriter(blockSizeBytes);
    List<StreamRange> setRanges = new ArrayList<>();
    List<CommitStreamSetObjectRequest.StreamObject> sos = new ArrayList<>();
    for (Map.Entry<Long, List<StreamRecordBatch>> e : fresh.entrySet()) {
      List<StreamRecordBatch> list = e.getValue();
      if (list.isEmpty()) {
        continue;
      }
      StreamRange range = new StreamRange(e.getKey(), epochs.get(e.getKey()), list.getFirst().baseOffset(),
          list.getLast().nextOffset());
      if (split.contains(e.getKey())) {
        ObjectWriter writer = new ObjectWriter(blockSizeBytes);
        list.forEach(writer::append);
        EncodedObject object = writer.finish();
        long id = next++;
        ObjectUploader.upload(store, keys.key(id), object, 8 << 20).join();
        sos.add(new CommitStreamSetObjectRequest.StreamObject(id, object.sizeBytes(), range));
        ids.add(id);
      } else {
        list.forEach(setWriter::append);
        setRanges.add(range);
      }
    }
    long setSize = 0;
    if (hasSet) {
      EncodedObject object = setWriter.finish();
      ObjectUploader.upload(store, keys.key(setId), object, 8 << 20).join();
      setSize = object.sizeBytes();
      ids.addFirst(setId);
    }
    metadata.commitStreamSetObject(node, new CommitStreamSetObjectRequest(setId, setSize, setRanges, sos, List.of()))
        .join();
    fresh.forEach((stream, list) -> written.get(stream).addAll(list));
    return ids;
  }

  /** Uploads {@code objects} stream-set objects, each with 0..maxBatches batches of every stream. */
  public void uploadRandom(List<Long> streams, int objects, int maxBatches, double splitProbability, int blockSize) {
    for (int o = 0; o < objects; o++) {
      Map<Long, Integer> counts = new TreeMap<>();
      Set<Long> split = new java.util.HashSet<>();
      for (long s : streams) {
        counts.put(s, random.nextInt(maxBatches + 1));
        if (random.nextDouble() < splitProbability) {
          split.add(s);
        }
      }
      if (counts.values().stream().allMatch(c -> c == 0)) {
        counts.put(streams.getFirst(), 1);
      }
      upload(counts, split, blockSize);
    }
  }

  private final Map<Long, Long> nextOffsets = new HashMap<>();

  private StreamRecordBatch nextBatch(long stream) {
    long base = nextOffsets.getOrDefault(stream, 0L);
    StreamRecordBatch batch = new StreamRecordBatch(stream, epochs.get(stream), base, 1 + random.nextInt(5), payload());
    nextOffsets.put(stream, batch.nextOffset());
    return batch;
  }

  private ByteBuffer payload() {
    byte[] bytes = new byte[1 + random.nextInt(maxPayloadBytes)];
    random.nextBytes(bytes);
    return ByteBuffer.wrap(bytes);
  }

  /** Every batch written to {@code stream}, in offset order. */
  public List<StreamRecordBatch> written(long stream) {
    return written.get(stream);
  }

  /** The end offset of everything written to {@code stream}. */
  public long endOffset(long stream) {
    List<StreamRecordBatch> list = written.get(stream);
    return list.isEmpty() ? 0 : list.getLast().nextOffset();
  }

  /**
   * What a read of {@code [start, end)} with {@code maxBytes} must return: whole batches, the first
   * holding {@code start}, until {@code end} or until payloads reach {@code maxBytes} (at least one).
   */
  public List<StreamBatch> expected(long stream, long start, long end, int maxBytes) {
    List<StreamBatch> result = new ArrayList<>();
    long bytes = 0;
    for (StreamRecordBatch b : written.get(stream)) {
      if (b.nextOffset() <= start) {
        continue;
      }
      if (b.baseOffset() >= end || (!result.isEmpty() && bytes >= maxBytes)) {
        break;
      }
      result.add(b.toStreamBatch());
      bytes += b.payloadBytes();
    }
    return result;
  }

  public int nextInt(int bound) {
    return random.nextInt(bound);
  }

}
