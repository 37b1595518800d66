package io.tidemark.stream.object;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class StreamBatchCodecTest {

  @Property(tries = 200)
  void encodeThenDecodeGivesTheSameBatch(@ForAll @LongRange(min = 0) long streamId, @ForAll long epoch,
      @ForAll @LongRange(min = 0, max = Long.MAX_VALUE / 2) long base, @ForAll @IntRange(min = 1) int count,
      @ForAll @Size(max = 300) byte[] payload) {
    // Goal: the codec is lossless for every valid batch.
    StreamRecordBatch batch = new StreamRecordBatch(streamId, epoch, base, count, ByteBuffer.wrap(payload));
    ByteBuffer encoded = StreamBatchCodec.encode(batch);
    assertThat(encoded.remaining()).isEqualTo(batch.encodedBytes());
    StreamRecordBatch decoded = StreamBatchCodec.decode(encoded);
    assertThat(encoded.hasRemaining()).isFalse();
    assertThat(decoded.streamId()).isEqualTo(streamId);
    assertThat(decoded.epoch()).isEqualTo(epoch);
    assertThat(decoded.baseOffset()).isEqualTo(base);
    assertThat(decoded.recordCount()).isEqualTo(count);
    assertThat(decoded.payload()).isEqualTo(ByteBuffer.wrap(payload));
  }

  @Test
  void everySingleBitFlipIsDetected() {
    // Goal: a bit flip anywhere in an encoded batch is rejected, never decoded as data.
    ByteBuffer encoded = StreamBatchCodec.encode(batch("hello tidemark"));
    for (int bit = 0; bit < encoded.remaining() * 8; bit++) {
      ByteBuffer copy = ByteBuffer.allocate(encoded.remaining()).put(encoded.duplicate()).flip();
      copy.put(bit / 8, (byte) (copy.get(bit / 8) ^ (1 << (bit % 8))));
      int position = copy.position();
      assertThatThrownBy(() -> StreamBatchCodec.decode(copy)).isInstanceOf(CorruptBatchException.class);
      assertThat(copy.position()).isEqualTo(position);
    }
  }

  @Test
  void truncatedBatchIsRejected() {
    // Goal: a batch cut anywhere is rejected with a message saying it is truncated.
    ByteBuffer encoded = StreamBatchCodec.encode(batch("0123456789"));
    for (int length = 0; length < encoded.remaining(); length++) {
      ByteBuffer cut = encoded.duplicate().limit(length);
      assertThatThrownBy(() -> StreamBatchCodec.decode(cut)).isInstanceOf(CorruptBatchException.class)
          .hasMessageContaining("truncated");
    }
  }

  private static StreamRecordBatch batch(String text) {
    return new StreamRecordBatch(7, 3, 100, 5, ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
  }
}
