package io.tidemark.bench.kafka;

/** One number the comparison measures per system and partition count; units in the name. */
enum Figure {
  /** ProducerPerformance without a rate limit: MiB/s acknowledged. */
  PRODUCE_MIB_PER_S,
  /** ProducerPerformance without a rate limit: p99 latency (mostly time queued in the producer's buffer). */
  PRODUCE_P99_AT_MAX_MS,
  /** ProducerPerformance at the fixed rate of the plan: send-to-acknowledgement latency percentiles. */
  PRODUCE_P50_MS,
  PRODUCE_P99_MS,
  PRODUCE_P999_MS,
  /** ConsumerPerformance: MiB/s while fetching (the group join excluded). */
  CONSUME_MIB_PER_S,
  /** EndToEndLatency: produce with acks=all, then consume, one record at a time. */
  END_TO_END_P50_MS,
  END_TO_END_P99_MS,
  END_TO_END_P999_MS
}
