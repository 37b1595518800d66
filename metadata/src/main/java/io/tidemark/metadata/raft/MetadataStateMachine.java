package io.tidemark.metadata.raft;

import io.tidemark.metadata.controller.BrokerSessions;
import io.tidemark.metadata.controller.Controller;
import io.tidemark.metadata.controller.ControllerReply;
import io.tidemark.metadata.controller.ControllerRequest;
import io.tidemark.metadata.controller.ErrorCode;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.controller.NodeLoads;
import io.tidemark.metadata.controller.RequestCodec;
import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.ImageSnapshots;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.CorruptRecordException;
import io.tidemark.metadata.record.FieldWriter;
import io.tidemark.stream.metadata.NodeRef;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ratis state machine of the metadata log. On the leader, {@link #startTransaction} stamps a
 * write request with the leader's clock; on every node, {@link #applyTransaction} hands the
 * committed entry to the {@link MetadataReplica}, which computes and replays its records. Reads
 * ({@link #query}) are answered from the leader's image; heartbeats update the leader's
 * {@link BrokerSessions}.
 *
 * <p>Snapshots: {@link #takeSnapshot} writes the image with {@link ImageSnapshots} (atomic, with a
 * checksum) as {@code snapshot.<term>_<index>} plus Ratis' MD5 file; start-up and snapshot
 * installation load the newest one. A snapshot or entry that does not verify halts this node: the
 * error names the file or offset, and the node refuses to serve.
 *
 * <p>Threading: Ratis calls apply, snapshot and reinitialize from its single state-machine
 * thread; queries and transactions start on RPC threads and only read immutable images.
 */
public final class MetadataStateMachine extends BaseStateMachine {
  private static final Logger LOG = LoggerFactory.getLogger(MetadataStateMachine.class);
  /** A load report older than this is not answered (its node stopped reporting, or reports to another leader). */
  static final long LOAD_MAX_AGE_MS = 30_000;

  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
  private final MetadataReplica replica;
  private final Controller controller;
  private final BrokerSessions sessions;
  private final Clock clock;
  private final Queue<NodeRef> unfenceRequests = new ConcurrentLinkedQueue<>();
  /** Every node's last reported load (soft state on the leader, like the sessions). */
  private final NodeLoads loads = new NodeLoads(LOAD_MAX_AGE_MS);
  private final int maxUnfenceRequests;
  private final Consumer<String> onHalt;
  private volatile TermIndex appliedTermIndex = TermIndex.valueOf(0, -1);

  public MetadataStateMachine(MetadataReplica replica, Controller controller, BrokerSessions sessions, Clock clock,
      Consumer<String> onHalt) {
    this.replica = replica;
    this.controller = controller;
    this.sessions = sessions;
    this.clock = clock;
    this.onHalt = onHalt;
    this.maxUnfenceRequests = 10_000;
  }

  public MetadataReplica replica() {
    return replica;
  }

  /** Fenced brokers that heartbeated (drained by the leader's housekeeping). */
  Queue<NodeRef> unfenceRequests() {
    return unfenceRequests;
  }

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
    super.initialize(server, groupId, raftStorage);
    storage.init(raftStorage);
    getLifeCycle().startAndTransition(this::loadLatestSnapshot, IOException.class);
  }

  /** Ratis pauses the state machine before it installs a snapshot received from the leader. */
  @Override
  public void pause() {
    getLifeCycle().transition(LifeCycle.State.PAUSING);
    getLifeCycle().transition(LifeCycle.State.PAUSED);
  }

  /** After a snapshot was installed: loads it and resumes applying the log after it. */
  @Override
  public void reinitialize() throws IOException {
    loadLatestSnapshot();
    if (getLifeCycleState() == LifeCycle.State.PAUSED) {
      getLifeCycle().transition(LifeCycle.State.STARTING);
      getLifeCycle().transition(LifeCycle.State.RUNNING);
    }
  }

  @Override
  public StateMachineStorage getStateMachineStorage() {
    return storage;
  }

  private void loadLatestSnapshot() throws IOException {
    SingleFileSnapshotInfo snapshot = storage.loadLatestSnapshot();
    if (snapshot == null) {
      return;
    }
    File file = snapshot.getFile().getPath().toFile();
    long startMs = clock.millis();
    MetadataImage image;
    try {
      if (snapshot.getFile().getFileDigest() != null) {
        MD5FileUtil.verifySavedMD5(file, snapshot.getFile().getFileDigest());
      }
      image = ImageSnapshots.read(file.toPath());
    } catch (CorruptRecordException | IOException e) {
      String reason = e instanceof CorruptRecordException ? e.getMessage()
          : "metadata snapshot " + file + " does not verify (" + e.getMessage() + "); this node stops";
      replica.halt(reason);
      LOG.error(reason);
      throw new IOException(reason, e);
    }
    if (image.offset() != snapshot.getIndex()) {
      String reason = "metadata snapshot " + file + " holds offset " + image.offset() + " but is named for index "
          + snapshot.getIndex() + "; this node stops";
      replica.halt(reason);
      throw new IOException(reason);
    }
    replica.load(image);
    appliedTermIndex = snapshot.getTermIndex();
    setLastAppliedTermIndex(snapshot.getTermIndex());
    LOG.info("loaded metadata snapshot {} ({}) in {} ms", file, image, clock.millis() - startMs);
  }

  @Override
  public long takeSnapshot() throws IOException {
    MetadataImage image = replica.image();
    TermIndex ti = appliedTermIndex;
    if (ti.getIndex() < 0 || image.offset() != ti.getIndex()) {
      return NO_SNAPSHOT;
    }
    File file = storage.getSnapshotFile(ti.getTerm(), ti.getIndex());
    ImageSnapshots.write(image, file.toPath());
    var md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
    storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), ti));
    LOG.info("wrote metadata snapshot {} ({})", file, image);
    return ti.getIndex();
  }

  private static final long NO_SNAPSHOT = -1;

  @Override
  public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
    TransactionContext.Builder b = TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request);
    try {
      ControllerRequest decoded = RequestCodec.decode(request.getMessage().getContent().asReadOnlyByteBuffer());
      if (!(decoded instanceof ControllerRequest.Write write)) {
        throw new IllegalArgumentException("read request sent as a write: " + decoded);
      }
      if (write instanceof ControllerRequest.FenceBroker f
          && !sessions.expired(new NodeRef(f.nodeId(), f.nodeEpoch()), clock.millis())) {
        // computed from another table: a deposed leader, paused and resumed, forwarding its fences here
        TransactionContext trx = b.build();
        trx.setException(new IOException("node " + f.nodeId() + " epoch " + f.nodeEpoch()
            + " heartbeated within the session timeout as this leader knows; not fenced"));
        return trx;
      }
      return b.setLogData(ByteString.copyFrom(MetadataReplica.entry(clock.millis(), write))).build();
    } catch (RuntimeException e) {
      TransactionContext trx = b.build();
      trx.setException(new IOException("malformed controller request: " + e.getMessage(), e));
      return trx;
    }
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    ControllerReply reply;
    try {
      reply = replica.apply(entry.getIndex(), entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer());
    } catch (CorruptRecordException e) {
      LOG.error(e.getMessage());
      onHalt.accept(e.getMessage());
      return CompletableFuture.failedFuture(e);
    }
    if (reply.ok()) {
      recordSession(entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer(), reply);
    }
    TermIndex ti = TermIndex.valueOf(entry.getTerm(), entry.getIndex());
    appliedTermIndex = ti;
    updateLastAppliedTermIndex(ti);
    return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(reply.encode())));
  }

  /**
   * A heartbeat entry (applied without error): this voter records the broker's session at its own
   * clock, leader or not, so that a new leader knows when each broker was last heard from
   * ({@link BrokerSessions}); a fenced broker that heartbeats is queued for unfencing.
   */
  private void recordSession(ByteBuffer entry, ControllerReply reply) {
    if (entry.remaining() <= 8 || entry.get(entry.position() + 8) != RequestCodec.SESSION_HEARTBEAT_TYPE) {
      return;
    }
    ByteBuffer request = entry.duplicate();
    request.position(request.position() + 8);
    if (RequestCodec.decode(request) instanceof ControllerRequest.SessionHeartbeat h) {
      sessions.heartbeat(h.node(), clock.millis());
      if (reply.bodyOrThrow().readBoolean() && unfenceRequests.size() < maxUnfenceRequests) {
        unfenceRequests.add(h.node());
      }
    }
  }

  @Override
  public void notifyTermIndexUpdated(long term, long index) {
    if (replica.haltedReason() == null && index > replica.image().offset()) {
      replica.advance(index);
      appliedTermIndex = TermIndex.valueOf(term, index);
    }
    super.notifyTermIndexUpdated(term, index);
  }

  /** Where DescribeQuorum reads get the quorum's state (the voter that runs this state machine); empty until set. */
  private volatile java.util.function.Supplier<java.util.Optional<QuorumStatus>> quorumStatus = java.util.Optional::empty;

  /** Answers DescribeQuorum reads from {@code status} (the local voter's Raft state). */
  public void describeQuorumFrom(java.util.function.Supplier<java.util.Optional<QuorumStatus>> status) {
    this.quorumStatus = status;
  }

  @Override
  public CompletableFuture<Message> query(Message request) {
    MetadataImage image = replica.image();
    ControllerReply reply;
    if (replica.haltedReason() != null) {
      reply = ControllerReply.error(ErrorCode.UNAVAILABLE, replica.haltedReason(), image.offset());
    } else {
      try {
        ControllerRequest decoded = RequestCodec.decode(request.getContent().asReadOnlyByteBuffer());
        reply = switch (decoded) {
          case ControllerRequest.Heartbeat h -> heartbeat(image, h.node());
          case ControllerRequest.DescribeQuorum d -> quorumStatus.get()
              .map(q -> ControllerReply.ok(q.toBytes(), image.offset()))
              .orElseGet(() -> ControllerReply.error(ErrorCode.UNAVAILABLE, "this controller is not running", image.offset()));
          case ControllerRequest.ReportLoad l -> loads.report(image, l.node(), l.load(), clock.millis())
              ? ControllerReply.ok(new byte[0], image.offset())
              : ControllerReply.error(ErrorCode.NODE_FENCED, "node " + l.node().nodeId() + " epoch " + l.node().nodeEpoch()
                  + " is not registered", image.offset());
          case ControllerRequest.DescribeLoads d -> ControllerReply.ok(
              NodeLoads.encode(loads.describe(image, clock.millis())), image.offset());
          case ControllerRequest.Read r -> controller.read(image, r);
          case ControllerRequest.Write w -> ControllerReply.error(ErrorCode.INVALID_REQUEST,
              "write request sent as a read: " + w, image.offset());
        };
      } catch (RuntimeException e) {
        reply = ControllerReply.error(ErrorCode.INVALID_REQUEST, "malformed controller request: " + e.getMessage(),
            image.offset());
      }
    }
    return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(reply.encode())));
  }

  private ControllerReply heartbeat(MetadataImage image, NodeRef node) {
    BrokerEntry b = image.broker(node.nodeId());
    if (b == null || b.nodeEpoch() != node.nodeEpoch()) {
      return ControllerReply.error(ErrorCode.NODE_FENCED, "node " + node.nodeId() + " epoch " + node.nodeEpoch()
          + " is not the registered epoch " + (b == null ? "(none)" : b.nodeEpoch()) + "; register again",
          image.offset());
    }
    sessions.heartbeat(node, clock.millis());
    if (b.fenced() && unfenceRequests.size() < maxUnfenceRequests) {
      unfenceRequests.add(node);
    }
    return ControllerReply.ok(new FieldWriter(1).writeBoolean(b.fenced()).toByteArray(), image.offset());
  }
}
