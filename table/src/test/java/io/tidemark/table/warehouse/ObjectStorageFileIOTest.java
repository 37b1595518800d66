package io.tidemark.table.warehouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.objectstore.MemoryObjectStorage;
import java.io.IOException;
import java.util.Random;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Goal: Iceberg's FileIO over the ObjectStorage seam writes, reads with seeks across chunks, and deletes objects. */
class ObjectStorageFileIOTest {

  private final MemoryObjectStorage storage = new MemoryObjectStorage();
  private final ObjectStorageFileIO io = new ObjectStorageFileIO(storage, "s3://bucket/");

  @AfterEach
  void tearDown() {
    storage.close();
  }

  @Test
  void writtenBytesReadBackWithSeeksAcrossChunkBoundaries() throws IOException {
    // goal: a file larger than one read chunk reads back byte for byte from any position
    byte[] data = new byte[ObjectStorageFileIO.READ_CHUNK_BYTES * 2 + 123];
    new Random(7).nextBytes(data);
    try (PositionOutputStream out = io.newOutputFile("s3://bucket/t/data/f.parquet").create()) {
      out.write(data, 0, 10);
      assertThat(out.getPos()).isEqualTo(10);
      out.write(data, 10, data.length - 10);
    }
    assertThat(storage.get("t/data/f.parquet").join().remaining()).isEqualTo(data.length);

    InputFile in = io.newInputFile("s3://bucket/t/data/f.parquet");
    assertThat(in.exists()).isTrue();
    assertThat(in.getLength()).isEqualTo(data.length);
    try (SeekableInputStream s = in.newStream()) {
      byte[] all = s.readAllBytes();
      assertThat(all).isEqualTo(data);
      long at = ObjectStorageFileIO.READ_CHUNK_BYTES - 5L;
      s.seek(at);
      byte[] span = new byte[20];
      int n = 0;
      while (n < span.length) {
        n += s.read(span, n, span.length - n);
      }
      for (int i = 0; i < span.length; i++) {
        assertThat(span[i]).isEqualTo(data[(int) at + i]);
      }
      assertThat(s.getPos()).isEqualTo(at + 20);
      s.seek(data.length - 1);
      assertThat(s.read()).isEqualTo(data[data.length - 1] & 0xff);
      assertThat(s.read()).isEqualTo(-1);
    }
  }

  @Test
  void createRefusesExistingFilesAndDeleteRemovesThem() throws IOException {
    // goal: create() never overwrites; deleteFile removes; a missing file is NotFound
    try (PositionOutputStream out = io.newOutputFile("s3://bucket/m.json").create()) {
      out.write(1);
    }
    assertThatThrownBy(() -> io.newOutputFile("s3://bucket/m.json").create()).isInstanceOf(AlreadyExistsException.class);
    io.deleteFile("s3://bucket/m.json");
    assertThat(io.newInputFile("s3://bucket/m.json").exists()).isFalse();
    assertThatThrownBy(() -> io.newInputFile("s3://bucket/m.json").getLength()).isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> io.newInputFile("s3://other/x")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("outside the warehouse");
    assertThat(storage.list("").join()).isEmpty();
  }
}
