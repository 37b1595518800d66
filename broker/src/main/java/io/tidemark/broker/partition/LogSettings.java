package io.tidemark.broker.partition;

import io.tidemark.broker.record.TopicCompression;

/**
 * The topic settings a partition applies on append.
 *
 * @param maxMessageBytes largest batch accepted (after recompression, as Kafka counts it)
 * @param logAppendTime stamp batches with the broker's time (message.timestamp.type=LogAppendTime)
 * @param compression the topic's {@code compression.type} (with its level): batches in another codec are
 *     recompressed before they are stored; {@link TopicCompression#PRODUCER} keeps the producer's codec
 * @param compacted {@code cleanup.policy} includes 'compact': every record needs a key (Kafka answers
 *     INVALID_RECORD otherwise)
 * @param maxDecompressedRecordBytes {@code max.decompressed.message.bytes}: largest record, decompressed, accepted
 *     (INVALID_RECORD beyond it), checked before the record's bytes are allocated
 */
public record LogSettings(int maxMessageBytes, boolean logAppendTime, TopicCompression compression, boolean compacted,
    int maxDecompressedRecordBytes) {

  /** Kafka's default of {@code max.decompressed.message.bytes}: no bound below what the JVM could allocate anyway. */
  public static final int NO_DECOMPRESSED_LIMIT = Integer.MAX_VALUE - 8;

  /** Settings without a bound on decompressed records. */
  public LogSettings(int maxMessageBytes, boolean logAppendTime, TopicCompression compression, boolean compacted) {
    this(maxMessageBytes, logAppendTime, compression, compacted, NO_DECOMPRESSED_LIMIT);
  }

  /** Settings of a topic that is not compacted. */
  public LogSettings(int maxMessageBytes, boolean logAppendTime, TopicCompression compression) {
    this(maxMessageBytes, logAppendTime, compression, false);
  }

  /** Settings that keep the producer's codec. */
  public LogSettings(int maxMessageBytes, boolean logAppendTime) {
    this(maxMessageBytes, logAppendTime, TopicCompression.PRODUCER);
  }
}
