package io.tidemark.broker.partition;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.broker.record.ProducedBatch;
import io.tidemark.broker.record.RecordBatches;
import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamStore;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;

/**
 * Pins the broker's part of the produce path (see {@code ProduceHandler}'s class comment): a
 * produced batch is validated and given its offsets in place in the request frame and handed to
 * the data stream with {@link Stream#appendOwned}, without a copy (the engine's part is pinned by
 * the stream module's {@code ProducePathTest}).
 */
class ProducePathTest {

  /** What reached the streams: the payloads and whether they were handed over. */
  private record Appended(long streamId, ByteBuffer payload, boolean owned) {}

  private final List<Appended> appended = new CopyOnWriteArrayList<>();

  private final class RecordingStore implements StreamStore {
    final MemoryStreamStore delegate = new MemoryStreamStore(1 << 30);

    @Override
    public CompletableFuture<Long> createStream(Map<String, String> tags) {
      return delegate.createStream(tags);
    }

    @Override
    public CompletableFuture<Stream> openStream(long streamId, long epoch) {
      return delegate.openStream(streamId, epoch).thenApply(RecordingStream::new);
    }

    @Override
    public Optional<Stream> stream(long streamId) {
      return delegate.stream(streamId).map(RecordingStream::new);
    }

    @Override
    public void close() {
      delegate.close();
    }
  }

  private final class RecordingStream implements Stream {
    final Stream delegate;

    RecordingStream(Stream delegate) {
      this.delegate = delegate;
    }

    @Override public long streamId() { return delegate.streamId(); }
    @Override public long epoch() { return delegate.epoch(); }
    @Override public long startOffset() { return delegate.startOffset(); }
    @Override public long nextOffset() { return delegate.nextOffset(); }

    @Override
    public CompletableFuture<Long> append(int recordCount, ByteBuffer payload) {
      appended.add(new Appended(delegate.streamId(), payload, false));
      return delegate.append(recordCount, payload);
    }

    @Override
    public CompletableFuture<Long> appendOwned(int recordCount, ByteBuffer payload) {
      appended.add(new Appended(delegate.streamId(), payload, true));
      return delegate.appendOwned(recordCount, payload);
    }

    @Override
    public CompletableFuture<FetchResult> fetch(long startOffset, long endOffset, int maxBytes) {
      return delegate.fetch(startOffset, endOffset, maxBytes);
    }

    @Override
    public CompletableFuture<Void> trim(long newStartOffset) {
      return delegate.trim(newStartOffset);
    }

    @Override
    public CompletableFuture<Void> close() {
      return delegate.close();
    }
  }

  @Test
  void aProducedBatchReachesItsStreamInPlaceInTheRequestFrame() {
    // Goal: between the request frame (the connection's one heap copy) and the stream there is no
    // copy: the stream gets a slice of the frame's own array, handed over, with the offsets written in.
    RecordingStore store = new RecordingStore();
    long data = store.createStream(Map.of()).join();
    long meta = store.createStream(Map.of()).join();
    PartitionLocation location = new PartitionLocation(new TopicPartition("t", 0), Uuid.randomUuid(), data, meta);
    PartitionLog log = PartitionLog.open(store, location, 1, new LogSettings(1 << 20, false), Time.SYSTEM, p -> { })
        .join();
    log.append(batchInFrame(new byte[64], "first")).join(); // offset 0
    appended.clear();

    ByteBuffer records = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("k".getBytes(), "v".getBytes()),
        new SimpleRecord("k".getBytes(), "w".getBytes())).buffer();
    byte[] frame = new byte[64 + records.remaining()];
    records.duplicate().get(frame, 64, records.remaining());
    ProducedBatch batch = RecordBatches.validateProduced(
        MemoryRecords.readableRecords(ByteBuffer.wrap(frame, 64, records.remaining()).slice()), (short) 9, 1 << 20);
    assertThat(log.append(batch).join().baseOffset()).isEqualTo(1);

    List<Appended> toData = appended.stream().filter(a -> a.streamId() == data).toList();
    assertThat(toData).hasSize(1);
    Appended got = toData.getFirst();
    assertThat(got.owned()).isTrue();
    assertThat(got.payload().array()).isSameAs(frame);
    assertThat(got.payload().arrayOffset()).isEqualTo(64);
    assertThat(RecordBatches.header(got.payload()).baseOffset()).isEqualTo(1); // written in place, in the frame
    log.close().join();
    store.close();
  }

  private static ProducedBatch batchInFrame(byte[] header, String value) {
    ByteBuffer records = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value.getBytes())).buffer();
    byte[] frame = new byte[header.length + records.remaining()];
    records.duplicate().get(frame, header.length, records.remaining());
    return RecordBatches.validateProduced(
        MemoryRecords.readableRecords(ByteBuffer.wrap(frame, header.length, records.remaining()).slice()), (short) 9,
        1 << 20);
  }
}
