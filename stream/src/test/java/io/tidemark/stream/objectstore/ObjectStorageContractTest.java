package io.tidemark.stream.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link ObjectStorage} must have; one subclass per implementation supplies a
 * fresh, empty store per test. Other modules may extend it for their own stores (it ships in the
 * stream test-jar).
 */
public abstract class ObjectStorageContractTest {

  private static final long TIMEOUT_SECONDS = 60;

  protected ObjectStorage storage;

  /** A fresh, empty store; closed after each test. */
  protected abstract ObjectStorage createStorage() throws Exception;

  /** How many keys the listing and batch-delete tests use (S3 needs more than 1000 to page). */
  protected int manyKeys() {
    return 120;
  }

  /** Size of the large-object test. */
  protected int largeObjectBytes() {
    return 20 << 20;
  }

  /** Part size for multipart tests: the store's minimum, at least 64 KiB. */
  protected int partBytes() {
    return (int) Math.max(storage.minPartSizeBytes(), 64 << 10);
  }

  @BeforeEach
  void openStorage() throws Exception {
    storage = createStorage();
  }

  @AfterEach
  void closeStorage() {
    if (storage != null) {
      storage.close();
    }
  }

  // ---- whole and ranged reads -------------------------------------------------------------

  @Test
  void putThenGetReturnsTheSameBytes() {
    // Goal: a put object reads back byte-identical, and the caller's buffer is left untouched.
    byte[] data = randomBytes(1, 100_000);
    ByteBuffer buffer = ByteBuffer.wrap(data);
    join(storage.put("objects/one", buffer));
    assertThat(buffer.position()).isZero();
    assertThat(bytes(join(storage.get("objects/one")))).isEqualTo(data);
  }

  @Test
  void emptyObjectRoundTrips() {
    // Goal: a zero-byte object exists, reads back empty and lists with size 0.
    join(storage.put("empty", ByteBuffer.allocate(0)));
    assertThat(bytes(join(storage.get("empty")))).isEmpty();
    assertThat(join(storage.list("empty"))).extracting(ObjectInfo::key, ObjectInfo::sizeBytes)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("empty", 0L));
  }

  @Test
  void rangedGetsReturnExactlyTheRangeAndClipAtTheEnd() {
    // Goal: get(key, start, end) returns bytes [start, end); past the end it returns what exists.
    byte[] data = randomBytes(2, 1000);
    join(storage.put("ranged", ByteBuffer.wrap(data)));
    assertThat(bytes(join(storage.get("ranged", 0, 10)))).isEqualTo(Arrays.copyOfRange(data, 0, 10));
    assertThat(bytes(join(storage.get("ranged", 10, 20)))).isEqualTo(Arrays.copyOfRange(data, 10, 20));
    assertThat(bytes(join(storage.get("ranged", 990, ObjectStorage.TO_END)))).isEqualTo(Arrays.copyOfRange(data, 990, 1000));
    assertThat(bytes(join(storage.get("ranged", 995, 2000)))).isEqualTo(Arrays.copyOfRange(data, 995, 1000));
    assertThat(bytes(join(storage.get("ranged", 999, 1000)))).isEqualTo(Arrays.copyOfRange(data, 999, 1000));
    assertThat(bytes(join(storage.get("ranged", 1000, 1010)))).isEmpty();
    assertThat(bytes(join(storage.get("ranged", 5000, ObjectStorage.TO_END)))).isEmpty();
    assertThat(bytes(join(storage.get("ranged", 7, 7)))).isEmpty();
  }

  @Test
  void invalidRangesAndKeysAreRefusedAndChangeNothing() {
    // Goal: bad arguments fail with IllegalArgumentException whatever the object's size, and change nothing.
    join(storage.put("kept", ByteBuffer.wrap(new byte[] {1, 2, 3})));
    assertFailure(storage.get("kept", 20, 10), IllegalArgumentException.class);
    assertFailure(storage.get("kept", 2, 1), IllegalArgumentException.class);
    assertFailure(storage.get("kept", -1, 2), IllegalArgumentException.class);
    assertFailure(storage.put("", ByteBuffer.allocate(1)), IllegalArgumentException.class);
    assertFailure(storage.put("x".repeat(1025), ByteBuffer.allocate(1)), IllegalArgumentException.class);
    assertFailure(storage.delete(List.of("kept", "")), IllegalArgumentException.class);
    assertThat(bytes(join(storage.get("kept")))).containsExactly(1, 2, 3);
  }

  @Test
  void missingObjectsAreNotFound() {
    // Goal: reading a key that does not exist fails with ObjectNotFoundException, for whole, ranged and empty ranges.
    assertFailure(storage.get("missing"), ObjectNotFoundException.class);
    assertFailure(storage.get("missing", 10, 20), ObjectNotFoundException.class);
    assertFailure(storage.get("missing", 3, 3), ObjectNotFoundException.class);
    join(storage.put("present", ByteBuffer.wrap(new byte[] {1})));
    join(storage.delete(List.of("present")));
    assertFailure(storage.get("present"), ObjectNotFoundException.class);
  }

  // ---- overwrite and concurrency ----------------------------------------------------------

  @Test
  void overwriteIsAtomicForConcurrentReaders() {
    // Goal: while an object is overwritten, every read sees the whole old or the whole new object.
    int oldSize = 512 << 10;
    int newSize = 768 << 10;
    join(storage.put("swap", ByteBuffer.wrap(filled(oldSize, (byte) 1))));
    List<CompletableFuture<ByteBuffer>> reads = new ArrayList<>();
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int round = 0; round < 8; round++) {
      byte value = (byte) (round % 2 == 0 ? 2 : 1);
      writes.add(storage.put("swap", ByteBuffer.wrap(filled(value == 2 ? newSize : oldSize, value))));
      reads.add(storage.get("swap"));
      reads.add(storage.get("swap"));
    }
    writes.forEach(ObjectStorageContractTest::join);
    for (CompletableFuture<ByteBuffer> read : reads) {
      byte[] seen = bytes(join(read));
      assertThat(seen.length).isIn(oldSize, newSize);
      byte expected = seen.length == newSize ? (byte) 2 : (byte) 1;
      assertThat(allEqual(seen, expected)).as("read of %d bytes is uniformly %d", seen.length, expected).isTrue();
    }
    byte[] last = bytes(join(storage.get("swap")));
    assertThat(last.length).isIn(oldSize, newSize);
  }

  @Test
  void concurrentPutsOfDistinctKeysAllLand() {
    // Goal: many puts in flight at once all complete and each key holds its own bytes.
    int count = 48;
    List<CompletableFuture<Void>> puts = IntStream.range(0, count)
        .mapToObj(i -> storage.put("concurrent/" + i, ByteBuffer.wrap(randomBytes(100 + i, 10_000 + i))))
        .toList();
    puts.forEach(ObjectStorageContractTest::join);
    for (int i = 0; i < count; i++) {
      assertThat(bytes(join(storage.get("concurrent/" + i)))).isEqualTo(randomBytes(100 + i, 10_000 + i));
    }
    assertThat(join(storage.list("concurrent/"))).hasSize(count);
  }

  @Test
  void largeObjectRoundTripsWholeAndRanged() {
    // Goal: an object of ~20 MiB reads back identical, whole and through a range in its middle.
    byte[] data = randomBytes(3, largeObjectBytes());
    join(storage.put("large/object", ByteBuffer.wrap(data)));
    assertThat(bytes(join(storage.get("large/object")))).isEqualTo(data);
    int from = data.length / 3;
    assertThat(bytes(join(storage.get("large/object", from, from + 1_000_000))))
        .isEqualTo(Arrays.copyOfRange(data, from, from + 1_000_000));
    assertThat(join(storage.list("large/"))).extracting(ObjectInfo::sizeBytes).containsExactly((long) data.length);
  }

  // ---- multipart --------------------------------------------------------------------------

  @Test
  void multipartUploadPublishesPartsInOrderOnlyOnComplete() {
    // Goal: parts uploaded out of order and concurrently form the object in part order, visible only after complete.
    int part = partBytes();
    byte[] p1 = randomBytes(11, part);
    byte[] p2 = randomBytes(12, part);
    byte[] p3 = randomBytes(13, part / 3);
    MultipartUpload upload = join(storage.startMultipartUpload("multi/object"));
    assertThat(upload.key()).isEqualTo("multi/object");
    CompletableFuture<Void> third = upload.uploadPart(3, ByteBuffer.wrap(p3));
    CompletableFuture<Void> first = upload.uploadPart(1, ByteBuffer.wrap(p1));
    CompletableFuture<Void> second = upload.uploadPart(2, ByteBuffer.wrap(p2));
    join(CompletableFuture.allOf(first, second, third));
    assertFailure(storage.get("multi/object"), ObjectNotFoundException.class);
    assertThat(join(storage.list("multi/"))).isEmpty();
    join(upload.complete());
    byte[] whole = bytes(join(storage.get("multi/object")));
    assertThat(whole).isEqualTo(concat(p1, p2, p3));
    assertThat(join(storage.list("multi/"))).extracting(ObjectInfo::sizeBytes).containsExactly((long) whole.length);
    assertFailure(upload.uploadPart(4, ByteBuffer.wrap(p3)), ObjectStorageException.class);
  }

  @Test
  void abortedMultipartUploadLeavesNothing() {
    // Goal: an aborted upload creates no object, cannot be completed, and leaves an existing object alone.
    join(storage.put("multi/kept", ByteBuffer.wrap(new byte[] {9})));
    MultipartUpload upload = join(storage.startMultipartUpload("multi/aborted"));
    join(upload.uploadPart(1, ByteBuffer.wrap(randomBytes(21, partBytes()))));
    join(upload.uploadPart(2, ByteBuffer.wrap(randomBytes(22, 1000))));
    join(upload.abort());
    assertFailure(upload.complete(), ObjectStorageException.class);
    assertFailure(storage.get("multi/aborted"), ObjectNotFoundException.class);
    assertThat(join(storage.list("multi/"))).extracting(ObjectInfo::key).containsExactly("multi/kept");

    MultipartUpload overKept = join(storage.startMultipartUpload("multi/kept"));
    join(overKept.uploadPart(1, ByteBuffer.wrap(randomBytes(23, 1000))));
    join(overKept.abort());
    assertThat(bytes(join(storage.get("multi/kept")))).containsExactly(9);
  }

  // ---- delete and list --------------------------------------------------------------------

  @Test
  void batchDeleteIgnoresAbsentKeysAndKeepsOthers() {
    // Goal: deleting a batch with absent keys succeeds, removes the present ones and nothing else.
    for (String key : List.of("d/1", "d/2", "d/3")) {
      join(storage.put(key, ByteBuffer.wrap(key.getBytes(StandardCharsets.UTF_8))));
    }
    join(storage.delete(List.of("d/1", "d/absent", "d/2", "d/1")));
    join(storage.delete(List.of()));
    assertThat(join(storage.list("d/"))).extracting(ObjectInfo::key).containsExactly("d/3");
    assertThat(bytes(join(storage.get("d/3")))).isEqualTo("d/3".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void manyKeysAreListedInOrderAndDeletedInOneCall() {
    // Goal: listing returns every key under a prefix in key order (paging past 1000 on S3), and one delete call removes them all.
    int count = manyKeys();
    List<String> keys = IntStream.range(0, count).mapToObj(i -> String.format("many/%05d", i)).toList();
    seedObjects(keys);
    join(storage.put("many", ByteBuffer.wrap(new byte[] {1})));
    join(storage.put("manyx/0", ByteBuffer.wrap(new byte[] {1})));

    List<ObjectInfo> listed = join(storage.list("many/"));
    assertThat(listed).extracting(ObjectInfo::key).containsExactlyElementsOf(keys);
    assertThat(listed).allSatisfy(info -> assertThat(info.sizeBytes()).isEqualTo(info.key().length()));
    assertThat(listed.get(0).lastModifiedMs()).isPositive();

    join(storage.delete(keys));
    assertThat(join(storage.list("many/"))).isEmpty();
    assertThat(join(storage.list("many"))).extracting(ObjectInfo::key).containsExactly("many", "manyx/0");
  }

  @Test
  void listByPrefixHandlesNestedAndOddKeys() {
    // Goal: prefixes match raw key strings: '/' is only a character, and odd characters survive.
    List<String> keys = List.of("a", "a/", "a//x", "a/b", "a/b/c", "ab", "a.b", "b", "x/.hidden", "x/sp ace",
        "x/%41", "x/\u00e9t\u00e9", "x/~tilde~", "x/..", "x/.");
    for (String key : keys) {
      join(storage.put(key, ByteBuffer.wrap(key.getBytes(StandardCharsets.UTF_8))));
    }
    assertThat(keysOf("a/")).containsExactly("a/", "a//x", "a/b", "a/b/c");
    assertThat(keysOf("a")).containsExactly("a", "a.b", "a/", "a//x", "a/b", "a/b/c", "ab");
    assertThat(keysOf("a/b")).containsExactly("a/b", "a/b/c");
    assertThat(keysOf("x/")).containsExactlyInAnyOrder("x/.hidden", "x/sp ace", "x/%41", "x/\u00e9t\u00e9",
        "x/~tilde~", "x/..", "x/.");
    assertThat(keysOf("")).hasSize(keys.size());
    assertThat(keysOf("zzz")).isEmpty();
    for (String key : keys) {
      assertThat(new String(bytes(join(storage.get(key))), StandardCharsets.UTF_8)).isEqualTo(key);
    }
  }

  // ---- helpers ----------------------------------------------------------------------------

  protected List<String> keysOf(String prefix) {
    return join(storage.list(prefix)).stream().map(ObjectInfo::key).toList();
  }

  /**
   * Creates objects whose content is their key, for the listing and batch-delete test. A subclass
   * may write them behind the store's back when going through it would only make the test slow.
   */
  protected void seedObjects(List<String> keys) {
    putAll(keys, 16);
  }

  /** Puts each key (content: the key itself) with at most {@code parallelism} puts in flight. */
  protected void putAll(List<String> keys, int parallelism) {
    List<CompletableFuture<Void>> window = new ArrayList<>();
    for (String key : keys) {
      window.add(storage.put(key, ByteBuffer.wrap(key.getBytes(StandardCharsets.UTF_8))));
      if (window.size() == parallelism) {
        window.forEach(ObjectStorageContractTest::join);
        window.clear();
      }
    }
    window.forEach(ObjectStorageContractTest::join);
  }

  public static <T> T join(CompletableFuture<T> future) {
    try {
      return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } catch (InterruptedException | TimeoutException e) {
      throw new IllegalStateException(e);
    }
  }

  public static void assertFailure(CompletableFuture<?> future, Class<? extends Throwable> type) {
    assertThatThrownBy(() -> join(future)).isInstanceOf(type);
  }

  public static byte[] bytes(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.duplicate().get(out);
    return out;
  }

  public static byte[] randomBytes(long seed, int size) {
    byte[] data = new byte[size];
    new Random(seed).nextBytes(data);
    return data;
  }

  private static byte[] filled(int size, byte value) {
    byte[] data = new byte[size];
    Arrays.fill(data, value);
    return data;
  }

  private static boolean allEqual(byte[] data, byte value) {
    for (byte b : data) {
      if (b != value) {
        return false;
      }
    }
    return true;
  }

  private static byte[] concat(byte[]... parts) {
    int size = Arrays.stream(parts).mapToInt(p -> p.length).sum();
    ByteBuffer out = ByteBuffer.allocate(size);
    for (byte[] p : parts) {
      out.put(p);
    }
    return out.array();
  }
}
