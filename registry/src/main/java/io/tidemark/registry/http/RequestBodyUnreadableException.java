package io.tidemark.registry.http;

/**
 * Reading a request body failed before its end: the client closed the connection, stalled past the
 * idle timeout, or broke the chunked framing. Answered 400 (if the connection still takes it) and closed.
 */
final class RequestBodyUnreadableException extends RuntimeException {
  RequestBodyUnreadableException(String message, Throwable cause) {
    super(message, cause);
  }
}
