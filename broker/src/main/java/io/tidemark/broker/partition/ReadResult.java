package io.tidemark.broker.partition;

import java.nio.ByteBuffer;
import java.util.List;

/** Whole Kafka record batches read from a partition, with the partition's bounds at read time. */
public record ReadResult(List<ByteBuffer> batches, long highWatermark, long logStartOffset) {

  public int sizeBytes() {
    int n = 0;
    for (ByteBuffer b : batches) {
      n += b.remaining();
    }
    return n;
  }
}
