package io.tidemark.stream.object;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.MultipartUpload;
import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ObjectFormatTest {

  private static final ObjectKeys KEYS = ObjectKeys.defaults();

  /** Object storage that counts GETs and the bytes they return. */
  static final class CountingStorage implements ObjectStorage {
    final MemoryObjectStorage delegate = new MemoryObjectStorage(() -> 0L);
    final AtomicInteger gets = new AtomicInteger();
    final List<long[]> ranges = new ArrayList<>();

    @Override public CompletableFuture<Void> put(String key, ByteBuffer data) { return delegate.put(key, data); }
    @Override public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
      return delegate.startMultipartUpload(key);
    }
    @Override public synchronized CompletableFuture<ByteBuffer> get(String key, long start, long end) {
      gets.incrementAndGet();
      ranges.add(new long[] {start, end});
      return delegate.get(key, start, end);
    }
    @Override public CompletableFuture<Void> delete(List<String> keys) { return delegate.delete(keys); }
    @Override public CompletableFuture<List<ObjectInfo>> list(String prefix) { return delegate.list(prefix); }
    @Override public long minPartSizeBytes() { return 1024; }
    @Override public void close() {}
  }

  private final CountingStorage storage = new CountingStorage();

  @Test
  void writesAndReadsManyStreamsWithRangedGets() {
    // Goal: every batch of every stream reads back byte-identical, using only ranged GETs of the blocks needed.
    Random random = new Random(42);
    List<StreamRecordBatch> written = new ArrayList<>();
    ObjectWriter writer = new ObjectWriter(4096);
    for (long stream = 1; stream <= 20; stream++) {
      long offset = stream * 1000;
      int batches = 1 + random.nextInt(40);
      for (int i = 0; i < batches; i++) {
        byte[] payload = new byte[random.nextInt(700)];
        random.nextBytes(payload);
        int count = 1 + random.nextInt(5);
        StreamRecordBatch b = new StreamRecordBatch(stream, 2, offset, count, ByteBuffer.wrap(payload));
        writer.append(b);
        written.add(b);
        offset += count;
      }
    }
    EncodedObject object = writer.finish();
    String key = KEYS.key(11);
    ObjectUploader.upload(storage, key, object, 1 << 20).join();

    ObjectReader reader = ObjectReader.open(storage, key, object.sizeBytes()).join();
    assertThat(reader.index()).isEqualTo(object.index());
    assertThat(storage.gets.get()).isEqualTo(2);
    for (IndexEntry e : reader.index()) {
      assertThat(e.blockSizeBytes()).isLessThan(4096 + 800 + 64);
    }
    for (long stream = 1; stream <= 20; stream++) {
      long s = stream;
      List<StreamRecordBatch> expected = written.stream().filter(b -> b.streamId() == s).toList();
      List<StreamBatch> read = reader.read(stream, expected.getFirst().baseOffset(),
          expected.getLast().nextOffset(), Integer.MAX_VALUE).join();
      assertThat(read).hasSize(expected.size());
      for (int i = 0; i < read.size(); i++) {
        assertThat(read.get(i).baseOffset()).isEqualTo(expected.get(i).baseOffset());
        assertThat(read.get(i).recordCount()).isEqualTo(expected.get(i).recordCount());
        assertThat(read.get(i).payload()).isEqualTo(expected.get(i).payload());
      }
    }
    for (long[] range : storage.ranges) {
      assertThat(range[1]).isNotEqualTo(ObjectStorage.TO_END);
    }
  }

  @Test
  void readStartsAtTheBatchHoldingTheStartOffsetAndHonoursTheByteLimit() {
    // Goal: the read semantics of Stream.fetch: first batch holds start, stops at end or maxBytes, at least one.
    ObjectWriter writer = new ObjectWriter(100);
    for (int i = 0; i < 50; i++) {
      writer.append(new StreamRecordBatch(5, 0, i * 10L, 10, ByteBuffer.wrap(new byte[64])));
    }
    EncodedObject object = writer.finish();
    String key = KEYS.key(1);
    storage.put(key, object.toByteBuffer()).join();
    ObjectReader reader = ObjectReader.open(storage, key, object.sizeBytes()).join();

    List<StreamBatch> read = reader.read(5, 105, 300, 64 * 5).join();
    assertThat(read).extracting(StreamBatch::baseOffset).containsExactly(100L, 110L, 120L, 130L, 140L);
    assertThat(reader.read(5, 105, 125, 1 << 20).join()).extracting(StreamBatch::baseOffset)
        .containsExactly(100L, 110L, 120L);
    assertThat(reader.read(5, 0, 500, 1).join()).hasSize(1);
    assertThat(reader.read(6, 0, 500, 1000).join()).isEmpty();
    assertThat(reader.read(5, 500, 600, 1000).join()).isEmpty();
  }

  @Test
  void largeObjectIsUploadedInPartsAndReadsBack() {
    // Goal: an object larger than the part size goes through multipart upload and is identical to a single PUT.
    ObjectWriter writer = new ObjectWriter(512);
    for (int i = 0; i < 100; i++) {
      byte[] payload = new byte[300];
      payload[0] = (byte) i;
      writer.append(new StreamRecordBatch(9, 1, i, 1, ByteBuffer.wrap(payload)));
    }
    EncodedObject object = writer.finish();
    assertThat(object.parts(1024)).hasSizeGreaterThan(10);
    ObjectUploader.upload(storage, "multi", object, 1024).join();
    assertThat(storage.delegate.get("multi").join()).isEqualTo(object.toByteBuffer());
    ObjectReader reader = ObjectReader.open(storage, "multi", object.sizeBytes()).join();
    assertThat(reader.read(9, 0, 100, Integer.MAX_VALUE).join()).hasSize(100);
  }

  @Test
  void batchesWhoseRecordCountsOverflowAnIntTakeBlocksOfTheirOwn() {
    // Goal: batches of one stream whose record counts sum past Integer.MAX_VALUE still make a readable object.
    ObjectWriter writer = new ObjectWriter(1 << 20);
    writer.append(new StreamRecordBatch(3, 0, 0, 5, ByteBuffer.wrap(new byte[] {1})));
    writer.append(new StreamRecordBatch(3, 0, 5, Integer.MAX_VALUE, ByteBuffer.wrap(new byte[] {2})));
    writer.append(new StreamRecordBatch(3, 0, 5L + Integer.MAX_VALUE, 1, ByteBuffer.wrap(new byte[] {3})));
    EncodedObject object = writer.finish();
    String key = KEYS.key(7);
    storage.put(key, object.toByteBuffer()).join();
    ObjectReader reader = ObjectReader.open(storage, key, object.sizeBytes()).join();
    assertThat(reader.index()).allSatisfy(e -> assertThat(e.recordCount()).isPositive());
    assertThat(reader.read(3, 0, 6L + Integer.MAX_VALUE, Long.MAX_VALUE).join())
        .extracting(StreamBatch::baseOffset).containsExactly(0L, 5L, 5L + Integer.MAX_VALUE);
  }

  @Test
  void outOfOrderBatchesAreRejected() {
    // Goal: the writer refuses input not sorted by (stream, offset) and keeps what it had.
    ObjectWriter writer = new ObjectWriter(1024);
    writer.append(new StreamRecordBatch(2, 0, 10, 5, ByteBuffer.allocate(1)));
    assertThatThrownBy(() -> writer.append(new StreamRecordBatch(2, 0, 12, 1, ByteBuffer.allocate(1))))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> writer.append(new StreamRecordBatch(1, 0, 100, 1, ByteBuffer.allocate(1))))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(writer.finish().index()).hasSize(1);
  }

  @Test
  void bitFlipsAnywhereGiveCorruptObjectNamingTheKey() {
    // Goal: a flipped bit in a block, the index or the footer never yields wrong data: CorruptObjectException names the key.
    EncodedObject object = sampleObject();
    byte[] pristine = toArray(object.toByteBuffer());
    Random random = new Random(7);
    Set<Integer> positions = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      positions.add(random.nextInt(pristine.length));
    }
    for (int position : positions) {
      byte[] bad = pristine.clone();
      bad[position] ^= (byte) (1 << random.nextInt(8));
      String key = KEYS.key(position);
      storage.put(key, ByteBuffer.wrap(bad)).join();
      assertThatThrownBy(() -> readAll(key, bad.length))
          .as("flip at %d", position)
          .isInstanceOf(CompletionException.class)
          .cause().isInstanceOf(CorruptObjectException.class)
          .hasMessageContaining(key);
    }
  }

  @Test
  void truncatedObjectGivesCorruptObjectNamingTheKey() {
    // Goal: an object shorter than its committed size is reported as corrupt (truncated), with its key.
    EncodedObject object = sampleObject();
    byte[] pristine = toArray(object.toByteBuffer());
    for (int length : new int[] {0, 10, 47, pristine.length / 2, pristine.length - 1}) {
      byte[] cut = java.util.Arrays.copyOf(pristine, length);
      String key = KEYS.key(1000 + length);
      storage.put(key, ByteBuffer.wrap(cut)).join();
      assertThatThrownBy(() -> readAll(key, pristine.length))
          .isInstanceOf(CompletionException.class)
          .cause().isInstanceOf(CorruptObjectException.class)
          .hasMessageContaining(key);
    }
    // the committed size itself is too small for a footer
    assertThatThrownBy(() -> ObjectReader.open(storage, "tiny", 10).join()).cause()
        .isInstanceOf(CorruptObjectException.class).hasMessageContaining("tiny");
  }

  @Test
  void objectKeysSpreadPrefixesAndParseBack() {
    // Goal: consecutive ids get different hashed prefixes, and keys map back to their ids.
    Set<String> prefixes = new HashSet<>();
    for (long id = 0; id < 1000; id++) {
      String key = KEYS.key(id);
      prefixes.add(key.substring(0, 4));
      assertThat(KEYS.objectId(key)).isEqualTo(id);
    }
    assertThat(prefixes.size()).isGreaterThan(900);
    assertThat(KEYS.objectId("0000/other/o/5")).isEqualTo(-1);
    assertThat(KEYS.objectId("garbage")).isEqualTo(-1);
    assertThatThrownBy(() -> new ObjectKeys("a/b")).isInstanceOf(IllegalArgumentException.class);
  }

  private void readAll(String key, long size) {
    ObjectReader reader = ObjectReader.open(storage, key, size).join();
    for (IndexEntry e : reader.index()) {
      reader.read(e.streamId(), e.startOffset(), e.endOffset(), Integer.MAX_VALUE).join();
    }
  }

  private static EncodedObject sampleObject() {
    ObjectWriter writer = new ObjectWriter(256);
    for (long stream = 1; stream <= 3; stream++) {
      for (int i = 0; i < 10; i++) {
        writer.append(new StreamRecordBatch(stream, 1, i * 2L, 2, ByteBuffer.wrap(("s" + stream + "b" + i).repeat(8)
            .getBytes(java.nio.charset.StandardCharsets.UTF_8))));
      }
    }
    return writer.finish();
  }

  private static byte[] toArray(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }
}
