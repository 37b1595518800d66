package io.tidemark.table.warehouse;

import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * Where the embedded catalog keeps its table files, and the FileIO the server reaches them with.
 * Two kinds:
 *
 * <ul>
 *   <li>{@link #inObjectStorage}: files are objects of Tidemark's {@link ObjectStorage} at
 *       {@code locationPrefix + key}. With S3 the prefix is {@code s3://bucket/}, so engines read the
 *       same locations with Iceberg's S3FileIO.
 *   <li>{@link #inDirectory}: files are plain files under a local directory at {@code file:}
 *       locations ({@link LocalFileIO}), so engines read them with their standard FileIO. This is the
 *       embedded default on local storage. Tables written before it (at
 *       {@code tidemark-objects://local/} locations inside the local object store, whose directory
 *       names are escaped) stay readable and writable by Tidemark through the store, when it is given.
 * </ul>
 *
 * Immutable; the FileIOs it builds are thread-safe.
 */
public final class Warehouse {

  /** Locations of tables written into the local object store before plain files were the default. */
  public static final String LEGACY_LOCAL_PREFIX = "tidemark-objects://local/";
  /** The directory (or key prefix) of the warehouse inside the storage. */
  public static final String ROOT_NAME = "iceberg";

  private final String location;
  private final FileIO io;

  private Warehouse(String location, FileIO io) {
    this.location = location;
    this.io = io;
  }

  /** Table files as objects at {@code locationPrefix + key}, the warehouse at {@code locationPrefix + "iceberg"}. */
  public static Warehouse inObjectStorage(ObjectStorage storage, String locationPrefix) {
    return new Warehouse(locationPrefix + ROOT_NAME, new ObjectStorageFileIO(storage, locationPrefix));
  }

  /**
   * Table files as plain files under {@code directory}; {@code legacy} (nullable) is the local object
   * store that holds tables at {@link #LEGACY_LOCAL_PREFIX} locations from earlier versions.
   */
  public static Warehouse inDirectory(Path directory, ObjectStorage legacy) {
    ObjectStorageFileIO objects = legacy == null ? null : new ObjectStorageFileIO(legacy, LEGACY_LOCAL_PREFIX);
    return new Warehouse(LocalFileIO.locationOf(directory), new ByScheme(new LocalFileIO(), objects));
  }

  /** The catalog's {@code warehouse} property: new tables are created under it. */
  public String location() {
    return location;
  }

  /** The FileIO of the catalog: reads and writes every location of the warehouse. */
  public FileIO io() {
    return io;
  }

  /**
   * {@code file:} locations to plain files, others to the object store (legacy tables), with a clear
   * refusal without one; both list prefixes.
   */
  private record ByScheme(LocalFileIO files, ObjectStorageFileIO objects) implements FileIO, SupportsPrefixOperations {
    private FileIO of(String location) {
      if (location.startsWith(LocalFileIO.SCHEME)) {
        return files;
      }
      if (objects == null) {
        throw new IllegalArgumentException("location " + location + " is not a file: location of the local warehouse"
            + " and no object storage is open for tables of earlier versions");
      }
      return objects;
    }

    @Override
    public InputFile newInputFile(String location) {
      return of(location).newInputFile(location);
    }

    @Override
    public InputFile newInputFile(String location, long length) {
      return of(location).newInputFile(location, length);
    }

    @Override
    public OutputFile newOutputFile(String location) {
      return of(location).newOutputFile(location);
    }

    @Override
    public void deleteFile(String location) {
      of(location).deleteFile(location);
    }

    @Override
    public Iterable<FileInfo> listPrefix(String prefix) {
      return ((SupportsPrefixOperations) of(prefix)).listPrefix(prefix);
    }

    @Override
    public void deletePrefix(String prefix) {
      ((SupportsPrefixOperations) of(prefix)).deletePrefix(prefix);
    }

    @Override
    public Map<String, String> properties() {
      return Map.of();
    }
  }
}
