package io.tidemark.stream.objectstore;

import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.junit.jupiter.api.AfterEach;

/** The object storage contract through the fault-injecting wrapper with no rules: it must be transparent. */
class FaultInjectingObjectStorageContractTest extends ObjectStorageContractTest {
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @Override
  protected ObjectStorage createStorage() {
    return new FaultInjectingObjectStorage(new MemoryObjectStorage(() -> 1_000L), new Random(42), scheduler);
  }

  @AfterEach
  void stopScheduler() {
    scheduler.shutdownNow();
  }
}
