package io.tidemark.broker.security;

/** A bearer token (JWT) was refused: malformed, badly signed, expired, or not meant for this service. */
public final class InvalidTokenException extends Exception {
  public InvalidTokenException(String message) {
    super(message);
  }
}
