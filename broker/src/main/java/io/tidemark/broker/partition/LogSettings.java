package io.tidemark.broker.partition;

/**
 * The topic settings a partition applies on append.
 *
 * @param maxMessageBytes largest batch accepted
 * @param logAppendTime stamp batches with the broker's time (message.timestamp.type=LogAppendTime)
 */
public record LogSettings(int maxMessageBytes, boolean logAppendTime) {}
