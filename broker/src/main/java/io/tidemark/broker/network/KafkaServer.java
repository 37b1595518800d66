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
 * {@link Connection} with its {@link Authenticator}.
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
  private final AtomicLong connectionIds = new AtomicLong();
  private EventLoopGroup bossGroup;
  private EventLoopGroup workerGroup;
  private final List<Channel> serverChannels = new ArrayList<>();
  private final Map<String, Integer> boundPorts = new LinkedHashMap<>();

  public KafkaServer(List<ListenerSecurity> listeners, int maxRequestBytes, int maxInflight, RequestDecoder decoder,
      RequestDispatcher dispatcher) {
    this.listeners = List.copyOf(listeners);
    this.maxRequestBytes = maxRequestBytes;
    this.maxInflight = maxInflight;
    this.decoder = decoder;
    this.dispatcher = dispatcher;
  }

  /** Binds every listener; returns the first listener's bound port. */
  public synchronized int start() throws InterruptedException {
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends ServerChannel> channelClass = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    bossGroup = new MultiThreadIoEventLoopGroup(1, factory);
    workerGroup = new MultiThreadIoEventLoopGroup(0, factory);
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
              Authenticator auth = security.newAuthenticator();
              security.tls().ifPresent(tls -> ch.pipeline().addLast("tls", tls.current().newHandler(ch.alloc())));
              ch.pipeline().addLast("frames", new FrameDecoder(maxRequestBytes, () -> auth.maxFrameBytes(maxRequestBytes)));
              ch.pipeline().addLast("requests", new Connection("c" + connectionIds.incrementAndGet(), decoder, dispatcher,
                  maxInflight, listener, auth));
            }
          });
      Channel channel = b.bind(new InetSocketAddress(listener.host(), listener.port())).sync().channel();
      serverChannels.add(channel);
      int bound = ((InetSocketAddress) channel.localAddress()).getPort();
      boundPorts.put(listener.name(), bound);
      log.info("Kafka listener {} ({}) on {}:{} ({})", listener.name(), listener.protocol(), listener.host(), bound,
          epoll ? "epoll" : "nio");
    }
    return boundPorts.values().iterator().next();
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
