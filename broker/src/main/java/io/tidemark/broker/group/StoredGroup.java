package io.tidemark.broker.group;

/** The durable form of a group's membership, of either protocol, as kept in {@link OffsetLog}. */
sealed interface StoredGroup permits GroupMetadata, ConsumerGroupMetadata {}
