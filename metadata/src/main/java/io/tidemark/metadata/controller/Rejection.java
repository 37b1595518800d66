package io.tidemark.metadata.controller;

/** Thrown inside a handler to reject a request; the handler's records are discarded. */
final class Rejection extends RuntimeException {
  final ErrorCode code;

  Rejection(ErrorCode code, String message) {
    super(message, null, false, false);
    this.code = code;
  }
}
