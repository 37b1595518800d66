package io.tidemark.stream.wal;

import io.tidemark.stream.objectstore.MemoryObjectStorage;
import java.time.Clock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;

/** The WAL contract against the object WAL on the in-memory object storage. */
class ObjectWriteAheadLogContractTest extends WriteAheadLogContractTest {

  private final MemoryObjectStorage storage = new MemoryObjectStorage();
  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
  private long epoch;

  @AfterEach
  void stopScheduler() {
    scheduler.shutdownNow();
  }

  @Override
  protected WriteAheadLog newLog(long appendTimeoutMs) {
    ObjectWalOptions options = new ObjectWalOptions(1, ++epoch, 2, 32 * 1024, 8, 4L << 20, appendTimeoutMs);
    return new ObjectWriteAheadLog(options, storage, scheduler, Clock.systemUTC());
  }

  @Override
  protected long capacityBytes() {
    return 256 * 1024;
  }
}
