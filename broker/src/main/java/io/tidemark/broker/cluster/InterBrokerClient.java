package io.tidemark.broker.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.BootstrapConfiguration;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.MetadataRecoveryStrategy;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.BrokerNotAvailableException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Requests from this broker to another, over the other broker's inter-broker listener with the
 * security settings Tidemark's own clients use there ({@code SecurityConfig.internalClientConfigs}:
 * TLS trust, SASL login), on kafka-clients' {@link NetworkClient} as Kafka's inter-broker senders
 * do: one connection per broker, versions negotiated with ApiVersions, reconnects with backoff.
 *
 * <p><b>Threading:</b> one owner thread ({@code tidemark-inter-broker-<name>}) owns the network
 * client and the requests waiting for a connection; {@link #send} hands a request over through a
 * queue of at most {@value #MAX_QUEUED} (a send beyond fails at once with a retriable error).
 *
 * <p><b>Outcomes:</b> the future completes with the response body, or fails with a retriable
 * {@link NetworkException} (connection lost: the request may or may not have been applied; callers
 * send only requests that are safe to repeat), {@link TimeoutException} (no connection or
 * answer within the timeout) or {@link BrokerNotAvailableException} (no live broker of that id).
 */
public final class InterBrokerClient implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(InterBrokerClient.class);
  public static final int MAX_QUEUED = 10_000;
  private static final int MAX_IN_FLIGHT_PER_BROKER = 100;

  private record Pending(int brokerId, AbstractRequest.Builder<?> request, CompletableFuture<AbstractResponse> result,
      long deadlineMs) {}

  private final ArrayBlockingQueue<Pending> queue = new ArrayBlockingQueue<>(MAX_QUEUED);
  private final List<Pending> waiting = new ArrayList<>();
  private final Map<Integer, Integer> inFlight = new HashMap<>();
  private final IntFunction<Optional<ClusterView.Node>> brokers;
  private final java.util.function.Supplier<Map<String, Object>> clientConfigs;
  private final String name;
  private final Metrics metrics = new Metrics();
  private final Time time;
  private final int timeoutMs;
  private volatile NetworkClient client;
  private Thread thread;
  private volatile boolean running = true;

  /**
   * Nothing connects, and the security settings are not read, before the first {@link #send}.
   *
   * @param brokers a live broker by id, as the inter-broker listener reaches it
   * @param clientConfigs kafka-clients security properties for the inter-broker listener
   */
  public InterBrokerClient(String name, IntFunction<Optional<ClusterView.Node>> brokers,
      java.util.function.Supplier<Map<String, Object>> clientConfigs, int timeoutMs, Time time) {
    this.name = name;
    this.brokers = brokers;
    this.clientConfigs = clientConfigs;
    this.time = time;
    this.timeoutMs = timeoutMs;
  }

  /** Sends {@code request} to broker {@code brokerId}; see the class comment for the outcomes. Any thread. */
  public CompletableFuture<AbstractResponse> send(int brokerId, AbstractRequest.Builder<?> request) {
    CompletableFuture<AbstractResponse> out = new CompletableFuture<>();
    NetworkClient c;
    try {
      c = started();
    } catch (RuntimeException e) {
      out.completeExceptionally(e);
      return out;
    }
    if (!running || !queue.offer(new Pending(brokerId, request, out, time.milliseconds() + timeoutMs))) {
      out.completeExceptionally(new TimeoutException("more than " + MAX_QUEUED + " inter-broker requests are waiting"));
      return out;
    }
    c.wakeup();
    return out;
  }

  private synchronized NetworkClient started() {
    if (client != null) {
      return client;
    }
    if (!running) {
      throw new NetworkException("the broker is shutting down");
    }
    Map<String, Object> props = new HashMap<>(clientConfigs.get());
    props.putIfAbsent(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:0"); // unused: brokers are named per request
    LogContext log = new LogContext("[inter-broker " + name + "] ");
    ChannelBuilder channels = ClientUtils.createChannelBuilder(new AdminClientConfig(props), time, log);
    Selector selector = new Selector(300_000L, metrics, time, "tidemark-inter-broker-" + name, channels, log);
    client = new NetworkClient(selector, new ManualMetadataUpdater(), "tidemark-" + name, MAX_IN_FLIGHT_PER_BROKER,
        100, 1000, -1, -1, timeoutMs, 10_000, 30_000, time, true, new ApiVersions(), log, MetadataRecoveryStrategy.NONE,
        BootstrapConfiguration.DISABLED, false);
    thread = new Thread(this::run, "tidemark-inter-broker-" + name);
    thread.setDaemon(true);
    thread.start();
    return client;
  }

  private void run() {
    while (running) {
      try {
        queue.drainTo(waiting);
        long now = time.milliseconds();
        Iterator<Pending> it = waiting.iterator();
        while (it.hasNext()) {
          Pending p = it.next();
          if (tryDispatch(p, now)) {
            it.remove();
          }
        }
        client.poll(waiting.isEmpty() ? 500 : 20, time.milliseconds());
      } catch (RuntimeException e) {
        if (running) {
          LOG.warn("inter-broker client loop: {}", e.toString());
        }
      }
    }
    for (Pending p : waiting) {
      p.result().completeExceptionally(new NetworkException("the broker is shutting down"));
    }
    queue.forEach(p -> p.result().completeExceptionally(new NetworkException("the broker is shutting down")));
  }

  /** Sends {@code p} if its broker's connection is ready; whether it is done with (sent or failed). Owner thread. */
  private boolean tryDispatch(Pending p, long now) {
    Optional<ClusterView.Node> target = brokers.apply(p.brokerId());
    if (target.isEmpty()) {
      p.result().completeExceptionally(new BrokerNotAvailableException("broker " + p.brokerId() + " is not live"));
      return true;
    }
    Node node = new Node(p.brokerId(), target.get().host(), target.get().port());
    if (now >= p.deadlineMs()) {
      p.result().completeExceptionally(new TimeoutException("no connection to broker " + p.brokerId() + " within "
          + timeoutMs + " ms"));
      return true;
    }
    if (client.connectionFailed(node) && client.authenticationException(node) != null) {
      p.result().completeExceptionally(client.authenticationException(node));
      return true;
    }
    if (inFlight.getOrDefault(p.brokerId(), 0) >= MAX_IN_FLIGHT_PER_BROKER || !client.ready(node, now)) {
      return false;
    }
    inFlight.merge(p.brokerId(), 1, Integer::sum);
    ClientRequest request = client.newClientRequest(node.idString(), p.request(), now, true, timeoutMs, response -> complete(p, response));
    client.send(request, now);
    return true;
  }

  private void complete(Pending p, ClientResponse r) {
    inFlight.merge(p.brokerId(), -1, Integer::sum);
    if (r.authenticationException() != null) {
      p.result().completeExceptionally(r.authenticationException());
    } else if (r.versionMismatch() != null) {
      p.result().completeExceptionally(r.versionMismatch());
    } else if (r.wasTimedOut()) {
      p.result().completeExceptionally(new TimeoutException("broker " + p.brokerId() + " did not answer within " + timeoutMs + " ms"));
    } else if (r.wasDisconnected() || r.responseBody() == null) {
      p.result().completeExceptionally(new NetworkException("connection to broker " + p.brokerId() + " lost"));
    } else {
      p.result().complete(r.responseBody());
    }
  }

  @Override
  public void close() {
    Thread t;
    NetworkClient c;
    synchronized (this) {
      running = false;
      t = thread;
      c = client;
    }
    if (c != null) {
      c.wakeup();
      try {
        t.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      c.close();
    }
    metrics.close();
  }
}
