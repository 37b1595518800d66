package io.tidemark.stream.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.api.Stream;
import io.tidemark.stream.object.StreamBatchCodec;
import io.tidemark.stream.object.StreamRecordBatch;
import io.tidemark.stream.wal.BlockWalOptions;
import io.tidemark.stream.wal.BlockWriteAheadLog;
import io.tidemark.stream.wal.WalRecord;
import io.tidemark.stream.wal.WriteAheadLog;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins the engine's part of the produce path (see {@code ProduceHandler}'s class comment for the
 * whole count): the bytes handed over with {@link Stream#appendOwned} reach the WAL write without
 * a copy (the stream batch's header and the payload go to the WAL as two parts, never joined), the
 * block WAL copies them once into its aligned buffer, and the thread hand-offs from the caller to
 * the acknowledgement are exactly: engine loop, WAL writer, WAL syncer, engine loop, ack thread.
 */
class ProducePathTest {

  @TempDir
  Path dir;

  private final EngineFixture fixture = new EngineFixture();

  @AfterEach
  void tearDown() {
    fixture.close();
  }

  /** A WAL that records what reached it (which parts, on which thread) and on which thread each write completed. */
  private static final class RecordingWal implements WriteAheadLog {
    final WriteAheadLog delegate;
    final List<ByteBuffer[]> appends = new CopyOnWriteArrayList<>();
    final List<String> appendThreads = new CopyOnWriteArrayList<>();
    final List<String> completionThreads = new CopyOnWriteArrayList<>();
    /** Appends reach the delegate once this completes (so that a test can register on the future first). */
    volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);

    RecordingWal(WriteAheadLog delegate) {
      this.delegate = delegate;
    }

    @Override
    public Iterator<WalRecord> recover() {
      return delegate.recover();
    }

    @Override
    public void start() {
      delegate.start();
    }

    @Override
    public CompletableFuture<Long> append(ByteBuffer record) {
      appends.add(new ByteBuffer[] {record});
      appendThreads.add(Thread.currentThread().getName());
      return delegate.append(record).whenComplete((v, e) -> completionThreads.add(Thread.currentThread().getName()));
    }

    @Override
    public CompletableFuture<Long> append(ByteBuffer head, ByteBuffer body) {
      appends.add(new ByteBuffer[] {head, body});
      appendThreads.add(Thread.currentThread().getName());
      return gate.thenCompose(x -> delegate.append(head, body))
          .whenComplete((v, e) -> completionThreads.add(Thread.currentThread().getName()));
    }

    @Override
    public CompletableFuture<Void> trim(long walOffset) {
      return delegate.trim(walOffset);
    }

    @Override
    public boolean trimWanted() {
      return delegate.trimWanted();
    }

    @Override
    public boolean healthy() {
      return delegate.healthy();
    }

    @Override
    public void close() {
      delegate.close();
    }
  }

  private BlockWriteAheadLog blockWal() {
    return new BlockWriteAheadLog(new BlockWalOptions(dir.resolve("wal.log"), 4L << 20, false, 0, 256 * 1024, 1, 1,
        Clock.systemUTC()));
  }

  /** A request frame as the broker holds it: a few header bytes, then the batch. */
  private static ByteBuffer batchInFrame(byte[] frame, int headerBytes) {
    for (int i = 0; i < frame.length; i++) {
      frame[i] = (byte) (i * 31 + 7);
    }
    return ByteBuffer.wrap(frame, headerBytes, frame.length - headerBytes).slice();
  }

  @Test
  void ownedBytesReachTheBlockWalWriteWithoutACopyAndAcrossFiveHandOffs() throws Exception {
    // Goal: the engine adds no copy to an owned batch that fills its frame (the WAL gets the caller's
    // very array, next to a 37-byte codec header, and writes both into its aligned buffer), the
    // record read back is exactly the encoded batch, and the hand-offs are the five named above.
    RecordingWal wal = new RecordingWal(blockWal());
    StreamEngine engine = fixture.start(EngineFixture.smallConfig(), wal, fixture.storage);
    Stream stream = engine.openStream(engine.createStream(Map.of()).join(), 1).join();
    byte[] frame = new byte[4096 + 100];
    ByteBuffer payload = batchInFrame(frame, 100);
    AtomicReference<String> ackThread = new AtomicReference<>();
    wal.gate = new CompletableFuture<>(); // held until the reader has registered on the append's future
    AtomicReference<CompletableFuture<Long>> appended = new AtomicReference<>();
    Thread reader = new Thread(() -> appended.set(stream.appendOwned(3, payload)
        .whenComplete((v, e) -> ackThread.set(Thread.currentThread().getName()))), "socket-reader");
    reader.start();
    reader.join(30_000);
    wal.gate.complete(null);
    assertThat(appended.get().get()).isZero();

    assertThat(wal.appends).hasSize(1);
    ByteBuffer[] parts = wal.appends.getFirst();
    assertThat(parts).hasSize(2);
    assertThat(parts[0].remaining()).isEqualTo(StreamBatchCodec.HEADER_BYTES);
    assertThat(parts[1].array()).isSameAs(frame); // no copy between the caller's frame and the WAL write
    assertThat(parts[1].remaining()).isEqualTo(4096);
    // the thread hand-offs from the caller to the acknowledgement
    assertThat(wal.appendThreads).containsExactly("tidemark-engine-loop-" + engine.node().nodeId());
    assertThat(wal.completionThreads).containsExactly("tidemark-wal-syncer"); // the writer thread wrote it before
    assertThat(ackThread.get()).isEqualTo("tidemark-engine-ack-" + engine.node().nodeId());

    // the block WAL wrote header and payload as one record, byte-identical to the joined encoding
    engine.halt();
    BlockWriteAheadLog reopened = blockWal();
    List<WalRecord> records = new ArrayList<>();
    reopened.recover().forEachRemaining(records::add);
    reopened.close();
    assertThat(records).hasSize(1);
    StreamRecordBatch expected = new StreamRecordBatch(stream.streamId(), 1, 0, 3, payload);
    assertThat(records.getFirst().payload()).isEqualTo(StreamBatchCodec.encode(expected));
  }

  @Test
  void aBorrowedOrSmallSliceIsCopiedOnceAndNeverJoined() {
    // Goal: append() (the caller keeps its buffer) copies once; an owned batch that is a small part of
    // a large array is copied too (keeping it would pin the whole array in the cache); neither is
    // joined with its header before the WAL.
    RecordingWal wal = new RecordingWal(new io.tidemark.stream.wal.MemoryWriteAheadLog());
    StreamEngine engine = fixture.start(EngineFixture.smallConfig(), wal, fixture.storage);
    Stream stream = engine.openStream(engine.createStream(Map.of()).join(), 1).join();
    byte[] borrowed = new byte[1000];
    stream.append(1, batchInFrame(borrowed, 0)).join();
    byte[] bigFrame = new byte[8000];
    ByteBuffer small = batchInFrame(bigFrame, 7000);
    stream.appendOwned(1, small).join();
    byte[] almostWhole = new byte[900];
    stream.appendOwned(1, batchInFrame(almostWhole, 100)).join(); // 100 spare bytes <= 800 / 8: kept

    assertThat(wal.appends).hasSize(3).allSatisfy(parts -> assertThat(parts).hasSize(2));
    assertThat(wal.appends.get(0)[1].array()).isNotSameAs(borrowed).hasSize(1000);
    assertThat(wal.appends.get(1)[1].array()).isNotSameAs(bigFrame).hasSize(1000);
    assertThat(wal.appends.get(2)[1].array()).isSameAs(almostWhole);
    assertThat(EngineStream.keepsWithoutCopy(ByteBuffer.wrap(bigFrame, 7000, 1000).slice())).isFalse();
    assertThat(EngineStream.keepsWithoutCopy(ByteBuffer.allocateDirect(10))).isFalse();
  }
}
