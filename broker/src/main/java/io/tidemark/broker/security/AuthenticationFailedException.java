package io.tidemark.broker.security;

/** A SASL exchange or an HTTP credential did not prove who the client says it is. */
public final class AuthenticationFailedException extends Exception {
  public AuthenticationFailedException(String message) {
    super(message);
  }
}
