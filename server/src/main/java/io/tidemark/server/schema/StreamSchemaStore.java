package io.tidemark.server.schema;

import io.tidemark.server.storage.StorageNode;
import io.tidemark.registry.store.SchemaStore;
import io.tidemark.registry.store.SchemaStoreException;
import io.tidemark.registry.store.StoredRecord;
import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.metadata.StreamMetadata;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
/**
 * The schema registry's log ({@code _schemas}) kept in one stream of this node's storage engine,
 * so that schemas are as durable as any appended data: each record is one batch of one record,
 * so the log offset is the stream offset. The stream's id is remembered in {@code schemas-stream}
 * under the given directory (written and synced before first use).
 *
 * <p>Record layout: {@code int keyLength, key, int valueLength (-1 for a tombstone), value}.
 *
 * <p>Thread-safe: appends come from the registry's single writer thread; reads from any thread.
 * Every call waits at most {@link #TIMEOUT_MS} for the engine and then fails with
 * {@link SchemaStoreException} (whose outcome may be unknown for an append).
 */
public final class StreamSchemaStore implements SchemaStore {

  private static final Logger LOG = LoggerFactory.getLogger(StreamSchemaStore.class);
  static final long TIMEOUT_MS = 30_000;
  static final int READ_MAX_BYTES = 16 * 1024 * 1024;

  private final Stream stream;

  private StreamSchemaStore(Stream stream) {
    this.stream = stream;
  }

  /** Opens (creating on first start) the schema log stream; the stream id lives in {@code dir/schemas-stream}. */
  public static StreamSchemaStore open(StorageNode storage, Path dir) {
    try {
      Files.createDirectories(dir);
      Path idFile = dir.resolve("schemas-stream");
      long id;
      if (Files.exists(idFile)) {
        id = Long.parseLong(Files.readString(idFile, StandardCharsets.US_ASCII).trim());
      } else {
        id = wait(storage.streamStore().createStream(Map.of("purpose", "_schemas")));
        writeDurably(idFile, Long.toString(id));
      }
      List<StreamMetadata> meta = wait(storage.streamManager().getStreams(List.of(id)));
      if (meta.isEmpty()) {
        throw new SchemaStoreException("the schema log stream " + id + " named in " + idFile + " does not exist");
      }
      return new StreamSchemaStore(wait(storage.streamStore().openStream(id, meta.get(0).epoch() + 1)));
    } catch (IOException | NumberFormatException e) {
      throw new SchemaStoreException("cannot open the schema log stream under " + dir + ": " + e.getMessage(), e);
    }
  }

  @Override
  public long append(byte[] key, byte[] value) {
    if (key == null) {
      throw new IllegalArgumentException("a _schemas record needs a key");
    }
    ByteBuffer record = ByteBuffer.allocate(8 + key.length + (value == null ? 0 : value.length));
    record.putInt(key.length).put(key).putInt(value == null ? -1 : value.length);
    if (value != null) {
      record.put(value);
    }
    return wait(stream.append(1, record.flip()));
  }

  @Override
  public List<StoredRecord> read(long fromOffset, int maxRecords) {
    long end = stream.nextOffset();
    if (fromOffset < 0 || fromOffset > end) {
      throw new SchemaStoreException("offset " + fromOffset + " is outside the schema log [0, " + end + "]");
    }
    List<StoredRecord> records = new ArrayList<>();
    long next = fromOffset;
    long until = Math.min(end, fromOffset + (long) maxRecords);
    while (next < until) {
      FetchResult result = wait(stream.fetch(next, until, READ_MAX_BYTES));
      if (result.batches().isEmpty()) {
        throw new SchemaStoreException("the schema log returned nothing at offset " + next + " below its end " + end);
      }
      for (StreamBatch batch : result.batches()) {
        if (batch.baseOffset() >= next && batch.baseOffset() < until) {
          StoredRecord record = decode(batch);
          if (record != null) {
            records.add(record);
          } else { // bad bytes must not stop the registry: its replay goes on after them
            LOG.warn("skipping unreadable _schemas record at stream offset {} ({} bytes, {} records)", batch.baseOffset(),
                batch.payload().remaining(), batch.recordCount());
          }
        }
        next = Math.max(next, batch.nextOffset());
      }
    }
    return records;
  }

  @Override
  public long endOffset() {
    return stream.nextOffset();
  }

  @Override
  public void close() {
    try {
      stream.close().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // The engine closes every stream itself when it closes; nothing is lost.
    }
  }

  /** The record of a batch, or null when its bytes do not follow the record layout (lengths checked before allocating). */
  private static StoredRecord decode(StreamBatch batch) {
    ByteBuffer in = batch.payload().duplicate();
    if (batch.recordCount() != 1 || in.remaining() < 8) {
      return null;
    }
    int keyLength = in.getInt();
    if (keyLength < 0 || keyLength > in.remaining() - 4) {
      return null;
    }
    byte[] key = new byte[keyLength];
    in.get(key);
    int valueLength = in.getInt();
    if (valueLength < -1 || valueLength > in.remaining() || (valueLength == -1 && in.hasRemaining())
        || (valueLength >= 0 && valueLength != in.remaining())) {
      return null;
    }
    byte[] value = null;
    if (valueLength >= 0) {
      value = new byte[valueLength];
      in.get(value);
    }
    return new StoredRecord(batch.baseOffset(), key, value);
  }

  private static <T> T wait(java.util.concurrent.CompletableFuture<T> future) {
    try {
      return future.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SchemaStoreException("interrupted while waiting for the schema log", e);
    } catch (ExecutionException e) {
      throw new SchemaStoreException("schema log operation failed: " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new SchemaStoreException("schema log operation did not finish within " + TIMEOUT_MS + " ms; outcome unknown", e);
    }
  }

  private static void writeDurably(Path file, String content) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(ByteBuffer.wrap(content.getBytes(StandardCharsets.US_ASCII)));
      ch.force(true);
    }
    Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }
}
