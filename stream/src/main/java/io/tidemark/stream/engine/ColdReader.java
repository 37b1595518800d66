package io.tidemark.stream.engine;

import io.tidemark.stream.api.StreamBatch;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Reads committed data of a stream from object storage (below the log cache). Same result rules
 * as {@link io.tidemark.stream.api.Stream#fetch}: the first batch holds {@code startOffset}, batches
 * follow until {@code endOffset} or until their payloads reach {@code maxBytes} (at least one).
 * Implementations run on their own executors, never on the append path. A method reference fits,
 * e.g. {@code builder.coldReader(cachedColdReader::read)} for the block-cache reader.
 */
@FunctionalInterface
public interface ColdReader {
  CompletableFuture<List<StreamBatch>> read(long streamId, long startOffset, long endOffset, int maxBytes);
}
