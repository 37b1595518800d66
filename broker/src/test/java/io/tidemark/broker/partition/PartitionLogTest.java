package io.tidemark.broker.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.record.BatchRejectedException;
import io.tidemark.broker.record.KeyValue;
import io.tidemark.broker.record.ProducedBatch;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.stream.api.Stream;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Goal: a partition on streams assigns dense offsets, enforces producer sequences, and keeps its state across reopen and crash. */
class PartitionLogTest {

  private MemoryStreamStore store;
  private PartitionLocation location;
  private static final LogSettings SETTINGS = new LogSettings(1 << 20, false);

  @BeforeEach
  void setUp() {
    store = new MemoryStreamStore(1 << 30);
    long data = store.createStream(Map.of()).join();
    long meta = store.createStream(Map.of()).join();
    location = new PartitionLocation(new TopicPartition("t", 0), Uuid.randomUuid(), data, meta);
  }

  private PartitionLog open(int epoch) {
    return PartitionLog.open(store, location, epoch, SETTINGS, Time.SYSTEM, p -> {}).join();
  }

  private static ProducedBatch idempotent(long pid, short epoch, int seq, int count) {
    SimpleRecord[] records = new SimpleRecord[count];
    for (int i = 0; i < count; i++) {
      records[i] = new SimpleRecord(("v" + (seq + i)).getBytes());
    }
    return RecordBatches.validateProduced(MemoryRecords.withIdempotentRecords(Compression.NONE, pid, epoch, seq, records),
        (short) 9, 1 << 20);
  }

  private static Throwable cause(Runnable r) {
    try {
      r.run();
      return null;
    } catch (RuntimeException e) {
      return e.getCause() != null ? e.getCause() : e;
    }
  }

  private static ProducedBatch transactional(long pid, short epoch, int seq, int count) {
    SimpleRecord[] records = new SimpleRecord[count];
    for (int i = 0; i < count; i++) {
      records[i] = new SimpleRecord(("t" + (seq + i)).getBytes());
    }
    return RecordBatches.validateProduced(MemoryRecords.withTransactionalRecords(Compression.NONE, pid, epoch, seq, records),
        (short) 9, 1 << 20);
  }

  @Test
  void lastStableOffsetAndAbortedTransactionsSurviveReopenAndReplay() {
    // Goal: the LSO stops at the oldest open transaction, markers end transactions, the aborted index answers
    // read_committed, and all of it comes back after a clean reopen (snapshot) and after a crash (replay).
    PartitionLog log = open(0);
    log.append(transactional(1, (short) 0, 0, 1)).join();                 // 0: txn of 1 (committed)
    log.appendMarker(1, (short) 0, 0, true).join();                        // 1
    log.append(transactional(1, (short) 0, 1, 1)).join();                 // 2: txn of 1 (aborted)
    log.append(transactional(1, (short) 0, 2, 4)).join();                 // 3-6
    log.appendMarker(1, (short) 0, 0, false).join();                       // 7
    log.append(transactional(2, (short) 0, 0, 1)).join();                 // 8: txn of 2 (open)
    log.append(idempotent(3, (short) 0, 0, 1)).join();                    // 9: not transactional
    assertThat(log.lastStableOffset()).isEqualTo(8);
    assertThat(log.highWatermark()).isEqualTo(10);
    assertThat(log.abortedTransactions(0, 10)).containsExactly(new long[] {1, 2});
    assertThat(log.readCommitted(0, 1 << 20).join().batches()).hasSize(5); // 0, 1, 2, 3-6, 7
    assertThat(log.readCommittedOnly(0, 1 << 20).join().batches()).hasSize(3); // the two aborted batches left out
    Throwable stale = cause(() -> log.appendMarker(1, (short) 0, 0, true).join());                 // 10
    assertThat(stale).isNull(); // epoch 0 equals the producer's: a retried marker is written again
    Throwable fenced = cause(() -> log.appendMarker(2, (short) 0, -5, false).join());
    assertThat(((PartitionException) fenced).outcome()).isEqualTo(PartitionException.Outcome.COORDINATOR_FENCED);
    log.close().join();

    PartitionLog reopened = open(1);
    assertThat(reopened.lastStableOffset()).isEqualTo(8);
    assertThat(reopened.abortedTransactions(0, 11)).containsExactly(new long[] {1, 2});
    reopened.appendMarker(2, (short) 0, 1, true).join();                   // 11
    assertThat(reopened.lastStableOffset()).isEqualTo(12);
    assertThat(((PartitionException) cause(() -> reopened.appendMarker(2, (short) 0, 0, true).join())).outcome())
        .isEqualTo(PartitionException.Outcome.COORDINATOR_FENCED);

    // a crash: reopen without the close snapshot, so everything after the opening snapshot is replayed
    PartitionLog crashed = open(2);
    assertThat(crashed.lastStableOffset()).isEqualTo(12);
    assertThat(crashed.abortedTransactions(0, 12)).containsExactly(new long[] {1, 2});
  }

  @Test
  void sequencesAreCheckedAndRetriesGetTheirOriginalOffset() {
    PartitionLog log = open(0);
    assertThat(log.append(idempotent(7, (short) 0, 0, 3)).join().baseOffset()).isEqualTo(0);
    assertThat(log.append(idempotent(7, (short) 0, 3, 2)).join().baseOffset()).isEqualTo(3);
    AppendResult retry = log.append(idempotent(7, (short) 0, 0, 3)).join();
    assertThat(retry.duplicate()).isTrue();
    assertThat(retry.baseOffset()).isEqualTo(0);
    assertThat(log.highWatermark()).isEqualTo(5);

    Throwable gap = cause(() -> log.append(idempotent(7, (short) 0, 9, 1)).join());
    assertThat(gap).isInstanceOf(PartitionException.class);
    assertThat(((PartitionException) gap).outcome()).isEqualTo(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE);

    assertThat(log.append(idempotent(7, (short) 1, 0, 1)).join().baseOffset()).isEqualTo(5);
    Throwable stale = cause(() -> log.append(idempotent(7, (short) 0, 5, 1)).join());
    assertThat(((PartitionException) stale).outcome()).isEqualTo(PartitionException.Outcome.INVALID_PRODUCER_EPOCH);
    assertThat(log.highWatermark()).isEqualTo(6);
  }

  @Test
  void aProducersBatchesAreAppendedInArrivalOrderWhicheverVerificationFinishesFirst() {
    // Goal: pipelined requests of one producer whose KIP-890 verifications finish out of order still reach the
    // sequence check in the order they arrived; other producers are not held up; and a later batch whose
    // predecessor was refused is refused as out of order (transactions V2: an unknown producer starts at 0).
    PartitionLog log = open(0);
    CompletableFuture<Object> firstVerified = new CompletableFuture<>();
    CompletableFuture<AppendResult> first = log.appendInOrder(7, firstVerified,
        g -> log.append(transactional(7, (short) 0, 0, 3), g, true));
    Object guard = log.startVerification(7, (short) 0);
    CompletableFuture<AppendResult> second = log.appendInOrder(7, CompletableFuture.completedFuture(guard),
        g -> log.append(transactional(7, (short) 0, 3, 2), g, true));
    assertThat(second).isNotDone(); // verified, but behind the first batch
    assertThat(log.appendInOrder(8, CompletableFuture.completedFuture(PartitionLog.UNVERIFIED),
        g -> log.append(idempotent(8, (short) 0, 0, 1), g)).join().baseOffset()).isEqualTo(0);
    firstVerified.complete(guard);
    assertThat(first.join().baseOffset()).isEqualTo(1);
    assertThat(second.join().baseOffset()).isEqualTo(4);

    CompletableFuture<Object> refusedVerification = new CompletableFuture<>();
    CompletableFuture<AppendResult> refused = log.appendInOrder(9, refusedVerification,
        g -> log.append(transactional(9, (short) 0, 0, 5), g, true));
    Object guard9 = log.startVerification(9, (short) 0);
    CompletableFuture<AppendResult> next = log.appendInOrder(9, CompletableFuture.completedFuture(guard9),
        g -> log.append(transactional(9, (short) 0, 5, 5), g, true));
    refusedVerification.completeExceptionally(new PartitionException(PartitionException.Outcome.INVALID_TXN_STATE, "not added"));
    assertThat(((PartitionException) cause(refused::join)).outcome()).isEqualTo(PartitionException.Outcome.INVALID_TXN_STATE);
    assertThat(((PartitionException) cause(next::join)).outcome()).isEqualTo(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE);
    assertThat(log.highWatermark()).isEqualTo(6);
    // a transactions V1 client (no epoch bump per transaction) starts at 0 too on a partition that forgot no producer
    Object guard10 = log.startVerification(10, (short) 0);
    Throwable v1Gap = cause(() -> log.append(transactional(10, (short) 0, 5, 1), guard10, false).join());
    assertThat(((PartitionException) v1Gap).outcome()).isEqualTo(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE);
    assertThat(log.append(transactional(10, (short) 0, 0, 1), guard10, false).join().baseOffset()).isEqualTo(6);
  }

  @Test
  void anUnknownProducerStartsAtZeroUntilThePartitionForgetsAProducer() {
    // Goal: a later batch of a producer whose first batches were refused (they reached a new leader before it served the
    // partition) is not appended ahead of them; that holds across a clean reopen and a crash; once the partition has
    // forgotten a producer (full table) an unknown one may start anywhere again, as in Kafka.
    PartitionLog log = open(0);
    Throwable ahead = cause(() -> log.append(idempotent(31, (short) 0, 5, 5)).join());
    assertThat(((PartitionException) ahead).outcome()).isEqualTo(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE);
    assertThat(log.highWatermark()).isZero();
    assertThat(log.append(idempotent(31, (short) 0, 0, 5)).join().baseOffset()).isEqualTo(0);
    assertThat(log.append(idempotent(31, (short) 0, 5, 5)).join().baseOffset()).isEqualTo(5);
    log.close().join();

    PartitionLog reopened = open(1);
    assertThat(((PartitionException) cause(() -> reopened.append(idempotent(32, (short) 0, 3, 1)).join())).outcome())
        .isEqualTo(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE);
    assertThat(reopened.append(idempotent(32, (short) 0, 0, 1)).join().baseOffset()).isEqualTo(10);
    // no close: the next holder replays the data written after the open's snapshot
    PartitionLog afterCrash = open(2);
    assertThat(((PartitionException) cause(() -> afterCrash.append(idempotent(33, (short) 0, 7, 1)).join())).outcome())
        .isEqualTo(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE);
    assertThat(afterCrash.append(idempotent(32, (short) 0, 1, 1)).join().baseOffset()).isEqualTo(11);

    for (long pid = 1_000; pid < 1_000 + PartitionLog.MAX_PRODUCERS; pid++) {
      afterCrash.append(idempotent(pid, (short) 0, 0, 1)).join();
    }
    // producer 31 was the least recently used: forgotten, so it and any new producer may continue at any sequence
    assertThat(afterCrash.append(idempotent(31, (short) 0, 10, 1)).join().duplicate()).isFalse();
    assertThat(afterCrash.append(idempotent(34, (short) 0, 7, 1)).join().duplicate()).isFalse();
    afterCrash.close().join();
    PartitionLog last = open(3);
    assertThat(last.append(idempotent(35, (short) 0, 9, 1)).join().duplicate()).isFalse();
  }

  @Test
  void producerStateAndEpochHistorySurviveACleanReopen() {
    PartitionLog first = open(0);
    first.append(idempotent(11, (short) 0, 0, 4)).join();
    first.close().join();
    PartitionLog second = open(1);
    AppendResult retry = second.append(idempotent(11, (short) 0, 0, 4)).join();
    assertThat(retry.duplicate()).isTrue();
    assertThat(second.append(idempotent(11, (short) 0, 4, 1)).join().baseOffset()).isEqualTo(4);
    assertThat(second.endOffsetForEpoch(0)).containsExactly(0, 4);
    assertThat(second.endOffsetForEpoch(1)).containsExactly(1, 5);
    assertThat(second.leaderEpoch()).isEqualTo(1);
  }

  @Test
  void producerStateIsRebuiltFromDataAfterACrash() {
    PartitionLog crashed = open(0);
    crashed.append(idempotent(21, (short) 0, 0, 2)).join();
    crashed.append(idempotent(21, (short) 0, 2, 2)).join();
    // no close: a new holder opens with a newer epoch, fencing the old one
    PartitionLog next = open(1);
    assertThat(next.append(idempotent(21, (short) 0, 2, 2)).join().duplicate()).isTrue();
    Throwable gap = cause(() -> next.append(idempotent(21, (short) 0, 5, 1)).join());
    assertThat(((PartitionException) gap).outcome()).isEqualTo(PartitionException.Outcome.OUT_OF_ORDER_SEQUENCE);
    Throwable fenced = cause(() -> crashed.append(idempotent(22, (short) 0, 0, 1)).join());
    assertThat(fenced).isInstanceOf(PartitionException.class);
    assertThat(((PartitionException) fenced).outcome()).isEqualTo(PartitionException.Outcome.NOT_LEADER);
  }

  @Test
  void readsReturnWholeBatchesAndRespectTheLogStart() throws Exception {
    PartitionLog log = open(0);
    for (int i = 0; i < 5; i++) {
      log.append(idempotent(31, (short) 0, i * 2, 2)).join();
    }
    ReadResult r = log.read(3, 1).join();
    assertThat(r.batches()).hasSize(1); // at least one batch even over the limit
    assertThat(RecordBatches.header(r.batches().get(0)).baseOffset()).isEqualTo(2);
    assertThat(log.deleteRecordsBefore(4).join()).isEqualTo(4);
    assertThatThrownBy(() -> log.read(1, 1000).get()).isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(PartitionException.class);
    assertThat(log.read(10, 1000).join().batches()).isEmpty();
  }

  @Test
  void damagedBatchesAreSkippedOnReopenAndFailOnlyFetchesOfTheirRange() {
    // Goal: bad bytes in the data stream (a torn batch, a CRC mismatch) never stop a reopen; only their range errors.
    PartitionLog crashed = open(0);
    crashed.append(idempotent(51, (short) 0, 0, 2)).join();
    crashed.append(idempotent(51, (short) 0, 2, 2)).join();
    Stream data = store.stream(location.dataStreamId()).orElseThrow();
    data.append(2, ByteBuffer.wrap(new byte[] {1, 2, 3})).join(); // offsets 4..5: not a batch at all
    ByteBuffer flipped = idempotent(99, (short) 0, 0, 1).buffer();
    RecordBatches.assignOffsets(flipped, 6, 0, -1);
    flipped.put(flipped.limit() - 1, (byte) (flipped.get(flipped.limit() - 1) ^ 0xff)); // offset 6: CRC mismatch
    data.append(1, flipped).join();

    PartitionLog log = open(1); // replays everything after the open-time snapshot at offset 0
    assertThat(log.damagedRanges()).containsExactly(new long[] {4, 6}, new long[] {6, 7});
    assertThat(log.read(0, 1 << 20).join().batches()).hasSize(2); // served up to the damage
    for (long offset : new long[] {4, 5, 6}) {
      Throwable damaged = cause(() -> log.read(offset, 1 << 20).join());
      assertThat(damaged).isInstanceOf(DamagedRangeException.class);
      assertThat(ErrorMapping.toErrors(damaged)).isEqualTo(Errors.CORRUPT_MESSAGE);
      assertThat(((DamagedRangeException) damaged).toOffset()).isEqualTo(offset < 6 ? 6 : 7);
    }
    PartitionLog.RecordPage skipped = log.readRecords(4, 1 << 20).join();
    assertThat(skipped.records()).isEmpty();
    assertThat(skipped.nextOffset()).isEqualTo(6);
    assertThat(log.readRecords(0, 1 << 20).join().records()).extracting(KeyValue::offset).containsExactly(0L, 1L, 2L, 3L);
    assertThat(log.append(idempotent(51, (short) 0, 2, 2)).join().duplicate()).as("producer state replayed").isTrue();
    assertThat(log.append(idempotent(51, (short) 0, 4, 1)).join().baseOffset()).isEqualTo(7);
    assertThat(log.read(7, 1 << 20).join().batches()).hasSize(1);
    assertThat(log.damagedRangesFound()).isEqualTo(2);
  }

  @Test
  void oversizedBatchIsRefusedWithoutWriting() {
    PartitionLog log = open(0);
    log.updateSettings(new LogSettings(64, false));
    Throwable big = cause(() -> log.append(idempotent(41, (short) 0, 0, 20)).join());
    assertThat(big).isInstanceOf(BatchRejectedException.class);
    assertThat(((BatchRejectedException) big).reason()).isEqualTo(BatchRejectedException.Reason.TOO_LARGE);
    assertThat(log.highWatermark()).isZero();
  }

  @Test
  void aWriteTheFullStoreRefusesLeavesThePartitionOpenAndItsRetryLandsDense() {
    // Goal: storage backpressure (the store refuses the append at once) answers a retriable BUSY, assigns no offset,
    // records no producer sequence and does not fail the partition; once space is free the same batch lands densely.
    store = new MemoryStreamStore(2_000);
    long data = store.createStream(Map.of()).join();
    long meta = store.createStream(Map.of()).join();
    location = new PartitionLocation(new TopicPartition("t", 0), Uuid.randomUuid(), data, meta);
    PartitionLog log = open(0);
    Throwable busy = null;
    int seq = 0;
    while (busy == null && seq < 1000) {
      int at = seq;
      busy = cause(() -> log.append(idempotent(51, (short) 0, at, 3)).join());
      if (busy == null) {
        seq += 3;
      }
    }
    assertThat(busy).isInstanceOf(PartitionException.class);
    assertThat(((PartitionException) busy).outcome()).isEqualTo(PartitionException.Outcome.BUSY);
    assertThat(io.tidemark.broker.protocol.ErrorMapping.toErrors(busy))
        .isEqualTo(org.apache.kafka.common.protocol.Errors.REQUEST_TIMED_OUT);
    long end = log.highWatermark();
    assertThat(end).isEqualTo(seq);

    log.deleteRecordsBefore(end).join();
    AppendResult retried = log.append(idempotent(51, (short) 0, seq, 3)).join();
    assertThat(retried.duplicate()).as("the refused batch was not recorded").isFalse();
    assertThat(retried.baseOffset()).isEqualTo(end);
    assertThat(log.highWatermark()).isEqualTo(end + 3);
  }

  @Test
  void onlyAStorageFailureCountsAsFailedForGoodNotANewerLeader() {
    // Goal: a partition fenced by a newer leader answers NOT_LEADER and is left to the lifecycle (not a failed
    // component); one whose stream stopped answers STORAGE_ERROR and reports itself failed for good (for /health).
    PartitionLog moved = open(0);
    moved.append(idempotent(61, (short) 0, 0, 1)).join();
    store.openStream(location.dataStreamId(), 1).join(); // a newer leader took the data stream
    Throwable fenced = cause(() -> moved.append(idempotent(61, (short) 0, 1, 1)).join());
    assertThat(((PartitionException) fenced).outcome()).isEqualTo(PartitionException.Outcome.NOT_LEADER);
    assertThat(moved.failedForGood()).isFalse();

    PartitionLog broken = open(2);
    store.stream(location.dataStreamId()).orElseThrow().close().join(); // the stream stopped under the partition
    Throwable stopped = cause(() -> broken.append(idempotent(62, (short) 0, 0, 1)).join());
    assertThat(((PartitionException) stopped).outcome()).isEqualTo(PartitionException.Outcome.STORAGE_ERROR);
    assertThat(broken.failedForGood()).isTrue();
  }
}
