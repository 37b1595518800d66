package io.tidemark.broker.protocol;

/**
 * A handler asks to close the connection instead of answering (for example an {@code acks=0}
 * produce that failed: the client gets no response, so closing is how it learns).
 */
public class CloseConnectionException extends RuntimeException {
  public CloseConnectionException(String message) {
    super(message);
  }
}
