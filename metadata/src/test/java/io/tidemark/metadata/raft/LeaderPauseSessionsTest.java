package io.tidemark.metadata.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.metadata.NodeFencedException;
import io.tidemark.stream.metadata.NodeRef;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three voters (session timeout 3 s, heartbeats every 500 ms); the test plays three brokers that
 * heartbeat as {@code ControllerLink} does (one outstanding heartbeat each). The Raft leader stops
 * answering while still accepting connections (what a paused process does) and at the same moment
 * one broker falls silent. The two live brokers must never be fenced: a heartbeat attempt to the
 * mute leader gives up after two intervals and goes to another voter, and the new leader keeps the
 * sessions it applied from the log instead of starting them over or fencing everybody. The silent
 * broker is fenced by the new leader, counted from its last heartbeat (the time is printed).
 *
 * <p>Default suite: voters in this JVM; the leader is closed and a socket that accepts and never
 * answers takes its port. With {@code tidemark.test.scale=full}: voters as child JVMs, the leader
 * paused with SIGSTOP and later resumed (a deposed leader that wakes up must fence nobody either).
 */
class LeaderPauseSessionsTest {
  private static final long SESSION_MS = 3_000;

  @TempDir Path dir;

  @Test
  void aMuteLeaderGetsNoLiveBrokerFencedAndTheNewLeaderFencesTheSilentOne() throws Exception {
    // Goal: a leader that accepts connections and answers nothing fences no live broker; a silent broker is fenced.
    try (TestQuorum q = new TestQuorum(dir, 3, Clock.systemUTC(), Map.of(
        ControllerConfig.SESSION_TIMEOUT_MS.name(), String.valueOf(SESSION_MS),
        ControllerConfig.ELECTION_TIMEOUT_MS.name(), "500")).startAll();
        ControllerClient c = new ControllerClient(clientConfig(q.config(1).get(ControllerConfig.VOTERS)))) {
      await().atMost(Duration.ofSeconds(60)).until(() -> q.leader() != null);
      Brokers brokers = new Brokers(c);
      try {
        brokers.warmUp();
        int leader = q.leader().nodeId();
        int port = Integer.parseInt(q.config(leader).nodeAddress().replaceFirst(".*:", ""));
        brokers.silence();
        q.stop(leader);
        try (BlackHole hole = new BlackHole(port)) {
          // the voters' own images: the client's reads would first wait on the mute leader
          brokers.expectSilentFencedAndLiveServed(() -> q.running().stream()
              .anyMatch(n -> n.image().broker(brokers.silentOne().nodeId()).fenced()));
        }
      } finally {
        brokers.close();
      }
    }
  }

  @Test
  void aPausedLeaderProcessGetsNoLiveBrokerFencedEvenAfterItResumes() throws Exception {
    // Goal: SIGSTOP of the leader JVM fences no live broker, before or after SIGCONT; the silent broker is fenced.
    Assumptions.assumeTrue("full".equals(System.getProperty("tidemark.test.scale")), "child JVMs: full scale only");
    Map<Integer, Process> processes = new HashMap<>();
    StringJoiner j = new StringJoiner(",");
    for (int id = 1; id <= 3; id++) {
      j.add(id + "@127.0.0.1:" + TestQuorum.freePort());
    }
    String voters = j.toString();
    try {
      for (int id = 1; id <= 3; id++) {
        processes.put(id, startVoter(id, voters));
      }
      await().atMost(Duration.ofSeconds(120)).until(() -> leader(processes), l -> l > 0);
      try (ControllerClient c = new ControllerClient(clientConfig(voters))) {
        Brokers brokers = new Brokers(c);
        try {
          brokers.warmUp();
          int leader = leader(processes);
          brokers.silence();
          signal(processes.get(leader), "STOP");
          try {
            brokers.expectSilentFencedAndLiveServed(() -> brokers.fenced(brokers.silentOne()));
          } finally {
            signal(processes.get(leader), "CONT");
          }
          long resumed = System.nanoTime();
          await().atMost(Duration.ofSeconds(60)).until(() -> brokers.allLiveSucceededSince(resumed));
          Thread.sleep(2 * SESSION_MS); // a deposed leader with a stale session table must not fence anybody
          brokers.expectLiveNeverFenced();
        } finally {
          brokers.close();
        }
      }
    } finally {
      for (Process p : processes.values()) {
        signal(p, "CONT");
        p.destroyForcibly();
      }
    }
  }

  /** Three registered brokers heartbeating every 500 ms, one outstanding heartbeat each; the third can fall silent. */
  private static final class Brokers implements AutoCloseable {
    private final ControllerClient c;
    private final List<NodeRef> nodes = new ArrayList<>();
    private final Map<NodeRef, AtomicLong> lastOkSendNanos = new ConcurrentHashMap<>();
    private final Map<NodeRef, CompletableFuture<Boolean>> outstanding = new ConcurrentHashMap<>();
    private final List<String> fencedAnswers = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService beats = Executors.newScheduledThreadPool(1);
    private final AtomicLong silencedAt = new AtomicLong();
    private volatile boolean silent;

    Brokers(ControllerClient c) {
      this.c = c;
      for (int id = 1; id <= 3; id++) {
        NodeRef n = c.registerBroker(id, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9090 + id)), "").join();
        nodes.add(n);
        lastOkSendNanos.put(n, new AtomicLong(System.nanoTime()));
        outstanding.put(n, CompletableFuture.completedFuture(false));
      }
      beats.scheduleWithFixedDelay(this::beat, 0, 500, TimeUnit.MILLISECONDS);
    }

    private void beat() {
      for (NodeRef b : nodes) {
        if ((silent && b.equals(silentOne())) || !outstanding.get(b).isDone()) {
          continue;
        }
        long sent = System.nanoTime();
        CompletableFuture<Boolean> f = c.heartbeat(b);
        outstanding.put(b, f);
        f.whenComplete((fenced, e) -> {
          if (e != null && e.getCause() instanceof NodeFencedException) {
            fencedAnswers.add(b + " replaced " + since(silencedAt) + " ms after the leader stopped: " + e.getCause());
          } else if (e == null && fenced) {
            fencedAnswers.add(b + " fenced (heartbeat sent " + (sent - silencedAt.get()) / 1_000_000
                + " ms after the leader stopped, answered " + since(silencedAt) + " ms after)");
          } else if (e == null) {
            lastOkSendNanos.get(b).accumulateAndGet(sent, Math::max);
          }
        });
      }
    }

    NodeRef silentOne() {
      return nodes.get(2);
    }

    boolean allLiveSucceededSince(long nanos) {
      return nodes.subList(0, 2).stream().allMatch(b -> lastOkSendNanos.get(b).get() > nanos);
    }

    void warmUp() {
      long warm = System.nanoTime();
      await().atMost(Duration.ofSeconds(60)).until(() -> nodes.stream().allMatch(b -> lastOkSendNanos.get(b).get() > warm));
    }

    void silence() {
      silencedAt.set(System.nanoTime());
      silent = true;
    }

    void expectSilentFencedAndLiveServed(java.util.function.BooleanSupplier silentFenced) {
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(silentFenced::getAsBoolean);
      long detectedMs = (System.nanoTime() - lastOkSendNanos.get(silentOne()).get()) / 1_000_000;
      long after = System.nanoTime();
      await().atMost(Duration.ofSeconds(60)).until(() -> allLiveSucceededSince(after));
      System.out.printf("leader pause test: silent broker fenced %d ms after its last heartbeat was sent, live "
          + "brokers never fenced (session timeout %d ms)%n", detectedMs, SESSION_MS);
      expectLiveNeverFenced();
      assertThat(c.brokerState(silentOne().nodeId()).join().fenced()).isTrue();
    }

    void expectLiveNeverFenced() {
      assertThat(fencedAnswers).isEmpty();
      for (NodeRef b : nodes.subList(0, 2)) {
        assertThat(c.brokerState(b.nodeId()).join()).isEqualTo(new ControllerClient.BrokerState(b.nodeEpoch(), false));
      }
    }

    boolean fenced(NodeRef node) {
      try {
        return c.brokerState(node.nodeId()).get(5, TimeUnit.SECONDS).fenced();
      } catch (Exception e) {
        return false; // no leader yet
      }
    }

    @Override
    public void close() {
      beats.shutdownNow();
    }
  }

  /** Accepts connections on a port and never answers: what a paused process looks like to its peers. */
  private static final class BlackHole implements AutoCloseable {
    private final ServerSocket socket;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    BlackHole(int port) throws IOException {
      ServerSocket s = new ServerSocket();
      s.setReuseAddress(true);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (true) {
        try {
          s.bind(new InetSocketAddress("127.0.0.1", port));
          break;
        } catch (IOException e) { // the closed voter's port is not free yet
          if (System.nanoTime() > deadline) {
            throw e;
          }
          sleep(20);
        }
      }
      this.socket = s;
      this.acceptor = new Thread(() -> {
        while (!socket.isClosed()) {
          try {
            accepted.add(socket.accept());
          } catch (IOException e) {
            return;
          }
        }
      }, "black-hole-" + port);
      acceptor.setDaemon(true);
      acceptor.start();
    }

    @Override
    public void close() throws IOException {
      socket.close();
      for (Socket s : accepted) {
        s.close();
      }
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static long since(AtomicLong nanos) {
    return (System.nanoTime() - nanos.get()) / 1_000_000;
  }

  private static ControllerConfig clientConfig(String voters) {
    return new ControllerConfig(new Settings(Map.of(
        ControllerConfig.VOTERS.name(), voters,
        ControllerConfig.SESSION_TIMEOUT_MS.name(), String.valueOf(SESSION_MS),
        ControllerConfig.REQUEST_TIMEOUT_MS.name(), "2000",
        ControllerConfig.CLIENT_MAX_ATTEMPTS.name(), "100",
        ControllerConfig.CLIENT_RETRY_BACKOFF_MS.name(), "100")));
  }

  private Process startVoter(int id, String voters) throws IOException {
    Path nodeDir = dir.resolve("node-" + id);
    Files.createDirectories(nodeDir);
    String java = ProcessHandle.current().info().command().orElse("java");
    ProcessBuilder b = new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), VoterProcess.class.getName(), String.valueOf(id), voters,
        nodeDir.toString(), String.valueOf(SESSION_MS));
    b.redirectError(ProcessBuilder.Redirect.appendTo(nodeDir.resolve("child.err").toFile()));
    b.redirectOutput(ProcessBuilder.Redirect.appendTo(nodeDir.resolve("child.out").toFile()));
    return b.start();
  }

  private static void signal(Process p, String signal) throws IOException, InterruptedException {
    if (p != null && p.isAlive()) {
      new ProcessBuilder("kill", "-" + signal, String.valueOf(p.pid())).inheritIO().start().waitFor();
    }
  }

  /** The voter a live child process reports as leader, or 0. */
  private int leader(Map<Integer, Process> processes) throws IOException {
    for (int id : processes.keySet()) {
      try {
        String[] f = Files.readString(dir.resolve("node-" + id).resolve("image.txt"), StandardCharsets.UTF_8)
            .trim().split(" ");
        if (Boolean.parseBoolean(f[2]) && processes.get(id).isAlive()) {
          return id;
        }
      } catch (NoSuchFileException | ArrayIndexOutOfBoundsException e) {
        // not reported yet
      }
    }
    return 0;
  }
}
