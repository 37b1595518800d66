package io.tidemark.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.metadata.controller.ControllerRequest.AlterScramCredential;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Goal: SCRAM credentials are set, replaced and removed only by replaying records, and survive a snapshot. */
class ScramCredentialControlTest {

  private final MetadataReplica replica = new MetadataReplica(new Controller(ControllerLimits.DEFAULT), 100);
  private long offset;

  private ControllerReply apply(AlterScramCredential request) {
    return replica.apply(++offset, ByteBuffer.wrap(MetadataReplica.entry(1_000, request)));
  }

  private static AlterScramCredential upsert(String user, int mechanism, int key) {
    return new AlterScramCredential(user, (byte) mechanism, new byte[] {9}, new byte[] {(byte) key}, new byte[] {7}, 4096,
        false);
  }

  @Test
  void credentialsAreSetReplacedRemovedAndKeptInSnapshots() {
    assertThat(apply(upsert("alice", 1, 1)).bodyOrThrow().readBoolean()).isFalse();
    assertThat(apply(upsert("alice", 1, 2)).bodyOrThrow().readBoolean()).isTrue();
    apply(upsert("alice", 2, 3));
    MetadataImage image = replica.image();
    assertThat(image.scramCredential("alice", (byte) 1).storedKey()).containsExactly(2);
    assertThat(image.scramCredential("alice", (byte) 2).storedKey()).containsExactly(3);
    assertThat(image.toRecords()).contains(new MetadataRecord.UserScramCredential("alice", (byte) 2, new byte[] {9},
        new byte[] {3}, new byte[] {7}, 4096));

    AlterScramCredential delete = new AlterScramCredential("alice", (byte) 1, null, null, null, 0, true);
    assertThat(apply(delete).bodyOrThrow().readBoolean()).isTrue();
    assertThat(replica.image().scramCredential("alice", (byte) 1)).isNull();
    MetadataImage before = replica.image();
    assertThat(apply(delete).bodyOrThrow().readBoolean()).isFalse();
    assertThat(replica.image().sameContentAs(before)).isTrue();
  }

  @Test
  void badRequestsAreRefusedAndChangeNothing() {
    MetadataImage before = replica.image();
    assertThat(apply(upsert("", 1, 1)).code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(apply(upsert("bob", 3, 1)).code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(replica.image().sameContentAs(before)).isTrue();
  }

  @Test
  void theRequestRoundTripsThroughTheCodec() {
    AlterScramCredential r = upsert("a,b=c", 2, 5);
    AlterScramCredential back = (AlterScramCredential) RequestCodec.decode(ByteBuffer.wrap(RequestCodec.encode(r)));
    assertThat(back.user()).isEqualTo("a,b=c");
    assertThat(back.mechanism()).isEqualTo((byte) 2);
    assertThat(back.storedKey()).containsExactly(5);
    assertThat(back.iterations()).isEqualTo(4096);
    assertThat(back.delete()).isFalse();
  }
}
