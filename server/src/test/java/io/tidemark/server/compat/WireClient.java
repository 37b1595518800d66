package io.tidemark.server.compat;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

/**
 * One blocking Kafka connection that sends exactly the request given, at the version given, and
 * parses the answer with kafka-clients: the same bytes go to Tidemark and to Kafka. Not thread-safe.
 */
final class WireClient implements AutoCloseable {

  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private int correlation;

  WireClient(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(60_000); // a bound on a hung answer, beyond any request's own timeout under load
    in = new DataInputStream(socket.getInputStream());
    out = socket.getOutputStream();
  }

  /** This connection's own (client side) port. */
  int localPort() {
    return socket.getLocalPort();
  }

  /** Sends the request at {@code version} and returns the parsed response. */
  AbstractResponse call(AbstractRequest.Builder<?> builder, short version) throws IOException {
    return call(builder.build(version).data(), version);
  }

  /** Sends {@code data} as it is (no builder's checks or defaults) at {@code version}; returns the parsed response. */
  AbstractResponse call(ApiMessage data, short version) throws IOException {
    ApiKeys key = ApiKeys.forId(data.apiKey());
    int id = ++correlation;
    RequestHeader requestHeader = new RequestHeader(key, version, "differential-test", id);
    ObjectSerializationCache cache = new ObjectSerializationCache();
    short headerVersion = requestHeader.headerVersion();
    int size = requestHeader.data().size(cache, headerVersion) + data.size(cache, version);
    ByteBuffer frame = ByteBuffer.allocate(4 + size).putInt(size);
    ByteBufferAccessor writer = new ByteBufferAccessor(frame);
    requestHeader.data().write(writer, cache, headerVersion);
    data.write(writer, cache, version);
    out.write(frame.array());
    out.flush();
    byte[] payload = new byte[in.readInt()];
    in.readFully(payload);
    ByteBuffer response = ByteBuffer.wrap(payload);
    ResponseHeader header = ResponseHeader.parse(response, key.responseHeaderVersion(version));
    if (header.correlationId() != id) {
      throw new IOException("correlation id " + header.correlationId() + " where " + id + " was expected");
    }
    return AbstractResponse.parseResponse(key, new ByteBufferAccessor(response), version);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
