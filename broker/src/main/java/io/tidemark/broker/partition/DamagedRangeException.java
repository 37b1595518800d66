package io.tidemark.broker.partition;

import org.apache.kafka.common.TopicPartition;

/**
 * A read hit stored data that is not a valid record batch: offsets {@code [fromOffset, toOffset)}
 * of the partition cannot be served (Kafka clients get CORRUPT_MESSAGE). Data before and after the
 * range reads normally; an internal reader resumes at {@link #toOffset()}. Nothing was changed.
 */
public final class DamagedRangeException extends PartitionException {

  private final long fromOffset;
  private final long toOffset;

  DamagedRangeException(TopicPartition tp, long fromOffset, long toOffset, String problem) {
    super(Outcome.CORRUPT_DATA, "offsets " + fromOffset + ".." + (toOffset - 1) + " of " + tp
        + " are damaged (" + problem + "); fetch from offset " + toOffset + " to read past them");
    this.fromOffset = fromOffset;
    this.toOffset = toOffset;
  }

  public long fromOffset() {
    return fromOffset;
  }

  /** The first offset after the damaged range. */
  public long toOffset() {
    return toOffset;
  }
}
