package io.tidemark.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.metadata.controller.ControllerRequest.*;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord;
import io.tidemark.metadata.record.MetadataRecord.AclEntry;
import io.tidemark.metadata.record.MetadataRecord.Config;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** ACLs and client quotas in the controller: compute, then replay; snapshots and encodings keep them. */
class AccessControlTest {
  private final MetadataReplica replica = new MetadataReplica(new Controller(ControllerLimits.DEFAULT), 100);
  private long offset;

  private ControllerReply apply(Write request) {
    Write decoded = (Write) RequestCodec.decode(ByteBuffer.wrap(RequestCodec.encode(request)));
    return replica.apply(++offset, ByteBuffer.wrap(MetadataReplica.entry(1_000, decoded)));
  }

  private static AclEntry acl(String name, String principal, int op) {
    return new AclEntry((byte) 2, name, (byte) 3, principal, "*", (byte) op, (byte) 3);
  }

  @Test
  void aclsAreAddedOnceRemovedExactlyAndSurviveASnapshot() {
    // Goal: a binding is its own identity, deletion reports what was present, and the image's records rebuild it.
    AclEntry read = acl("orders", "User:alice", 3);
    AclEntry write = acl("orders", "User:alice", 4);
    assertThat(apply(new CreateAcls(List.of(read, write, read))).code()).isEqualTo(ErrorCode.NONE);
    long afterCreate = replica.image().offset();
    apply(new CreateAcls(List.of(read)));
    assertThat(replica.image().acls().size()).isEqualTo(2);
    assertThat(replica.image().toRecords()).hasSize(MetadataImage.fromRecords(replica.image().toRecords(), 0)
        .toRecords().size());
    assertThat(MetadataImage.fromRecords(replica.image().toRecords(), 0).sameContentAs(replica.image())).isTrue();

    ControllerReply deleted = apply(new DeleteAcls(List.of(read, acl("other", "User:bob", 3))));
    var body = deleted.bodyOrThrow();
    assertThat(body.readInt()).isEqualTo(2);
    assertThat(body.readBoolean()).isTrue();
    assertThat(body.readBoolean()).isFalse();
    assertThat(replica.image().acls().containsKey(read)).isFalse();
    assertThat(replica.image().acls().containsKey(write)).isTrue();
    assertThat(afterCreate).isPositive();
  }

  @Test
  void clientQuotasAreConfigsOfTheirOwnTypeAndANullRemovesOne() {
    // Goal: quotas land as CLIENT_QUOTA configs, listed per type, removed by a null value, and no other type shows them.
    apply(new SetConfig((byte) 2, "orders", "retention.ms", "1"));
    apply(new AlterClientQuotas(List.of(new QuotaChange("user=alice", "producer_byte_rate", "1024"),
        new QuotaChange("user", "consumer_byte_rate", "2048"))));
    List<Config> quotas = replica.image().configsOf(Config.CLIENT_QUOTA);
    assertThat(quotas).extracting(Config::resourceName).containsExactlyInAnyOrder("user=alice", "user");
    apply(new AlterClientQuotas(List.of(new QuotaChange("user=alice", "producer_byte_rate", null))));
    assertThat(replica.image().configsOf(Config.CLIENT_QUOTA)).extracting(Config::resourceName).containsExactly("user");
    assertThat(replica.image().configsOf((byte) 2)).extracting(Config::key).containsExactly("retention.ms");
    assertThat(apply(new AlterClientQuotas(List.of(new QuotaChange("", "k", "1")))).code())
        .isEqualTo(ErrorCode.INVALID_REQUEST);
  }

  @Test
  void configChangesOfSeveralResourcesLandInOneEntryAndSurviveASnapshot() {
    // Goal: AlterConfigs writes and removes values of several resources at once, keeps them in a snapshot, and refuses
    // client quotas (they have their own request) and an empty key without changing anything.
    apply(new AlterConfigs(List.of(new ConfigChange((byte) 4, "", "log.retention.ms", "1000"),
        new ConfigChange((byte) 4, "1", "log.retention.ms", "2000"), new ConfigChange((byte) 16, "sub", "metrics", "org.apache"))));
    assertThat(replica.image().config((byte) 4, "", "log.retention.ms")).isEqualTo("1000");
    assertThat(replica.image().config((byte) 4, "1", "log.retention.ms")).isEqualTo("2000");
    assertThat(MetadataImage.fromRecords(replica.image().toRecords(), 0).sameContentAs(replica.image())).isTrue();
    apply(new AlterConfigs(List.of(new ConfigChange((byte) 4, "1", "log.retention.ms", null))));
    assertThat(replica.image().configsOf((byte) 4)).extracting(Config::resourceName).containsExactly("");
    var before = replica.image().configs();
    assertThat(apply(new AlterConfigs(List.of(new ConfigChange((byte) 4, "", "a", "1"),
        new ConfigChange(Config.CLIENT_QUOTA, "user", "k", "1")))).code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(apply(new AlterConfigs(List.of(new ConfigChange((byte) 4, "", "", "1")))).code()).isEqualTo(ErrorCode.INVALID_REQUEST);
    assertThat(replica.image().configs()).isSameAs(before);
  }
}
