package io.tidemark.metadata.client;

import io.tidemark.metadata.controller.ControllerReply;
import io.tidemark.metadata.controller.ControllerRequest;
import io.tidemark.metadata.controller.ControllerRequest.*;
import io.tidemark.metadata.controller.ErrorCode;
import io.tidemark.metadata.controller.PartitionControl;
import io.tidemark.metadata.controller.ReplyBodies;
import io.tidemark.metadata.controller.RequestCodec;
import io.tidemark.metadata.raft.ControllerConfig;
import io.tidemark.metadata.raft.RaftGroups;
import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.metadata.CommitStreamObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.ObjectMetadata;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.metadata.StreamMetadata;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a broker uses to talk to the controller quorum: the storage engine's {@link StreamManager}
 * and {@link ObjectManager}, plus registration, heartbeats, topics, configs, the key-value space
 * and producer ids. Any voter may be asked; the Ratis client finds the leader, follows leader
 * changes and retries (at most {@code controller.client.max.attempts} attempts of
 * {@code controller.request.timeout.ms}, {@code controller.client.retry.backoff.ms} apart), then
 * fails with {@link ErrorCode.ControllerUnavailableException}. Retries of a write are recognised by
 * Ratis' retry cache and applied once.
 *
 * <p>Each write completes after it is committed and applied by the leader; {@link #lastWriteOffset()}
 * gives the log offset to wait for in a local image. Rejections complete exceptionally with the
 * named exception of {@link ErrorCode}. Thread-safe; writes from one client are applied in the
 * order they were sent, except stream opens and closes, which wait for the outstanding one and then
 * go out together ({@link #streamOp}); they keep their order among themselves.
 *
 * <p>Replies complete the returned futures on this client's own completion thread, in the order
 * Ratis delivers them, never on a Ratis thread: Ratis calls back while holding its sliding
 * window's lock, and a caller that sends its next request from a continuation (a recovery closing
 * every stream it held, say) would then block on Ratis' bound of outstanding requests
 * ({@code raft.client.async.outstanding-requests.max}, 100) while holding the lock the replies that
 * free that bound need. Sending never blocks either: at most {@link #MAX_IN_FLIGHT} requests are
 * outstanding, more wait in a FIFO queue of at most {@link #MAX_WAITING} and are sent as replies
 * arrive; the completion queue holds at most one entry per outstanding request. Heartbeats skip
 * the queue and go on a client of their own, at most one outstanding per node: one waiting behind a
 * recovery's hundreds of requests, or behind a whole request timeout on a paused leader, would let
 * the session expire and fence the node.
 */
public final class ControllerClient implements StreamManager, ObjectManager, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ControllerClient.class);
  /**
   * Requests outstanding at once; more wait in this client's queue. Below Ratis' own bound
   * ({@code raft.client.async.outstanding-requests.max}, 100), so that Ratis never blocks a sender.
   */
  static final int MAX_IN_FLIGHT = 32;
  /** Requests waiting for a slot; beyond it a request fails at once as unavailable. */
  static final int MAX_WAITING = 65_536;
  private final ControllerConfig config;
  private final AtomicReference<RaftClient> raft;
  /** Heartbeats only ({@link RaftGroups#newHeartbeatClient}): short attempts, their own leader tracking. */
  private final AtomicReference<RaftClient> heartbeatRaft;
  /**
   * Threads that send heartbeats (blocking sends, at most one per node outstanding: this node and the
   * recovery incarnations it runs; idle threads end after a minute).
   */
  private final ExecutorService heartbeatSenders = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "controller-client-heartbeat");
    t.setDaemon(true);
    return t;
  });
  /** The heartbeat outstanding per node: a new one is not sent while one is (at most one per node). */
  private final java.util.concurrent.ConcurrentHashMap<NodeRef, CompletableFuture<Boolean>> heartbeats =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final AtomicLong lastWriteOffset = new AtomicLong(-1);
  private final ExecutorService completions = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "controller-client-completions");
    t.setDaemon(true);
    return t;
  });
  /** Requests sent and not answered yet, and those waiting for a slot (guarded by {@code waiting}). */
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  private int inFlight;
  /** Stream opens and closes: one request outstanding, those that wait go out together (see {@link #streamOp}). */
  private final WriteBatcher<NodeStreamOp> streamOps = new WriteBatcher<>("stream operations", StreamOps.MAX_OPS,
      MAX_WAITING, NodeStreamOp::node, op -> op.op().streamId(), new WriteBatcher.Sender<>() {
        @Override
        public CompletableFuture<FieldReader> single(NodeStreamOp p) {
          StreamOp op = p.op();
          return write(op.open() ? new OpenStream(p.node(), op.streamId(), op.epoch())
              : new CloseStream(p.node(), op.streamId(), op.epoch()), r -> r);
        }

        @Override
        public CompletableFuture<List<ControllerReply>> batch(List<NodeStreamOp> items) {
          return write(new StreamOps(items.get(0).node(), items.stream().map(NodeStreamOp::op).toList()),
              ControllerClient::readOutcomes);
        }
      });
  /** Partition updates, batched like stream operations (see {@link #updatePartition}). */
  private final WriteBatcher<UpdatePartition> partitionUpdates = new WriteBatcher<>("partition updates",
      UpdatePartitions.MAX_UPDATES, MAX_WAITING, u -> Boolean.TRUE, u -> new PartitionRef(u.topicId(), u.partition()),
      new WriteBatcher.Sender<>() {
        @Override
        public CompletableFuture<FieldReader> single(UpdatePartition u) {
          return write(u, r -> r);
        }

        @Override
        public CompletableFuture<List<ControllerReply>> batch(List<UpdatePartition> items) {
          return write(new UpdatePartitions(items), ControllerClient::readOutcomes);
        }
      });
  private volatile boolean closed;

  /** A request waiting for a slot: how to send it, and its caller's future (failed if the client closes first). */
  private record Waiting(Runnable start, CompletableFuture<?> result) {}

  /** A stream open or close of one node. */
  private record NodeStreamOp(NodeRef node, StreamOp op) {}

  public ControllerClient(ControllerConfig config) {
    this.config = config;
    this.raft = new AtomicReference<>(RaftGroups.newClient(config));
    this.heartbeatRaft = new AtomicReference<>(RaftGroups.newHeartbeatClient(config));
  }

  /** The log offset of the latest write this client saw applied (-1 before any). */
  public long lastWriteOffset() {
    return lastWriteOffset.get();
  }

  // ---- brokers

  /** Registers (or re-registers after a restart) and returns the node's new epoch. */
  public CompletableFuture<NodeRef> registerBroker(int nodeId, List<Endpoint> endpoints, String rack) {
    return write(new RegisterBroker(nodeId, endpoints, rack), r -> new NodeRef(nodeId, r.readLong()));
  }

  /**
   * Sends a heartbeat through the log ({@link SessionHeartbeat}: every voter records it, so a new
   * leader keeps the session); completes with whether the node is fenced (a fenced epoch stays
   * fenced: the node must register again) once it is committed. Sent on the heartbeat client (an
   * attempt waits two heartbeat intervals, then goes to another voter), never queued behind other
   * requests: a late heartbeat fences the node. While a heartbeat of {@code node} is outstanding,
   * that one is returned instead of sending another (a caller that counts a lease from its send
   * must count it from the first call, or not call again before the outstanding one completes).
   */
  public CompletableFuture<Boolean> heartbeat(NodeRef node) {
    if (closed) {
      return CompletableFuture.failedFuture(new ErrorCode.ControllerUnavailableException("controller client is closed"));
    }
    CompletableFuture<Boolean> fresh = new CompletableFuture<>();
    CompletableFuture<Boolean> outstanding = heartbeats.putIfAbsent(node, fresh);
    if (outstanding != null) {
      return outstanding;
    }
    fresh.whenComplete((r, e) -> heartbeats.remove(node, fresh));
    Message message = message(new SessionHeartbeat(node));
    RaftClient client = heartbeatRaft.get();
    CompletableFuture<RaftClientReply> sent;
    try {
      // Blocking, so unordered: an ordered (async) write waits behind every earlier write of the client, and one
      // heartbeat retried on another voter would hold up the next ones, and those of other nodes sent here.
      sent = CompletableFuture.supplyAsync(() -> {
        try {
          return client.io().send(message);
        } catch (IOException e) {
          throw new CompletionException(e);
        }
      }, heartbeatSenders);
    } catch (RejectedExecutionException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    send(heartbeatRaft, client, sent, FieldReader::readBoolean, false, false, fresh);
    return fresh;
  }

  /** A registered broker as the leader's image holds it: its current epoch and whether it is fenced. */
  public record BrokerState(long nodeEpoch, boolean fenced) {}

  /** The broker {@code nodeId} as registered now; fails with {@link ErrorCode.NotFoundException} when it is not registered. */
  public CompletableFuture<BrokerState> brokerState(int nodeId) {
    return read(new GetBroker(nodeId), r -> new BrokerState(r.readLong(), r.readBoolean()));
  }

  // ---- StreamManager

  @Override
  public CompletableFuture<Long> createStream(NodeRef node, Map<String, String> tags) {
    return write(new CreateStream(node, tags), FieldReader::readLong);
  }

  /** Opens the stream; sent together with other opens and closes of the node that wait (see {@link #streamOp}). */
  @Override
  public CompletableFuture<StreamMetadata> openStream(NodeRef node, long streamId, long epoch) {
    return streamOp(node, new StreamOp(streamId, epoch, true)).thenApply(ReplyBodies::readStream);
  }

  /** Closes the stream; sent together with other opens and closes of the node that wait (see {@link #streamOp}). */
  @Override
  public CompletableFuture<Void> closeStream(NodeRef node, long streamId, long epoch) {
    return streamOp(node, new StreamOp(streamId, epoch, false)).thenApply(r -> null);
  }

  /**
   * Queues one open or close. One stream request is outstanding at a time: a lone operation goes
   * out at once as a plain {@link OpenStream} or {@link CloseStream}; those that arrive meanwhile wait
   * and go out together, when it is answered, as one {@link StreamOps} (up to {@link StreamOps#MAX_OPS},
   * in their order, of one node, each stream once; the rest in the next). So a restart's recovery
   * closing the hundreds of streams its previous epochs held, and its partitions opening them again,
   * cost a few log entries instead of one each, and every operation keeps its own outcome.
   */
  private CompletableFuture<FieldReader> streamOp(NodeRef node, StreamOp op) {
    return streamOps.submit(new NodeStreamOp(node, op));
  }

  private static List<ControllerReply> readOutcomes(FieldReader r) {
    int n = r.readCount(4);
    List<ControllerReply> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(ControllerReply.decode(java.nio.ByteBuffer.wrap(r.readBytes())));
    }
    return out;
  }

  @Override
  public CompletableFuture<Void> trimStream(NodeRef node, long streamId, long epoch, long newStartOffset) {
    return write(new TrimStream(node, streamId, epoch, newStartOffset), r -> null);
  }

  @Override
  public CompletableFuture<Void> deleteStream(NodeRef node, long streamId, long epoch) {
    return write(new DeleteStream(node, streamId, epoch), r -> null);
  }

  @Override
  public CompletableFuture<List<StreamMetadata>> getStreams(List<Long> streamIds) {
    return read(new GetStreams(streamIds), ReplyBodies::readStreams);
  }

  @Override
  public CompletableFuture<List<StreamMetadata>> getOpeningStreams(NodeRef node) {
    return read(new GetOpeningStreams(node), ReplyBodies::readStreams);
  }

  // ---- ObjectManager

  @Override
  public CompletableFuture<Long> prepareObjects(NodeRef node, int count, long ttlMs) {
    return write(new PrepareObjects(node, count, ttlMs), FieldReader::readLong);
  }

  @Override
  public CompletableFuture<Void> commitStreamSetObject(NodeRef node, CommitStreamSetObjectRequest request) {
    return write(new CommitStreamSetObject(node, request), r -> null);
  }

  @Override
  public CompletableFuture<Void> commitStreamObject(NodeRef node, CommitStreamObjectRequest request) {
    return write(new CommitStreamObject(node, request), r -> null);
  }

  @Override
  public CompletableFuture<List<ObjectMetadata>> getObjects(long streamId, long startOffset, long endOffset,
      int limit) {
    return read(new GetObjects(streamId, startOffset, endOffset, limit), ReplyBodies::readObjects);
  }

  @Override
  public CompletableFuture<List<ObjectMetadata>> getStreamSetObjects(int nodeId) {
    return read(new GetStreamSetObjects(nodeId), ReplyBodies::readObjects);
  }

  @Override
  public CompletableFuture<List<ObjectMetadata>> getStreamObjects(long streamId) {
    return read(new GetStreamObjects(streamId), ReplyBodies::readObjects);
  }

  /** The quorum as the Raft leader sees it (leader, term, commit index, each peer's progress): Kafka's DescribeQuorum. */
  public CompletableFuture<io.tidemark.metadata.raft.QuorumStatus> describeQuorum() {
    return read(new DescribeQuorum(), io.tidemark.metadata.raft.QuorumStatus::read);
  }

  /** Reports this node's load to the leader (kept there, not replicated; see {@code NodeLoads}). */
  public CompletableFuture<Void> reportLoad(NodeRef node, io.tidemark.metadata.controller.NodeLoad load) {
    return read(new ReportLoad(node, load), r -> null);
  }

  /** The load every registered node last reported to the leader (reports older than 30 s are left out). */
  public CompletableFuture<List<io.tidemark.metadata.controller.NodeLoads.Reported>> describeLoads() {
    return read(new DescribeLoads(), io.tidemark.metadata.controller.NodeLoads::decode);
  }

  // ---- topics, configs, key-value space, producer ids

  public CompletableFuture<Void> createTopic(UUID topicId, String name, int partitions) {
    return write(new CreateTopic(topicId, name, partitions), r -> null);
  }

  /** Grows a topic to {@code partitions} partitions; the new ones are placed with {@link #updatePartition}. */
  public CompletableFuture<Void> growTopic(UUID topicId, int partitions) {
    return write(new GrowTopic(topicId, partitions), r -> null);
  }

  public CompletableFuture<Void> deleteTopic(UUID topicId) {
    return write(new DeleteTopic(topicId), r -> null);
  }

  /**
   * Sets a partition's leader, leader epoch and streams. Updates that wait behind an outstanding one
   * go out together as one {@link UpdatePartitions} (each with its own outcome), so a restart bumping
   * the leader epoch of every partition it leads, or the creation of a topic with many partitions,
   * costs a few log entries instead of one per partition.
   */
  public CompletableFuture<Void> updatePartition(UUID topicId, int partition, int leaderNodeId, int leaderEpoch,
      List<Long> streamIds) {
    return partitionUpdates.submit(new UpdatePartition(topicId, partition, leaderNodeId, leaderEpoch, streamIds))
        .thenApply(r -> null);
  }

  /** Changes replica assignments (null targets cancel); completes with one outcome per entry, in order. */
  public CompletableFuture<List<PartitionControl.Result>> reassignPartitions(List<Reassignment> reassignments) {
    return write(new ReassignPartitions(reassignments), PartitionControl::decode);
  }

  /** Elects preferred (or, {@code unclean}, any live) leaders; completes with one outcome per entry, in order. */
  public CompletableFuture<List<PartitionControl.Result>> electLeaders(List<PartitionRef> partitions, boolean unclean) {
    return write(new ElectLeaders(partitions, unclean), PartitionControl::decode);
  }

  /** Controlled shutdown: moves the partitions {@code node} leads to other live brokers; completes with their number. */
  public CompletableFuture<Long> drainBroker(NodeRef node) {
    return write(new DrainBroker(node), FieldReader::readLong);
  }

  /** Reports the failover recovery of {@code recovery} (the dead node's recovery incarnation) done. */
  public CompletableFuture<Void> completeFailover(NodeRef recovery) {
    return write(new ControllerRequest.CompleteFailover(recovery), r -> null);
  }

  /** Adds ACLs; present ones are kept. */
  public CompletableFuture<Void> createAcls(List<io.tidemark.metadata.record.MetadataRecord.AclEntry> entries) {
    return write(new ControllerRequest.CreateAcls(entries), r -> null);
  }

  /** Removes exactly these ACLs; completes with, per entry in order, whether it was present. */
  public CompletableFuture<List<Boolean>> deleteAcls(List<io.tidemark.metadata.record.MetadataRecord.AclEntry> entries) {
    return write(new ControllerRequest.DeleteAcls(entries), r -> {
      int n = r.readCount(1);
      List<Boolean> out = new java.util.ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(r.readBoolean());
      }
      return out;
    });
  }

  /** Sets or (null value) removes client quota values, in one metadata entry. */
  public CompletableFuture<Void> alterClientQuotas(List<ControllerRequest.QuotaChange> changes) {
    return write(new ControllerRequest.AlterClientQuotas(changes), r -> null);
  }

  /** Sets and removes config values (of any resource type but client quotas) in one metadata write. */
  public CompletableFuture<Void> alterConfigs(List<ControllerRequest.ConfigChange> changes) {
    return write(new ControllerRequest.AlterConfigs(changes), r -> null);
  }

  public CompletableFuture<Void> setConfig(byte resourceType, String resourceName, String key, String value) {
    return write(new SetConfig(resourceType, resourceName, key, value), r -> null);
  }

  /** Puts a value (null removes the key); with {@code ifAbsent} keeps an existing one. Completes with the stored value. */
  public CompletableFuture<byte[]> putKeyValue(String namespace, String key, byte[] value, boolean ifAbsent) {
    return write(new PutKeyValue(namespace, key, value, ifAbsent), FieldReader::readBytes);
  }

  /** Sets (or with {@code delete} removes) a SCRAM credential; completes with whether one existed before. */
  public CompletableFuture<Boolean> alterScramCredential(ControllerRequest.AlterScramCredential request) {
    return write(request, FieldReader::readBoolean);
  }

  public CompletableFuture<byte[]> getKeyValue(String namespace, String key) {
    return read(new GetKeyValue(namespace, key), FieldReader::readBytes);
  }

  /** A block of producer ids: completes with the first id; the block holds {@code controller.producer.id.block.size}. */
  public CompletableFuture<Long> allocateProducerIds(NodeRef node) {
    return write(new AllocateProducerIds(node), FieldReader::readLong);
  }

  /** A block of producer ids reserved for one broker: {@code [first, first + size)}. */
  public record ProducerIdBlock(long first, int size) {}

  /** Like {@link #allocateProducerIds}, with the block's size as the controller applied it. */
  public CompletableFuture<ProducerIdBlock> allocateProducerIdBlock(NodeRef node) {
    return write(new AllocateProducerIds(node), r -> new ProducerIdBlock(r.readLong(), r.readInt()));
  }

  // ---- transport

  private <T> CompletableFuture<T> write(ControllerRequest.Write request, Function<FieldReader, T> body) {
    Message message = message(request);
    return submit(client -> client.async().send(message), body, true);
  }

  private <T> CompletableFuture<T> read(ControllerRequest.Read request, Function<FieldReader, T> body) {
    Message message = message(request);
    return submit(client -> client.async().sendReadOnly(message), body, false);
  }

  /**
   * Sends now when fewer than {@link #MAX_IN_FLIGHT} requests are outstanding and none waits, else
   * queues the request behind the waiting ones (FIFO, so one thread's requests keep their order);
   * each reply hands its slot to the next waiting request. Never blocks the caller.
   */
  private <T> CompletableFuture<T> submit(Function<RaftClient, CompletableFuture<RaftClientReply>> sender,
      Function<FieldReader, T> body, boolean write) {
    CompletableFuture<T> result = new CompletableFuture<>();
    Runnable start = start(sender, body, write, true, result);
    synchronized (waiting) {
      if (closed) {
        return CompletableFuture.failedFuture(new ErrorCode.ControllerUnavailableException("controller client is closed"));
      }
      if (inFlight >= MAX_IN_FLIGHT || !waiting.isEmpty()) {
        if (waiting.size() >= MAX_WAITING) {
          return CompletableFuture.failedFuture(new ErrorCode.ControllerUnavailableException(
              "more than " + MAX_WAITING + " controller requests wait to be sent; retry later"));
        }
        waiting.add(new Waiting(start, result));
        return result;
      }
      inFlight++;
    }
    start.run();
    return result;
  }

  /** Sends a request; {@code counted} ones hold one of the {@link #MAX_IN_FLIGHT} slots until their reply. */
  private <T> Runnable start(Function<RaftClient, CompletableFuture<RaftClientReply>> sender,
      Function<FieldReader, T> body, boolean write, boolean counted, CompletableFuture<T> result) {
    return () -> {
      RaftClient client = raft.get();
      CompletableFuture<RaftClientReply> sent;
      try {
        sent = sender.apply(client);
      } catch (RuntimeException e) {
        sent = CompletableFuture.failedFuture(e);
      }
      send(raft, client, sent, body, write, counted, result);
    };
  }

  /** A reply arrived: its slot goes to the next waiting request, if any. Runs on the completion thread. */
  private void released() {
    Waiting next;
    synchronized (waiting) {
      next = waiting.poll();
      if (next == null) {
        inFlight--;
      }
    }
    if (next != null) {
      next.start().run();
    }
  }

  /**
   * Replaces a Ratis client that closed itself: once one ordered request runs out of retries (the
   * quorum was unreachable for longer than the retry policy), Ratis closes the client's sliding
   * window and fails every later request. A node that outlives a quorum outage needs a new client.
   */
  private void renewIfClosed(AtomicReference<RaftClient> holder, RaftClient used, Throwable cause) {
    if (closed || !(cause instanceof AlreadyClosedException)) {
      return;
    }
    RaftClient fresh = holder == heartbeatRaft ? RaftGroups.newHeartbeatClient(config) : RaftGroups.newClient(config);
    if (holder.compareAndSet(used, fresh)) {
      LOG.warn("controller client closed itself after a failed request ({}); using a new one", cause.getMessage());
      closeQuietly(used);
      if (closed) {
        closeQuietly(fresh);
      }
    } else {
      closeQuietly(fresh);
    }
  }

  private static void closeQuietly(RaftClient client) {
    try {
      client.close();
    } catch (IOException | RuntimeException e) {
      LOG.debug("closing a replaced controller client failed", e);
    }
  }

  private static Message message(ControllerRequest request) {
    return Message.valueOf(ByteString.copyFrom(RequestCodec.encode(request)));
  }

  private <T> void send(AtomicReference<RaftClient> holder, RaftClient client, CompletableFuture<RaftClientReply> sent,
      Function<FieldReader, T> body, boolean write, boolean counted, CompletableFuture<T> result) {
    sent.whenCompleteAsync((reply, error) -> {
      if (counted) {
        released();
      }
      try {
        if (error != null) {
          Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
          renewIfClosed(holder, client, cause);
          throw new ErrorCode.ControllerUnavailableException("controller quorum did not answer: " + cause);
        }
        if (!reply.isSuccess()) {
          throw new ErrorCode.ControllerUnavailableException("controller request failed: " + reply.getException());
        }
        ControllerReply r = ControllerReply.decode(reply.getMessage().getContent().asReadOnlyByteBuffer());
        if (write) {
          lastWriteOffset.accumulateAndGet(r.offset(), Math::max);
        }
        result.complete(body.apply(r.bodyOrThrow()));
      } catch (RuntimeException e) {
        result.completeExceptionally(e);
      }
    }, this::complete);
  }

  /** Runs a reply's completion on the completion thread; after {@link #close} (its thread stopped) on the caller's. */
  private void complete(Runnable completion) {
    try {
      completions.execute(completion);
    } catch (RejectedExecutionException e) {
      completion.run();
    }
  }

  @Override
  public void close() {
    List<Waiting> unsent;
    synchronized (waiting) {
      closed = true;
      unsent = List.copyOf(waiting);
      waiting.clear();
    }
    unsent.forEach(w -> w.result().completeExceptionally(
        new ErrorCode.ControllerUnavailableException("controller client closed before the request was sent")));
    completions.shutdown(); // completions already queued still run; later ones run on the replying thread
    closeQuietly(heartbeatRaft.get());
    heartbeatSenders.shutdownNow();
    heartbeats.values().forEach(f -> f.completeExceptionally(
        new ErrorCode.ControllerUnavailableException("controller client closed before the heartbeat was answered")));
    try {
      raft.get().close();
    } catch (IOException e) {
      throw new ErrorCode.ControllerUnavailableException("closing the controller client: " + e.getMessage());
    }
  }
}
