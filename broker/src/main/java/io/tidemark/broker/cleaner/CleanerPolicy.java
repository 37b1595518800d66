package io.tidemark.broker.cleaner;

/**
 * What the log cleaner applies to one topic's partitions (its topic configs, see docs/compaction.md).
 *
 * @param compacted {@code cleanup.policy} names 'compact'; otherwise the cleaner leaves the topic alone
 * @param deleteRetentionMs how long a tombstone stays after the cleaner first reached it
 * @param minCompactionLagMs data committed to object storage more recently than this is not cleaned
 * @param maxCompactionLagMs dirty data older than this is cleaned whatever the dirty ratio
 * @param minCleanableDirtyRatio share of dirty bytes in the cleanable bytes that makes a pass due
 */
public record CleanerPolicy(boolean compacted, long deleteRetentionMs, long minCompactionLagMs, long maxCompactionLagMs,
    double minCleanableDirtyRatio) {}
