package io.tidemark.stream.objectstore;

import static io.tidemark.stream.objectstore.ObjectStorageContractTest.bytes;
import static io.tidemark.stream.objectstore.ObjectStorageContractTest.join;
import static io.tidemark.stream.objectstore.ObjectStorageContractTest.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** LocalObjectStorage specifics: atomic publication under failures, crash leftovers, layout, threads. */
class LocalObjectStorageTest {

  @TempDir
  Path directory;

  /** A write hook that fails once the given number of bytes has been written. */
  private static LocalObjectStorage.WriteHook failAfter(long bytes) {
    return written -> {
      if (written >= bytes) {
        throw new IOException("injected: disk full after " + written + " bytes");
      }
    };
  }

  @Test
  void writeFailingHalfWayLeavesNoPartialObject() throws IOException {
    // Goal: a put that fails after writing part of its bytes leaves the old object (or none) and no temporary file.
    Path root = directory.resolve("objects");
    byte[] old = randomBytes(1, 100);
    try (LocalObjectStorage healthy = new LocalObjectStorage(root, 2, 16)) {
      join(healthy.put("seg/kept", ByteBuffer.wrap(old)));
    }
    try (LocalObjectStorage failing = new LocalObjectStorage(root, 2, 16,
        failAfter(LocalObjectStorage.WRITE_CHUNK_BYTES))) {
      byte[] large = randomBytes(2, 3 * LocalObjectStorage.WRITE_CHUNK_BYTES);
      assertThatThrownBy(() -> join(failing.put("seg/kept", ByteBuffer.wrap(large))))
          .isInstanceOf(ObjectStorageException.class).hasMessageContaining("disk full");
      assertThatThrownBy(() -> join(failing.put("seg/new", ByteBuffer.wrap(large))))
          .isInstanceOf(ObjectStorageException.class);

      assertThat(bytes(join(failing.get("seg/kept")))).isEqualTo(old);
      assertThatThrownBy(() -> join(failing.get("seg/new"))).isInstanceOf(ObjectNotFoundException.class);
      assertThat(join(failing.list(""))).extracting(ObjectInfo::key).containsExactly("seg/kept");
    }
    assertThat(filesUnder(root)).noneMatch(p -> p.getFileName().toString().startsWith(".tmp-"));
  }

  @Test
  void multipartCompletionFailingHalfWayPublishesNothing() {
    // Goal: a multipart completion that fails while concatenating parts publishes no object and can be aborted.
    LocalObjectStorage storage = new LocalObjectStorage(directory.resolve("objects"), 2, 16, failAfter(1500));
    try (storage) {
      MultipartUpload upload = join(storage.startMultipartUpload("mp/object"));
      join(upload.uploadPart(1, ByteBuffer.wrap(randomBytes(3, 1000))));
      join(upload.uploadPart(2, ByteBuffer.wrap(randomBytes(4, 1000))));
      assertThatThrownBy(() -> join(upload.complete())).isInstanceOf(ObjectStorageException.class);
      assertThatThrownBy(() -> join(storage.get("mp/object"))).isInstanceOf(ObjectNotFoundException.class);
      join(upload.abort());
      assertThat(join(storage.list(""))).isEmpty();
    }
    assertThat(filesUnder(directory.resolve("objects"))).isEmpty();
  }

  @Test
  void leftoversOfACrashAreRemovedOnOpenAndNeverListed() throws IOException {
    // Goal: temporary files and multipart parts left by a crashed process are deleted when the store opens.
    Path root = directory.resolve("objects");
    Files.createDirectories(root.resolve("wal~"));
    Files.write(root.resolve("wal~").resolve(".tmp-123"), new byte[] {1, 2});
    Files.createDirectories(root.resolve(".uploads").resolve("u-1"));
    Files.write(root.resolve(".uploads").resolve("u-1").resolve("part-00001"), new byte[] {3});
    Files.write(root.resolve("wal~").resolve("0001"), new byte[] {4});
    FileTime crashTime = FileTime.from(Instant.now().minus(LocalObjectStorage.LEFTOVER_AGE).minusSeconds(60));
    Files.setLastModifiedTime(root.resolve("wal~").resolve(".tmp-123"), crashTime);
    Files.setLastModifiedTime(root.resolve(".uploads").resolve("u-1"), crashTime);
    try (LocalObjectStorage storage = new LocalObjectStorage(root, 1, 4)) {
      assertThat(join(storage.list(""))).extracting(ObjectInfo::key).containsExactly("wal/0001");
    }
    assertThat(filesUnder(root)).containsExactly(root.resolve("wal~").resolve("0001"));
  }

  @Test
  void aSecondStoreOpeningOnTheDirectoryLeavesLiveWritesAlone() throws IOException {
    // Goal: opening another store on a directory in use (the table topics' beside the node's) deletes
    // no temporary file or upload that a live writer is still writing, so that write completes.
    Path root = directory.resolve("objects");
    try (LocalObjectStorage first = new LocalObjectStorage(root, 1, 4)) {
      MultipartUpload upload = join(first.startMultipartUpload("big/object"));
      join(upload.uploadPart(1, ByteBuffer.wrap(new byte[] {1, 2, 3})));
      Files.createDirectories(root.resolve("wal~"));
      Files.write(root.resolve("wal~").resolve(".tmp-live"), new byte[] {9});
      try (LocalObjectStorage second = new LocalObjectStorage(root, 1, 4)) {
        assertThat(root.resolve("wal~").resolve(".tmp-live")).exists();
        join(upload.complete());
        assertThat(bytes(join(second.get("big/object")))).containsExactly(1, 2, 3);
      }
    }
  }

  @Test
  void keysMapToTheDocumentedLayout() {
    // Goal: '/' separates directories suffixed '~', other characters are escaped, and 'a' and 'a/b' coexist.
    try (LocalObjectStorage storage = new LocalObjectStorage(directory, 1, 4)) {
      join(storage.put("a", ByteBuffer.wrap(new byte[] {1})));
      join(storage.put("a/b c", ByteBuffer.wrap(new byte[] {2})));
      join(storage.put(".x/", ByteBuffer.wrap(new byte[] {3})));
      assertThat(Files.exists(directory.resolve("a"))).isTrue();
      assertThat(Files.exists(directory.resolve("a~").resolve("b%20c"))).isTrue();
      assertThat(Files.exists(directory.resolve("%2Ex~").resolve("%"))).isTrue();
    }
  }

  @Property(tries = 300)
  void escapingRoundTripsAndNeverMakesReservedNames(@ForAll String segment) {
    // Goal: any key segment escapes to a name that decodes back to it, never starts with '.' and never ends with '~'.
    String name = LocalObjectStorage.escape(segment);
    assertThat(LocalObjectStorage.unescape(name)).isEqualTo(segment);
    assertThat(name).doesNotStartWith(".").doesNotEndWith("~").matches("[A-Za-z0-9._%-]+");
  }

  @Test
  void foreignFilesAreNotListed() throws IOException {
    // Goal: files that no key maps to (other tools' files) are ignored by listing.
    try (LocalObjectStorage storage = new LocalObjectStorage(directory, 1, 4)) {
      Files.write(directory.resolve("notes~"), new byte[] {1});
      Files.write(directory.resolve("bad%zz"), new byte[] {1});
      Files.write(directory.resolve("lower%2e"), new byte[] {1});
      assertThat(join(storage.list(""))).isEmpty();
    }
  }

  @Test
  void fileIoRunsOnTheStoresThreadsAndExcessCallsFailFast() throws Exception {
    // Goal: writes run on the store's IO threads, and calls beyond threads plus queue fail at once as overloaded.
    CountDownLatch blocked = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    AtomicReference<String> thread = new AtomicReference<>();
    LocalObjectStorage.WriteHook hook = written -> {
      thread.set(Thread.currentThread().getName());
      started.countDown();
      try {
        blocked.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
    try (LocalObjectStorage storage = new LocalObjectStorage(directory, 1, 1, hook)) {
      CompletableFuture<Void> first = storage.put("k1", ByteBuffer.wrap(new byte[] {1}));
      assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<Void> queued = storage.put("k2", ByteBuffer.wrap(new byte[] {2}));
      CompletableFuture<Void> refused = storage.put("k3", ByteBuffer.wrap(new byte[] {3}));
      assertThat(refused).isCompletedExceptionally();
      assertThatThrownBy(() -> join(refused)).hasMessageContaining("overloaded");
      assertThat(thread.get()).startsWith("tidemark-local-objects-");
      blocked.countDown();
      join(first);
      join(queued);
      assertThat(join(storage.list(""))).extracting(ObjectInfo::key).containsExactly("k1", "k2");
    }
  }

  @Test
  void closedStoreRefusesCalls() {
    // Goal: after close, calls fail with a clear error instead of hanging.
    LocalObjectStorage storage = new LocalObjectStorage(directory, 1, 4);
    storage.close();
    assertThatThrownBy(() -> join(storage.get("x"))).isInstanceOf(ObjectStorageException.class)
        .hasMessageContaining("closed");
  }

  private static List<Path> filesUnder(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      return paths.filter(Files::isRegularFile).toList();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
