package io.tidemark.table.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.tidemark.table.control.ControlMessage.FilesWritten;
import io.tidemark.table.control.ControlMessage.WorkerRound;
import java.io.ByteArrayOutputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.junit.jupiter.api.Test;

/** Goal: control messages survive the control topic's format intact, and only Iceberg file classes are ever deserialized. */
class ControlCodecTest {

  private static DataFile file(String path, long records) {
    return DataFiles.builder(PartitionSpec.unpartitioned()).withPath(path).withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(1234).withRecordCount(records).build();
  }

  @Test
  void filesWrittenRoundTripsWithItsFilesAndOffsets() {
    WorkerRound round = new WorkerRound(Map.of(0, 5L), Map.of(0, 9L, 1, 3L), Map.of(0, 9L, 1, 4L),
        List.of(file("s3://b/t/data/a.parquet", 4), file("s3://b/t/data/b.parquet", 3)),
        List.of(org.apache.iceberg.FileMetadata.deleteFileBuilder(PartitionSpec.unpartitioned()).ofEqualityDeletes(4)
            .withPath("s3://b/t/data/eq.parquet").withFormat(FileFormat.PARQUET).withFileSizeInBytes(99).withRecordCount(2)
            .build()), Map.of(), Map.of(1, 3L),
        List.of(file("s3://b/t_dlq/data/c.parquet", 1)), 7, 1, true);
    FilesWritten written = new FilesWritten("clicks", "r1", 3, round, "");

    FilesWritten back = (FilesWritten) ControlCodec.decode(ControlCodec.encode(written));

    assertThat(back.topic()).isEqualTo("clicks");
    assertThat(back.commitId()).isEqualTo("r1");
    assertThat(back.node()).isEqualTo(3);
    WorkerRound r = back.round();
    assertThat(r.baseOffsets()).isEqualTo(round.baseOffsets());
    assertThat(r.nextOffsets()).isEqualTo(round.nextOffsets());
    assertThat(r.highWatermarks()).isEqualTo(round.highWatermarks());
    assertThat(r.dlqNextOffsets()).isEqualTo(round.dlqNextOffsets());
    assertThat(r.files()).extracting(DataFile::location, DataFile::recordCount, DataFile::fileSizeInBytes)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("s3://b/t/data/a.parquet", 4L, 1234L),
            org.assertj.core.groups.Tuple.tuple("s3://b/t/data/b.parquet", 3L, 1234L));
    assertThat(r.dlqFiles()).extracting(DataFile::location).containsExactly("s3://b/t_dlq/data/c.parquet");
    assertThat(r.deleteFiles()).singleElement().satisfies(d -> {
      assertThat(d.location()).isEqualTo("s3://b/t/data/eq.parquet");
      assertThat(d.content()).isEqualTo(org.apache.iceberg.FileContent.EQUALITY_DELETES);
      assertThat(d.equalityFieldIds()).containsExactly(4);
    });
    assertThat(r.rows()).isEqualTo(7);
    assertThat(r.skipped()).isEqualTo(1);
    assertThat(r.moreData()).isTrue();
  }

  @Test
  void startAndEndRoundTrip() {
    ControlMessage start = new ControlMessage.CommitStart("t", "r2", 42);
    ControlMessage end = new ControlMessage.CommitEnd("t", "r2", true, 77);
    assertThat(ControlCodec.decode(ControlCodec.encode(start))).isEqualTo(start);
    assertThat(ControlCodec.decode(ControlCodec.encode(end))).isEqualTo(end);
  }

  @Test
  void aRecordCarryingOtherSerializedClassesIsRejected() throws Exception {
    // anyone able to write to the control topic must not get arbitrary classes deserialized
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(new ArrayList<>(List.of(new TextNode("not a data file"))));
    }
    ObjectMapper json = new ObjectMapper();
    ObjectNode node = (ObjectNode) json.readTree(ControlCodec.encode(
        new FilesWritten("t", "r3", 1, WorkerRound.empty(), "")));
    node.put("files", Base64.getEncoder().encodeToString(bytes.toByteArray()));

    assertThatThrownBy(() -> ControlCodec.decode(json.writeValueAsBytes(node)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unreadable data files");
    assertThatThrownBy(() -> ControlCodec.decode("{\"type\":\"other\"}".getBytes()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown control message type");
  }
}
