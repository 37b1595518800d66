package io.tidemark.stream.wal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The WAL contract against the block WAL, with O_DIRECT and with the buffered fallback. */
class BlockWriteAheadLogContractTest {

  static final long CAPACITY = 512 * 1024;

  abstract static class Base extends WriteAheadLogContractTest {
    @TempDir
    Path dir;
    private long epoch;

    abstract boolean direct();

    BlockWalOptions options(long appendTimeoutMs) {
      return new BlockWalOptions(dir.resolve("wal.log"), CAPACITY, direct(), 0, 256 * 1024, 1, ++epoch,
          Clock.systemUTC()); // the block WAL has no append timeout: appends never wait on the caller
    }

    @Override
    protected WriteAheadLog newLog(long appendTimeoutMs) {
      return new BlockWriteAheadLog(options(appendTimeoutMs));
    }

    @Override
    protected long capacityBytes() {
      return CAPACITY;
    }

    @Override
    protected boolean fillsUntilTrimmed() {
      return true;
    }

    @Test
    void opensInTheRequestedIoMode() {
      // Goal: the log really runs with O_DIRECT when asked (the test dir's filesystem accepts it), and buffered when not.
      BlockWriteAheadLog wal = (BlockWriteAheadLog) open(1000);
      drain(wal.recover());
      assertThat(wal.directIo()).isEqualTo(direct());
      assertThat(wal.blockSize()).isPositive();
    }
  }

  @Nested
  class Direct extends Base {
    @Override
    boolean direct() {
      return true;
    }
  }

  @Nested
  class Buffered extends Base {
    @Override
    boolean direct() {
      return false;
    }
  }
}
