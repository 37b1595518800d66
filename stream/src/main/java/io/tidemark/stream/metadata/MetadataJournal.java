package io.tidemark.stream.metadata;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * An append-only file of metadata record groups, one frame per handled request:
 * {@code length i32, crc32c i32 (over the body), body}. Each append is written and fsync'd before
 * it returns. On open, frames are read and replayed until the first torn or corrupt one (a crash
 * in the middle of a write); the file is cut there so that later appends follow the good prefix.
 *
 * <p>Not thread-safe: its owner ({@link MemoryStreamMetadata}) calls it under its monitor.
 */
final class MetadataJournal implements MemoryStreamMetadata.RecordSink {

  private static final System.Logger LOG = System.getLogger(MetadataJournal.class.getName());
  private static final int FRAME_HEADER_BYTES = 8;
  private static final int MAX_FRAME_BYTES = 64 * 1024 * 1024;

  private final Path file;
  private final FileChannel channel;

  private MetadataJournal(Path file, FileChannel channel) {
    this.file = file;
    this.channel = channel;
  }

  /** Opens (creating if absent) the journal, passes every intact record to {@code replay}, cuts a torn tail. */
  static MetadataJournal open(Path file, Consumer<MetadataRecord> replay) throws IOException {
    FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
        StandardOpenOption.WRITE);
    try {
      long size = channel.size();
      long position = 0;
      ByteBuffer header = ByteBuffer.allocate(FRAME_HEADER_BYTES);
      while (position + FRAME_HEADER_BYTES <= size) {
        header.clear();
        readFully(channel, header, position);
        int length = header.getInt(0);
        int crc = header.getInt(4);
        if (length < 0 || length > MAX_FRAME_BYTES || position + FRAME_HEADER_BYTES + length > size) {
          break;
        }
        ByteBuffer body = ByteBuffer.allocate(length);
        readFully(channel, body, position + FRAME_HEADER_BYTES);
        CRC32C check = new CRC32C();
        check.update(body.array());
        if ((int) check.getValue() != crc) {
          break;
        }
        List<MetadataRecord> records;
        try {
          records = MetadataRecordCodec.decode(body.array());
        } catch (IOException | RuntimeException e) {
          break;
        }
        records.forEach(replay);
        position += FRAME_HEADER_BYTES + length;
      }
      if (position < size) {
        LOG.log(System.Logger.Level.WARNING, "metadata journal {0}: cutting {1} bytes of torn or corrupt tail at "
            + "position {2}", file, size - position, position);
        channel.truncate(position);
        channel.force(true);
      }
      channel.position(position);
      return new MetadataJournal(file, channel);
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  @Override
  public void append(List<MetadataRecord> records) throws IOException {
    byte[] body = MetadataRecordCodec.encode(records);
    CRC32C crc = new CRC32C();
    crc.update(body);
    ByteBuffer frame = ByteBuffer.allocate(FRAME_HEADER_BYTES + body.length);
    frame.putInt(body.length).putInt((int) crc.getValue()).put(body).flip();
    while (frame.hasRemaining()) {
      channel.write(frame);
    }
    channel.force(false);
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "closing metadata journal " + file, e);
    }
  }

  private static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
    while (buffer.hasRemaining()) {
      int n = channel.read(buffer, position + buffer.position());
      if (n < 0) {
        throw new IOException("unexpected end of journal");
      }
    }
    buffer.flip();
  }
}
