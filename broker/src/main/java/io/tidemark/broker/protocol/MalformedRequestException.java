package io.tidemark.broker.protocol;

/**
 * A frame cannot be understood (bad header, unknown API, unsupported version, unparseable body):
 * the connection that sent it is closed; nothing else is affected.
 */
public class MalformedRequestException extends RuntimeException {
  public MalformedRequestException(String message) {
    super(message);
  }

  public MalformedRequestException(String message, Throwable cause) {
    super(message, cause);
  }
}
