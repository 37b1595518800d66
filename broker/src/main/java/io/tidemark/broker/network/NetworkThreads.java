package io.tidemark.broker.network;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorChooserFactory;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.concurrent.ThreadPerTaskExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The event loops serving Kafka connections, sized by Kafka's {@code num.network.threads}: here a
 * network thread reads, decodes and dispatches a connection's requests and writes its responses
 * (there is no separate request handler pool: handlers hand work to the owning component at once),
 * so this is the one pool that Kafka's network and I/O thread counts both describe. The Netty group
 * holds {@code capacity} loops, twice the count it starts with; new connections go round robin to
 * the first {@link #active()} of them. Raising the count gives new connections more loops (a loop's
 * thread starts with its first connection, so the spare loops cost a selector each and no thread);
 * lowering it sends new connections to fewer loops while connections already on the others stay
 * there until they close (Kafka closes them; clients would reconnect). Threads are named
 * {@code kafka-network-thread-<node>-<n>}.
 *
 * <p>{@link #dynamicConfig} checks a new count as Kafka's acceptor does (at least 1, at least half
 * and at most double the current count) and within the capacity; the count may be set per broker or
 * as the cluster default. Thread-safe: the count is a volatile read by the chooser on
 * the acceptor's loop; {@link #apply} runs on the dynamic configs' refresh.
 */
public final class NetworkThreads {

  public static final String KEY = "num.network.threads";

  private final int configured;
  private final int capacity;
  private final String threadPrefix;
  private volatile int active;
  private final AtomicLong next = new AtomicLong();
  private final AtomicInteger threadIds = new AtomicInteger();

  /** @param configured the static count (the configuration file's, or twice the processors) */
  public NetworkThreads(int configured, int nodeId) {
    this.configured = configured;
    this.capacity = 2 * configured;
    this.active = configured;
    this.threadPrefix = "kafka-network-thread-" + nodeId + "-";
  }

  /** The count new connections are spread over now. */
  public int active() {
    return active;
  }

  /** Threads started so far (a loop's thread starts with its first connection). */
  public int started() {
    return threadIds.get();
  }

  /** A Netty group of {@code capacity} loops choosing among the active ones. */
  EventLoopGroup newGroup(IoHandlerFactory factory) {
    ThreadPerTaskExecutor executor = new ThreadPerTaskExecutor(r -> new FastThreadLocalThread(r,
        threadPrefix + threadIds.incrementAndGet()));
    EventExecutorChooserFactory chooser = executors -> () -> executors[(int) Math.floorMod(next.getAndIncrement(),
        (long) Math.min(active, executors.length))];
    return new MultiThreadIoEventLoopGroup(capacity, executor, chooser, factory);
  }

  /** Sends new connections to the first {@code n} loops (1 to the capacity). */
  public void resize(int n) {
    if (n < 1 || n > capacity) {
      throw new IllegalArgumentException("network threads " + n + " outside 1.." + capacity);
    }
    active = n;
  }

  /** As Kafka's dynamic {@code num.network.threads}, statically {@code kafka.network.threads}. */
  public io.tidemark.broker.admin.DynamicThreadCount dynamicConfig() {
    return new io.tidemark.broker.admin.DynamicThreadCount(KEY, "kafka.network.threads", configured, capacity,
        "the network threads this broker started with times two; raise kafka.network.threads and restart to go further",
        io.tidemark.broker.admin.DynamicThreadCount.Wording.POOL, this::active, this::resize);
  }
}
