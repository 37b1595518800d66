package io.tidemark.broker.record;

import java.nio.ByteBuffer;

/**
 * One validated Kafka record batch (magic 2) as produced, with the header fields the partition
 * needs: {@code buffer} holds exactly the batch bytes and is owned by the caller from now on.
 *
 * @param producerId -1 when the batch is not idempotent
 * @param baseSequence -1 when the batch is not idempotent
 */
public record ProducedBatch(ByteBuffer buffer, int recordCount, long producerId, short producerEpoch,
    int baseSequence, int lastSequence, boolean transactional, long maxTimestamp, String compression) {

  public boolean idempotent() {
    return producerId >= 0;
  }

  public int sizeBytes() {
    return buffer.remaining();
  }
}
