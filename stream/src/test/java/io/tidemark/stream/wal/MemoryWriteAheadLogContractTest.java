package io.tidemark.stream.wal;

/** The WAL contract against the in-memory fake. */
class MemoryWriteAheadLogContractTest extends WriteAheadLogContractTest {

  private final MemoryWriteAheadLog log = new MemoryWriteAheadLog();

  @Override
  protected WriteAheadLog newLog(long appendTimeoutMs) {
    log.crash();
    return log;
  }

  @Override
  protected long capacityBytes() {
    return 256 * 1024;
  }

  @Override
  protected boolean completesInOffsetOrderAcrossThreads() {
    return false; // futures are complete when append returns; callbacks run on each caller's thread
  }
}
