package io.tidemark.table.warehouse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * Iceberg's file access to plain files at {@code file:} locations: the embedded warehouse on local
 * storage. A location is {@code file:} followed by an absolute path, written as it is (no
 * percent-encoding, as Hadoop's {@code Path} and PyArrow read it), with an optional empty or
 * {@code localhost} authority: {@code file:/a/b}, {@code file:///a/b} and
 * {@code file://localhost/a/b} name the same file. Because the files are plain, any engine reads
 * the tables with its own standard FileIO (Iceberg's {@code HadoopFileIO} through
 * {@code ResolvingFileIO}, PyArrow, DuckDB), with nothing of Tidemark on its class path.
 *
 * <p>Writes go to a temporary file ({@code .iceberg-tmp-*}) beside the target that is forced to
 * disk and renamed over the target on close, so a reader sees a whole file or none, as the object
 * stores publish objects. The prefix differs from the local object store's {@code .tmp-}, whose
 * clean-up at open walks its whole directory (the warehouse lives inside it): a store opened while
 * a table file is being written must not delete it. A crash mid-write leaves a hidden temporary
 * file that no table references, like the orphan files of an abandoned commit round.
 * Prefix listing ({@link SupportsPrefixOperations}) walks the directories and names files in the
 * form {@link #locationOf} gives, temporary files included (orphan removal takes them once old).
 * Loadable by name ({@code io-impl}); stateless; safe for concurrent use.
 */
public final class LocalFileIO implements FileIO, SupportsPrefixOperations {

  /** The scheme of every location this FileIO serves. */
  public static final String SCHEME = "file:";
  private static final String TEMP_PREFIX = ".iceberg-tmp-";

  private Map<String, String> properties = Map.of();

  @Override
  public void initialize(Map<String, String> props) {
    this.properties = Map.copyOf(props);
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  /** The {@code file:} location of an absolute path, in the form this FileIO writes ({@code file:///a/b}). */
  public static String locationOf(Path path) {
    return SCHEME + "//" + path.toAbsolutePath().normalize();
  }

  /** The file a {@code file:} location names; any other location is rejected. */
  public static Path pathOf(String location) {
    if (!location.startsWith(SCHEME)) {
      throw new IllegalArgumentException("location " + location + " is not a file: location");
    }
    String rest = location.substring(SCHEME.length());
    if (rest.startsWith("//")) {
      int slash = rest.indexOf('/', 2);
      String authority = slash < 0 ? rest.substring(2) : rest.substring(2, slash);
      if (!authority.isEmpty() && !authority.equals("localhost")) {
        throw new IllegalArgumentException("location " + location + " names the host " + authority
            + "; file: locations must be on this machine (file:///path)");
      }
      rest = slash < 0 ? "/" : rest.substring(slash);
    }
    if (!rest.startsWith("/")) {
      throw new IllegalArgumentException("location " + location + " is not an absolute file: location");
    }
    return Path.of(rest);
  }

  @Override
  public InputFile newInputFile(String location) {
    return new LocatedInputFile(location, org.apache.iceberg.Files.localInput(pathOf(location).toFile()));
  }

  @Override
  public OutputFile newOutputFile(String location) {
    Path target = pathOf(location);
    return new WarehouseOutputFile(location, this) {
      @Override
      public PositionOutputStream createOrOverwrite() {
        try {
          return new PublishingStream(target);
        } catch (IOException e) {
          throw new UncheckedIOException("cannot write " + location, e);
        }
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

  /**
   * Every regular file whose location ({@link #locationOf} form) starts with {@code prefix}: all the
   * files under a directory for a prefix ending in {@code /}, as S3 lists a key prefix.
   */
  @Override
  public Iterable<FileInfo> listPrefix(String prefix) {
    Path path = pathOf(prefix);
    boolean directory = prefix.endsWith("/");
    Path root = directory ? path : path.getParent();
    String wanted = locationOf(path) + (directory ? "/" : "");
    List<FileInfo> out = new ArrayList<>();
    if (root == null || !Files.isDirectory(root)) {
      return out;
    }
    try (Stream<Path> files = Files.walk(root)) {
      for (Path p : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        String location = locationOf(p);
        if (location.startsWith(wanted)) {
          try {
            out.add(new FileInfo(location, Files.size(p), Files.getLastModifiedTime(p).toMillis()));
          } catch (NoSuchFileException gone) {
            // deleted while listing
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("listing " + root + " failed", e);
    } catch (UncheckedIOException e) {
      if (!(e.getCause() instanceof NoSuchFileException)) {
        throw new UncheckedIOException("listing " + root + " failed", e.getCause());
      }
      // a directory removed while listing: what was listed stands
    }
    return out;
  }

  /** Deletes every regular file {@link #listPrefix} names (directories stay). */
  @Override
  public void deletePrefix(String prefix) {
    for (FileInfo f : listPrefix(prefix)) {
      deleteFile(f.location());
    }
  }

  /** An input file that reports the location it was asked for (Iceberg compares locations), not the path. */
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

  /** Writes a temporary file beside the target; close forces it and renames it over the target. */
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
      if (closed) {
        throw new IOException("stream for " + target + " is closed");
      }
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
      try {
        try (channel) {
          channel.force(true);
        }
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (IOException | RuntimeException e) {
        Files.deleteIfExists(temp);
        throw e;
      }
      forceDirectory(target.getParent());
    }

    private static void forceDirectory(Path directory) throws IOException {
      try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
        dir.force(true);
      } catch (NoSuchFileException e) {
        // removed meanwhile: nothing to make durable
      }
    }
  }
}
