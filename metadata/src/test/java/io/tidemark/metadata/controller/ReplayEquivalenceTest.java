package io.tidemark.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.metadata.image.ImageSnapshots;
import io.tidemark.metadata.image.MetadataImage;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplayEquivalenceTest {

  @Test
  void leaderFollowerAndSnapshotPlusTailReachTheSameImage(@TempDir Path dir) throws Exception {
    // Goal: replaying one log live (leader), afterwards (follower) and from a snapshot plus the tail gives equal images.
    long seed = Long.getLong("tidemark.test.seed", System.nanoTime());
    System.out.println("ReplayEquivalenceTest seed " + seed);
    int entries = "full".equals(System.getProperty("tidemark.test.scale")) ? 50_000 : 5_000;
    Controller controller = new Controller(ControllerLimits.DEFAULT);
    MetadataReplica leader = new MetadataReplica(controller, 10);
    MetadataWorkload workload = new MetadataWorkload(seed);
    List<byte[]> log = new ArrayList<>();
    Path snapshot = dir.resolve("snapshot");
    long time = 1_000;
    int rejected = 0;
    for (int i = 1; i <= entries; i++) {
      time += 7;
      byte[] entry = MetadataReplica.entry(time, workload.next(leader.image()));
      log.add(entry);
      if (!leader.apply(i, ByteBuffer.wrap(entry)).ok()) {
        rejected++;
      }
      if (i == entries / 2) {
        ImageSnapshots.write(leader.image(), snapshot);
      }
    }
    MetadataReplica follower = new MetadataReplica(controller, 10);
    for (int i = 0; i < log.size(); i++) {
      follower.apply(i + 1, ByteBuffer.wrap(log.get(i)));
    }
    MetadataReplica restarted = new MetadataReplica(controller, 10);
    MetadataImage loaded = ImageSnapshots.read(snapshot);
    assertThat(loaded.offset()).isEqualTo(entries / 2);
    restarted.load(loaded);
    for (int i = entries / 2; i < log.size(); i++) {
      restarted.apply(i + 1, ByteBuffer.wrap(log.get(i)));
    }
    MetadataImage a = leader.image();
    assertThat(a.objects().size()).as("workload committed objects").isGreaterThan(entries / 50);
    assertThat(rejected).as("workload included rejections").isGreaterThan(0).isLessThan(entries);
    assertThat(follower.image().offset()).isEqualTo(a.offset());
    assertThat(restarted.image().offset()).isEqualTo(a.offset());
    assertThat(follower.image().toRecords()).isEqualTo(a.toRecords());
    assertThat(restarted.image().toRecords()).isEqualTo(a.toRecords());
    // indexes are rebuilt identically, not only the primary maps
    assertThat(restarted.image().preparedByExpiry()).isEqualTo(a.preparedByExpiry());
    assertThat(restarted.image().markedForDeletion()).isEqualTo(a.markedForDeletion());
    for (var s : a.streams().values()) {
      assertThat(restarted.image().objectsOfStream(s.streamId())).isEqualTo(a.objectsOfStream(s.streamId()));
      assertThat(follower.image().objectsOfStream(s.streamId())).isEqualTo(a.objectsOfStream(s.streamId()));
    }
    for (var b : a.brokers().values()) {
      assertThat(restarted.image().streamSetObjectsOfNode(b.nodeId())).isEqualTo(a.streamSetObjectsOfNode(b.nodeId()));
    }
  }
}
