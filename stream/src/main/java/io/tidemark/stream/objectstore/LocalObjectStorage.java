package io.tidemark.stream.objectstore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * Object storage in a local directory: the embedded default ({@code storage.type=local}). Owns
 * the directory {@code root}; one process at a time.
 *
 * <p><b>Layout.</b> A key is split at {@code /}; every segment but the last is a directory named
 * {@code escape(segment) + "~"}, the last is a file named {@code escape(segment)}. {@code escape}
 * keeps {@code [A-Za-z0-9_-]} and non-leading {@code .}, writes every other UTF-8 byte as
 * {@code %XX} and the empty segment as {@code %}. So {@code wal/0001} is {@code root/wal~/0001},
 * a key and a "directory" of the same name ({@code a} and {@code a/b}) never collide (files never
 * end in {@code ~}, which is always escaped), and no name starts with {@code .}: names starting
 * with {@code .} are ours ({@code .tmp-*} files being written, {@code .uploads/} for multipart
 * parts) and never listed. An escaped segment longer than 250 bytes is refused. Empty directories
 * are left behind by deletes (removing them would race with concurrent writes into them). A
 * directory whose name does not end in {@code ~} holds no keys and is never listed: the table
 * topics keep their Iceberg warehouse as plain files in {@code root/iceberg/}. Listing
 * walks only the directories that can hold keys with the prefix and returns keys in
 * {@link String} order.
 *
 * <p><b>Atomic publication.</b> A put writes a temporary file in the target directory, forces it
 * to disk, renames it over the key atomically and forces the directory; readers see the old object
 * or the new one, never a part. A failed write deletes its temporary file. Leftover temporary files
 * and multipart uploads of a crashed process are deleted when the store opens, once they are older
 * than {@link #LEFTOVER_AGE}: a younger one may be a live write of another store open on the same
 * directory (the table topics' store beside the node's, or nodes sharing a directory in tests), and
 * deleting it would fail that write. The clean-up walk tolerates files vanishing under it. Multipart parts are
 * files under {@code .uploads/<upload>/} concatenated into a temporary file on completion, then
 * published the same way.
 *
 * <p><b>Threads.</b> Every file operation runs on a fixed pool of {@code ioThreads} threads with a
 * queue of {@code maxQueuedRequests}; a call beyond that fails at once with
 * {@link ObjectStorageException}. The caller's thread never does file IO. {@link #put} reads the
 * caller's buffer on the IO thread: do not modify it until the future completes.
 */
public final class LocalObjectStorage implements ObjectStorage {

  /** Test seam: called after each chunk of an object is written to its temporary file. */
  @FunctionalInterface
  interface WriteHook {
    WriteHook NONE = bytesWritten -> { };

    void afterChunk(long bytesWritten) throws IOException;
  }

  static final int WRITE_CHUNK_BYTES = 1 << 20;
  private static final int MAX_NAME_BYTES = 250;
  private static final String TEMP_PREFIX = ".tmp-";
  private static final String UPLOADS_DIR = ".uploads";
  private static final String DIR_SUFFIX = "~";
  /** Temporary files and uploads untouched for this long belong to no live writer. */
  static final Duration LEFTOVER_AGE = Duration.ofMinutes(10);

  private final Path root;
  private final Path uploads;
  private final ThreadPoolExecutor io;
  private final WriteHook writeHook;
  private volatile boolean closed;

  /** Opens (creating if needed) the store in {@code root}, cleaning up what a crash left behind. */
  public LocalObjectStorage(Path root, int ioThreads, int maxQueuedRequests) {
    this(root, ioThreads, maxQueuedRequests, WriteHook.NONE);
  }

  LocalObjectStorage(Path root, int ioThreads, int maxQueuedRequests, WriteHook writeHook) {
    if (ioThreads < 1 || maxQueuedRequests < 1) {
      throw new IllegalArgumentException("ioThreads and maxQueuedRequests must be >= 1");
    }
    this.root = root.toAbsolutePath();
    this.uploads = this.root.resolve(UPLOADS_DIR);
    this.writeHook = writeHook;
    try {
      Files.createDirectories(this.root);
      Files.createDirectories(uploads);
      deleteLeftovers(this.root, this.uploads, Instant.now().minus(LEFTOVER_AGE));
    } catch (IOException e) {
      throw new ObjectStorageException("cannot open local object storage in " + this.root + ": " + e, e);
    }
    AtomicInteger threadNumber = new AtomicInteger();
    this.io = new ThreadPoolExecutor(ioThreads, ioThreads, 0, TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(maxQueuedRequests), r -> {
          Thread t = new Thread(r, "tidemark-local-objects-" + threadNumber.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }

  public Path root() {
    return root;
  }

  // ---- operations -------------------------------------------------------------------------

  @Override
  public CompletableFuture<Void> put(String key, ByteBuffer data) {
    String bad = ObjectKeys.checkKey(key);
    if (bad != null || data == null) {
      return ObjectKeys.invalid(bad != null ? bad : "no data for " + key);
    }
    ByteBuffer source = data.duplicate();
    return onIo("put", key, () -> {
      Path target = pathOf(key);
      publish(target, temp -> writeAll(temp, source));
      return null;
    });
  }

  @Override
  public CompletableFuture<ByteBuffer> get(String key, long start, long end) {
    String bad = ObjectKeys.checkKey(key);
    if (bad == null) {
      bad = ObjectKeys.checkRange(key, start, end);
    }
    if (bad != null) {
      return ObjectKeys.invalid(bad);
    }
    return onIo("get", key, () -> read(key, pathOf(key), start, end));
  }

  @Override
  public CompletableFuture<Void> delete(List<String> keys) {
    for (String key : keys) {
      String bad = ObjectKeys.checkKey(key);
      if (bad != null) {
        return ObjectKeys.invalid(bad);
      }
    }
    if (keys.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    List<String> copy = List.copyOf(keys);
    return onIo("delete", copy.get(0) + (copy.size() > 1 ? " and " + (copy.size() - 1) + " more" : ""), () -> {
      Set<Path> directories = new LinkedHashSet<>();
      for (String key : copy) {
        Path path = pathOf(key);
        if (Files.deleteIfExists(path)) {
          directories.add(path.getParent());
        }
      }
      for (Path directory : directories) {
        forceDirectory(directory);
      }
      return null;
    });
  }

  @Override
  public CompletableFuture<List<ObjectInfo>> list(String prefix) {
    String p = prefix == null ? "" : prefix;
    return onIo("list", p, () -> {
      List<ObjectInfo> result = new ArrayList<>();
      collect(root, "", p, result);
      result.sort(Comparator.comparing(ObjectInfo::key));
      return result;
    });
  }

  @Override
  public CompletableFuture<MultipartUpload> startMultipartUpload(String key) {
    String bad = ObjectKeys.checkKey(key);
    if (bad != null) {
      return ObjectKeys.invalid(bad);
    }
    return onIo("start multipart upload of", key, () -> {
      pathOf(key); // refuse keys this layout cannot hold before any part is sent
      return new LocalMultipartUpload(key, Files.createTempDirectory(uploads, "u-"));
    });
  }

  /** Any part size works locally; callers still honour S3's 5 MiB when they target both. */
  @Override
  public long minPartSizeBytes() {
    return 1;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    io.shutdown();
    try {
      // Let queued writes finish so that a clean shutdown loses nothing already accepted.
      io.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- IO on the pool ---------------------------------------------------------------------

  @FunctionalInterface
  private interface IoTask<T> {
    T run() throws IOException;
  }

  private <T> CompletableFuture<T> onIo(String operation, String key, IoTask<T> task) {
    if (closed) {
      return CompletableFuture.failedFuture(new ObjectStorageException("local object storage in " + root + " is closed"));
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      io.execute(() -> {
        try {
          result.complete(task.run());
        } catch (NoSuchFileException e) {
          result.completeExceptionally(new ObjectNotFoundException(key));
        } catch (IOException | UncheckedIOException e) {
          result.completeExceptionally(new ObjectStorageException(operation + " " + key + " in " + root + " failed: " + e, e));
        } catch (RuntimeException | Error e) {
          result.completeExceptionally(e);
        }
      });
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new ObjectStorageException("local object storage in " + root
          + " is overloaded or closed: " + io.getQueue().size() + " calls queued for " + io.getMaximumPoolSize()
          + " IO threads; slow down or raise storage.local.io.threads", e));
    }
    return result;
  }

  @FunctionalInterface
  private interface Writer {
    void write(FileChannel temp) throws IOException;
  }

  /** Writes a temporary file next to {@code target} and renames it over {@code target}, durably. */
  private void publish(Path target, Writer writer) throws IOException {
    Path directory = target.getParent();
    ensureDirectory(directory);
    Path temp = Files.createTempFile(directory, TEMP_PREFIX, "");
    try {
      try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
        writer.write(channel);
        channel.force(true);
      }
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(temp);
      throw e;
    }
    forceDirectory(directory);
  }

  private void writeAll(FileChannel channel, ByteBuffer source) throws IOException {
    long written = 0;
    ByteBuffer remaining = source.duplicate();
    while (remaining.hasRemaining()) {
      ByteBuffer chunk = remaining.slice(remaining.position(), Math.min(remaining.remaining(), WRITE_CHUNK_BYTES));
      while (chunk.hasRemaining()) {
        written += channel.write(chunk);
      }
      remaining.position(remaining.position() + chunk.limit());
      writeHook.afterChunk(written);
    }
  }

  private static ByteBuffer read(String key, Path path, long start, long end) throws IOException {
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
      long size = channel.size();
      long from = Math.min(start, size);
      long to = end == TO_END ? size : Math.min(end, size);
      if (to - from > Integer.MAX_VALUE - 16) {
        throw new ObjectStorageException("range [" + start + ", " + end + ") of " + key + " is too large for one buffer");
      }
      ByteBuffer buffer = ByteBuffer.allocate((int) (to - from));
      while (buffer.hasRemaining()) {
        if (channel.read(buffer, from + buffer.position()) < 0) {
          break;
        }
      }
      return buffer.flip();
    }
  }

  /** Adds every object under {@code directory} (whose keys start with {@code keyPrefix}) matching {@code prefix}. */
  private static void collect(Path directory, String keyPrefix, String prefix, List<ObjectInfo> into) throws IOException {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (name.startsWith(".")) {
          continue;
        }
        BasicFileAttributes attributes;
        try {
          attributes = Files.readAttributes(entry, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
          continue; // deleted while listing
        }
        if (attributes.isDirectory() && name.endsWith(DIR_SUFFIX)) {
          String segment = unescape(name.substring(0, name.length() - DIR_SUFFIX.length()));
          String childPrefix = segment == null ? null : keyPrefix + segment + "/";
          if (childPrefix != null && (childPrefix.startsWith(prefix) || prefix.startsWith(childPrefix))) {
            try {
              collect(entry, childPrefix, prefix, into);
            } catch (NoSuchFileException e) {
              // removed while listing
            }
          }
        } else if (attributes.isRegularFile()) {
          String segment = unescape(name);
          if (segment != null && (keyPrefix + segment).startsWith(prefix)) {
            into.add(new ObjectInfo(keyPrefix + segment, attributes.size(), attributes.lastModifiedTime().toMillis()));
          }
        }
      }
    }
  }

  // ---- key layout -------------------------------------------------------------------------

  Path pathOf(String key) {
    String[] segments = key.split("/", -1);
    Path path = root;
    for (int i = 0; i < segments.length - 1; i++) {
      path = path.resolve(checkedName(key, escape(segments[i]) + DIR_SUFFIX));
    }
    return path.resolve(checkedName(key, escape(segments[segments.length - 1])));
  }

  private static String checkedName(String key, String name) {
    if (name.length() > MAX_NAME_BYTES) {
      throw new IllegalArgumentException("key " + key + " has a segment longer than local storage allows ("
          + MAX_NAME_BYTES + " bytes escaped); use shorter segments between '/'");
    }
    return name;
  }

  /**
   * This store's file name of one key segment: unreserved ASCII kept (a leading '.' escaped), every
   * other byte {@code %XX}, the empty segment {@code %}. Public so that readers of the directory
   * (the Iceberg file IO of table topics) name files exactly as the store does.
   */
  public static String escape(String segment) {
    if (segment.isEmpty()) {
      return "%";
    }
    StringBuilder sb = new StringBuilder(segment.length() + 8);
    byte[] bytes = segment.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < bytes.length; i++) {
      int b = bytes[i] & 0xff;
      boolean plain = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
          || b == '-' || b == '_' || (b == '.' && i > 0);
      if (plain) {
        sb.append((char) b);
      } else {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(b >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
      }
    }
    return sb.toString();
  }

  /** The segment a name stands for, or null when the name is not one {@link #escape} produces. */
  static String unescape(String name) {
    if (name.equals("%")) {
      return "";
    }
    byte[] bytes = new byte[name.length()];
    int n = 0;
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '%') {
        if (i + 2 >= name.length()) {
          return null;
        }
        int hi = Character.digit(name.charAt(i + 1), 16);
        int lo = Character.digit(name.charAt(i + 2), 16);
        if (hi < 0 || lo < 0) {
          return null;
        }
        bytes[n++] = (byte) (hi << 4 | lo);
        i += 2;
      } else if (c < 0x80) {
        bytes[n++] = (byte) c;
      } else {
        return null;
      }
    }
    String segment = new String(bytes, 0, n, StandardCharsets.UTF_8);
    return escape(segment).equals(name) ? segment : null;
  }

  // ---- durability helpers -----------------------------------------------------------------

  private void ensureDirectory(Path directory) throws IOException {
    if (Files.isDirectory(directory)) {
      return;
    }
    ensureDirectory(directory.getParent());
    try {
      Files.createDirectory(directory);
    } catch (FileAlreadyExistsException e) {
      return; // created concurrently
    }
    forceDirectory(directory.getParent());
  }

  private static void forceDirectory(Path directory) throws IOException {
    try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (NoSuchFileException e) {
      // nothing to make durable
    }
  }

  /**
   * Deletes the temporary files anywhere under {@code root} and the upload directories directly under
   * {@code uploads} last modified before {@code staleBefore}; files that vanish meanwhile (another
   * store's writer finishing) are skipped.
   */
  private static void deleteLeftovers(Path root, Path uploads, Instant staleBefore) throws IOException {
    Files.walkFileTree(root, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
        if (dir.getParent() != null && dir.getParent().equals(uploads)) {
          if (attrs.lastModifiedTime().toInstant().isBefore(staleBefore)) {
            deleteRecursively(dir);
          }
          return FileVisitResult.SKIP_SUBTREE;
        }
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        if (file.getFileName().toString().startsWith(TEMP_PREFIX) && attrs.isRegularFile()
            && attrs.lastModifiedTime().toInstant().isBefore(staleBefore)) {
          Files.deleteIfExists(file);
        }
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
        if (e instanceof NoSuchFileException) {
          return FileVisitResult.CONTINUE;
        }
        throw e;
      }
    });
  }

  private static void deleteRecursively(Path path) throws IOException {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(path)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (NoSuchFileException | UncheckedIOException e) {
      // Another store's clean-up or the upload's own completion removed part of it meanwhile: gone is gone.
      if (e instanceof UncheckedIOException u && !(u.getCause() instanceof NoSuchFileException)) {
        throw u;
      }
    }
  }

  // ---- multipart --------------------------------------------------------------------------

  private enum UploadState { OPEN, COMPLETING, COMPLETED, ABORTED }

  /**
   * One local multipart upload: parts are files in its own directory under {@code .uploads}.
   * OPEN while parts arrive, then COMPLETING and COMPLETED (the directory is removed), or ABORTED.
   */
  private final class LocalMultipartUpload implements MultipartUpload {
    private final String key;
    private final Path directory;
    private final AtomicReference<UploadState> state = new AtomicReference<>(UploadState.OPEN);

    LocalMultipartUpload(String key, Path directory) {
      this.key = key;
      this.directory = directory;
    }

    @Override
    public String key() {
      return key;
    }

    @Override
    public CompletableFuture<Void> uploadPart(int partNumber, ByteBuffer data) {
      if (partNumber < 1 || partNumber > 10_000 || data == null) {
        return ObjectKeys.invalid("part number " + partNumber + " outside [1, 10000] or no data for " + key);
      }
      if (state.get() != UploadState.OPEN) {
        return notOpen("upload a part");
      }
      ByteBuffer source = data.duplicate();
      return onIo("upload part " + partNumber + " of", key, () -> {
        // Parts need no fsync: completion forces the object it builds from them.
        Path temp = Files.createTempFile(directory, TEMP_PREFIX, "");
        try {
          try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
            writeAll(channel, source);
          }
          Files.move(temp, directory.resolve(partName(partNumber)), StandardCopyOption.ATOMIC_MOVE,
              StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException e) {
          Files.deleteIfExists(temp);
          throw e;
        }
        return null;
      });
    }

    @Override
    public CompletableFuture<Void> complete() {
      if (!state.compareAndSet(UploadState.OPEN, UploadState.COMPLETING)) {
        return notOpen("complete");
      }
      return LocalObjectStorage.this.<Void>onIo("complete multipart upload of", key, () -> {
        List<Path> parts;
        try (Stream<Path> files = Files.list(directory)) {
          parts = files.filter(p -> p.getFileName().toString().startsWith("part-")).sorted().toList();
        }
        if (parts.isEmpty()) {
          throw new ObjectStorageException("cannot complete multipart upload of " + key + " without parts");
        }
        publish(pathOf(key), temp -> {
          long position = 0;
          for (Path part : parts) {
            try (FileChannel in = FileChannel.open(part, StandardOpenOption.READ)) {
              long size = in.size();
              long copied = 0;
              while (copied < size) {
                copied += in.transferTo(copied, size - copied, temp);
              }
              position += size;
              writeHook.afterChunk(position);
            }
          }
        });
        deleteRecursively(directory);
        return null;
      }).whenComplete((v, error) -> state.set(error == null ? UploadState.COMPLETED : UploadState.OPEN));
    }

    @Override
    public CompletableFuture<Void> abort() {
      UploadState previous = state.get();
      if (previous == UploadState.COMPLETED || previous == UploadState.COMPLETING) {
        return notOpen("abort");
      }
      state.set(UploadState.ABORTED);
      return onIo("abort multipart upload of", key, () -> {
        deleteRecursively(directory);
        return null;
      });
    }

    private <T> CompletableFuture<T> notOpen(String action) {
      return CompletableFuture.failedFuture(new ObjectStorageException(
          "cannot " + action + ": multipart upload of " + key + " is " + state.get()));
    }

    private static String partName(int partNumber) {
      return String.format("part-%05d", partNumber);
    }
  }
}
