package io.tidemark.metadata.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamRange;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImageFollowerTest {
  static final int FOLLOWER_ID = 101;

  /** Commits {@code count} one-range stream-set objects to {@code stream}, continuing at its end offset. */
  static void commit(ControllerClient c, NodeRef node, long stream, int count) {
    long end = c.getStreams(List.of(stream)).join().get(0).endOffset();
    for (int i = 0; i < count; i++) {
      long id = c.prepareObjects(node, 1, 600_000).join();
      c.commitStreamSetObject(node, new CommitStreamSetObjectRequest(id, 10,
          List.of(new StreamRange(stream, 1, end, end + 10)), List.of(), List.of())).join();
      end += 10;
    }
  }

  static ImageFollower follower(TestQuorum q, int port) throws Exception {
    return new ImageFollower(q.config(FOLLOWER_ID), "127.0.0.1:" + port, Clock.systemUTC())
        .raftTweaks(TestQuorum::smallPurgedSegments).start();
  }

  /** Waits until the follower and every running voter hold the same image at the same offset. */
  static void assertConverged(TestQuorum q, ImageFollower f, int voters) {
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      List<MetadataImage> images = new ArrayList<>(q.running().stream().map(ControllerNode::image).toList());
      assertThat(images).hasSize(voters);
      MetadataImage followed = f.image();
      for (MetadataImage image : images) {
        assertThat(followed.offset()).isEqualTo(image.offset());
        assertThat(followed.sameContentAs(image)).as("follower image equals voter image at %d", image.offset())
            .isTrue();
      }
    });
  }

  @Test
  void aListenerFollowsTheQuorumThroughLeaderChangesAndRestarts(@TempDir Path dir) throws Exception {
    // Goal: a non-voting follower's image equals the voters' after awaiting a write's offset, across a leader
    // change, and after its own restart when the leader already purged the entries it missed; leaving removes it.
    int port = TestQuorum.freePort();
    try (TestQuorum q = new TestQuorum(dir, 3, Clock.systemUTC(),
        Map.of(ControllerConfig.SESSION_TIMEOUT_MS.name(), "3600000"))
        .raftTweaks(TestQuorum::smallPurgedSegments).startAll()) {
      ControllerClient c = q.client();
      NodeRef node = c.registerBroker(1, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), "").join();
      long stream = c.createStream(node, Map.of("name", "s")).join();
      c.openStream(node, stream, 1).join();

      ImageFollower f = follower(q, port);
      try {
        commit(c, node, stream, 20);
        MetadataImage seen = f.awaitOffset(c.lastWriteOffset()).get(60, TimeUnit.SECONDS);
        assertThat(seen.offset()).isGreaterThanOrEqualTo(c.lastWriteOffset());
        assertThat(seen.stream(stream).endOffset()).isEqualTo(200);
        assertConverged(q, f, 3);

        // leader change: the follower keeps receiving the log from the new leader
        await().atMost(Duration.ofSeconds(30)).until(() -> q.leader() != null);
        int oldLeader = q.leader().nodeId();
        q.stop(oldLeader);
        commit(c, node, stream, 10);
        assertThat(f.awaitOffset(c.lastWriteOffset()).get(60, TimeUnit.SECONDS).stream(stream).endOffset())
            .isEqualTo(300);
        q.start(oldLeader);
        assertConverged(q, f, 3);
      } finally {
        f.close();
      }

      // while the follower is down the quorum moves on, snapshots and purges its log
      long followerWasAt = f.image().offset();
      commit(c, node, stream, 300);
      for (ControllerNode n : q.running()) {
        n.takeSnapshot(60_000);
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> q.leader() != null);
      ControllerNode leader = q.leader();
      await().atMost(Duration.ofSeconds(30)).until(() -> leader.logStartIndex() > followerWasAt + 1);

      ImageFollower restarted = follower(q, port);
      try {
        MetadataImage caughtUp = restarted.awaitOffset(c.lastWriteOffset()).get(60, TimeUnit.SECONDS);
        assertThat(caughtUp.stream(stream).endOffset()).isEqualTo(3300);
        assertConverged(q, restarted, 3);
        System.out.printf("image follower: resumed at %d after the leader purged its log below %d, caught up to %d%n",
            followerWasAt, leader.logStartIndex(), caughtUp.offset());
        assertThat(leader.listenerIds()).containsExactly(RaftGroups.listenerPeerId(FOLLOWER_ID).toString());
        // leaving for good removes it from the configuration; the quorum goes on committing
        restarted.leave();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
          for (ControllerNode n : q.running()) {
            assertThat(n.listenerIds()).isEmpty();
          }
        });
        commit(c, node, stream, 1);
      } finally {
        restarted.close();
      }
    }
  }
}
