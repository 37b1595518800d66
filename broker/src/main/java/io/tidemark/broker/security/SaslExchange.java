package io.tidemark.broker.security;

/**
 * The server side of one SASL mechanism's exchange on one connection: each client token in,
 * the server's answer out, until {@link #complete()}. Not thread-safe (a connection's event
 * loop owns it).
 */
interface SaslExchange {

  /** The answer to the client's next token; throws when the client fails to authenticate or misbehaves. */
  byte[] evaluate(byte[] token) throws AuthenticationFailedException;

  boolean complete();

  /** The authenticated user (after {@link #complete()}). */
  String user();

  /** When the credential the client authenticated with expires (OAUTHBEARER: the token's exp), epoch ms. */
  default long credentialExpiresAtMs() {
    return Long.MAX_VALUE;
  }
}
