package io.tidemark.metadata.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.metadata.record.MetadataRecord.*;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.metadata.StreamRange;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RecordCodecTest {

  static List<MetadataRecord> oneOfEach() {
    UUID topic = new UUID(1, 2);
    return List.of(
        new BrokerRegistration(3, 7, List.of(new Endpoint("PLAINTEXT", "h", 9092)), 123, "rack-a"),
        new BrokerFencing(3, 7, true),
        new Topic(topic, "orders", 3),
        new RemoveTopic(topic),
        new Partition(topic, 1, 3, 4, List.of(10L, 11L)),
        new Partition(topic, 2, 3, 5, List.of(12L, 13L), List.of(3, 1), List.of(2)),
        new Config((byte) 2, "orders", "retention.ms", "1000"),
        new Config((byte) 2, "orders", "retention.ms", null),
        new Stream(10, 2, 5, 50, StreamState.OPEN, 3, List.of(new OwnerRange(1, 2, 0), new OwnerRange(2, 3, 30)),
            Map.of("topic", "orders", "p", "1")),
        new StreamEndOffsets(List.of(new EndOffset(10, 60), new EndOffset(11, 7))),
        new RemoveStream(10),
        new StorageObject(99, ObjectState.COMMITTED, ObjectKind.STREAM_SET, 3, 4096, 1, 2, 3, 0, 99,
            List.of(new StreamRange(10, 2, 50, 60), new StreamRange(11, 1, 0, 7))),
        new RemoveObject(99),
        new NextId(IdKind.OBJECT, 100),
        new ProducerIdBlock(3, 1000, 1000),
        new KeyValue("ns", "k", new byte[] {1, 2, 3}),
        new KeyValue("ns", "k", null),
        new MetadataRecord.UserScramCredential("alice", (byte) 1, new byte[] {1}, new byte[] {2, 3}, new byte[] {4}, 4096),
        new MetadataRecord.RemoveUserScramCredential("alice", (byte) 2),
        new MetadataRecord.AccessControlEntry(new MetadataRecord.AclEntry((byte) 2, "orders", (byte) 3, "User:alice", "*",
            (byte) 3, (byte) 3)),
        new MetadataRecord.RemoveAccessControlEntry(new MetadataRecord.AclEntry((byte) 4, "g-", (byte) 4, "User:*",
            "10.0.0.1", (byte) 2, (byte) 2)));
  }

  @Test
  void everyRecordTypeRoundTrips() {
    // Goal: each record type encodes and decodes to an equal record, and all types are covered.
    List<MetadataRecord> all = oneOfEach();
    assertThat(all.stream().map(MetadataRecord::type).distinct()).hasSize(RecordType.values().length);
    for (MetadataRecord r : all) {
      assertThat(RecordCodec.decode(RecordCodec.encode(r))).isEqualTo(r);
    }
  }

  @Test
  void aRecordWithoutTheFieldAddedLaterReadsWithItsDefault() {
    // Goal: a version-1 broker registration (written before `rack` existed) still reads, with rack "".
    FieldWriter v1 = new FieldWriter();
    v1.writeInt(3).writeLong(7).writeInt(1).writeString("PLAINTEXT").writeString("h").writeInt(9092).writeLong(123);
    byte[] frame = RecordCodec.frame(RecordType.BROKER_REGISTRATION, 1, v1.toByteArray());
    BrokerRegistration r = (BrokerRegistration) RecordCodec.decode(frame);
    assertThat(r).isEqualTo(new BrokerRegistration(3, 7, List.of(new Endpoint("PLAINTEXT", "h", 9092)), 123, ""));
  }

  @Test
  void aVersionOnePartitionReadsAsAssignedToItsLeaderAlone() {
    // Goal: partitions written before replica assignments existed read with replicas [leader] and no reassignment.
    UUID topic = new UUID(3, 4);
    FieldWriter v1 = new FieldWriter();
    v1.writeUuid(topic).writeInt(1).writeInt(2).writeInt(6);
    RecordCodec.writeLongs(v1, List.of(10L, 11L));
    Partition p = (Partition) RecordCodec.decode(RecordCodec.frame(RecordType.PARTITION, 1, v1.toByteArray()));
    assertThat(p).isEqualTo(new Partition(topic, 1, 2, 6, List.of(10L, 11L), List.of(2), List.of()));
  }

  @Test
  void aReaderThatKnowsFewerFieldsSkipsTheNewerOnes() {
    // Goal: a record written by a newer version with an extra trailing field reads with today's reader.
    BrokerFencing current = new BrokerFencing(4, 9, false);
    byte[] body = Arrays.copyOfRange(RecordCodec.encode(current), RecordCodec.HEADER_BYTES,
        RecordCodec.encode(current).length);
    ByteBuffer b = ByteBuffer.allocate(body.length + 8);
    b.put(body).putLong(424242L); // the "future" field
    byte[] frame = RecordCodec.frame(RecordType.BROKER_FENCING, 2, b.array());
    ByteBuffer two = ByteBuffer.allocate(frame.length * 2).put(frame).put(frame).flip();
    assertThat(RecordCodec.read(two)).isEqualTo(current);
    assertThat(RecordCodec.read(two)).isEqualTo(current); // the length let the reader find the next frame
    assertThat(two.hasRemaining()).isFalse();
  }

  @Test
  void aReaderThatKnowsAnExtraFieldReadsTodaysRecordsWithTheDefault() {
    // Goal: today's record read by a future reader that knows one more trailing field gets that field's default.
    byte[] frame = RecordCodec.encode(new RemoveStream(77));
    ByteBuffer buf = ByteBuffer.wrap(frame, RecordCodec.HEADER_BYTES, frame.length - RecordCodec.HEADER_BYTES);
    FieldReader futureReader = new FieldReader(buf.slice());
    assertThat(futureReader.readLong()).isEqualTo(77);
    assertThat(futureReader.readLongOr(-5)).isEqualTo(-5);
    assertThat(futureReader.readStringOr("dflt")).isEqualTo("dflt");
  }

  @Test
  void truncatedOrUnknownFramesAreCorrupt() {
    // Goal: bytes that are not a whole record are rejected with CorruptRecordException, never half-read.
    byte[] ok = RecordCodec.encode(oneOfEach().get(7));
    assertThatThrownBy(() -> RecordCodec.decode(Arrays.copyOf(ok, ok.length - 1)))
        .isInstanceOf(CorruptRecordException.class);
    byte[] unknown = ok.clone();
    unknown[0] = 0x7f;
    assertThatThrownBy(() -> RecordCodec.decode(unknown)).isInstanceOf(CorruptRecordException.class);
    byte[] badLen = ok.clone();
    badLen[4] = 0x7f;
    assertThatThrownBy(() -> RecordCodec.decode(badLen)).isInstanceOf(CorruptRecordException.class);
  }
}
