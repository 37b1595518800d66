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
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.tidemark.broker.protocol.RequestDecoder;
import io.tidemark.broker.protocol.RequestDispatcher;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka listener: a Netty server (epoll when available, NIO otherwise) whose pipeline per
 * connection is a length-prefixed frame decoder bounded by {@code maxRequestBytes} (a larger
 * size closes the connection before anything is allocated) and a {@link Connection}.
 *
 * <p>States: created → started ({@link #start()}) → closed. Netty's event loops own the
 * connections; this object only holds the server channel.
 */
public final class KafkaServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KafkaServer.class);

  private final String host;
  private final int port;
  private final int maxRequestBytes;
  private final int maxInflight;
  private final RequestDecoder decoder;
  private final RequestDispatcher dispatcher;
  private final AtomicLong connectionIds = new AtomicLong();
  private EventLoopGroup bossGroup;
  private EventLoopGroup workerGroup;
  private Channel serverChannel;

  public KafkaServer(String host, int port, int maxRequestBytes, int maxInflight, RequestDecoder decoder,
      RequestDispatcher dispatcher) {
    this.host = host;
    this.port = port;
    this.maxRequestBytes = maxRequestBytes;
    this.maxInflight = maxInflight;
    this.decoder = decoder;
    this.dispatcher = dispatcher;
  }

  /** Binds the listener; returns the bound port. */
  public synchronized int start() throws InterruptedException {
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends ServerChannel> channelClass = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    bossGroup = new MultiThreadIoEventLoopGroup(1, factory);
    workerGroup = new MultiThreadIoEventLoopGroup(0, factory);
    ServerBootstrap b = new ServerBootstrap().group(bossGroup, workerGroup).channel(channelClass)
        .option(ChannelOption.SO_BACKLOG, 1024)
        .option(ChannelOption.SO_REUSEADDR, true)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.SO_KEEPALIVE, true)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast("frames", new LengthFieldBasedFrameDecoder(maxRequestBytes, 0, 4, 0, 4, true));
            ch.pipeline().addLast("requests", new Connection("c" + connectionIds.incrementAndGet(), decoder, dispatcher, maxInflight));
          }
        });
    serverChannel = b.bind(new InetSocketAddress(host, port)).sync().channel();
    int bound = ((InetSocketAddress) serverChannel.localAddress()).getPort();
    log.info("Kafka listener on {}:{} ({})", host, bound, epoll ? "epoll" : "nio");
    return bound;
  }

  @Override
  public synchronized void close() {
    if (serverChannel != null) {
      serverChannel.close().syncUninterruptibly();
      serverChannel = null;
    }
    if (bossGroup != null) {
      bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
      workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
      bossGroup = null;
      workerGroup = null;
    }
  }
}
