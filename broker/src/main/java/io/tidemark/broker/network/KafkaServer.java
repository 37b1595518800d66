package io.tidemark.broker.network;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.tidemark.broker.security.Authenticator;
import io.tidemark.broker.security.Listener;
import io.tidemark.broker.security.ListenerSecurity;
import io.tidemark.broker.protocol.RequestDecoder;
import io.tidemark.broker.protocol.RequestDispatcher;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka listeners: one Netty server channel per named listener (epoll when available, NIO
 * otherwise), sharing the event loops. The pipeline per connection is the TLS handler on SSL and
 * SASL_SSL listeners (a fresh engine from the listener's current, possibly reloaded, context), a
 * length-prefixed {@link FrameDecoder} bounded by {@code maxRequestBytes} (and by the SASL bound
 * before authentication; a larger size closes the connection before anything is allocated) and a
 * {@link Connection} with its {@link Authenticator}. Before the pipeline is built, a connection is
 * counted against the {@link ConnectionLimits} (closed when over a per-address or total limit), and
 * a listener at its connection limit or creation-rate throttle stops accepting (its server
 * channel's auto-read off) until a connection closes or the throttle ends. Connections are spread
 * over the {@link NetworkThreads} ({@code num.network.threads}, changeable at run time).
 *
 * <p>States: created → started ({@link #start()}) → closed. Netty's event loops own the
 * connections; this object only holds the server channels.
 */
public final class KafkaServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KafkaServer.class);

  private final List<ListenerSecurity> listeners;
  private final int maxRequestBytes;
  private final int maxInflight;
  private final RequestDecoder decoder;
  private final RequestDispatcher dispatcher;
  private final ConnectionLimits limits;
  private final AtomicLong connectionIds = new AtomicLong();
  /** Server channel of each listener, for pausing and resuming accepts (written at start, read by the event loops). */
  private final Map<String, Channel> acceptors = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<String, java.util.concurrent.atomic.AtomicBoolean> resumeScheduled = new java.util.concurrent.ConcurrentHashMap<>();
  /** Most connections parked over {@code max.connections} (a few: accepting pauses at the limit). */
  static final int MAX_PARKED = 1024;
  /** Connections over {@code max.connections}, oldest first; guarded by itself. */
  private final java.util.Deque<Parked> parked = new java.util.ArrayDeque<>();
  private EventLoopGroup bossGroup;
  private EventLoopGroup workerGroup;
  private NetworkThreads networkThreads = new NetworkThreads(2 * Runtime.getRuntime().availableProcessors(), 0);
  private final List<Channel> serverChannels = new ArrayList<>();
  private final Map<String, Integer> boundPorts = new LinkedHashMap<>();

  public KafkaServer(List<ListenerSecurity> listeners, int maxRequestBytes, int maxInflight, RequestDecoder decoder,
      RequestDispatcher dispatcher) {
    this(listeners, maxRequestBytes, maxInflight, decoder, dispatcher, ConnectionLimits.none());
  }

  public KafkaServer(List<ListenerSecurity> listeners, int maxRequestBytes, int maxInflight, RequestDecoder decoder,
      RequestDispatcher dispatcher, ConnectionLimits limits) {
    this.limits = limits;
    this.listeners = List.copyOf(listeners);
    this.maxRequestBytes = maxRequestBytes;
    this.maxInflight = maxInflight;
    this.decoder = decoder;
    this.dispatcher = dispatcher;
  }

  /** Serves connections on {@code threads}' event loops (before {@link #start()}). Returns this. */
  public synchronized KafkaServer networkThreads(NetworkThreads threads) {
    this.networkThreads = threads;
    return this;
  }

  /** Binds every listener; returns the first listener's bound port. */
  public synchronized int start() throws InterruptedException {
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends ServerChannel> channelClass = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    bossGroup = new MultiThreadIoEventLoopGroup(1, factory);
    workerGroup = networkThreads.newGroup(factory);
    for (ListenerSecurity security : listeners) {
      Listener listener = security.listener();
      dispatcher.meters().listener(listener.name()); // its connection meters read 0 from the start
      ServerBootstrap b = new ServerBootstrap().group(bossGroup, workerGroup).channel(channelClass)
          .option(ChannelOption.SO_BACKLOG, 1024)
          .option(ChannelOption.SO_REUSEADDR, true)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childOption(ChannelOption.SO_KEEPALIVE, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              if (!admitted(listener.name(), ch)) {
                return;
              }
              Authenticator auth = security.newAuthenticator();
              security.tls().ifPresent(tls -> ch.pipeline().addLast("tls", tls.current().newHandler(ch.alloc())));
              ch.pipeline().addLast("frames", new FrameDecoder(maxRequestBytes, () -> auth.maxFrameBytes(maxRequestBytes)));
              ch.pipeline().addLast("requests", new Connection("c" + connectionIds.incrementAndGet(), decoder, dispatcher,
                  maxInflight, listener, auth));
            }
          });
      Channel channel = b.bind(new InetSocketAddress(listener.host(), listener.port())).sync().channel();
      serverChannels.add(channel);
      acceptors.put(listener.name(), channel);
      resumeScheduled.put(listener.name(), new java.util.concurrent.atomic.AtomicBoolean());
      int bound = ((InetSocketAddress) channel.localAddress()).getPort();
      boundPorts.put(listener.name(), bound);
      log.info("Kafka listener {} ({}) on {}:{} ({}{})", listener.name(), listener.protocol(), listener.host(), bound,
          epoll ? "epoll" : "nio", security.tls().map(t -> ", TLS engine " + t.engineDescription()).orElse(""));
    }
    return boundPorts.values().iterator().next();
  }

  /**
   * Counts a new connection against the {@link ConnectionLimits}: over the per-address limit it is
   * closed (false); over {@code max.connections} it is parked unread (its pipeline is built, its
   * auto-read off, nothing counted) until a connection closes, at most {@value #MAX_PARKED} of them
   * (more are closed); accepted, it is uncounted when it closes. Then pauses or resumes accepting.
   * Before all that, an address over its ip quota's {@code connection_creation_rate} has its
   * connection held unread and closed after the throttle time, as Kafka's acceptor delays closing it.
   */
  private boolean admitted(String listener, SocketChannel ch) {
    InetAddress address = ch.remoteAddress().getAddress();
    long ipThrottleMs = limits.ipThrottleMs(address);
    if (ipThrottleMs > 0) {
      log.debug("closing connection from {} on listener {} in {} ms: connection_creation_rate", address.getHostAddress(),
          listener, ipThrottleMs);
      ch.config().setAutoRead(false);
      ch.eventLoop().schedule(() -> ch.close(), ipThrottleMs, TimeUnit.MILLISECONDS);
      return false;
    }
    ConnectionLimits.Admission admission = limits.admit(listener, address);
    switch (admission) {
      case ACCEPTED -> countedUntilClosed(listener, ch, address);
      case REFUSED_MAX -> {
        Parked parked = new Parked(listener, ch, address);
        synchronized (this.parked) {
          if (this.parked.size() >= MAX_PARKED) {
            ch.close();
            return false;
          }
          this.parked.add(parked);
        }
        ch.config().setAutoRead(false);
        ch.closeFuture().addListener(f -> {
          synchronized (this.parked) {
            this.parked.remove(parked);
          }
        });
      }
      case REFUSED_PER_IP -> {
        log.debug("closing connection from {} on listener {}: max.connections.per.ip", address.getHostAddress(), listener);
        ch.close();
        return false;
      }
    }
    refreshAccepting();
    return true;
  }

  private void countedUntilClosed(String listener, SocketChannel ch, InetAddress address) {
    ch.closeFuture().addListener(f -> {
      limits.release(listener, address);
      admitParked();
      refreshAccepting();
    });
  }

  /** Admits the parked connections that fit now, oldest first, and lets them be read. */
  private void admitParked() {
    synchronized (parked) {
      for (java.util.Iterator<Parked> it = parked.iterator(); it.hasNext(); ) {
        Parked p = it.next();
        if (!p.channel().isOpen()) {
          it.remove();
          continue;
        }
        ConnectionLimits.Admission admission = limits.admit(p.listener(), p.address());
        if (admission == ConnectionLimits.Admission.ACCEPTED) {
          it.remove();
          countedUntilClosed(p.listener(), p.channel(), p.address());
          p.channel().config().setAutoRead(true);
        } else if (admission == ConnectionLimits.Admission.REFUSED_PER_IP) {
          it.remove();
          p.channel().close();
        }
      }
    }
  }

  /** A connection accepted over {@code max.connections}, waiting unread. */
  private record Parked(String listener, SocketChannel channel, InetAddress address) {}

  /**
   * Sets each listener's server channel to accept or not, as the limits say now; a listener paused
   * by a creation-rate throttle is asked again when the throttle ends (one scheduled check at a time).
   */
  private void refreshAccepting() {
    acceptors.forEach((name, channel) -> {
      if (!channel.isOpen()) {
        return;
      }
      boolean accepting = limits.accepting(name);
      if (channel.config().isAutoRead() != accepting) {
        channel.config().setAutoRead(accepting);
      }
      long retryMs = accepting ? 0 : limits.retryInMs(name);
      if (retryMs > 0 && resumeScheduled.get(name).compareAndSet(false, true)) {
        channel.eventLoop().schedule(() -> {
          resumeScheduled.get(name).set(false);
          refreshAccepting();
        }, retryMs, TimeUnit.MILLISECONDS);
      }
    });
  }

  /** The bound port of each listener by name (after {@link #start()}). */
  public synchronized Map<String, Integer> boundPorts() {
    return Map.copyOf(boundPorts);
  }

  @Override
  public synchronized void close() {
    for (Channel channel : serverChannels) {
      channel.close().syncUninterruptibly();
    }
    serverChannels.clear();
    if (bossGroup != null) {
      bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
      workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
      bossGroup = null;
      workerGroup = null;
    }
  }
}
