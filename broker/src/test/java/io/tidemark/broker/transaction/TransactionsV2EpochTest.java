package io.tidemark.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tidemark.broker.partition.LogSettings;
import io.tidemark.broker.partition.MemoryStreamStore;
import io.tidemark.broker.partition.PartitionLocation;
import io.tidemark.broker.partition.PartitionLog;
import io.tidemark.broker.partition.Partitions;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.record.RecordBatches;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Goal: transactions V2 at the end of a producer id's epochs, as Kafka's coordinator: the EndTxn
 * that reaches {@code Short.MAX_VALUE - 1} writes its markers at {@code Short.MAX_VALUE} and hands
 * the transactional id a new producer id at epoch 0; a retry of that EndTxn by the old producer is
 * answered with the new one; the old producer id is fenced afterwards. The coordinator runs on a
 * real {@code __transaction_state} partition (in memory) whose first record is put near the limit.
 */
class TransactionsV2EpochTest {

  private static final TopicPartition DATA = new TopicPartition("data", 0);
  private final MemoryStreamStore store = new MemoryStreamStore(64L << 20);
  private final AtomicLong producerIds = new AtomicLong(1000);
  private final List<String> markers = new CopyOnWriteArrayList<>();
  private PartitionLog stateLog;
  private TransactionCoordinator coordinator;

  @BeforeEach
  void start() throws Exception {
    long data = store.createStream(Map.of()).join();
    long meta = store.createStream(Map.of()).join();
    stateLog = PartitionLog.open(store, new PartitionLocation(new TopicPartition(TransactionLog.TOPIC, 0), Uuid.randomUuid(), data,
        meta), 3, new LogSettings(1 << 20, false), Time.SYSTEM, p -> { }).join();
    // the id's producer 7 is two bumps away from the last epoch
    TransactionMetadata seeded = new TransactionMetadata("near-the-end", 7, (short) (Short.MAX_VALUE - 3), (short) -1, 60_000,
        TransactionState.COMPLETE_COMMIT, Set.of(), -1, 0);
    stateLog.append(RecordBatches.internalBatch(0, List.<byte[][]>of(TransactionLog.record(seeded)))).get(30, TimeUnit.SECONDS);
    Partitions partitions = new Partitions();
    partitions.put(stateLog);
    coordinator = new TransactionCoordinator(new TransactionCoordinator.Settings(60_000, 60_000, 100), Time.SYSTEM,
        new TransactionLog(partitions, 1, Time.SYSTEM), producerIds::incrementAndGet,
        (tp, pid, epoch, coordinatorEpoch, commit) -> {
          markers.add(tp + " " + pid + "/" + epoch + (commit ? " commit" : " abort"));
          return CompletableFuture.completedFuture(Errors.NONE);
        }, topic -> true);
    coordinator.load().get(30, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    coordinator.close();
    stateLog.close().get(30, TimeUnit.SECONDS);
    store.close();
  }

  private long[] commitOne(long pid, short epoch) throws Exception {
    coordinator.addPartitions("near-the-end", pid, epoch, Set.of(DATA), true).get(30, TimeUnit.SECONDS);
    long[] next = coordinator.endTransaction("near-the-end", pid, epoch, true, true).get(30, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(30)).until(() -> state().state().equals("CompleteCommit") && state().producerId() == next[0]
        && state().producerEpoch() == next[1]);
    return next;
  }

  private TransactionCoordinator.View state() throws Exception {
    return coordinator.describe(List.of("near-the-end")).get(30, TimeUnit.SECONDS).get("near-the-end");
  }

  @Test
  void theLastEpochRotatesToANewProducerIdAndARetryIsAnsweredWithIt() throws Exception {
    short nearEnd = (short) (Short.MAX_VALUE - 3);
    assertThat(commitOne(7, nearEnd)).containsExactly(7, Short.MAX_VALUE - 2);
    assertThat(commitOne(7, (short) (Short.MAX_VALUE - 2))).containsExactly(7, Short.MAX_VALUE - 1);
    // Short.MAX_VALUE - 1 is the last epoch a client holds: its EndTxn moves the id to a new producer id
    long[] rotated = commitOne(7, (short) (Short.MAX_VALUE - 1));
    assertThat(rotated).containsExactly(1001, 0);
    assertThat(markers).last().isEqualTo(DATA + " 7/" + Short.MAX_VALUE + " commit");
    assertThat(state().producerId()).isEqualTo(1001);
    assertThat(state().producerEpoch()).isZero();
    // the old producer retries the EndTxn it did not hear back from: the same answer, nothing written
    int markersBefore = markers.size();
    assertThat(coordinator.endTransaction("near-the-end", 7, (short) (Short.MAX_VALUE - 1), true, true).get(30, TimeUnit.SECONDS))
        .containsExactly(1001, 0);
    assertThat(markers).hasSize(markersBefore);
    // the new producer id carries on; the old one is gone
    assertThat(commitOne(1001, (short) 0)).containsExactly(1001, 1);
    assertThatThrownBy(() -> coordinator.addPartitions("near-the-end", 7, (short) (Short.MAX_VALUE - 1), Set.of(DATA), true)
        .get(30, TimeUnit.SECONDS)).satisfies(e -> assertThat(ErrorMapping.toErrors(e)).isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING));
    // the rotation is durable: a coordinator loading the log again sees the new producer
    coordinator.close();
    Partitions partitions = new Partitions();
    partitions.put(stateLog);
    coordinator = new TransactionCoordinator(new TransactionCoordinator.Settings(60_000, 60_000, 100), Time.SYSTEM,
        new TransactionLog(partitions, 1, Time.SYSTEM), producerIds::incrementAndGet,
        (tp, pid, epoch, coordinatorEpoch, commit) -> CompletableFuture.completedFuture(Errors.NONE), topic -> true);
    coordinator.load().get(30, TimeUnit.SECONDS);
    assertThat(state().producerId()).isEqualTo(1001);
    assertThat(state().producerEpoch()).isEqualTo((short) 1);
  }
}
