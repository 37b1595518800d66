package io.tidemark.broker.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.tidemark.broker.KafkaBroker;
import io.tidemark.broker.protocol.RequestDecoder;
import io.tidemark.broker.protocol.RequestDispatcher;
import io.tidemark.stream.config.Settings;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goal: random and mutated request frames fed through the real pipeline (frame decoder,
 * request decoder, dispatcher, handlers) never crash it and never leak a Netty buffer (leak
 * detector PARANOID with a counting reporter). Size from {@code tidemark.test.scale}: 8k
 * inputs by default, 1M under {@code -Pfull}. The seed is printed.
 */
class RequestFuzzTest {

  private static final AtomicInteger LEAKS = new AtomicInteger();

  static {
    // Must run before Netty creates its buffer leak detectors; the broker module runs each test class in its own JVM.
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
      @Override
      public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
        return new ResourceLeakDetector<>(resource, samplingInterval) {
          @Override
          protected boolean needReport() {
            return true;
          }

          @Override
          protected void reportTracedLeak(String type, String records) {
            LEAKS.incrementAndGet();
            System.err.println("LEAK " + type + " " + records);
          }

          @Override
          protected void reportUntracedLeak(String type) {
            LEAKS.incrementAndGet();
            System.err.println("LEAK " + type);
          }
        };
      }
    });
  }

  static KafkaBroker broker;
  static EventLoopGroup group;
  static Channel server;
  static final LocalAddress ADDRESS = new LocalAddress("fuzz");
  static final AtomicInteger RESPONSES = new AtomicInteger();

  @BeforeAll
  static void start() throws Exception {
    broker = KafkaBroker.inMemory(new Settings(Map.of("kafka.listener.port", "0", "kafka.listener.host", "127.0.0.1",
        "kafka.fetch.max.wait.ms", "50", "kafka.group.initial.rebalance.delay.ms", "0")));
    broker.start();
    RequestDecoder decoder = new RequestDecoder(broker.apis());
    RequestDispatcher dispatcher = new RequestDispatcher(broker.apis());
    group = new MultiThreadIoEventLoopGroup(2, LocalIoHandler.newFactory());
    server = new ServerBootstrap().group(group).channel(LocalServerChannel.class).childHandler(new ChannelInitializer<LocalChannel>() {
      @Override
      protected void initChannel(LocalChannel ch) {
        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(1 << 20, 0, 4, 0, 4, true));
        ch.pipeline().addLast(new Connection("fuzz", decoder, dispatcher, 8));
      }
    }).bind(ADDRESS).sync().channel();
  }

  @AfterAll
  static void stop() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    broker.close();
  }

  /** Counts and releases every response. */
  @io.netty.channel.ChannelHandler.Sharable
  static final class ResponseSink extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      RESPONSES.incrementAndGet();
      ReferenceCountUtil.release(msg);
    }
  }

  private static int inputs() {
    return "full".equals(System.getProperty("tidemark.test.scale")) ? 1_000_000 : 8_000;
  }

  private static ByteBuffer frame(AbstractRequest.Builder<?> b, short version) {
    AbstractRequest r = b.build(version);
    ByteBuffer body = r.serializeWithHeader(new RequestHeader(r.apiKey(), version, "fuzz", 7));
    ByteBuffer framed = ByteBuffer.allocate(4 + body.remaining());
    framed.putInt(body.remaining()).put(body).flip();
    return framed;
  }

  private static List<Supplier<ByteBuffer>> validFrames() {
    List<Supplier<ByteBuffer>> out = new ArrayList<>();
    out.add(() -> frame(new ApiVersionsRequest.Builder(), (short) 3));
    out.add(() -> frame(new MetadataRequest.Builder(new MetadataRequestData().setTopics(List.of(
        new MetadataRequestData.MetadataRequestTopic().setName("fuzzed").setTopicId(Uuid.ZERO_UUID))).setAllowAutoTopicCreation(true)),
        (short) 12));
    out.add(() -> {
      ProduceRequestData d = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(1000);
      d.topicData().add(new ProduceRequestData.TopicProduceData().setName("fuzzed").setPartitionData(List.of(
          new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withRecords(Compression.NONE,
              new SimpleRecord("k".getBytes(), "v".getBytes()), new SimpleRecord(null, "w".getBytes()))))));
      return frame(ProduceRequest.builder(d, true), (short) 9);
    });
    out.add(() -> {
      FetchRequestData d = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(10).setMinBytes(1).setMaxBytes(1 << 16)
          .setSessionId(0).setSessionEpoch(0);
      d.topics().add(new FetchRequestData.FetchTopic().setTopic("fuzzed").setPartitions(List.of(
          new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 16))));
      return frame(new FetchRequest.SimpleBuilder(d), (short) 12);
    });
    out.add(() -> {
      List<ListOffsetsRequestData.ListOffsetsTopic> topics = List.of(new ListOffsetsRequestData.ListOffsetsTopic().setName("fuzzed")
          .setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-2))));
      return frame(ListOffsetsRequest.Builder.forConsumer(false, org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED)
          .setTargetTimes(topics), (short) 7);
    });
    out.add(() -> frame(new FindCoordinatorRequest.Builder(new FindCoordinatorRequestData().setKeyType((byte) 0)
        .setCoordinatorKeys(List.of("g"))), (short) 4));
    out.add(() -> {
      JoinGroupRequestData d = new JoinGroupRequestData().setGroupId("g").setSessionTimeoutMs(10_000).setRebalanceTimeoutMs(100)
          .setMemberId("").setProtocolType("consumer");
      d.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(new byte[] {0, 1, 2}));
      return frame(new JoinGroupRequest.Builder(d), (short) 5);
    });
    out.add(() -> frame(new HeartbeatRequest.Builder(new HeartbeatRequestData().setGroupId("g").setMemberId("m").setGenerationId(1)),
        (short) 4));
    out.add(() -> {
      OffsetCommitRequestData d = new OffsetCommitRequestData().setGroupId("g").setGenerationIdOrMemberEpoch(-1).setMemberId("");
      d.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("fuzzed").setPartitions(List.of(
          new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1))));
      return frame(OffsetCommitRequest.Builder.forTopicNames(d), (short) 8);
    });
    out.add(() -> {
      CreateTopicsRequestData d = new CreateTopicsRequestData().setTimeoutMs(1000);
      d.topics().add(new CreateTopicsRequestData.CreatableTopic().setName("fz").setNumPartitions(1).setReplicationFactor((short) 1));
      return frame(new CreateTopicsRequest.Builder(d), (short) 5);
    });
    return out;
  }

  private static byte[] mutate(ByteBuffer valid, Random random) {
    byte[] b = new byte[valid.remaining()];
    valid.get(b);
    switch (random.nextInt(6)) {
      case 0 -> { // flip a few bytes after the size prefix
        int n = 1 + random.nextInt(4);
        for (int i = 0; i < n && b.length > 4; i++) {
          b[4 + random.nextInt(b.length - 4)] ^= (byte) (1 + random.nextInt(255));
        }
      }
      case 1 -> { // truncate the body and fix the prefix
        int len = 4 + random.nextInt(Math.max(1, b.length - 4));
        byte[] t = java.util.Arrays.copyOf(b, len);
        ByteBuffer.wrap(t).putInt(len - 4);
        b = t;
      }
      case 2 -> { // garbage appended inside the frame
        int extra = 1 + random.nextInt(32);
        byte[] t = java.util.Arrays.copyOf(b, b.length + extra);
        for (int i = b.length; i < t.length; i++) {
          t[i] = (byte) random.nextInt();
        }
        ByteBuffer.wrap(t).putInt(t.length - 4);
        b = t;
      }
      case 3 -> ByteBuffer.wrap(b).putShort(6, (short) random.nextInt(40)); // another API version
      case 4 -> ByteBuffer.wrap(b).putShort(4, (short) random.nextInt(100)); // another API key
      default -> { // a random 16-bit length field set to a random value
        if (b.length > 16) {
          int pos = 12 + random.nextInt(b.length - 14);
          ByteBuffer.wrap(b).putShort(pos, (short) random.nextInt());
        }
      }
    }
    return b;
  }

  private static byte[] random(Random random) {
    int len = random.nextInt(64);
    byte[] b = new byte[4 + len];
    random.nextBytes(b);
    ByteBuffer.wrap(b).putInt(random.nextInt(4) == 0 ? random.nextInt() : len);
    return b;
  }

  @Test
  void randomAndMutatedFramesNeitherCrashNorLeak() throws Exception {
    long seed = Long.getLong("tidemark.fuzz.seed", System.nanoTime());
    System.out.println("RequestFuzzTest seed=" + seed + " (rerun with -Dtidemark.fuzz.seed=" + seed + ")");
    Random random = new Random(seed);
    List<Supplier<ByteBuffer>> valid = validFrames();
    int n = inputs();
    Bootstrap client = new Bootstrap().group(group).channel(LocalChannel.class).handler(new ResponseSink());
    Channel ch = null;
    int perConnection = 0;
    for (int i = 0; i < n; i++) {
      if (ch == null || !ch.isActive() || perConnection >= 200) {
        if (ch != null) {
          ch.close().sync();
        }
        ch = client.connect(ADDRESS).sync().channel();
        perConnection = 0;
      }
      byte[] input = random.nextInt(3) == 0 ? random(random) : mutate(valid.get(random.nextInt(valid.size())).get(), random);
      ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(input.length);
      buf.writeBytes(input);
      perConnection++;
      if (perConnection % 32 == 0) {
        ch.writeAndFlush(buf).await(5, TimeUnit.SECONDS);
      } else {
        ch.writeAndFlush(buf);
      }
      if (!ch.isWritable()) {
        Channel c = ch;
        await().atMost(Duration.ofSeconds(10)).until(() -> c.isWritable() || !c.isActive());
      }
    }
    ch.close().sync();
    // the broker still serves well-formed requests
    Channel check = client.connect(ADDRESS).sync().channel();
    int before = RESPONSES.get();
    ByteBuf ok = PooledByteBufAllocator.DEFAULT.directBuffer();
    ok.writeBytes(valid.get(0).get());
    check.writeAndFlush(ok).sync();
    await().atMost(Duration.ofSeconds(10)).until(() -> RESPONSES.get() > before);
    check.close().sync();
    // make leaked buffers unreachable, then let the detector look at them
    for (int round = 0; round < 5; round++) {
      System.gc();
      for (int i = 0; i < 1000; i++) {
        PooledByteBufAllocator.DEFAULT.directBuffer(64).release();
      }
      Thread.sleep(20);
    }
    assertThat(LEAKS.get()).as("leaked Netty buffers").isZero();
    assertThat(RESPONSES.get()).isPositive();
  }
}
