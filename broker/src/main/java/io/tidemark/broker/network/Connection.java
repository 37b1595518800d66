package io.tidemark.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.ssl.ReferenceCountedOpenSslEngine;
import io.netty.handler.ssl.SslHandler;
import io.netty.internal.tcnative.SSL;
import io.tidemark.broker.metrics.BrokerMeters;
import io.tidemark.broker.security.Authenticator;
import io.tidemark.broker.security.Listener;
import io.tidemark.broker.protocol.CloseConnectionException;
import io.tidemark.broker.protocol.ErrorMapping;
import io.tidemark.broker.protocol.MalformedRequestException;
import io.tidemark.broker.protocol.RequestContext;
import io.tidemark.broker.protocol.RequestDecoder;
import io.tidemark.broker.protocol.RequestDispatcher;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: decodes each frame, dispatches it, and writes the responses strictly
 * in request order even when handlers complete out of order. At most {@code maxInflight}
 * requests are in progress; when that many are, the socket stops being read (auto-read off) and
 * frames already read wait in a parking queue (bounded by what one read can deliver); reading
 * resumes as responses drain. Reading also pauses while the socket is not writable (the client
 * is not reading its responses).
 *
 * <p>Each frame is copied to the heap and its Netty buffer released at once, so request objects
 * (and produced batches) never hold pooled memory. Threading: every method runs on the
 * channel's event loop; handler completions hop back onto it.
 *
 * <p>Every frame first meets the connection's {@link Authenticator}: on a SASL listener it answers
 * SaslHandshake and SaslAuthenticate itself and closes the connection on anything else before
 * authentication; each dispatched request carries the listener and the authenticated principal
 * in its {@link RequestContext}. A SASL answer takes its place in the response order like any
 * other, and a failed authentication is answered before the connection closes.
 *
 * <p>Meters ({@link BrokerMeters}): each dispatched request keeps four instants (frame read,
 * dispatched, answered, response written) in its {@link Pending} and is recorded when its response
 * is written, by API and version; the connection counts itself open and closed on its listener.
 */
final class Connection extends ChannelInboundHandlerAdapter {

  private static final Logger log = LoggerFactory.getLogger(Connection.class);

  /** One request awaiting its turn to answer. */
  private static final class Pending {
    /** The API and version of a dispatched request (null for SASL tokens and answers of the authenticator). */
    ApiKeys api;
    short version;
    /** {@link System#nanoTime()} when its frame was read, dispatched and answered (for the request meters). */
    long readNanos;
    long dispatchedNanos;
    long answeredNanos;
    boolean done;
    ByteBuffer response;
    boolean close;
    /** Write the response, then close (a failed authentication's answer). */
    boolean closeAfterWrite;
  }

  private final String id;
  private final RequestDecoder decoder;
  private final RequestDispatcher dispatcher;
  private final int maxInflight;
  private final Listener listener;
  private final Authenticator auth;
  private boolean tlsChecked;
  private final ArrayDeque<Pending> inflight = new ArrayDeque<>();
  private final ArrayDeque<Parked> parked = new ArrayDeque<>();
  private final BrokerMeters meters;
  private final BrokerMeters.ListenerMeters listenerMeters;
  private boolean counted;

  /** A frame read while the connection could not dispatch it, with when it was read. */
  private record Parked(byte[] frame, long readNanos) {}
  private ChannelHandlerContext ctx;
  private InetAddress peer;
  private int peerPort = -1;
  /** What the client named itself in its last valid ApiVersions (v3+), for client-metrics matching. */
  private RequestContext.ClientSoftware software = RequestContext.ClientSoftware.UNKNOWN;
  private boolean closing;
  /** Not read until a quota's throttle time has passed (channel muting, KIP-219). */
  private boolean muted;

  /** A connection of a PLAINTEXT listener (everyone anonymous). */
  Connection(String id, RequestDecoder decoder, RequestDispatcher dispatcher, int maxInflight) {
    this(id, decoder, dispatcher, maxInflight, PLAINTEXT, io.tidemark.broker.security.ListenerSecurity.plaintext(PLAINTEXT)
        .newAuthenticator());
  }

  private static final Listener PLAINTEXT = new Listener(RequestContext.DEFAULT_LISTENER,
      org.apache.kafka.common.security.auth.SecurityProtocol.PLAINTEXT, "0.0.0.0", 0, "localhost", 0);

  Connection(String id, RequestDecoder decoder, RequestDispatcher dispatcher, int maxInflight, Listener listener,
      Authenticator auth) {
    this.id = id;
    this.listener = listener;
    this.auth = auth;
    this.decoder = decoder;
    this.dispatcher = dispatcher;
    this.maxInflight = maxInflight;
    this.meters = dispatcher.meters();
    this.listenerMeters = meters.listener(listener.name());
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    this.ctx = ctx;
    if (ctx.channel().remoteAddress() instanceof InetSocketAddress a) {
      peer = a.getAddress();
      peerPort = a.getPort();
    }
    counted = true;
    listenerMeters.opened();
    super.channelActive(ctx);
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    byte[] frame;
    ByteBuf buf = (ByteBuf) msg;
    try {
      frame = ByteBufUtil.getBytes(buf);
    } finally {
      buf.release();
    }
    if (closing) {
      return;
    }
    long now = System.nanoTime();
    if (muted || inflight.size() >= maxInflight || !parked.isEmpty()) {
      parked.add(new Parked(frame, now));
      pauseReading();
      return;
    }
    process(frame, now, now);
  }

  private void process(byte[] frame, long readNanos, long dispatchedNanos) {
    if (auth.expectsRawToken()) {
      Authenticator.Outcome answer = auth.rawToken(frame);
      if (answer.close()) {
        log.debug("closing connection {} from {}: SASL authentication failed", id, peer);
        closeNow();
        return;
      }
      Pending pending = new Pending();
      pending.done = true;
      pending.response = answer.response();
      inflight.add(pending);
      drain();
      return;
    }
    RequestDecoder.Decoded decoded;
    try {
      decoded = decoder.decode(ByteBuffer.wrap(frame));
    } catch (MalformedRequestException e) {
      log.debug("closing connection {} from {}: {}", id, peer, e.getMessage());
      closeNow();
      return;
    }
    if (decoded.request() instanceof ApiVersionsRequest versions && versions.isValid()) {
      software = RequestContext.ClientSoftware.of(versions.data().clientSoftwareName(), versions.data().clientSoftwareVersion());
    }
    if (!tlsChecked && listener.tls()) {
      tlsChecked = true;
      SslHandler ssl = ctx.pipeline().get(SslHandler.class);
      if (ssl == null || !auth.tlsEstablished(ssl.engine().getSession())) {
        log.info("closing connection {} from {}: its certificate maps to no user (ssl.principal.mapping.rules)", id, peer);
        closeNow();
        return;
      }
    }
    Pending pending = new Pending();
    Authenticator.Outcome taken = auth.intercept(decoded);
    if (taken != null) {
      if (taken.response() == null) {
        log.debug("closing connection {} from {}: {} before authentication", id, peer, decoded.header().apiKey());
        closeNow();
        return;
      }
      inflight.add(pending);
      pending.done = true;
      pending.response = taken.response();
      pending.closeAfterWrite = taken.close();
      drain();
      return;
    }
    inflight.add(pending);
    pending.api = decoded.header().apiKey();
    pending.version = decoded.header().apiVersion();
    pending.readNanos = readNanos;
    pending.dispatchedNanos = dispatchedNanos;
    if (inflight.size() >= maxInflight) {
      pauseReading();
    }
    RequestContext context = new RequestContext(decoded.header(), peer, peerPort, id, listener.name(), listener.protocol(),
        auth.principal(), software);
    CompletableFuture<ByteBuffer> response;
    try {
      response = dispatcher.dispatch(decoded, context, dispatchedNanos);
    } catch (RuntimeException e) {
      response = CompletableFuture.failedFuture(e);
    }
    if (response.isDone()) {
      complete(pending, response);
    } else {
      CompletableFuture<ByteBuffer> r = response;
      response.whenComplete((x, e) -> ctx.executor().execute(() -> complete(pending, r)));
    }
  }

  private void complete(Pending pending, CompletableFuture<ByteBuffer> response) {
    pending.done = true;
    pending.answeredNanos = System.nanoTime();
    try {
      pending.response = response.join();
    } catch (RuntimeException e) {
      Throwable cause = ErrorMapping.unwrap(e);
      if (!(cause instanceof CloseConnectionException)) {
        log.warn("request on connection {} failed unexpectedly; closing", id, cause);
      }
      pending.close = true;
    }
    drain();
  }

  private void drain() {
    boolean wrote = false;
    long now = 0;
    while (!inflight.isEmpty() && inflight.peek().done) {
      Pending p = inflight.poll();
      if (p.api != null) {
        now = now == 0 ? System.nanoTime() : now;
        meters.api(p.api).request(p.version, p.readNanos, p.dispatchedNanos, p.answeredNanos, now);
      }
      if (p.close) {
        if (wrote) {
          ctx.flush();
        }
        closeNow();
        return;
      }
      if (p.response != null && ctx.channel().isActive()) {
        ctx.write(Unpooled.wrappedBuffer(p.response), ctx.voidPromise());
        wrote = true;
      }
      if (p.closeAfterWrite) {
        closing = true;
        parked.clear();
        inflight.clear();
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(f -> ctx.close());
        return;
      }
    }
    if (wrote) {
      ctx.flush();
      long throttleMs = dispatcher.throttles().take(id);
      if (throttleMs > 0 && !muted) {
        muted = true;
        pauseReading();
        ctx.executor().schedule(() -> {
          muted = false;
          drain();
        }, throttleMs, java.util.concurrent.TimeUnit.MILLISECONDS);
      }
    }
    while (!closing && !muted && !parked.isEmpty() && inflight.size() < maxInflight) {
      Parked next = parked.poll();
      process(next.frame(), next.readNanos(), System.nanoTime());
    }
    maybeResumeReading();
  }

  private void pauseReading() {
    ctx.channel().config().setAutoRead(false);
  }

  private void maybeResumeReading() {
    if (!closing && !muted && parked.isEmpty() && inflight.size() < maxInflight && ctx.channel().isWritable()
        && !ctx.channel().config().isAutoRead()) {
      ctx.channel().config().setAutoRead(true);
    }
  }

  /**
   * Closes a TLS connection whose OpenSSL session failed on a record after the handshake (a
   * tampered or undecryptable record): Netty's OpenSSL engine then sends the fatal alert but
   * raises nothing until the peer sends more, so a silent peer would keep the connection open.
   * BoringSSL marks the session shut for reading on such a failure, which is checked here after
   * each read. The JDK's engine raises the failure at once ({@link #exceptionCaught}).
   */
  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
    if (listener.tls() && !closing && openSslSessionFailed(ctx.pipeline().get(SslHandler.class))) {
      log.debug("closing connection {} from {}: its TLS session failed (undecryptable record)", id, peer);
      closeNow();
      return;
    }
    super.channelReadComplete(ctx);
  }

  private static boolean openSslSessionFailed(SslHandler ssl) {
    if (ssl == null || !(ssl.engine() instanceof ReferenceCountedOpenSslEngine engine) || !ssl.handshakeFuture().isSuccess()) {
      return false;
    }
    long pointer = engine.sslPointer();
    return pointer != 0 && (SSL.getShutdown(pointer) & SSL.SSL_RECEIVED_SHUTDOWN) != 0;
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    if (!ctx.channel().isWritable()) {
      pauseReading();
    } else {
      maybeResumeReading();
    }
    super.channelWritabilityChanged(ctx);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    dispatcher.throttles().take(id);
    dispatcher.connectionClosed(id);
    closing = true;
    parked.clear();
    if (counted) {
      counted = false;
      listenerMeters.closed();
    }
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof TooLongFrameException || cause instanceof CorruptedFrameException) {
      log.debug("closing connection {} from {}: {}", id, peer, cause.getMessage());
    } else {
      log.debug("closing connection {} from {}", id, peer, cause);
    }
    closeNow();
  }

  private void closeNow() {
    closing = true;
    parked.clear();
    ctx.close();
  }
}
