package io.tidemark.broker.security;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * SASL OAUTHBEARER (RFC 7628) as Kafka's {@code OAuthBearerSaslServer} runs it. The client's one
 * message is {@code n,[a=<authzid>],^Aauth=Bearer <token>^A[<key>=<value>^A]*^A}; the token is
 * checked by a {@link JwtValidator}. On success the answer is empty and the exchange is complete.
 * On failure the server answers the RFC's JSON error ({@code {"status":"invalid_token"}}) as a
 * challenge, the client acknowledges it with a lone {@code ^A}, and only then does the exchange fail
 * with the reason, which Kafka clients show in their {@code SaslAuthenticationException}.
 * Extensions are accepted and ignored (none is validated, as with Kafka's default). An
 * authorization id other than the token's principal is refused.
 */
final class OAuthBearerExchange implements SaslExchange {

  private static final char SEPARATOR = '\u0001';
  private static final byte[] INVALID_TOKEN = "{\"status\":\"invalid_token\"}".getBytes(StandardCharsets.UTF_8);

  private enum State { AWAIT_TOKEN, AWAIT_ERROR_ACK, COMPLETE }

  private final JwtValidator validator;
  private State state = State.AWAIT_TOKEN;
  private String failure;
  private JwtValidator.ValidatedToken token;

  OAuthBearerExchange(JwtValidator validator) {
    this.validator = validator;
  }

  @Override
  public byte[] evaluate(byte[] message) throws AuthenticationFailedException {
    if (state == State.AWAIT_ERROR_ACK) {
      throw new AuthenticationFailedException("Authentication failed: " + failure);
    }
    if (state != State.AWAIT_TOKEN) {
      throw new AuthenticationFailedException("OAUTHBEARER takes a single message");
    }
    String text = new String(message, StandardCharsets.UTF_8);
    String[] parsed = parse(text);
    String authzid = parsed[0];
    try {
      JwtValidator.ValidatedToken validated = validator.validate(parsed[1]);
      if (!authzid.isEmpty() && !authzid.equals(validated.principal())) {
        throw new AuthenticationFailedException("Authentication failed: Client requested an authorization id ("
            + authzid + ") that is different from the token's principal name (" + validated.principal() + ")");
      }
      token = validated;
      state = State.COMPLETE;
      return new byte[0];
    } catch (InvalidTokenException e) {
      failure = e.getMessage();
      state = State.AWAIT_ERROR_ACK;
      return INVALID_TOKEN.clone();
    }
  }

  /** {authzid (may be empty), token}; throws when the message is not a client initial response. */
  private static String[] parse(String text) throws AuthenticationFailedException {
    int headerEnd = text.indexOf(',', 2);
    if (!text.startsWith("n,") || headerEnd < 0) {
      throw new AuthenticationFailedException("Invalid OAUTHBEARER client first message: no GS2 header");
    }
    String authzid = text.substring(2, headerEnd);
    if (!authzid.isEmpty()) {
      if (!authzid.startsWith("a=")) {
        throw new AuthenticationFailedException("Invalid OAUTHBEARER client first message: bad authorization id");
      }
      authzid = authzid.substring(2);
    }
    String rest = text.substring(headerEnd + 1);
    if (rest.length() < 2 || rest.charAt(0) != SEPARATOR || !rest.endsWith("" + SEPARATOR + SEPARATOR)) {
      throw new AuthenticationFailedException("Invalid OAUTHBEARER client first message: key-value pairs not framed by ^A");
    }
    String token = null;
    for (String pair : rest.substring(1, rest.length() - 2).split("" + SEPARATOR, -1)) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new AuthenticationFailedException("Invalid OAUTHBEARER client first message: '" + shorten(pair)
            + "' is not key=value");
      }
      if (pair.substring(0, eq).equals("auth")) {
        String value = pair.substring(eq + 1);
        int space = value.indexOf(' ');
        if (space < 0 || !value.substring(0, space).toLowerCase(Locale.ROOT).equals("bearer")) {
          throw new AuthenticationFailedException("Invalid OAUTHBEARER client first message: auth is not 'Bearer <token>'");
        }
        token = value.substring(space + 1).trim();
      }
    }
    if (token == null) {
      throw new AuthenticationFailedException("Invalid OAUTHBEARER client first message: no auth=Bearer <token>");
    }
    return new String[] {authzid, token};
  }

  private static String shorten(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "..." : s;
  }

  @Override
  public boolean complete() {
    return state == State.COMPLETE;
  }

  @Override
  public String user() {
    return token.principal();
  }

  @Override
  public long credentialExpiresAtMs() {
    return token.expiresAtMs();
  }
}
