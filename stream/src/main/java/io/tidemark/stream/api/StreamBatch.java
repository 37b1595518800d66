package io.tidemark.stream.api;

import java.nio.ByteBuffer;

/** One stored batch: records {@code [baseOffset, baseOffset + recordCount)} and their payload. */
public record StreamBatch(long baseOffset, int recordCount, ByteBuffer payload) {

  /** The offset after this batch's last record. */
  public long nextOffset() {
    return baseOffset + recordCount;
  }
}
