package io.tidemark.stream.object;

import io.tidemark.stream.api.StreamBatch;
import java.nio.ByteBuffer;

/**
 * One batch of one stream as it travels through the WAL and lives in objects: the stream, the
 * epoch it was written under, records {@code [baseOffset, baseOffset + recordCount)} and the
 * opaque payload. Encoded by {@link StreamBatchCodec}.
 */
public record StreamRecordBatch(long streamId, long epoch, long baseOffset, int recordCount, ByteBuffer payload) {

  public StreamRecordBatch {
    if (recordCount < 1) {
      throw new IllegalArgumentException("record count " + recordCount + " of stream " + streamId + " must be >= 1");
    }
    if (baseOffset < 0) {
      throw new IllegalArgumentException("base offset " + baseOffset + " of stream " + streamId + " must be >= 0");
    }
  }

  /** The offset after this batch's last record. */
  public long nextOffset() {
    return baseOffset + recordCount;
  }

  /** Payload size in bytes. */
  public int payloadBytes() {
    return payload.remaining();
  }

  /** Size of this batch once encoded. */
  public int encodedBytes() {
    return StreamBatchCodec.HEADER_BYTES + payload.remaining();
  }

  /** The stream-level view (no stream id, no epoch), sharing the payload bytes read-only. */
  public StreamBatch toStreamBatch() {
    return new StreamBatch(baseOffset, recordCount, payload.asReadOnlyBuffer());
  }
}
