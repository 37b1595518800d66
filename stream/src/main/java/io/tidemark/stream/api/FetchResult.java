package io.tidemark.stream.api;

import java.util.List;

/** Batches returned by {@link Stream#fetch}, in offset order; {@code cold} if any came from object storage. */
public record FetchResult(List<StreamBatch> batches, boolean cold) {

  public long sizeBytes() {
    long total = 0;
    for (StreamBatch batch : batches) {
      total += batch.payload().remaining();
    }
    return total;
  }
}
