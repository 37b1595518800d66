package io.tidemark.broker.producer;

import io.tidemark.broker.topic.TopicRegistry;

/**
 * Hands out producer ids from blocks reserved durably in the {@link TopicRegistry}: a block is
 * recorded as used before any of its ids is given out, so an id is never given twice, even
 * across restarts (ids of a partly used block are skipped). Thread-safe (monitor).
 */
public final class ProducerIdAllocator {

  public static final int BLOCK_SIZE = 1000;
  private final TopicRegistry registry;
  private long next;
  private long blockEnd;

  public ProducerIdAllocator(TopicRegistry registry) {
    this.registry = registry;
  }

  public synchronized long nextProducerId() {
    if (next >= blockEnd) {
      next = registry.allocateProducerIdBlock(BLOCK_SIZE);
      blockEnd = next + BLOCK_SIZE;
    }
    return next++;
  }
}
