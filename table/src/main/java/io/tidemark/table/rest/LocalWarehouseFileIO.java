package io.tidemark.table.rest;

import io.tidemark.stream.objectstore.LocalObjectStorage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * A client-side FileIO for the embedded default warehouse (local object storage): REST catalog
 * clients on the same machine as the server (or with the data directory mounted) read and write
 * table files directly in the server's {@code storage.local.path}. Iceberg locations are
 * {@code locationPrefix + key}; the file of a key follows the local object store's layout
 * (directory segments escaped and suffixed with {@code ~}), which {@code LocalWarehouseFileIOTest}
 * pins against {@code LocalObjectStorage} itself.
 *
 * <p>It never opens the store (opening it cleans temporary files, which would break a running
 * server). Writes go to a temporary file that is synced and renamed over the target on close, as
 * the store publishes objects. Loaded by name ({@code io-impl}), initialised with
 * {@link #ROOT} and {@link #LOCATION_PREFIX}, which the server hands to clients through
 * {@code GET /v1/config}. Stateless after initialisation; safe for concurrent use.
 */
public final class LocalWarehouseFileIO implements FileIO {

  /** The local object store's root directory. */
  public static final String ROOT = "tidemark.warehouse.local-root";
  /** The prefix of every Iceberg location in the warehouse ({@code location = prefix + key}). */
  public static final String LOCATION_PREFIX = "tidemark.warehouse.location-prefix";

  private static final String DIR_SUFFIX = "~";
  private static final String TEMP_PREFIX = ".tmp-";

  private Map<String, String> properties = Map.of();
  private Path root;
  private String prefix;

  /** For loading by class name; call {@link #initialize(Map)} before use. */
  public LocalWarehouseFileIO() {}

  public LocalWarehouseFileIO(Path root, String locationPrefix) {
    initialize(Map.of(ROOT, root.toString(), LOCATION_PREFIX, locationPrefix));
  }

  @Override
  public void initialize(Map<String, String> props) {
    String rootValue = props.get(ROOT);
    String prefixValue = props.get(LOCATION_PREFIX);
    if (rootValue == null || prefixValue == null) {
      throw new IllegalArgumentException(getClass().getSimpleName() + " needs the properties " + ROOT + " and "
          + LOCATION_PREFIX + " (the Tidemark REST catalog sends both in GET /v1/config)");
    }
    this.properties = Map.copyOf(props);
    this.root = Path.of(rootValue).toAbsolutePath();
    this.prefix = prefixValue;
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  /** The file that holds {@code location}; a location outside the warehouse is rejected. */
  Path pathOf(String location) {
    if (root == null) {
      throw new IllegalStateException(getClass().getSimpleName() + " is not initialized");
    }
    if (!location.startsWith(prefix)) {
      throw new IllegalArgumentException("location " + location + " is outside the warehouse " + prefix);
    }
    String[] segments = location.substring(prefix.length()).split("/", -1);
    Path path = root;
    for (int i = 0; i < segments.length - 1; i++) {
      path = path.resolve(LocalObjectStorage.escape(segments[i]) + DIR_SUFFIX);
    }
    return path.resolve(LocalObjectStorage.escape(segments[segments.length - 1]));
  }

  @Override
  public InputFile newInputFile(String location) {
    return new LocatedInputFile(location, org.apache.iceberg.Files.localInput(pathOf(location).toFile()));
  }

  @Override
  public OutputFile newOutputFile(String location) {
    Path target = pathOf(location);
    return new OutputFile() {
      @Override
      public PositionOutputStream create() {
        if (Files.exists(target)) {
          throw new AlreadyExistsException("file already exists: %s", location);
        }
        return createOrOverwrite();
      }

      @Override
      public PositionOutputStream createOrOverwrite() {
        try {
          return new PublishingStream(target);
        } catch (IOException e) {
          throw new UncheckedIOException("cannot write " + location + " (" + target + ")", e);
        }
      }

      @Override
      public String location() {
        return location;
      }

      @Override
      public InputFile toInputFile() {
        return newInputFile(location);
      }
    };
  }

  @Override
  public void deleteFile(String location) {
    try {
      Files.deleteIfExists(pathOf(location));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + location, e);
    }
  }


  /** An input file that reports the Iceberg location it was asked for, not the local path. */
  private record LocatedInputFile(String location, InputFile local) implements InputFile {
    @Override
    public long getLength() {
      return local.getLength();
    }

    @Override
    public SeekableInputStream newStream() {
      return local.newStream();
    }

    @Override
    public boolean exists() {
      return local.exists();
    }
  }

  /** Writes a temporary file beside the target; close syncs it and renames it over the target. */
  private static final class PublishingStream extends PositionOutputStream {
    private final Path target;
    private final Path temp;
    private final FileChannel channel;
    private long position;
    private boolean closed;

    PublishingStream(Path target) throws IOException {
      this.target = target;
      Files.createDirectories(target.getParent());
      this.temp = Files.createTempFile(target.getParent(), TEMP_PREFIX, "");
      this.channel = FileChannel.open(temp, StandardOpenOption.WRITE);
    }

    @Override
    public long getPos() {
      return position;
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      ByteBuffer buffer = ByteBuffer.wrap(b, off, len);
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
      position += len;
    }

    @Override
    public void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      try (channel) {
        channel.force(true);
      } catch (IOException e) {
        Files.deleteIfExists(temp);
        throw e;
      }
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
  }
}
