package io.tidemark.broker.partition;

/**
 * Where an appended batch landed.
 *
 * @param logAppendTimeMs the broker time stamped on the batch, or -1 for CreateTime topics
 * @param duplicate true when the batch was a retry of one already appended (its original offset)
 */
public record AppendResult(long baseOffset, long logAppendTimeMs, long logStartOffset, boolean duplicate) {}
