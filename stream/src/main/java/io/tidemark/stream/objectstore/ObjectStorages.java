package io.tidemark.stream.objectstore;

import java.nio.file.Path;
import java.util.concurrent.CompletionException;

import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.Settings;

/**
 * Builds the object storage that the settings ask for ({@link ObjectStorageConfig}); for S3, also
 * verifies at start-up that the endpoint, bucket and credentials work, so that a wrong setting
 * fails fast with a {@link ConfigException} naming it instead of failing the first upload.
 */
public final class ObjectStorages {

  private ObjectStorages() {}

  /** The configured store, ready to use; the caller owns (and closes) it. */
  public static ObjectStorage create(Settings settings) {
    String type = settings.get(ObjectStorageConfig.TYPE);
    return switch (type) {
      case "memory" -> new MemoryObjectStorage();
      case "s3" -> createS3(settings);
      default -> new LocalObjectStorage(Path.of(settings.get(ObjectStorageConfig.LOCAL_PATH)),
          settings.get(ObjectStorageConfig.LOCAL_IO_THREADS),
          settings.get(ObjectStorageConfig.LOCAL_MAX_QUEUED_REQUESTS));
    };
  }

  private static S3ObjectStorage createS3(Settings settings) {
    S3ObjectStorage storage = new S3ObjectStorage(ObjectStorageConfig.s3Options(settings));
    try {
      storage.verify().join();
      return storage;
    } catch (CompletionException e) {
      storage.close();
      if (e.getCause() instanceof ConfigException config) {
        throw config;
      }
      throw new ConfigException(ObjectStorageConfig.S3_ENDPOINT.name(), "S3 start-up check failed: " + e.getCause());
    } catch (RuntimeException e) {
      storage.close();
      throw e;
    }
  }
}
