package io.tidemark.stream.object;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A finished object in memory: its bytes as consecutive buffers (blocks, index, footer) and its
 * index. Immutable once built; the buffers are read through duplicates.
 */
public record EncodedObject(List<ByteBuffer> buffers, long sizeBytes, List<IndexEntry> index) {

  public EncodedObject {
    buffers = List.copyOf(buffers);
    index = List.copyOf(index);
  }

  /** The whole object in one buffer (a copy). */
  public ByteBuffer toByteBuffer() {
    ByteBuffer out = ByteBuffer.allocate(Math.toIntExact(sizeBytes));
    buffers.forEach(b -> out.put(b.duplicate()));
    return out.flip();
  }

  /** The object cut into parts of exactly {@code partSizeBytes} (the last one may be smaller). */
  public List<ByteBuffer> parts(long partSizeBytes) {
    if (partSizeBytes <= 0) {
      throw new IllegalArgumentException("part size " + partSizeBytes + " must be > 0");
    }
    List<ByteBuffer> parts = new ArrayList<>();
    ByteBuffer current = null;
    for (ByteBuffer source : buffers) {
      ByteBuffer in = source.duplicate();
      while (in.hasRemaining()) {
        if (current == null) {
          long left = sizeBytes - parts.size() * partSizeBytes;
          current = ByteBuffer.allocate((int) Math.min(partSizeBytes, left));
        }
        int n = Math.min(in.remaining(), current.remaining());
        current.put(in.duplicate().limit(in.position() + n));
        in.position(in.position() + n);
        if (!current.hasRemaining()) {
          parts.add(current.flip());
          current = null;
        }
      }
    }
    if (current != null && current.position() > 0) {
      parts.add(current.flip());
    }
    return parts;
  }
}
