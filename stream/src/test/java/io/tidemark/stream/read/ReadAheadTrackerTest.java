package io.tidemark.stream.read;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ReadAheadTrackerTest {

  private static final long KIB = 1024;
  private static final long MIB = 1024 * KIB;
  private final AtomicLong clock = new AtomicLong(1_000);
  private final ReadAheadTracker tracker = new ReadAheadTracker(512 * KIB, 32 * MIB, 100, 60_000, clock::get);

  @Test
  void sequentialReaderGrowsItsWindowUpToTheMaximum() {
    // Goal: each read continuing where the last stopped doubles the window from 512 KiB to the 32 MiB cap.
    List<Long> windows = new ArrayList<>();
    for (long offset = 0; offset < 1000; offset += 100) {
      windows.add(tracker.onRead(7, offset, offset + 100));
    }
    assertThat(windows).containsExactly(0L, 512 * KIB, MIB, 2 * MIB, 4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB, 32 * MIB,
        32 * MIB);
  }

  @Test
  void randomAccessGetsNoReadAheadAndAJumpResetsTheWindow() {
    // Goal: reads at unrelated offsets never read ahead; a sequential reader that jumps starts over.
    for (int i = 0; i < 20; i++) {
      long start = (i * 7919L) % 10_000 * 10;
      assertThat(tracker.onRead(1, start, start + 3)).isZero();
    }
    tracker.onRead(2, 0, 10);
    tracker.onRead(2, 10, 20);
    assertThat(tracker.onRead(2, 20, 30)).isEqualTo(MIB);
    assertThat(tracker.onRead(2, 5_000, 5_010)).isZero();
    assertThat(tracker.onRead(2, 5_010, 5_020)).isEqualTo(512 * KIB);
  }

  @Test
  void streamsAndPositionsAreTrackedSeparately() {
    // Goal: two interleaved sequential readers of one stream, and a reader of another stream, each keep their own window.
    tracker.onRead(1, 0, 10);
    tracker.onRead(1, 1000, 1010);
    tracker.onRead(2, 0, 10);
    assertThat(tracker.onRead(1, 10, 20)).isEqualTo(512 * KIB);
    assertThat(tracker.onRead(1, 1010, 1020)).isEqualTo(512 * KIB);
    assertThat(tracker.onRead(1, 20, 30)).isEqualTo(MIB);
    assertThat(tracker.onRead(2, 10, 20)).isEqualTo(512 * KIB);
  }

  @Test
  void idleReaderIsForgotten() {
    // Goal: a reader idle past the idle time restarts with no read-ahead (time from the injected clock).
    tracker.onRead(1, 0, 10);
    assertThat(tracker.onRead(1, 10, 20)).isEqualTo(512 * KIB);
    clock.addAndGet(60_001);
    assertThat(tracker.onRead(1, 20, 30)).isZero();
  }

  @Test
  void remembersAtMostMaxReaders() {
    // Goal: the reader table is bounded; the least recently used reader is dropped first.
    for (long stream = 0; stream < 500; stream++) {
      tracker.onRead(stream, 0, 10);
      assertThat(tracker.readers()).isLessThanOrEqualTo(100);
    }
    assertThat(tracker.onRead(0, 10, 20)).isZero();
    assertThat(tracker.onRead(499, 10, 20)).isEqualTo(512 * KIB);
  }
}
