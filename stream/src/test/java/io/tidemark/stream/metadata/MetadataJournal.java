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
 * it returns. Once the file passes {@code compactBytes} (and has doubled since the last
 * compaction) its owner rewrites it as the records of the current state ({@link #compact}), so it
 * stays bounded by the size of the state, not of its history. On open, frames are read and replayed until the first torn or corrupt one (a crash
 * in the middle of a write); the file is cut there so that later appends follow the good prefix.
 *
 * <p>Not thread-safe: its owner ({@link MemoryStreamMetadata}) calls it under its monitor.
 */
final class MetadataJournal implements MemoryStreamMetadata.RecordSink {

  private static final System.Logger LOG = System.getLogger(MetadataJournal.class.getName());
  private static final int FRAME_HEADER_BYTES = 8;
  private static final int MAX_FRAME_BYTES = 64 * 1024 * 1024;

  private static final int RECORDS_PER_COMPACTED_FRAME = 10_000;

  private final Path file;
  private final long compactBytes;
  private FileChannel channel;
  private long sizeAfterCompaction;

  private MetadataJournal(Path file, FileChannel channel, long compactBytes) {
    this.file = file;
    this.channel = channel;
    this.compactBytes = compactBytes;
  }

  /** Opens (creating if absent) the journal, passes every intact record to {@code replay}, cuts a torn tail. */
  static MetadataJournal open(Path file, Consumer<MetadataRecord> replay, long compactBytes) throws IOException {
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
      MetadataJournal journal = new MetadataJournal(file, channel, compactBytes);
      journal.sizeAfterCompaction = position;
      return journal;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  @Override
  public void append(List<MetadataRecord> records) throws IOException {
    writeFrame(channel, records);
    channel.force(false);
  }

  @Override
  public boolean wantsCompaction() {
    try {
      long size = channel.size();
      return size >= compactBytes && size >= 2 * sizeAfterCompaction;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Replaces the journal by {@code state} (records that rebuild the current state): written to a
   * temporary file, fsync'd, renamed over the journal atomically, directory fsync'd. A crash at any
   * point leaves either the old journal or the new one.
   */
  @Override
  public void compact(List<MetadataRecord> state) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".compacting");
    try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      for (int from = 0; from < state.size(); from += RECORDS_PER_COMPACTED_FRAME) {
        writeFrame(out, state.subList(from, Math.min(state.size(), from + RECORDS_PER_COMPACTED_FRAME)));
      }
      out.force(true);
    }
    java.nio.file.Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    forceDirectory(file.toAbsolutePath().getParent());
    channel.close();
    channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
    channel.position(channel.size());
    sizeAfterCompaction = channel.size();
    LOG.log(System.Logger.Level.INFO, "metadata journal {0} compacted to {1} records, {2} bytes", file,
        state.size(), sizeAfterCompaction);
  }

  private static void forceDirectory(Path dir) {
    if (dir == null) {
      return;
    }
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // some filesystems refuse to open a directory; the rename is still atomic
    }
  }

  private static void writeFrame(FileChannel out, List<MetadataRecord> records) throws IOException {
    byte[] body = MetadataRecordCodec.encode(records);
    CRC32C crc = new CRC32C();
    crc.update(body);
    ByteBuffer frame = ByteBuffer.allocate(FRAME_HEADER_BYTES + body.length);
    frame.putInt(body.length).putInt((int) crc.getValue()).put(body).flip();
    while (frame.hasRemaining()) {
      out.write(frame);
    }
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
