package io.tidemark.broker.transaction;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * The durable state of one transactional id, exactly what one record of
 * {@code __transaction_state} holds. Immutable: the coordinator computes the next value, writes
 * it, and only then makes it current ({@link TransactionState#validPrevious()} is checked by
 * {@link #to}).
 *
 * @param lastProducerEpoch the epoch before the last bump (-1 when none): a producer that was
 *     fenced by a timeout may recover with it (KIP-360)
 * @param startTimestampMs when the open transaction began (-1 when none is open)
 */
record TransactionMetadata(String transactionalId, long producerId, short producerEpoch, short lastProducerEpoch,
    int timeoutMs, TransactionState state, Set<TopicPartition> partitions, long startTimestampMs, long updateTimestampMs) {

  TransactionMetadata {
    partitions = Collections.unmodifiableSet(new LinkedHashSet<>(partitions));
  }

  /** The same transaction in {@code next}; throws on an illegal transition. */
  TransactionMetadata to(TransactionState next, long nowMs) {
    if (!next.validPrevious().contains(state)) {
      throw new IllegalStateException("transaction " + transactionalId + " cannot go from " + state + " to " + next);
    }
    return new TransactionMetadata(transactionalId, producerId, producerEpoch, lastProducerEpoch, timeoutMs, next, partitions,
        startTimestampMs, nowMs);
  }

  TransactionMetadata withPartitions(Set<TopicPartition> all, long startMs) {
    return new TransactionMetadata(transactionalId, producerId, producerEpoch, lastProducerEpoch, timeoutMs, state, all, startMs,
        updateTimestampMs);
  }

  TransactionMetadata withProducer(long id, short epoch, short lastEpoch, int timeout) {
    return new TransactionMetadata(transactionalId, id, epoch, lastEpoch, timeout, state, partitions, startTimestampMs,
        updateTimestampMs);
  }

  /** After markers: no partitions, no open transaction. */
  TransactionMetadata cleared() {
    return new TransactionMetadata(transactionalId, producerId, producerEpoch, lastProducerEpoch, timeoutMs, state, Set.of(), -1,
        updateTimestampMs);
  }
}
