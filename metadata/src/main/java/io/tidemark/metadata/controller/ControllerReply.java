package io.tidemark.metadata.controller;

import io.tidemark.metadata.record.FieldReader;
import io.tidemark.metadata.record.FieldWriter;
import java.nio.ByteBuffer;

/**
 * What a request answers: an outcome, a message for rejections and a body (decoded by the caller,
 * who knows what it asked). {@code offset} is the log offset after the request's records were
 * applied, so a broker can wait until its image has seen its own write.
 */
public record ControllerReply(ErrorCode code, String message, byte[] body, long offset) {

  public static ControllerReply ok(byte[] body, long offset) {
    return new ControllerReply(ErrorCode.NONE, "", body, offset);
  }

  public static ControllerReply error(ErrorCode code, String message, long offset) {
    return new ControllerReply(code, message, new byte[0], offset);
  }

  public boolean ok() {
    return code == ErrorCode.NONE;
  }

  /** The body, or the named exception of a rejection. */
  public FieldReader bodyOrThrow() {
    if (!ok()) {
      throw code.toException(message);
    }
    return new FieldReader(ByteBuffer.wrap(body));
  }

  public byte[] encode() {
    return new FieldWriter(body.length + message.length() + 24).writeByte(code.ordinal()).writeString(message)
        .writeLong(offset).writeBytes(body).toByteArray();
  }

  public static ControllerReply decode(ByteBuffer buf) {
    FieldReader r = new FieldReader(buf);
    ErrorCode code = ErrorCode.of(r.readByte());
    String message = r.readString();
    long offset = r.readLong();
    byte[] body = r.readBytes();
    return new ControllerReply(code, message, body, offset);
  }
}
