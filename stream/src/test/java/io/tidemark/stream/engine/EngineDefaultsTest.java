package io.tidemark.stream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.wal.WalConfig;
import org.junit.jupiter.api.Test;

/**
 * Goal: the default bounds of the engine and the WAL fit together (see {@link StreamEngine}'s
 * "what is bounded"), so that a default node meets a full cache before a full WAL, never holds
 * more in the WAL's queue than the cache can reserve, and uploads before the cache is full.
 */
class EngineDefaultsTest {

  @Test
  void defaultBoundsOfCacheWalQueueAndWaitingAppendsAreConsistent() {
    long cache = StreamEngineConfig.CACHE_SIZE_BYTES.defaultValue();
    long pending = WalConfig.MAX_PENDING_BYTES.defaultValue();
    long capacity = WalConfig.CAPACITY_BYTES.defaultValue();
    long waiting = StreamEngineConfig.APPEND_WAITING_MAX_BYTES.defaultValue();
    long threshold = StreamEngineConfig.UPLOAD_THRESHOLD_BYTES.defaultValue();

    assertThat(pending).as("every record queued in the WAL holds a cache reservation").isLessThanOrEqualTo(cache);
    assertThat(capacity).as("the WAL's live part (unuploaded + pending) fits before the cache fills")
        .isGreaterThanOrEqualTo(cache + pending);
    assertThat(threshold).as("an upload starts well before the cache is full").isLessThanOrEqualTo(cache / 2);
    assertThat(waiting).as("appends held beyond the cache are a fraction of it").isLessThanOrEqualTo(cache);
    // and the engine accepts them together
    assertThat(StreamEngineConfig.defaults().cacheSizeBytes()).isEqualTo(cache);
  }
}
