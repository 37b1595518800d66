package io.tidemark.stream.metadata;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The metadata contract against the journaled authority, plus reopen and torn-tail recovery. */
class JournaledStreamMetadataTest extends StreamMetadataContractTest {

  @TempDir Path dir;

  private StreamMetadataConfig config(long deleteDelayMs) {
    return new StreamMetadataConfig(deleteDelayMs, 1000, 10_000);
  }

  @Override
  protected MetadataFixture createFixture(LongSupplier clockMs, ObjectStorage storage, ObjectKeys keys,
      long deleteDelayMs) throws IOException {
    return MemoryStreamMetadataTest.fixtureOf(MemoryStreamMetadata.openJournaled(dir.resolve("contract.journal"),
        clockMs, storage, keys, config(deleteDelayMs)));
  }

  @Test
  void reopenedJournalHasTheSameStateAndFencesTheOldNodeEpoch() throws Exception {
    // Goal: everything committed before a restart is there after replaying the journal.
    Path file = dir.resolve("meta.journal");
    MemoryStreamMetadata first = MemoryStreamMetadata.openJournaled(file, now::get, storage, keys, config(1));
    NodeRef n = first.registerNode(5);
    long s = first.createStream(n, Map.of("k", "v")).join();
    first.openStream(n, s, 3).join();
    long id = first.prepareObjects(n, 2, TTL_MS).join();
    first.commitStreamSetObject(n, sso(id, range(s, 3, 0, 42))).join();
    first.trimStream(n, s, 3, 10).join();
    List<Object> before = List.of(first.getStreams(List.of(s)).join(), first.getObjects(s, 0, 100, 10).join());
    // no close: simulate kill -9 (the file is fsync'd on every change)

    MemoryStreamMetadata second = MemoryStreamMetadata.openJournaled(file, now::get, storage, keys, config(1));
    assertThat(List.of(second.getStreams(List.of(s)).join(), second.getObjects(s, 0, 100, 10).join()))
        .isEqualTo(before);
    assertThat(second.getStreams(List.of(s)).join().getFirst().state()).isEqualTo(StreamState.OPEN);
    NodeRef restarted = second.registerNode(5);
    assertThat(restarted.nodeEpoch()).isEqualTo(n.nodeEpoch() + 1);
    assertThatFails(NodeFencedException.class, () -> second.createStream(n, Map.of()).join());
    // ids are not reused, the second prepared id is still committable
    assertThat(second.prepareObjects(restarted, 1, TTL_MS).join()).isEqualTo(id + 2);
    second.commitStreamSetObject(restarted, sso(id + 1, range(s, 3, 42, 50))).join();
    assertThat(second.getStreams(List.of(s)).join().getFirst().endOffset()).isEqualTo(50);
    first.close();
    second.close();
  }

  @Test
  void compactedJournalKeepsTheStateAndStaysBounded() throws Exception {
    // Goal: a journal past its compaction size is rewritten from the state; reopening gives the same state, new ids.
    Path file = dir.resolve("compact.journal");
    MemoryStreamMetadata first = MemoryStreamMetadata.openJournaled(file, now::get, storage, keys, config(1), 8192);
    NodeRef n = first.registerNode(3);
    List<Long> ids = new java.util.ArrayList<>();
    long lastObject = -1;
    for (int i = 0; i < 20; i++) {
      long s = first.createStream(n, Map.of("i", Integer.toString(i))).join();
      first.openStream(n, s, 1).join();
      ids.add(s);
    }
    long history = 0;
    for (int round = 0; round < 200; round++) {
      long s = ids.get(round % ids.size());
      long end = first.getStreams(List.of(s)).join().getFirst().endOffset();
      lastObject = first.prepareObjects(n, 1, TTL_MS).join();
      first.commitStreamSetObject(n, sso(lastObject, range(s, 1, end, end + 10))).join();
      first.trimStream(n, s, 1, end).join();
      now.addAndGet(10);
      first.tick().join();
      history = Math.max(history, Files.size(file));
    }
    first.closeStream(n, ids.get(1), 1).join();
    first.deleteStream(n, ids.get(2), 1).join();
    long preparedOnly = first.prepareObjects(n, 3, TTL_MS).join();
    List<Object> before = new java.util.ArrayList<>();
    before.add(first.getStreams(ids).join());
    for (long s : ids) {
      before.add(first.getObjects(s, 0, Long.MAX_VALUE, Integer.MAX_VALUE).join());
    }
    before.add(first.getStreamSetObjects(3).join());
    before.add(first.objectCounts());
    assertThat(history).as("journal size stays bounded by compaction").isLessThan(3 * 8192);
    assertThat(first.objectCounts().get("COMMITTED")).as("one live object per stream left, minus the deleted stream").isEqualTo(19);

    MemoryStreamMetadata second = MemoryStreamMetadata.openJournaled(file, now::get, storage, keys, config(1), 8192);
    List<Object> after = new java.util.ArrayList<>();
    after.add(second.getStreams(ids).join());
    for (long s : ids) {
      after.add(second.getObjects(s, 0, Long.MAX_VALUE, Integer.MAX_VALUE).join());
    }
    after.add(second.getStreamSetObjects(3).join());
    after.add(second.objectCounts());
    assertThat(after).isEqualTo(before);
    NodeRef n2 = second.registerNode(3);
    assertThat(second.prepareObjects(n2, 1, TTL_MS).join()).isEqualTo(preparedOnly + 3);
    assertThat(second.createStream(n2, Map.of()).join()).isEqualTo(ids.getLast() + 1);
    // a prepared id from before the compaction is still committable
    long s0 = ids.get(0);
    long end0 = second.getStreams(List.of(s0)).join().getFirst().endOffset();
    second.commitStreamSetObject(n2, sso(preparedOnly, range(s0, 1, end0, end0 + 1))).join();
    assertThat(lastObject).isLessThan(preparedOnly);
    first.close();
    second.close();
  }

  @Test
  void tornTailIsCutAndAppendsContinueAfterIt() throws Exception {
    // Goal: a partially written last frame (crash mid-write) is ignored, cut off, and later changes persist.
    Path file = dir.resolve("torn.journal");
    MemoryStreamMetadata first = MemoryStreamMetadata.openJournaled(file, now::get, storage, keys, config(1));
    NodeRef n = first.registerNode(1);
    long a = first.createStream(n, Map.of()).join();
    first.close();
    long goodSize = Files.size(file);
    for (byte[] garbage : List.of(new byte[] {0, 0, 0, 50, 1, 2}, new byte[] {0, 0, 0, 4, 9, 9, 9, 9, 1, 2, 3, 4})) {
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.APPEND)) {
        ch.write(ByteBuffer.wrap(garbage));
      }
      MemoryStreamMetadata reopened = MemoryStreamMetadata.openJournaled(file, now::get, storage, keys, config(1));
      assertThat(Files.size(file)).isEqualTo(goodSize);
      assertThat(reopened.getStreams(List.of(a)).join()).hasSize(1);
      reopened.close();
    }
    MemoryStreamMetadata third = MemoryStreamMetadata.openJournaled(file, now::get, storage, keys, config(1));
    NodeRef n2 = third.registerNode(1);
    long b = third.createStream(n2, Map.of()).join();
    third.close();
    MemoryStreamMetadata fourth = MemoryStreamMetadata.openJournaled(file, now::get, storage, keys, config(1));
    assertThat(fourth.getStreams(List.of(a, b)).join()).hasSize(2);
    fourth.close();
  }
}
