package io.tidemark.stream.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tidemark.stream.api.OffsetOutOfRangeException;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamNotFoundException;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest.StreamObject;
import io.tidemark.stream.metadata.ObjectMetadata.ObjectKind;
import io.tidemark.stream.metadata.StreamMetadata.StreamState;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The rules of {@link StreamManager} and {@link ObjectManager}, for every implementation (the
 * in-memory and journaled authorities here, the replicated controller in its module). A subclass
 * provides {@link #createFixture}. Every rejection is checked to change nothing.
 */
public abstract class StreamMetadataContractTest {

  /** One authority under test and the hooks the contract needs that are not part of the SPI. */
  public interface MetadataFixture extends AutoCloseable {
    StreamManager streams();

    ObjectManager objects();

    /** Registers node {@code nodeId} (again), returning its new, higher epoch. */
    NodeRef registerNode(int nodeId);

    /** Expires prepared objects past their TTL and deletes objects whose deletion delay passed. */
    CompletableFuture<Void> runLifecycle();

    @Override
    default void close() throws Exception {}
  }

  /**
   * A fresh, empty authority whose time is {@code clockMs}, which deletes objects from
   * {@code storage} under {@code keys}, {@code deleteDelayMs} after they are marked for deletion.
   */
  protected abstract MetadataFixture createFixture(LongSupplier clockMs, ObjectStorage storage, ObjectKeys keys,
      long deleteDelayMs) throws Exception;

  protected static final long DELETE_DELAY_MS = 10_000;
  protected static final long TTL_MS = 60_000;

  protected final AtomicLong now = new AtomicLong(1_000_000);
  protected final MemoryObjectStorage storage = new MemoryObjectStorage(now::get);
  protected final ObjectKeys keys = ObjectKeys.defaults();
  protected MetadataFixture fixture;
  protected StreamManager streams;
  protected ObjectManager objects;
  protected NodeRef node;
  protected NodeRef other;

  @BeforeEach
  void setUpFixture() throws Exception {
    fixture = createFixture(now::get, storage, keys, DELETE_DELAY_MS);
    streams = fixture.streams();
    objects = fixture.objects();
    node = fixture.registerNode(1);
    other = fixture.registerNode(2);
  }

  @AfterEach
  void tearDownFixture() throws Exception {
    fixture.close();
  }

  // ---------------------------------------------------------------------------------------------
  // Nodes

  @Test
  void unregisteredOrStaleNodeChangesNothing() {
    // Goal: a node unknown or with an old epoch is rejected with NodeFencedException on every call.
    long stream = open(create(), 1);
    NodeRef stale = node;
    NodeRef current = fixture.registerNode(1);
    assertThat(current.nodeEpoch()).isGreaterThan(stale.nodeEpoch());
    NodeRef unknown = new NodeRef(99, 1);
    for (NodeRef bad : List.of(stale, unknown)) {
      assertUnchanged(List.of(stream), NodeFencedException.class, () -> streams.createStream(bad, Map.of()).join());
      assertUnchanged(List.of(stream), NodeFencedException.class, () -> streams.openStream(bad, stream, 5).join());
      assertUnchanged(List.of(stream), NodeFencedException.class, () -> streams.closeStream(bad, stream, 1).join());
      assertUnchanged(List.of(stream), NodeFencedException.class, () -> streams.trimStream(bad, stream, 1, 0).join());
      assertUnchanged(List.of(stream), NodeFencedException.class, () -> streams.deleteStream(bad, stream, 1).join());
      assertUnchanged(List.of(stream), NodeFencedException.class, () -> streams.getOpeningStreams(bad).join());
      assertUnchanged(List.of(stream), NodeFencedException.class, () -> objects.prepareObjects(bad, 1, TTL_MS).join());
    }
    // the old incarnation cannot commit what it prepared
    long id = objects.prepareObjects(current, 1, TTL_MS).join();
    assertUnchanged(List.of(stream), NodeFencedException.class,
        () -> objects.commitStreamSetObject(stale, sso(id, range(stream, 1, 0, 10))).join());
    objects.commitStreamSetObject(current, sso(id, range(stream, 1, 0, 10))).join();
    assertThat(end(stream)).isEqualTo(10);
  }

  // ---------------------------------------------------------------------------------------------
  // Streams

  @Test
  void createdStreamIsClosedEmptyAtEpochZero() {
    // Goal: createStream returns distinct ids of closed, empty streams carrying their tags.
    long a = streams.createStream(node, Map.of("topic", "orders")).join();
    long b = streams.createStream(node, Map.of()).join();
    assertThat(a).isNotEqualTo(b);
    StreamMetadata meta = streams.getStreams(List.of(a)).join().getFirst();
    assertThat(meta).isEqualTo(new StreamMetadata(a, 0, 0, 0, StreamState.CLOSED, -1, Map.of("topic", "orders")));
    assertThat(streams.getStreams(List.of(b, 12345L, a)).join()).extracting(StreamMetadata::streamId)
        .containsExactly(b, a);
  }

  @Test
  void openTakesTheStreamWithEqualOrHigherEpochAndFencesLower() {
    // Goal: open with a lower epoch is fenced; equal or higher takes the stream (also from another node).
    long stream = create();
    StreamMetadata opened = streams.openStream(node, stream, 3).join();
    assertThat(opened.state()).isEqualTo(StreamState.OPEN);
    assertThat(opened.epoch()).isEqualTo(3);
    assertThat(opened.ownerNodeId()).isEqualTo(1);
    assertThat(streams.openStream(node, stream, 3).join()).isEqualTo(opened);
    assertUnchanged(List.of(stream), StreamFencedException.class, () -> streams.openStream(other, stream, 2).join());
    StreamMetadata taken = streams.openStream(other, stream, 4).join();
    assertThat(taken.ownerNodeId()).isEqualTo(2);
    assertThat(taken.epoch()).isEqualTo(4);
    assertThat(streams.getOpeningStreams(node).join()).isEmpty();
    assertThat(streams.getOpeningStreams(other).join()).extracting(StreamMetadata::streamId).containsExactly(stream);
    assertUnchanged(List.of(stream), StreamNotFoundException.class, () -> streams.openStream(node, 777, 1).join());
  }

  @Test
  void closeNeedsTheCurrentEpochAndOwnership() {
    // Goal: close with an old epoch or by a node that does not hold the stream is fenced; close is idempotent.
    long stream = open(create(), 2);
    assertUnchanged(List.of(stream), StreamFencedException.class, () -> streams.closeStream(node, stream, 1).join());
    assertUnchanged(List.of(stream), StreamFencedException.class, () -> streams.closeStream(other, stream, 2).join());
    assertUnchanged(List.of(stream), StreamNotFoundException.class, () -> streams.closeStream(node, 999, 2).join());
    streams.closeStream(node, stream, 2).join();
    StreamMetadata closed = meta(stream);
    assertThat(closed.state()).isEqualTo(StreamState.CLOSED);
    assertThat(closed.ownerNodeId()).isEqualTo(-1);
    streams.closeStream(node, stream, 2).join();
    assertThat(streams.getOpeningStreams(node).join()).isEmpty();
    // reopen keeps the offsets
    commitAfterReopen(stream);
  }

  private void commitAfterReopen(long stream) {
    StreamMetadata reopened = streams.openStream(node, stream, 3).join();
    assertThat(reopened.endOffset()).isEqualTo(0);
    upload(node, range(stream, 3, 0, 5));
    streams.closeStream(node, stream, 3).join();
    assertThat(streams.openStream(other, stream, 4).join().endOffset()).isEqualTo(5);
  }

  @Test
  void openingStreamsListsOnlyTheNodesOpenStreams() {
    // Goal: getOpeningStreams returns exactly the streams open on the calling node.
    long a = open(create(), 1);
    long b = open(create(), 1);
    long c = create();
    streams.openStream(other, c, 1).join();
    streams.closeStream(node, b, 1).join();
    assertThat(streams.getOpeningStreams(node).join()).extracting(StreamMetadata::streamId).containsExactly(a);
    assertThat(streams.getOpeningStreams(other).join()).extracting(StreamMetadata::streamId).containsExactly(c);
  }

  // ---------------------------------------------------------------------------------------------
  // Prepare and upload commits

  @Test
  void prepareReservesConsecutiveDistinctIds() {
    // Goal: prepared ids are consecutive within a call and never reused across calls; bad counts are rejected.
    long first = objects.prepareObjects(node, 3, TTL_MS).join();
    long second = objects.prepareObjects(other, 2, TTL_MS).join();
    assertThat(second).isGreaterThanOrEqualTo(first + 3);
    assertThatFails(IllegalArgumentException.class, () -> objects.prepareObjects(node, 0, TTL_MS).join());
    assertThatFails(IllegalArgumentException.class, () -> objects.prepareObjects(node, 1, 0).join());
    long third = objects.prepareObjects(node, 1, TTL_MS).join();
    assertThat(third).isGreaterThanOrEqualTo(second + 2);
  }

  @Test
  void uploadCommitAdvancesEndOffsetsAndMakesObjectsReadable() {
    // Goal: a stream-set object plus a stream object commit atomically; end offsets move; getObjects finds them.
    long a = open(create(), 1);
    long b = open(create(), 1);
    long first = objects.prepareObjects(node, 2, TTL_MS).join();
    objects.commitStreamSetObject(node, new CommitStreamSetObjectRequest(first, 100, List.of(range(a, 1, 0, 10)),
        List.of(new StreamObject(first + 1, 200, range(b, 1, 0, 50))), List.of())).join();
    assertThat(end(a)).isEqualTo(10);
    assertThat(end(b)).isEqualTo(50);
    ObjectMetadata set = objects.getObjects(a, 0, 10, 10).join().getFirst();
    assertThat(set.objectId()).isEqualTo(first);
    assertThat(set.kind()).isEqualTo(ObjectKind.STREAM_SET);
    assertThat(set.sizeBytes()).isEqualTo(100);
    assertThat(set.rangeOf(a)).isEqualTo(range(a, 1, 0, 10));
    ObjectMetadata so = objects.getObjects(b, 10, 20, 10).join().getFirst();
    assertThat(so.objectId()).isEqualTo(first + 1);
    assertThat(so.kind()).isEqualTo(ObjectKind.STREAM);
    assertThat(objects.getStreamSetObjects(1).join()).extracting(ObjectMetadata::objectId).containsExactly(first);
    assertThat(objects.getStreamObjects(b).join()).extracting(ObjectMetadata::objectId).containsExactly(first + 1);
    assertThat(objects.getStreamSetObjects(2).join()).isEmpty();
  }

  @Test
  void getObjectsReturnsOverlappingObjectsInOffsetOrderUpToTheLimit() {
    // Goal: getObjects finds every object overlapping the range, including one starting before it, in order.
    long s = open(create(), 1);
    for (int i = 0; i < 5; i++) {
      upload(node, range(s, 1, i * 10L, i * 10L + 10));
    }
    assertThat(objects.getObjects(s, 15, 35, 10).join()).extracting(o -> o.rangeOf(s).startOffset())
        .containsExactly(10L, 20L, 30L);
    assertThat(objects.getObjects(s, 0, 50, 2).join()).extracting(o -> o.rangeOf(s).startOffset())
        .containsExactly(0L, 10L);
    assertThat(objects.getObjects(s, 50, 60, 10).join()).isEmpty();
    assertThat(objects.getObjects(4242, 0, 60, 10).join()).isEmpty();
  }

  @Test
  void uploadWithGapOrOverlapIsRejected() {
    // Goal: each committed range must start exactly at the stream's end offset.
    long s = open(create(), 1);
    upload(node, range(s, 1, 0, 10));
    long id = objects.prepareObjects(node, 1, TTL_MS).join();
    assertUnchanged(List.of(s), InvalidCommitException.class,
        () -> objects.commitStreamSetObject(node, sso(id, range(s, 1, 11, 20))).join());
    assertUnchanged(List.of(s), InvalidCommitException.class,
        () -> objects.commitStreamSetObject(node, sso(id, range(s, 1, 9, 20))).join());
    assertUnchanged(List.of(s), InvalidCommitException.class,
        () -> objects.commitStreamSetObject(node, sso(id, range(s, 1, 10, 10))).join());
    // the id is still usable after the rejections
    objects.commitStreamSetObject(node, sso(id, range(s, 1, 10, 20))).join();
    assertThat(end(s)).isEqualTo(20);
  }

  @Test
  void uploadWithStaleEpochOrFromANonOwnerIsFenced() {
    // Goal: a commit carrying an old stream epoch, or from a node not holding the stream, is fenced.
    long s = open(create(), 1);
    long id = objects.prepareObjects(node, 1, TTL_MS).join();
    streams.openStream(other, s, 2).join();
    assertUnchanged(List.of(s), StreamFencedException.class,
        () -> objects.commitStreamSetObject(node, sso(id, range(s, 1, 0, 10))).join());
    assertUnchanged(List.of(s), StreamFencedException.class,
        () -> objects.commitStreamSetObject(node, sso(id, range(s, 2, 0, 10))).join());
    long closed = create();
    assertUnchanged(List.of(s, closed), StreamFencedException.class,
        () -> objects.commitStreamSetObject(node, sso(id, range(closed, 0, 0, 10))).join());
    assertUnchanged(List.of(s), StreamNotFoundException.class,
        () -> objects.commitStreamSetObject(node, sso(id, range(31337, 0, 0, 10))).join());
  }

  @Test
  void uploadWithBadObjectIdsIsRejected() {
    // Goal: ids never prepared, already committed, prepared by another node, duplicated or missing are rejected.
    long s = open(create(), 1);
    long mine = objects.prepareObjects(node, 1, TTL_MS).join();
    long theirs = objects.prepareObjects(other, 1, TTL_MS).join();
    assertUnchanged(List.of(s), InvalidCommitException.class,
        () -> objects.commitStreamSetObject(node, sso(mine + 1000, range(s, 1, 0, 10))).join());
    assertUnchanged(List.of(s), InvalidCommitException.class,
        () -> objects.commitStreamSetObject(node, sso(theirs, range(s, 1, 0, 10))).join());
    assertUnchanged(List.of(s), InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(mine, 1, List.of(range(s, 1, 0, 10)),
            List.of(new StreamObject(mine, 1, range(s, 1, 10, 20))), List.of())).join());
    assertUnchanged(List.of(s), InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(-1, 0, List.of(), List.of(), List.of())).join());
    assertUnchanged(List.of(s), InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(-1, 0, List.of(range(s, 1, 0, 10)), List.of(), List.of())).join());
    objects.commitStreamSetObject(node, sso(mine, range(s, 1, 0, 10))).join();
    assertUnchanged(List.of(s), InvalidCommitException.class,
        () -> objects.commitStreamSetObject(node, sso(mine, range(s, 1, 10, 20))).join());
  }

  @Test
  void expiredPreparedObjectCannotBeCommittedAndIsDeleted() {
    // Goal: after its TTL a prepared id is rejected, marked for deletion, and its (orphan) object deleted after the delay.
    long s = open(create(), 1);
    long id = objects.prepareObjects(node, 1, TTL_MS).join();
    storage.put(keys.key(id), ByteBuffer.wrap(new byte[] {1, 2, 3})).join();
    now.addAndGet(TTL_MS);
    assertUnchanged(List.of(s), InvalidCommitException.class,
        () -> objects.commitStreamSetObject(node, sso(id, range(s, 1, 0, 10))).join());
    fixture.runLifecycle().join();
    assertThat(storage.list("").join()).hasSize(1);
    now.addAndGet(DELETE_DELAY_MS);
    fixture.runLifecycle().join();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      fixture.runLifecycle().join();
      assertThat(storage.list("").join()).isEmpty();
    });
    assertUnchanged(List.of(s), InvalidCommitException.class,
        () -> objects.commitStreamSetObject(node, sso(id, range(s, 1, 0, 10))).join());
  }

  // ---------------------------------------------------------------------------------------------
  // Compaction commits

  @Test
  void streamSetCompactionReplacesExactlyCoveredInputs() {
    // Goal: a compaction whose outputs exactly cover its inputs replaces them; the inputs are marked for deletion.
    long a = open(create(), 1);
    long b = open(create(), 1);
    long first = upload(node, range(a, 1, 0, 10), range(b, 1, 0, 5));
    long second = upload(node, range(a, 1, 10, 20), range(b, 1, 5, 8));
    long out = objects.prepareObjects(node, 2, TTL_MS).join();
    objects.commitStreamSetObject(node, new CommitStreamSetObjectRequest(out, 300, List.of(range(b, 1, 0, 8)),
        List.of(new StreamObject(out + 1, 400, range(a, 1, 0, 20))), List.of(first, second))).join();
    assertThat(end(a)).isEqualTo(20);
    assertThat(end(b)).isEqualTo(8);
    assertThat(objects.getObjects(a, 0, 20, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(out + 1);
    assertThat(objects.getObjects(b, 0, 8, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(out);
    assertThat(objects.getStreamSetObjects(1).join()).extracting(ObjectMetadata::objectId).containsExactly(out);
    assertThat(objects.getStreamSetObjects(1).join().getFirst().orderId()).isEqualTo(first);
    // uploads keep working after a compaction
    upload(node, range(a, 1, 20, 30));
    assertThat(end(a)).isEqualTo(30);
  }

  @Test
  void compactionNotExactlyCoveringItsInputsIsRejected() {
    // Goal: missing, extra or shifted data in a compaction's outputs is rejected and changes nothing.
    long a = open(create(), 1);
    long b = open(create(), 1);
    long first = upload(node, range(a, 1, 0, 10), range(b, 1, 0, 5));
    long second = upload(node, range(a, 1, 10, 20));
    long out = objects.prepareObjects(node, 1, TTL_MS).join();
    List<Long> ids = List.of(a, b);
    assertUnchanged(ids, InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(out, 1, List.of(range(a, 1, 0, 20)), List.of(), List.of(first, second)))
        .join());
    assertUnchanged(ids, InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(out, 1, List.of(range(a, 1, 0, 19), range(b, 1, 0, 5)), List.of(),
            List.of(first, second))).join());
    assertUnchanged(ids, InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(out, 1, List.of(range(a, 1, 0, 20), range(b, 1, 0, 6)), List.of(),
            List.of(first, second))).join());
    assertUnchanged(ids, InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(out, 1, List.of(range(a, 1, 0, 10), range(b, 1, 0, 5)), List.of(),
            List.of(first, first))).join());
    // inputs that are not committed stream-set objects of this node
    long foreign = open(create(), 1);
    streams.openStream(other, foreign, 1).join();
    long otherSet = upload(other, range(foreign, 1, 0, 3));
    assertUnchanged(ids, InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(out, 1, List.of(range(foreign, 1, 0, 3)), List.of(), List.of(otherSet)))
        .join());
    assertUnchanged(ids, InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(out, 1, List.of(range(a, 1, 0, 10)), List.of(), List.of(out + 50)))
        .join());
    objects.commitStreamSetObject(node, new CommitStreamSetObjectRequest(out, 1,
        List.of(range(a, 1, 0, 20), range(b, 1, 0, 5)), List.of(), List.of(first, second))).join();
  }

  @Test
  void streamObjectCompactionMergesContiguousSources() {
    // Goal: stream objects of one stream merge into one covering exactly their union; gaps are rejected.
    long s = open(create(), 1);
    long[] so = new long[3];
    for (int i = 0; i < 3; i++) {
      long id = objects.prepareObjects(node, 1, TTL_MS).join();
      objects.commitStreamSetObject(node, new CommitStreamSetObjectRequest(-1, 0, List.of(),
          List.of(new StreamObject(id, 10, range(s, 1, i * 10L, i * 10L + 10))), List.of())).join();
      so[i] = id;
    }
    long merged = objects.prepareObjects(node, 1, TTL_MS).join();
    assertUnchanged(List.of(s), InvalidCommitException.class, () -> objects.commitStreamObject(node,
        new CommitStreamObjectRequest(merged, 20, range(s, 1, 0, 30), List.of(so[0], so[2]))).join());
    assertUnchanged(List.of(s), InvalidCommitException.class, () -> objects.commitStreamObject(node,
        new CommitStreamObjectRequest(merged, 20, range(s, 1, 0, 25), List.of(so[0], so[1], so[2]))).join());
    assertUnchanged(List.of(s), InvalidCommitException.class, () -> objects.commitStreamObject(node,
        new CommitStreamObjectRequest(merged, 20, range(s, 1, 0, 10), List.of())).join());
    objects.commitStreamObject(node, new CommitStreamObjectRequest(merged, 30, range(s, 1, 0, 30),
        List.of(so[0], so[1], so[2]))).join();
    assertThat(objects.getStreamObjects(s).join()).extracting(ObjectMetadata::objectId).containsExactly(merged);
    assertThat(objects.getObjects(s, 0, 30, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(merged);
  }

  @Test
  void streamObjectCommitTakesOneStreamOutOfStreamSetObjectsOfAnyNode() {
    // Goal: a log cleaner's rewrite (on another node) replaces one stream's ranges in stream-set objects; the
    // other streams stay in them, an object left with no range is replaced whole, and a stream-set compaction
    // that still lists the rewritten range is rejected.
    long a = open(create(), 1);
    long b = open(create(), 1);
    long first = upload(node, range(a, 1, 0, 10), range(b, 1, 0, 5));
    long second = upload(node, range(a, 1, 10, 20));
    long cleaned = objects.prepareObjects(other, 1, TTL_MS).join();
    List<Long> ids = List.of(a, b);
    assertUnchanged(ids, InvalidCommitException.class, () -> objects.commitStreamObject(other,
        new CommitStreamObjectRequest(cleaned, 7, range(a, 1, 0, 15), List.of(first, second))).join());
    assertUnchanged(ids, InvalidCommitException.class, () -> objects.commitStreamObject(other,
        new CommitStreamObjectRequest(cleaned, 7, range(b, 1, 0, 5), List.of(second))).join());
    objects.commitStreamObject(other, new CommitStreamObjectRequest(cleaned, 7, range(a, 1, 0, 20),
        List.of(first, second))).join();
    assertThat(objects.getObjects(a, 0, 20, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(cleaned);
    assertThat(objects.getStreamObjects(a).join()).extracting(ObjectMetadata::objectId).containsExactly(cleaned);
    assertThat(objects.getObjects(b, 0, 5, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(first);
    List<ObjectMetadata> sets = objects.getStreamSetObjects(1).join();
    assertThat(sets).extracting(ObjectMetadata::objectId).containsExactly(first);
    assertThat(sets.getFirst().ranges()).containsExactly(range(b, 1, 0, 5));
    assertThat(end(a)).isEqualTo(20);
    long out = objects.prepareObjects(node, 1, TTL_MS).join();
    assertUnchanged(ids, InvalidCommitException.class, () -> objects.commitStreamSetObject(node,
        new CommitStreamSetObjectRequest(out, 1, List.of(range(a, 1, 0, 10), range(b, 1, 0, 5)), List.of(),
            List.of(first))).join());
    objects.commitStreamSetObject(node, new CommitStreamSetObjectRequest(out, 1, List.of(range(b, 1, 0, 5)),
        List.of(), List.of(first))).join();
    assertThat(objects.getObjects(b, 0, 5, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(out);
    assertThat(objects.getObjects(a, 0, 20, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(cleaned);
  }

  // ---------------------------------------------------------------------------------------------
  // Trim, delete, delayed deletion

  @Test
  void trimMovesStartForwardOnlyAndMarksWhollyTrimmedObjects() {
    // Goal: trim never moves back or past the end; objects wholly below the start are deleted after the delay.
    long a = open(create(), 1);
    long b = open(create(), 1);
    long set = upload(node, range(a, 1, 0, 10), range(b, 1, 0, 10));
    long soId = objects.prepareObjects(node, 1, TTL_MS).join();
    objects.commitStreamSetObject(node, new CommitStreamSetObjectRequest(-1, 0, List.of(),
        List.of(new StreamObject(soId, 10, range(a, 1, 10, 20))), List.of())).join();
    storage.put(keys.key(set), ByteBuffer.allocate(1)).join();
    storage.put(keys.key(soId), ByteBuffer.allocate(1)).join();

    assertUnchanged(List.of(a, b), OffsetOutOfRangeException.class, () -> streams.trimStream(node, a, 1, 21).join());
    assertUnchanged(List.of(a, b), StreamFencedException.class, () -> streams.trimStream(node, a, 0, 5).join());
    streams.trimStream(node, a, 1, 15).join();
    assertThat(meta(a).startOffset()).isEqualTo(15);
    streams.trimStream(node, a, 1, 3).join();
    assertThat(meta(a).startOffset()).isEqualTo(15);
    // the set object still holds live data of b; the stream object holds 15..20
    assertThat(objects.getObjects(b, 0, 10, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(set);
    streams.trimStream(node, b, 1, 10).join();
    assertThat(objects.getObjects(b, 0, 10, 10).join()).isEmpty();
    assertThat(objects.getObjects(a, 15, 20, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(soId);
    fixture.runLifecycle().join();
    assertThat(storage.list("").join()).hasSize(2);
    now.addAndGet(DELETE_DELAY_MS);
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      fixture.runLifecycle().join();
      assertThat(storage.list("").join()).extracting(i -> i.key()).containsExactly(keys.key(soId));
    });
    streams.trimStream(node, a, 1, 20).join();
    assertThat(objects.getStreamObjects(a).join()).isEmpty();
  }

  @Test
  void deleteRemovesTheStreamAndMarksItsObjects() {
    // Goal: a deleted stream is gone and objects holding only its data are deleted after the delay.
    long a = open(create(), 1);
    long b = open(create(), 1);
    long shared = upload(node, range(a, 1, 0, 10), range(b, 1, 0, 10));
    long own = upload(node, range(a, 1, 10, 20));
    storage.put(keys.key(shared), ByteBuffer.allocate(1)).join();
    storage.put(keys.key(own), ByteBuffer.allocate(1)).join();
    assertUnchanged(List.of(a, b), StreamFencedException.class, () -> streams.deleteStream(node, a, 7).join());
    streams.deleteStream(node, a, 1).join();
    assertThat(streams.getStreams(List.of(a)).join()).isEmpty();
    assertUnchanged(List.of(b), StreamNotFoundException.class, () -> streams.openStream(node, a, 2).join());
    assertThat(objects.getObjects(b, 0, 10, 10).join()).extracting(ObjectMetadata::objectId).containsExactly(shared);
    now.addAndGet(DELETE_DELAY_MS);
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      fixture.runLifecycle().join();
      assertThat(storage.list("").join()).extracting(i -> i.key()).containsExactly(keys.key(shared));
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  protected long create() {
    return streams.createStream(node, Map.of()).join();
  }

  protected long open(long stream, long epoch) {
    streams.openStream(node, stream, epoch).join();
    return stream;
  }

  protected static StreamRange range(long stream, long epoch, long start, long end) {
    return new StreamRange(stream, epoch, start, end);
  }

  protected static CommitStreamSetObjectRequest sso(long objectId, StreamRange... ranges) {
    return new CommitStreamSetObjectRequest(objectId, 64, List.of(ranges), List.of(), List.of());
  }

  /** Commits one stream-set object holding {@code ranges}; returns its id. */
  protected long upload(NodeRef by, StreamRange... ranges) {
    long id = objects.prepareObjects(by, 1, TTL_MS).join();
    objects.commitStreamSetObject(by, sso(id, ranges)).join();
    return id;
  }

  protected StreamMetadata meta(long stream) {
    return streams.getStreams(List.of(stream)).join().getFirst();
  }

  protected long end(long stream) {
    return meta(stream).endOffset();
  }

  /** Everything observable about {@code streamIds} and both nodes. */
  protected List<Object> observe(List<Long> streamIds) {
    List<Object> state = new ArrayList<>();
    state.add(streams.getStreams(streamIds).join());
    for (long id : streamIds) {
      state.add(objects.getObjects(id, 0, Long.MAX_VALUE, Integer.MAX_VALUE).join());
      state.add(objects.getStreamObjects(id).join());
    }
    state.add(objects.getStreamSetObjects(node.nodeId()).join());
    state.add(objects.getStreamSetObjects(other.nodeId()).join());
    return state;
  }

  /** Asserts {@code call} fails with {@code error} and that nothing observable changed. */
  protected void assertUnchanged(List<Long> streamIds, Class<? extends Throwable> error, ThrowingCallable call) {
    List<Object> before = observe(streamIds);
    assertThatFails(error, call);
    assertThat(observe(streamIds)).isEqualTo(before);
  }

  protected static void assertThatFails(Class<? extends Throwable> error, ThrowingCallable call) {
    assertThatThrownBy(call).satisfiesAnyOf(
        e -> assertThat(e).isInstanceOf(error),
        e -> assertThat(e).isInstanceOf(CompletionException.class).cause().isInstanceOf(error));
  }
}
