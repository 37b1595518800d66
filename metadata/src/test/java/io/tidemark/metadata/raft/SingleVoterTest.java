package io.tidemark.metadata.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.NodeLoad;
import io.tidemark.metadata.controller.NodeLoads;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.InvalidCommitException;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.metadata.StreamRange;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.util.NetUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class SingleVoterTest {

  @Test
  void embeddedVoterServesTheStreamLifecycleThroughTheClient(@TempDir Path dir) throws Exception {
    // Goal: one voter (the embedded default) serves register → create → open → prepare → commit → read.
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), Map.of()).startAll()) {
      ControllerClient c = q.client();
      NodeRef node = c.registerBroker(7, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)), "").join();
      assertThat(node.nodeEpoch()).isEqualTo(1);
      long stream = c.createStream(node, Map.of("topic", "t")).join();
      StreamMetadata opened = c.openStream(node, stream, 1).join();
      assertThat(opened.state()).isEqualTo(StreamMetadata.StreamState.OPEN);
      long obj = c.prepareObjects(node, 1, 60_000).join();
      c.commitStreamSetObject(node, new CommitStreamSetObjectRequest(obj, 100,
          List.of(new StreamRange(stream, 1, 0, 10)), List.of(), List.of())).join();
      List<ObjectMetadata> objs = c.getObjects(stream, 0, 10, 10).join();
      assertThat(objs).extracting(ObjectMetadata::objectId).containsExactly(obj);
      assertThat(c.getStreams(List.of(stream)).join().get(0).endOffset()).isEqualTo(10);
      assertThatThrownBy(() -> c.openStream(node, stream, 0).join())
          .isInstanceOf(CompletionException.class).hasCauseInstanceOf(StreamFencedException.class);
      assertThatThrownBy(() -> c.commitStreamSetObject(node, new CommitStreamSetObjectRequest(obj, 100,
          List.of(new StreamRange(stream, 1, 10, 20)), List.of(), List.of())).join())
          .hasCauseInstanceOf(InvalidCommitException.class);
      assertThat(q.node(1).replica().awaitOffset(c.lastWriteOffset()).join().stream(stream).endOffset())
          .isEqualTo(10);
    }
  }

  @Test
  void aTakenVoterPortFailsTheStartInsteadOfEndingTheProcessAndABrieflyHeldOneIsWaitedFor(@TempDir Path dir)
      throws Exception {
    // Goal: Ratis calls System.exit when its server cannot bind (a CI run lost its whole test JVM that way when a
    // restarted node's port was taken); the node checks the port first, waits a bounded time, then fails its start.
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), Map.of())) {
      InetSocketAddress voter = NetUtils.createSocketAddr(q.config(1).nodeAddress());
      try (ServerSocket taken = new ServerSocket()) {
        taken.bind(new InetSocketAddress("127.0.0.1", voter.getPort()));
        assertThatThrownBy(() -> q.start(1)).isInstanceOf(IOException.class)
            .hasMessageContaining("cannot bind its voter port").hasMessageContaining(":" + voter.getPort());
      }
      ServerSocket held = new ServerSocket();
      held.bind(new InetSocketAddress("127.0.0.1", voter.getPort()));
      CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS).execute(() -> {
        try {
          held.close();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
      ControllerNode node = q.start(1);
      assertThat(held.isClosed()).isTrue();
      NodeRef ref = q.client().registerBroker(7, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)), "").join();
      assertThat(ref.nodeEpoch()).isEqualTo(1);
      assertThat(node.nodeId()).isEqualTo(1);
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void continuationsMaySendMoreRequestsThanRatisKeepsInFlight(@TempDir Path dir) throws Exception {
    // Goal: a caller that sends many requests from a reply's continuation (recovery closing every stream it
    // held) is not deadlocked by Ratis' bound of 100 outstanding requests; it was, when replies completed on
    // the Ratis thread that holds the sliding window's lock.
    // A long request timeout: on a loaded machine, attempts that time out and are retried only slow this test down.
    Map<String, String> patient = Map.of(ControllerConfig.REQUEST_TIMEOUT_MS.name(), "20000");
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), patient).startAll()) {
      ControllerClient c = q.client();
      NodeRef node = c.registerBroker(7, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)), "").join();
      int streams = RaftClientConfigKeys.Async.OUTSTANDING_REQUESTS_MAX_DEFAULT + 50;
      List<Long> created = c.getOpeningStreams(node).thenCompose(none -> {
        List<CompletableFuture<Long>> creations = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
          creations.add(c.createStream(node, Map.of("i", Integer.toString(i))));
        }
        return CompletableFuture.allOf(creations.toArray(CompletableFuture[]::new))
            .thenApply(v -> creations.stream().map(CompletableFuture::join).toList());
      }).get(2, TimeUnit.MINUTES);
      assertThat(created).hasSize(streams).doesNotHaveDuplicates();
    }
  }

  @Test
  void theLeaderKeepsTheLoadEachRegisteredNodeReportsAndRefusesStaleEpochs(@TempDir Path dir) throws Exception {
    // Goal: every node's load reaches any reader through the leader (what the console shows for other nodes),
    // only for the registered epoch of each node, unknown values staying unknown.
    try (TestQuorum q = new TestQuorum(dir, 1, Clock.systemUTC(), Map.of()).startAll()) {
      ControllerClient c = q.client();
      NodeRef seven = c.registerBroker(7, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)), "").join();
      NodeRef eight = c.registerBroker(8, List.of(new Endpoint("PLAINTEXT", "localhost", 9093)), "").join();
      assertThat(c.describeLoads().join()).isEmpty();
      c.reportLoad(seven, new NodeLoad(0.25, 0.5, 1000, 2000, 30, 4000)).join();
      c.reportLoad(eight, new NodeLoad(0.1, Double.NaN, Double.NaN, 5, 6, 7)).join();
      NodeRef sevenAgain = c.registerBroker(7, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)), "").join();
      assertThatThrownBy(() -> c.reportLoad(seven, new NodeLoad(0.9, 0.9, 9, 9, 9, 9)).join())
          .hasCauseInstanceOf(io.tidemark.stream.metadata.NodeFencedException.class);
      List<NodeLoads.Reported> loads = c.describeLoads().join();
      // node 7 registered again: its report under the old epoch is gone, the new epoch has not reported yet
      assertThat(loads).extracting(NodeLoads.Reported::nodeId).containsExactly(8);
      NodeLoad eightLoad = loads.get(0).load();
      assertThat(eightLoad.processCpu()).isEqualTo(0.1);
      assertThat(eightLoad.systemCpu()).isNaN();
      assertThat(eightLoad.bytesOutPerSec()).isEqualTo(5);
      assertThat(loads.get(0).ageMs()).isBetween(0L, 30_000L);
      c.reportLoad(sevenAgain, new NodeLoad(0.25, 0.5, 1000, 2000, 30, 4000)).join();
      assertThat(c.describeLoads().join()).extracting(NodeLoads.Reported::nodeId).containsExactly(7, 8);
      assertThat(c.describeLoads().join().get(0).load()).isEqualTo(new NodeLoad(0.25, 0.5, 1000, 2000, 30, 4000));
    }
  }
}
