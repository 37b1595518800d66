package io.tidemark.stream.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.api.StreamBatch;
import io.tidemark.stream.object.StreamRecordBatch;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class LogCacheTest {

  private static StreamRecordBatch batch(long stream, long base, int payloadBytes) {
    return new StreamRecordBatch(stream, 1, base, 1, ByteBuffer.allocate(payloadBytes));
  }

  private static void add(LogCache cache, StreamRecordBatch b, long walOffset) {
    assertThat(cache.tryReserve(b.encodedBytes())).isTrue();
    cache.put(b, walOffset);
  }

  @Test
  void neverExceedsCapacityAndEvictsOnlyUploadedBatchesOldestFirst() {
    // Goal: the cache refuses reservations it cannot hold, and frees space only by evicting uploaded batches in order.
    int size = batch(1, 0, 63).encodedBytes();
    LogCache cache = new LogCache(size * 4L);
    for (int i = 0; i < 4; i++) {
      add(cache, batch(1, i, 63), i);
    }
    assertThat(cache.tryReserve(size)).isFalse();
    assertThat(cache.usedBytes()).isEqualTo(size * 4L);
    LogCache.UploadSnapshot snapshot = cache.takeUploadSnapshot();
    assertThat(snapshot.maxWalOffset()).isEqualTo(3);
    assertThat(cache.tryReserve(size)).as("uploading batches are not evictable").isFalse();
    cache.markUploaded(snapshot);
    assertThat(cache.unuploadedBytes()).isZero();
    assertThat(cache.tryReserve(size)).isTrue();
    cache.put(batch(1, 4, 63), 4);
    assertThat(cache.firstOffset(1)).isEqualTo(1);
    assertThat(cache.usedBytes()).isEqualTo(size * 4L);
  }

  @Test
  void dropUploadedForgetsOnlyTheUploadedHeadBelowTheOffset() {
    // Goal: after a rewrite, the stream's uploaded batches it replaced leave the cache (reads go to the new object);
    // batches not uploaded yet, batches above the offset and other streams stay, and the bytes are freed.
    int size = batch(1, 0, 63).encodedBytes();
    LogCache cache = new LogCache(1 << 20);
    for (int i = 0; i < 4; i++) {
      add(cache, batch(1, i, 63), 2L * i);
      add(cache, batch(2, i, 63), 2L * i + 1);
    }
    cache.markUploaded(cache.takeUploadSnapshot());
    add(cache, batch(1, 4, 63), 8);
    cache.dropUploaded(1, 3);
    assertThat(cache.firstOffset(1)).isEqualTo(3);
    assertThat(cache.read(1, 0, 10, 1 << 20)).isEmpty();
    assertThat(cache.read(1, 3, 10, 1 << 20)).extracting(StreamBatch::baseOffset).containsExactly(3L, 4L);
    assertThat(cache.firstOffset(2)).isZero();
    assertThat(cache.usedBytes()).isEqualTo(6L * size);
    cache.dropUploaded(1, 100);
    assertThat(cache.firstOffset(1)).as("the batch not uploaded stays").isEqualTo(4);
    assertThat(cache.hasUnuploaded(1)).isTrue();
    assertThat(cache.usedBytes()).isEqualTo(5L * size);
    // eviction goes on in order over what is left
    assertThat(cache.tryReserve((1 << 20) - 2L * size)).isTrue();
    assertThat(cache.firstOffset(2)).isEqualTo(3);
  }

  @Test
  void readsStartAtTheBatchHoldingTheOffsetAndRespectLimits() {
    // Goal: cache reads follow the fetch rules and return nothing for offsets not cached.
    LogCache cache = new LogCache(1 << 20);
    for (int i = 0; i < 10; i++) {
      add(cache, new StreamRecordBatch(7, 1, 100 + i * 3L, 3, ByteBuffer.allocate(10)), i);
    }
    assertThat(cache.read(7, 104, 110, 1 << 20)).extracting(StreamBatch::baseOffset).containsExactly(103L, 106L, 109L);
    assertThat(cache.read(7, 104, 200, 15)).extracting(StreamBatch::baseOffset).containsExactly(103L, 106L);
    assertThat(cache.read(7, 99, 200, 100)).isEmpty();
    assertThat(cache.read(8, 0, 200, 100)).isEmpty();
  }

  @Test
  void oversizedBatchIsAdmittedOnlyIntoAnEmptyCache() {
    // Goal: a batch larger than the cache still makes progress, alone.
    LogCache cache = new LogCache(100);
    assertThat(cache.tryReserve(500)).isTrue();
    cache.releaseReservation(500);
    add(cache, batch(1, 0, 10), 0);
    assertThat(cache.tryReserve(500)).isFalse();
  }

  @Test
  void removedStreamFreesItsBytesAndGapsAreRefused() {
    // Goal: removing a stream releases its bytes; a batch not following the cached tail is a bug and refused.
    LogCache cache = new LogCache(1 << 20);
    add(cache, batch(1, 0, 100), 0);
    add(cache, batch(2, 0, 100), 1);
    cache.removeStream(1);
    assertThat(cache.usedBytes()).isEqualTo(batch(2, 0, 100).encodedBytes());
    assertThat(cache.unuploadedBytes()).isEqualTo(batch(2, 0, 100).encodedBytes());
    assertThat(cache.takeUploadSnapshot().entriesByStream()).containsOnlyKeys(2L);
    cache.tryReserve(200);
    assertThatThrownBy(() -> cache.put(batch(2, 5, 10), 2)).isInstanceOf(IllegalStateException.class);
  }
}
