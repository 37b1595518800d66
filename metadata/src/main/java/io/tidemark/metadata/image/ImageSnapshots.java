package io.tidemark.metadata.image;

import io.tidemark.metadata.record.CorruptRecordException;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.RecordCodec;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * Writes an image to a file and reads it back. Format: magic {@code TMSNAP01}, format version (4),
 * image offset (8), record count (8), the record frames of {@link MetadataImage#toRecords()}, then
 * a CRC32C (4) of everything before it. Written to a temporary file, forced to disk and renamed
 * into place, so a crash leaves the old snapshot or the new one, never half of one. A file whose
 * checksum, magic or records do not verify is rejected with {@link CorruptRecordException}: the
 * caller stops rather than serve metadata it cannot trust.
 *
 * <p>Stateless.
 */
public final class ImageSnapshots {
  private static final byte[] MAGIC = "TMSNAP01".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  private static final int FORMAT_VERSION = 1;

  private ImageSnapshots() {}

  public static void write(MetadataImage image, Path target) throws IOException {
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
    CRC32C crc = new CRC32C();
    var records = image.toRecords();
    try (OutputStream file = Files.newOutputStream(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
        StandardOpenOption.WRITE);
        CheckedOutputStream checked = new CheckedOutputStream(new BufferedOutputStream(file, 1 << 16), crc);
        DataOutputStream out = new DataOutputStream(checked)) {
      out.write(MAGIC);
      out.writeInt(FORMAT_VERSION);
      out.writeLong(image.offset());
      out.writeLong(records.size());
      FieldWriter w = new FieldWriter(1 << 12);
      for (MetadataRecord r : records) {
        RecordCodec.write(r, w);
        if (w.position() > (1 << 16)) {
          ByteBuffer b = w.toByteBuffer();
          out.write(b.array(), 0, b.limit());
          w = new FieldWriter(1 << 12);
        }
      }
      ByteBuffer b = w.toByteBuffer();
      out.write(b.array(), 0, b.limit());
      out.flush();
      int sum = (int) crc.getValue();
      file.write(new byte[] {(byte) (sum >>> 24), (byte) (sum >>> 16), (byte) (sum >>> 8), (byte) sum});
    }
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    try (FileChannel dir = FileChannel.open(target.getParent(), StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException ignored) {
      // some file systems cannot sync a directory; the rename is still atomic
    }
  }

  /** Reads and verifies a snapshot; throws {@link CorruptRecordException} naming the file when it does not verify. */
  public static MetadataImage read(Path file) throws IOException {
    long size = Files.size(file);
    if (size < MAGIC.length + 24) {
      throw corrupt(file, "it is " + size + " bytes, shorter than a header");
    }
    CRC32C crc = new CRC32C();
    try (InputStream raw = Files.newInputStream(file)) {
      BufferedInputStream buffered = new BufferedInputStream(raw, 1 << 16);
      InputStream limited = new BoundedInput(buffered, size - 4);
      DataInputStream in = new DataInputStream(new CheckedInputStream(limited, crc));
      byte[] magic = new byte[MAGIC.length];
      in.readFully(magic);
      if (!java.util.Arrays.equals(magic, MAGIC)) {
        throw corrupt(file, "bad magic");
      }
      int version = in.readInt();
      if (version != FORMAT_VERSION) {
        throw corrupt(file, "unknown format version " + version);
      }
      long offset = in.readLong();
      long count = in.readLong();
      List<MetadataRecord> records = new ArrayList<>((int) Math.min(Math.max(count, 0), 1 << 20));
      byte[] header = new byte[RecordCodec.HEADER_BYTES];
      for (long i = 0; i < count; i++) {
        in.readFully(header);
        int len = ByteBuffer.wrap(header, 4, 4).getInt();
        if (len < 0 || len > size) {
          throw corrupt(file, "record " + i + " has body length " + len);
        }
        byte[] frame = new byte[RecordCodec.HEADER_BYTES + len];
        System.arraycopy(header, 0, frame, 0, header.length);
        in.readFully(frame, header.length, len);
        try {
          records.add(RecordCodec.decode(frame));
        } catch (CorruptRecordException | IllegalArgumentException e) {
          throw corrupt(file, "record " + i + ": " + e.getMessage());
        }
      }
      if (in.read() != -1) {
        throw corrupt(file, "bytes after the last of " + count + " records");
      }
      int expected = new DataInputStream(buffered).readInt();
      if (expected != (int) crc.getValue()) {
        throw corrupt(file, "checksum mismatch");
      }
      return MetadataImage.fromRecords(records, offset);
    } catch (EOFException e) {
      throw corrupt(file, "it ends early");
    }
  }

  private static CorruptRecordException corrupt(Path file, String why) {
    return new CorruptRecordException("metadata snapshot " + file + " is corrupt (" + why + "); this node stops."
        + " Move the file away to rebuild from the remaining log and peers, or restore a backup");
  }

  /** Reads at most {@code limit} bytes of the underlying stream (the checksum follows them). */
  private static final class BoundedInput extends InputStream {
    private final InputStream in;
    private long left;

    BoundedInput(InputStream in, long limit) {
      this.in = in;
      this.left = limit;
    }

    @Override
    public int read() throws IOException {
      if (left <= 0) {
        return -1;
      }
      int b = in.read();
      if (b >= 0) {
        left--;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (left <= 0) {
        return -1;
      }
      int n = in.read(b, off, (int) Math.min(len, left));
      if (n > 0) {
        left -= n;
      }
      return n;
    }
  }
}
