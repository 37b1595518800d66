package io.tidemark.bench.storage;

import io.tidemark.stream.wal.WriteAheadLog;
import java.nio.file.Path;

/** Opens a fresh WAL under a directory (recovered and started), for the WAL benchmark. */
@FunctionalInterface
interface WalFactory {
  WriteAheadLog open(Path dir) throws Exception;

  /** What the table calls it. */
  default String description() {
    return "WAL";
  }
}
