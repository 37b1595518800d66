package io.tidemark.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/**
 * Goal: the share-partition state machine alone: acquisition bounds, all-or-nothing
 * acknowledgement, release and lock expiry up to the delivery limit, SPSO movement, and the
 * persisted snapshot restoring the same state (acquired records come back available).
 */
class SharePartitionTest {

  private static final SharePartition.Limits LIMITS = new SharePartition.Limits(1000, 3, 100);
  private static final List<long[]> TEN = List.<long[]>of(new long[] {0, 4}, new long[] {5, 9});

  @Test
  void acquiresAtMostMaxRecordsAndNeverTheSameRecordTwice() {
    SharePartition p = SharePartition.starting(0);
    List<SharePartition.Acquired> a = p.acquire("m1", TEN, 4, 0, LIMITS);
    assertThat(a).containsExactly(new SharePartition.Acquired(0, 3, 1));
    List<SharePartition.Acquired> b = p.acquire("m2", TEN, 100, 0, LIMITS);
    assertThat(b).containsExactly(new SharePartition.Acquired(4, 9, 1));
    assertThat(p.acquire("m3", TEN, 100, 0, LIMITS)).isEmpty();
    assertThat(p.endOffset()).isEqualTo(10);
  }

  @Test
  void acknowledgementIsAllOrNothingAndOnlyByTheHolder() {
    SharePartition p = SharePartition.starting(0);
    p.acquire("m1", TEN, 5, 0, LIMITS);
    p.acquire("m2", TEN, 5, 0, LIMITS);
    // one batch of m1's, one of m2's: refused whole
    assertThat(p.acknowledge("m1", List.of(new SharePartition.Ack(0, 1, List.of((byte) 1)), new SharePartition.Ack(5, 5, List.of((byte) 1))),
        0, LIMITS)).isEqualTo(Errors.INVALID_RECORD_STATE);
    assertThat(p.startOffset()).isZero();
    assertThat(p.acknowledge("m1", List.of(new SharePartition.Ack(0, 4, List.of((byte) 1, (byte) 1, (byte) 3, (byte) 1, (byte) 2))),
        0, LIMITS)).isEqualTo(Errors.NONE);
    assertThat(p.startOffset()).as("0,1 accepted, 2 rejected, 3 accepted, 4 released").isEqualTo(4);
    assertThat(p.acknowledge("m1", List.of(new SharePartition.Ack(0, 1, List.of((byte) 1, (byte) 1, (byte) 1))), 0, LIMITS))
        .isEqualTo(Errors.INVALID_REQUEST);
  }

  @Test
  void releasedAndExpiredRecordsComeBackUntilTheDeliveryLimit() {
    SharePartition p = SharePartition.starting(0);
    List<long[]> one = List.<long[]>of(new long[] {0, 0});
    for (int delivery = 1; delivery <= 3; delivery++) {
      assertThat(p.acquire("m", one, 10, delivery * 10_000L, LIMITS)).containsExactly(new SharePartition.Acquired(0, 0, delivery));
      if (delivery % 2 == 1) {
        assertThat(p.expireLocks(delivery * 10_000L + 999, LIMITS)).isFalse();
        assertThat(p.expireLocks(delivery * 10_000L + 1000, LIMITS)).isTrue();
      } else {
        assertThat(p.acknowledge("m", List.of(new SharePartition.Ack(0, 0, List.of((byte) 2))), 0, LIMITS)).isEqualTo(Errors.NONE);
      }
    }
    assertThat(p.startOffset()).as("archived after the third delivery").isEqualTo(1);
    assertThat(p.acquire("m", one, 10, 0, LIMITS)).isEmpty();
  }

  @Test
  void renewExtendsTheLock() {
    SharePartition p = SharePartition.starting(0);
    p.acquire("m", TEN, 1, 0, LIMITS);
    assertThat(p.acknowledge("m", List.of(new SharePartition.Ack(0, 0, List.of((byte) 4))), 900, LIMITS)).isEqualTo(Errors.NONE);
    assertThat(p.expireLocks(1000, LIMITS)).isFalse();
    assertThat(p.nextLockDeadlineMs()).isEqualTo(1900);
  }

  @Test
  void theWindowIsBoundedByTheRecordLockLimit() {
    SharePartition p = SharePartition.starting(0);
    SharePartition.Limits small = new SharePartition.Limits(1000, 3, 4);
    assertThat(p.acquire("m", TEN, 100, 0, small)).containsExactly(new SharePartition.Acquired(0, 3, 1));
    assertThat(p.acquire("m", TEN, 100, 0, small)).isEmpty();
  }

  @Test
  void snapshotRestoresStateWithAcquiredRecordsAvailable() {
    SharePartition p = SharePartition.starting(0);
    p.acquire("m", TEN, 10, 0, LIMITS);
    p.acknowledge("m", List.of(new SharePartition.Ack(0, 2, List.of((byte) 1)), new SharePartition.Ack(5, 5, List.of((byte) 3))), 0, LIMITS);
    SharePartition r = SharePartition.restore(p.snapshot());
    assertThat(r.startOffset()).isEqualTo(3);
    assertThat(r.endOffset()).isEqualTo(10);
    assertThat(r.acquire("m2", TEN, 100, 0, LIMITS)).containsExactly(new SharePartition.Acquired(3, 4, 2),
        new SharePartition.Acquired(6, 9, 2));
  }
}
