package io.tidemark.table.warehouse;

import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectNotFoundException;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * Iceberg's file access over Tidemark's {@link ObjectStorage} seam, so that the table warehouse
 * lives in the same object storage as the streams. A location is {@code locationPrefix + key};
 * with S3 the prefix should be {@code s3://bucket/} so that other engines can read the same
 * locations with their own S3 file IO. On local storage the warehouse is plain files instead
 * ({@link LocalFileIO}, see {@link Warehouse}): the local store escapes its directory names, so
 * its objects are no plain file paths for outside engines; this class still serves the tables
 * that earlier versions wrote into it.
 *
 * <p>Reads fetch ranges of {@link #READ_CHUNK_BYTES} (a file opened without its length starts
 * with its first chunk, and lists only when that chunk is full; existence is a one-byte GET); writes buffer the whole file in memory and
 * publish it with one atomic put on close (files are bounded by the writer's target file size).
 * Prefix listing ({@link SupportsPrefixOperations}) is the store's list, one request per page, so
 * orphan removal works on a warehouse in object storage as on S3FileIO.
 * Thread safety: stateless apart from the storage, which is thread-safe; each stream is
 * single-threaded.
 */
public final class ObjectStorageFileIO implements FileIO, SupportsPrefixOperations {

  static final int READ_CHUNK_BYTES = 1024 * 1024;

  private final transient ObjectStorage storage;
  private final String locationPrefix;

  public ObjectStorageFileIO(ObjectStorage storage, String locationPrefix) {
    this.storage = storage;
    this.locationPrefix = locationPrefix;
  }

  /** The object key of {@code location}; a location outside the warehouse is rejected. */
  public String keyOf(String location) {
    if (!location.startsWith(locationPrefix)) {
      throw new IllegalArgumentException("location " + location + " is outside the warehouse " + locationPrefix);
    }
    return location.substring(locationPrefix.length());
  }

  @Override
  public InputFile newInputFile(String location) {
    return new StoredInputFile(location, keyOf(location), -1);
  }

  @Override
  public InputFile newInputFile(String location, long length) {
    return new StoredInputFile(location, keyOf(location), length);
  }

  @Override
  public OutputFile newOutputFile(String location) {
    String key = keyOf(location);
    return new WarehouseOutputFile(location, this) {
      @Override
      public PositionOutputStream createOrOverwrite() {
        return new BufferedPutStream(key);
      }
    };
  }

  @Override
  public void deleteFile(String location) {
    await(storage.delete(List.of(keyOf(location))));
  }

  /** Every object whose location starts with {@code prefix}, with its size and last-modified time. */
  @Override
  public Iterable<FileInfo> listPrefix(String prefix) {
    List<FileInfo> out = new ArrayList<>();
    for (ObjectInfo o : await(storage.list(keyOf(prefix)))) {
      out.add(new FileInfo(locationPrefix + o.key(), o.sizeBytes(), o.lastModifiedMs()));
    }
    return out;
  }

  /** Deletes every object whose location starts with {@code prefix}. */
  @Override
  public void deletePrefix(String prefix) {
    List<String> keys = await(storage.list(keyOf(prefix))).stream().map(ObjectInfo::key).toList();
    if (!keys.isEmpty()) {
      await(storage.delete(keys));
    }
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UncheckedIOException(new java.io.InterruptedIOException("interrupted waiting for object storage"));
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof CompletionException ce && ce.getCause() != null ? ce.getCause() : e.getCause();
      if (cause instanceof ObjectNotFoundException nf) {
        throw new NotFoundException(nf, "object not found: %s", nf.getMessage());
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new UncheckedIOException(new IOException(cause));
    }
  }

  private final class StoredInputFile implements InputFile {
    private final String location;
    private final String key;
    private long length;

    StoredInputFile(String location, String key, long length) {
      this.location = location;
      this.key = key;
      this.length = length;
    }

    @Override
    public long getLength() {
      if (length < 0) {
        length = find().orElseThrow(() -> new NotFoundException("file does not exist: %s", location)).sizeBytes();
      }
      return length;
    }

    private java.util.Optional<ObjectInfo> find() {
      for (ObjectInfo info : await(storage.list(key))) {
        if (info.key().equals(key)) {
          return java.util.Optional.of(info);
        }
      }
      return java.util.Optional.empty();
    }

    /**
     * Without a known length the first chunk is read at once (a range past the end returns what
     * exists): a file shorter than a chunk (metadata, manifest lists, manifests) then costs one GET
     * and no listing to learn its length.
     */
    @Override
    public SeekableInputStream newStream() {
      if (length >= 0) {
        return new RangeInputStream(key, length, null);
      }
      ByteBuffer first = await(storage.get(key, 0, READ_CHUNK_BYTES));
      if (first.remaining() < READ_CHUNK_BYTES) {
        length = first.remaining();
      }
      return new RangeInputStream(key, getLength(), first.slice());
    }

    @Override
    public String location() {
      return location;
    }

    /**
     * One GET of the first byte (a missing object fails it): {@link WarehouseOutputFile#create}
     * asks this before every new file, and on S3 a GET costs a tenth of a LIST.
     */
    @Override
    public boolean exists() {
      try {
        await(storage.get(key, 0, 1));
        return true;
      } catch (NotFoundException missing) {
        return false;
      }
    }
  }

  /** Reads an object through cached chunks of {@link #READ_CHUNK_BYTES}. */
  private final class RangeInputStream extends SeekableInputStream {
    private final String key;
    private final long length;
    private long pos;
    private long chunkStart = -1;
    private ByteBuffer chunk;

    /** {@code first} (nullable): the object's first bytes, already read. */
    RangeInputStream(String key, long length, ByteBuffer first) {
      this.key = key;
      this.length = length;
      if (first != null) {
        this.chunk = first;
        this.chunkStart = 0;
      }
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public void seek(long newPos) throws IOException {
      if (newPos < 0) {
        throw new IOException("negative seek position " + newPos);
      }
      pos = newPos;
    }

    private boolean fill() {
      if (pos >= length) {
        return false;
      }
      if (chunk == null || pos < chunkStart || pos >= chunkStart + chunk.limit()) {
        chunkStart = pos;
        chunk = await(storage.get(key, pos, Math.min(length, pos + READ_CHUNK_BYTES)));
        if (!chunk.hasRemaining()) {
          return false;
        }
      }
      return true;
    }

    @Override
    public int read() {
      if (!fill()) {
        return -1;
      }
      int b = chunk.get((int) (pos - chunkStart)) & 0xff;
      pos++;
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (len == 0) {
        return 0;
      }
      if (!fill()) {
        return -1;
      }
      int at = (int) (pos - chunkStart);
      int n = Math.min(len, chunk.limit() - at);
      chunk.get(at, b, off, n);
      pos += n;
      return n;
    }
  }

  /** Collects a file in memory and publishes it with one atomic put when closed. */
  private final class BufferedPutStream extends PositionOutputStream {
    private final String key;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private boolean closed;

    BufferedPutStream(String key) {
      this.key = key;
    }

    @Override
    public long getPos() {
      return buffer.size();
    }

    @Override
    public void write(int b) throws IOException {
      ensureOpen();
      buffer.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      ensureOpen();
      buffer.write(b, off, len);
    }

    private void ensureOpen() throws IOException {
      if (closed) {
        throw new IOException("stream for " + key + " is closed");
      }
    }

    @Override
    public void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      try {
        await(storage.put(key, ByteBuffer.wrap(buffer.toByteArray())));
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
    }
  }
}
