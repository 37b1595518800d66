package io.tidemark.broker.producer;

import io.tidemark.broker.cluster.ClusterMetadata;
import io.tidemark.broker.topic.TopicRegistry;

/**
 * Hands out producer ids from blocks reserved durably through the {@link TopicRegistry}'s
 * metadata: a block is recorded as used before any of its ids is given out, so an id is never
 * given twice, even across restarts or by two brokers (ids of a partly used block are skipped).
 * Thread-safe (monitor).
 */
public final class ProducerIdAllocator {

  private final TopicRegistry registry;
  private long next;
  private long blockEnd;

  public ProducerIdAllocator(TopicRegistry registry) {
    this.registry = registry;
  }

  public synchronized long nextProducerId() {
    if (next >= blockEnd) {
      ClusterMetadata.IdBlock block = registry.allocateProducerIdBlock();
      next = block.first();
      blockEnd = block.first() + block.size();
    }
    return next++;
  }
}
