package io.tidemark.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;
import java.nio.ByteOrder;
import java.util.function.IntSupplier;

/**
 * Kafka's 4-byte size-prefixed frames, with a bound that may change during the connection: a
 * SASL connection accepts only {@code sasl.server.max.receive.size} until it has authenticated,
 * then {@code kafka.max.request.bytes}. A size above the bound in force closes the connection
 * before anything is allocated.
 */
final class FrameDecoder extends LengthFieldBasedFrameDecoder {

  private final IntSupplier maxFrameBytes;

  FrameDecoder(int absoluteMaxBytes, IntSupplier maxFrameBytes) {
    super(absoluteMaxBytes, 0, 4, 0, 4, true);
    this.maxFrameBytes = maxFrameBytes;
  }

  @Override
  protected long getUnadjustedFrameLength(ByteBuf buf, int offset, int length, ByteOrder order) {
    long size = super.getUnadjustedFrameLength(buf, offset, length, order);
    int max = maxFrameBytes.getAsInt();
    if (size > max) {
      throw new TooLongFrameException("frame of " + size + " bytes is over the " + max + " bytes allowed now");
    }
    return size;
  }
}
