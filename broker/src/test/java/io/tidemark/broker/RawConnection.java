package io.tidemark.broker;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

/** A plain socket speaking the Kafka framing, for tests that send exactly the bytes they want. */
final class RawConnection implements AutoCloseable {

  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private int correlation;

  /** Writes an ApiVersions v0 request (correlation id 7, null client id) on a plain socket. */
  static void sendApiVersions(Socket s) throws IOException {
    java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
    out.writeInt(10);
    out.writeShort(ApiKeys.API_VERSIONS.id);
    out.writeShort(0);
    out.writeInt(7);
    out.writeShort(-1);
    out.flush();
  }

  /** Whether the broker answers ApiVersions on {@code s} (false: it closed the connection unserved). */
  static boolean answersApiVersions(Socket s) {
    try {
      sendApiVersions(s);
      DataInputStream in = new DataInputStream(s.getInputStream());
      int size = in.readInt();
      byte[] body = new byte[size];
      in.readFully(body);
      return size > 4 && ByteBuffer.wrap(body).getInt() == 7;
    } catch (IOException e) {
      return false; // end of stream or reset
    }
  }

  /** Whether the server closes {@code s} (end of stream or reset) without answering an ApiVersions request. */
  static boolean closedByServer(Socket s) {
    try {
      sendApiVersions(s);
      return s.getInputStream().read() == -1;
    } catch (IOException e) {
      return true;
    }
  }

  RawConnection(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(20_000);
    in = new DataInputStream(socket.getInputStream());
    out = socket.getOutputStream();
  }

  /** Sends a request built with kafka-clients; returns its correlation id. */
  int send(AbstractRequest.Builder<?> builder, short version) throws IOException {
    AbstractRequest request = builder.build(version);
    int id = ++correlation;
    ByteBuffer body = request.serializeWithHeader(new RequestHeader(request.apiKey(), version, "raw-test", id));
    sendFrame(body);
    return id;
  }

  void sendFrame(ByteBuffer payload) throws IOException {
    byte[] bytes = new byte[4 + payload.remaining()];
    ByteBuffer.wrap(bytes).putInt(payload.remaining()).put(payload.duplicate());
    out.write(bytes);
    out.flush();
  }

  void sendRaw(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  /** Reads one response frame and parses it for {@code key}/{@code version}. */
  AbstractResponse receive(ApiKeys key, short version, int expectedCorrelation) throws IOException {
    ByteBuffer frame = receiveFrame();
    ResponseHeader header = ResponseHeader.parse(frame, key.responseHeaderVersion(version));
    if (header.correlationId() != expectedCorrelation) {
      throw new IllegalStateException("correlation " + header.correlationId() + " where " + expectedCorrelation + " was expected");
    }
    return AbstractResponse.parseResponse(key, new org.apache.kafka.common.protocol.ByteBufferAccessor(frame), version);
  }

  ByteBuffer receiveFrame() throws IOException {
    int size = in.readInt();
    byte[] payload = new byte[size];
    in.readFully(payload);
    return ByteBuffer.wrap(payload);
  }

  /** True when the broker closed the connection (EOF or reset) before sending anything more. */
  boolean closedByBroker() {
    try {
      return in.read() == -1;
    } catch (EOFException | SocketException e) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
