package io.tidemark.registry.client;

import java.nio.ByteBuffer;

/**
 * The Confluent serializer framing: magic byte 0, the 4-byte big-endian schema id, then the payload
 * (for Protobuf the payload starts with the message-index list). Stateless.
 */
public final class WireFormat {
  public static final byte MAGIC = 0;
  public static final int HEADER_BYTES = 5;

  private WireFormat() {}

  public static byte[] frame(int schemaId, byte[] payload) {
    return ByteBuffer.allocate(HEADER_BYTES + payload.length).put(MAGIC).putInt(schemaId).put(payload).array();
  }

  /** The schema id of a framed value; throws {@link IllegalArgumentException} when it is not framed. */
  public static int schemaId(byte[] framed) {
    if (framed == null || framed.length < HEADER_BYTES || framed[0] != MAGIC) {
      throw new IllegalArgumentException("not in the schema registry wire format: needs magic byte 0 and a 4-byte schema id");
    }
    return ByteBuffer.wrap(framed, 1, 4).getInt();
  }

  /** The bytes after the header. */
  public static ByteBuffer payload(byte[] framed) {
    schemaId(framed);
    return ByteBuffer.wrap(framed, HEADER_BYTES, framed.length - HEADER_BYTES).slice();
  }
}
