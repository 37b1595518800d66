package io.tidemark.broker.security;

import io.tidemark.broker.protocol.RequestDecoder;
import io.tidemark.broker.protocol.ResponseEncoder;
import java.nio.ByteBuffer;
import java.util.Optional;
import javax.net.ssl.SSLSession;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * One connection's authentication, as Kafka's {@code SaslServerAuthenticator} runs it. On a
 * PLAINTEXT listener the principal is ANONYMOUS; on SSL it is the client certificate's mapped
 * name (ANONYMOUS without one). On a SASL listener the states are:
 *
 * <pre>
 * AWAIT_HANDSHAKE --SaslHandshake(enabled mechanism)--> AWAIT_AUTHENTICATE
 * AWAIT_AUTHENTICATE --SaslAuthenticate(challenge)--> AWAIT_AUTHENTICATE
 * AWAIT_AUTHENTICATE --SaslAuthenticate(done)--> AUTHENTICATED
 * AUTHENTICATED --SaslHandshake (KIP-368 re-authentication, same mechanism)--> AWAIT_AUTHENTICATE
 * any --bad mechanism, failed proof, request out of turn--> FAILED (answered, then closed)
 * </pre>
 *
 * Before AUTHENTICATED only ApiVersions, SaslHandshake and SaslAuthenticate are served; any other
 * request closes the connection, as Kafka closes it. After a session of
 * {@code connections.max.reauth.ms} ends (announced in SaslAuthenticate v1+; earlier when the
 * credential expires first, as an OAUTHBEARER token does), a request other than a
 * re-authentication closes the connection. A re-authentication must name the same user.
 *
 * <p>Threading: owned by the connection's event loop.
 */
public final class Authenticator {

  /** What to do with a request the authenticator took: write {@code response} (may be null), then close if asked. */
  public record Outcome(ByteBuffer response, boolean close) {}

  private enum State { AWAIT_HANDSHAKE, AWAIT_AUTHENTICATE, AUTHENTICATED, FAILED }

  private final ListenerSecurity security;
  private State state;
  private KafkaPrincipal principal = KafkaPrincipal.ANONYMOUS;
  private boolean tlsChecked;
  private String mechanism;
  private SaslExchange exchange;
  private long sessionExpiresAtMs = Long.MAX_VALUE;
  /** After a v0 SaslHandshake the tokens come as bare size-prefixed frames, without request headers (KIP-43). */
  private boolean rawTokens;
  /** A SASL exchange completed on this connection (a re-authentication may be under way). */
  private boolean saslDone;

  Authenticator(ListenerSecurity security) {
    this.security = security;
    this.state = security.listener().sasl() ? State.AWAIT_HANDSHAKE : State.AUTHENTICATED;
  }

  public KafkaPrincipal principal() {
    return principal;
  }

  /** Whether requests other than the SASL ones are served now (the frame bound is the full one). */
  public boolean authenticated() {
    return state == State.AUTHENTICATED || (state == State.AWAIT_AUTHENTICATE && saslDone);
  }

  /** The largest frame accepted now: {@code sasl.server.max.receive.size} until authenticated. */
  public int maxFrameBytes(int authenticatedMax) {
    return security.listener().sasl() && !authenticated() ? Math.min(authenticatedMax, security.saslMaxReceiveBytes())
        : authenticatedMax;
  }

  /**
   * Called once the TLS handshake finished, before the first request: the certificate's principal
   * on an SSL listener. Returns false when the certificate maps to no user (close the connection).
   */
  public boolean tlsEstablished(SSLSession session) {
    if (tlsChecked || security.listener().sasl()) {
      tlsChecked = true;
      return true;
    }
    tlsChecked = true;
    Optional<KafkaPrincipal> p = security.tlsPrincipal(session);
    if (p.isEmpty()) {
      state = State.FAILED;
      return false;
    }
    principal = p.get();
    return true;
  }

  /**
   * Takes the SASL requests and refuses what is out of turn; returns null when the request is to
   * be dispatched as usual (with {@link #principal()}).
   */
  public Outcome intercept(RequestDecoder.Decoded decoded) {
    if (!security.listener().sasl()) {
      return state == State.FAILED ? new Outcome(null, true) : null;
    }
    RequestHeader header = decoded.header();
    ApiKeys api = header.apiKey();
    if (api == ApiKeys.SASL_HANDSHAKE) {
      return handshake(header, (SaslHandshakeRequest) decoded.request());
    }
    if (api == ApiKeys.SASL_AUTHENTICATE) {
      return authenticate(header, (SaslAuthenticateRequest) decoded.request());
    }
    if (api == ApiKeys.API_VERSIONS && state != State.FAILED) {
      return null;
    }
    if (authenticated() && security.nowMs() < sessionExpiresAtMs) {
      return null;
    }
    state = State.FAILED;
    return new Outcome(null, true);
  }

  private Outcome handshake(RequestHeader header, SaslHandshakeRequest request) {
    String requested = request.data().mechanism() == null ? "" : request.data().mechanism().toUpperCase(java.util.Locale.ROOT);
    boolean reauth = state == State.AUTHENTICATED;
    SaslHandshakeResponseData body = new SaslHandshakeResponseData().setMechanisms(security.mechanisms());
    if (state != State.AWAIT_HANDSHAKE && !(reauth && header.apiVersion() >= 1)) {
      state = State.FAILED;
      return respond(header, body.setErrorCode(Errors.ILLEGAL_SASL_STATE.code()), true);
    }
    if (!security.mechanisms().contains(requested) || (reauth && !requested.equals(mechanism))) {
      state = State.FAILED;
      return respond(header, body.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code()), true);
    }
    if (header.apiVersion() < 1 && reauth) {
      state = State.FAILED;
      return respond(header, body.setErrorCode(Errors.ILLEGAL_SASL_STATE.code()), true);
    }
    rawTokens = header.apiVersion() == 0;
    mechanism = requested;
    exchange = security.exchange(requested);
    state = State.AWAIT_AUTHENTICATE;
    return respond(header, body.setErrorCode(Errors.NONE.code()), false);
  }

  /** Whether the next frame is a bare SASL token (after a v0 SaslHandshake) rather than a request. */
  public boolean expectsRawToken() {
    return rawTokens && state == State.AWAIT_AUTHENTICATE;
  }

  /**
   * A bare token after a v0 handshake: the answer goes back as a bare frame (the caller adds the
   * size); a failure closes the connection without an answer, as Kafka does for v0.
   */
  public Outcome rawToken(byte[] token) {
    byte[] answer;
    try {
      answer = exchange.evaluate(token);
    } catch (AuthenticationFailedException e) {
      state = State.FAILED;
      return new Outcome(null, true);
    }
    if (exchange.complete()) {
      principal = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, exchange.user());
      saslDone = true;
      exchange = null;
      rawTokens = false;
      state = State.AUTHENTICATED;
    }
    ByteBuffer framed = ByteBuffer.allocate(4 + answer.length);
    framed.putInt(answer.length).put(answer).flip();
    return new Outcome(framed, false);
  }

  private Outcome authenticate(RequestHeader header, SaslAuthenticateRequest request) {
    SaslAuthenticateResponseData body = new SaslAuthenticateResponseData().setAuthBytes(new byte[0]);
    if (state != State.AWAIT_AUTHENTICATE) {
      state = State.FAILED;
      return respond(header, body.setErrorCode(Errors.ILLEGAL_SASL_STATE.code())
          .setErrorMessage("Unexpected SaslAuthenticate request with state " + state), true);
    }
    byte[] answer;
    try {
      answer = exchange.evaluate(request.data().authBytes() == null ? new byte[0] : request.data().authBytes());
    } catch (AuthenticationFailedException e) {
      state = State.FAILED;
      return respond(header, body.setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
          .setErrorMessage(e.getMessage()), true);
    }
    body.setAuthBytes(answer);
    if (!exchange.complete()) {
      return respond(header, body.setErrorCode(Errors.NONE.code()), false);
    }
    KafkaPrincipal authenticated = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, exchange.user());
    if (saslDone && !principal.equals(authenticated)) {
      state = State.FAILED;
      return respond(header, body.setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code())
          .setErrorMessage("Cannot change principals during re-authentication from " + principal + " to "
              + authenticated), true);
    }
    principal = authenticated;
    saslDone = true;
    long credentialExpiresAtMs = exchange.credentialExpiresAtMs();
    exchange = null;
    state = State.AUTHENTICATED;
    long reauthMs = security.reauthMs();
    if (reauthMs > 0 && header.apiVersion() >= 1) {
      // KIP-368: the session ends with the credential (an OAUTHBEARER token's exp) when that comes first
      long now = security.nowMs();
      long lifetimeMs = Math.max(0, Math.min(reauthMs, credentialExpiresAtMs - now));
      sessionExpiresAtMs = now + lifetimeMs;
      body.setSessionLifetimeMs(lifetimeMs);
    }
    return respond(header, body.setErrorCode(Errors.NONE.code()), false);
  }

  private static Outcome respond(RequestHeader header, ApiMessage body, boolean close) {
    return new Outcome(ResponseEncoder.encode(header.apiKey(), header.apiVersion(), header.correlationId(), body), close);
  }
}
