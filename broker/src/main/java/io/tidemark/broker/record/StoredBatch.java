package io.tidemark.broker.record;

/**
 * Header fields of a batch already in a partition (read back from a stream), used to rebuild
 * producer state and answer time and leader-epoch queries without decompressing.
 */
public record StoredBatch(long baseOffset, long lastOffset, int recordCount, long producerId, short producerEpoch,
    int baseSequence, int lastSequence, long maxTimestamp, int partitionLeaderEpoch, boolean control,
    boolean transactional) {}
