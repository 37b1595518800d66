package io.tidemark.stream.wal;

import io.tidemark.stream.objectstore.LocalObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.S3ObjectStorage;
import io.tidemark.stream.objectstore.S3Options;
import io.tidemark.stream.testing.S3ProxyFixture;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

/**
 * The WAL contract against the object WAL on the local-directory store and on S3 (S3Proxy
 * in-process, authentication on; full tier: {@code mvn -Pfull}).
 */
class ObjectWriteAheadLogOnRealStoresContractTest {

  abstract static class Base extends WriteAheadLogContractTest {
    private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
    private ObjectStorage storage;
    private long epoch;

    abstract ObjectStorage createStorage();

    @AfterEach
    void stop() {
      scheduler.shutdownNow();
      if (storage != null) {
        storage.close();
      }
    }

    @Override
    protected WriteAheadLog newLog(long appendTimeoutMs) {
      if (storage == null) {
        storage = createStorage();
      }
      ObjectWalOptions options = new ObjectWalOptions(1, ++epoch, 2, 32 * 1024, 8, 4L << 20, appendTimeoutMs);
      return new ObjectWriteAheadLog(options, storage, scheduler, Clock.systemUTC());
    }

    @Override
    protected long capacityBytes() {
      return 256 * 1024;
    }
  }

  @Nested
  class Local extends Base {
    @TempDir
    Path dir;

    @Override
    ObjectStorage createStorage() {
      return new LocalObjectStorage(dir.resolve("objects"), 4, 1024);
    }
  }

  /** Every append is a signed PUT plus a LIST on a loaded machine: about 40 s, so it runs in the full tier. */
  @Nested
  @Tag("full")
  class S3 extends Base {
    @Override
    ObjectStorage createStorage() {
      S3ProxyFixture s3 = S3ProxyFixture.shared();
      return new S3ObjectStorage(S3Options.of(s3.endpoint(), s3.newBucket("wal"), s3.accessKey(), s3.secretKey()));
    }

    /** Every append here is a signed PUT plus a LIST: keep the lap test's rounds small. */
    @Override
    protected long capacityBytes() {
      return 64 * 1024;
    }
  }
}
