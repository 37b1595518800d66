package io.tidemark.table.warehouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.ObjectInfo;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.io.IOException;
import java.util.Random;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileInfo;
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

  @Test
  void smallFilesAndExistenceCostOneGetAndPrefixesListAndDelete() throws IOException {
    // goal: metadata-sized files read with one GET and no listing; prefixes list with sizes and times and delete
    java.util.Map<String, Integer> calls = new java.util.concurrent.ConcurrentHashMap<>();
    ObjectStorage counted = (ObjectStorage)
        java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {ObjectStorage.class}, (proxy, method, args) -> {
              calls.merge(method.getName(), 1, Integer::sum);
              try {
                return method.invoke(storage, args);
              } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
              }
            });
    ObjectStorageFileIO countedIo = new ObjectStorageFileIO(counted, "s3://bucket/");
    byte[] small = "{\"format-version\":2}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    try (PositionOutputStream out = countedIo.newOutputFile("s3://bucket/t/metadata/v1.json").create()) {
      out.write(small);
    }
    byte[] big = new byte[ObjectStorageFileIO.READ_CHUNK_BYTES + 10];
    new Random(3).nextBytes(big);
    try (PositionOutputStream out = countedIo.newOutputFile("s3://bucket/t/data/big.parquet").create()) {
      out.write(big);
    }
    calls.clear();
    try (SeekableInputStream s = countedIo.newInputFile("s3://bucket/t/metadata/v1.json").newStream()) {
      assertThat(s.readAllBytes()).isEqualTo(small);
    }
    assertThat(calls).containsOnly(java.util.Map.entry("get", 1));
    calls.clear();
    try (SeekableInputStream s = countedIo.newInputFile("s3://bucket/t/data/big.parquet").newStream()) {
      assertThat(s.readAllBytes()).isEqualTo(big);
    }
    assertThat(calls).as("a file of a full chunk or more still lists for its length").containsEntry("list", 1)
        .containsEntry("get", 2);
    assertThatThrownBy(() -> countedIo.newInputFile("s3://bucket/t/missing.json").newStream())
        .isInstanceOf(NotFoundException.class);
    calls.clear();
    assertThat(countedIo.newInputFile("s3://bucket/t/metadata/v1.json").exists()).isTrue();
    assertThat(countedIo.newInputFile("s3://bucket/t/metadata/v2.json").exists()).isFalse();
    assertThat(calls).as("existence is a GET, not a LIST").containsOnly(java.util.Map.entry("get", 2));

    long now = System.currentTimeMillis();
    java.util.List<FileInfo> listed = new java.util.ArrayList<>();
    countedIo.listPrefix("s3://bucket/t/").forEach(listed::add);
    assertThat(listed).extracting(FileInfo::location)
        .containsExactly("s3://bucket/t/data/big.parquet", "s3://bucket/t/metadata/v1.json");
    assertThat(listed).extracting(FileInfo::size).containsExactly((long) big.length, (long) small.length);
    assertThat(listed).allSatisfy(f -> assertThat(f.createdAtMillis()).isBetween(now - 60_000, now + 1));
    countedIo.deletePrefix("s3://bucket/t/data/");
    assertThat(storage.list("").join()).extracting(ObjectInfo::key)
        .containsExactly("t/metadata/v1.json");
  }
}
