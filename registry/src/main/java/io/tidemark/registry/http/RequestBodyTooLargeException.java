package io.tidemark.registry.http;

/** A request body passed the endpoint's limit while it was read; answered 413 and the connection closed. */
final class RequestBodyTooLargeException extends RuntimeException {
  RequestBodyTooLargeException(String message) {
    super(message);
  }
}
