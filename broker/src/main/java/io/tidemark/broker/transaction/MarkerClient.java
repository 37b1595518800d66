package io.tidemark.broker.transaction;

import io.tidemark.broker.cluster.ClusterView;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;

/**
 * Sends transaction markers to the broker leading a partition, over the Kafka protocol as Kafka's
 * coordinator does: one WriteTxnMarkers (v1) request per marker on a plain connection per broker,
 * serialized and parsed by kafka-clients' message classes. One sender thread owns the
 * connections; at most {@value #MAX_QUEUED} sends wait for it (beyond that a send fails at once,
 * retriable). A connection that fails is closed and reopened by the next send; every failure
 * answers a retriable error, never a guess about the outcome (a marker written twice is harmless).
 */
final class MarkerClient implements AutoCloseable {

  static final int MAX_QUEUED = 10_000;
  private static final short VERSION = 1;
  private static final int TIMEOUT_MS = 30_000;

  private final ThreadPoolExecutor sender = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
      new ArrayBlockingQueue<>(MAX_QUEUED), r -> {
        Thread t = new Thread(r, "txn-marker-sender");
        t.setDaemon(true);
        return t;
      });
  private final Map<Integer, Connection> connections = new HashMap<>();
  private int correlation;

  /** One open connection (sender thread only). */
  private record Connection(Socket socket, DataInputStream in, OutputStream out) {}

  /** Writes one marker on {@code node}; completes with the partition's error (NONE when written). */
  CompletableFuture<Errors> send(ClusterView.Node node, TopicPartition tp, long producerId, short producerEpoch,
      int coordinatorEpoch, boolean commit) {
    CompletableFuture<Errors> out = new CompletableFuture<>();
    try {
      sender.execute(() -> {
        try {
          out.complete(call(node, tp, producerId, producerEpoch, coordinatorEpoch, commit));
        } catch (IOException | RuntimeException e) {
          closeConnection(node.id());
          out.complete(Errors.NETWORK_EXCEPTION);
        }
      });
    } catch (RejectedExecutionException e) {
      out.complete(Errors.REQUEST_TIMED_OUT);
    }
    return out;
  }

  private Errors call(ClusterView.Node node, TopicPartition tp, long producerId, short producerEpoch, int coordinatorEpoch,
      boolean commit) throws IOException {
    WriteTxnMarkersRequestData data = new WriteTxnMarkersRequestData();
    data.markers().add(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(producerId).setProducerEpoch(producerEpoch)
        .setTransactionResult(commit).setCoordinatorEpoch(coordinatorEpoch)
        .setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(tp.topic())
            .setPartitionIndexes(List.of(tp.partition())))));
    WriteTxnMarkersRequest request = new WriteTxnMarkersRequest.Builder(data).build(VERSION);
    Connection c = connection(node);
    int id = ++correlation;
    ByteBuffer body = request.serializeWithHeader(new RequestHeader(ApiKeys.WRITE_TXN_MARKERS, VERSION, "tidemark-txn-coordinator", id));
    byte[] frame = new byte[4 + body.remaining()];
    ByteBuffer.wrap(frame).putInt(body.remaining()).put(body);
    c.out().write(frame);
    c.out().flush();
    int size = c.in().readInt();
    if (size < 0 || size > 1 << 20) {
      throw new IOException("response of " + size + " bytes from broker " + node.id());
    }
    byte[] payload = new byte[size];
    c.in().readFully(payload);
    ByteBuffer response = ByteBuffer.wrap(payload);
    ResponseHeader header = ResponseHeader.parse(response, ApiKeys.WRITE_TXN_MARKERS.responseHeaderVersion(VERSION));
    if (header.correlationId() != id) {
      throw new IOException("correlation id " + header.correlationId() + " where " + id + " was expected");
    }
    WriteTxnMarkersResponseData parsed = ((WriteTxnMarkersResponse) AbstractResponse.parseResponse(ApiKeys.WRITE_TXN_MARKERS,
        new ByteBufferAccessor(response), VERSION)).data();
    for (WriteTxnMarkersResponseData.WritableTxnMarkerResult m : parsed.markers()) {
      for (WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult t : m.topics()) {
        for (WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult p : t.partitions()) {
          return Errors.forCode(p.errorCode());
        }
      }
    }
    return Errors.UNKNOWN_SERVER_ERROR;
  }

  private Connection connection(ClusterView.Node node) throws IOException {
    Connection c = connections.get(node.id());
    if (c != null && c.socket().getPort() == node.port() && c.socket().getInetAddress() != null && !c.socket().isClosed()) {
      return c;
    }
    closeConnection(node.id());
    Socket s = new Socket();
    try {
      s.connect(new InetSocketAddress(node.host(), node.port()), TIMEOUT_MS);
      s.setSoTimeout(TIMEOUT_MS);
      s.setTcpNoDelay(true);
    } catch (IOException e) {
      s.close();
      throw e;
    }
    c = new Connection(s, new DataInputStream(s.getInputStream()), s.getOutputStream());
    connections.put(node.id(), c);
    return c;
  }

  private void closeConnection(int nodeId) {
    Connection c = connections.remove(nodeId);
    if (c != null) {
      try {
        c.socket().close();
      } catch (IOException ignored) {
        // closing a broken connection
      }
    }
  }

  @Override
  public void close() {
    sender.shutdownNow();
    try {
      sender.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Connection c : connections.values()) {
      try {
        c.socket().close();
      } catch (IOException ignored) {
        // shutting down
      }
    }
  }
}
