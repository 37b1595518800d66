package io.tidemark.metadata.bench;

import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.Controller;
import io.tidemark.metadata.controller.ControllerLimits;
import io.tidemark.metadata.controller.ControllerRequest;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.raft.ControllerConfig;
import io.tidemark.metadata.raft.ControllerNode;
import io.tidemark.metadata.record.MetadataRecord.Endpoint;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest;
import io.tidemark.stream.metadata.CommitStreamSetObjectRequest.StreamObject;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamRange;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import java.io.IOException;
import io.tidemark.stream.net.LoopbackPorts;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

/**
 * Benchmark of the metadata controller, callable from {@code bench/} ({@link #run(Options)}) or as a
 * main. Measures (1) commit latency (p50/p99, one request in flight) and throughput (many writers)
 * of upload commits through Ratis with one voter and with three voters on loopback, and (2) the
 * broker image's heap per 100k objects and per 10k streams, from {@code Runtime} used-heap deltas
 * after repeated {@code System.gc()} while the image is held.
 *
 * <p>Run: {@code mvn -q -o -pl metadata -am compile dependency:build-classpath
 * -Dmdep.outputFile=/tmp/cp.txt && java -cp metadata/target/classes:$(cat /tmp/cp.txt)
 * io.tidemark.metadata.bench.MetadataBench [commits] [writers]}
 */
public final class MetadataBench {

  /** What to measure. */
  public record Options(int commits, int writers, int rangesPerCommit) {
    public static final Options DEFAULT = new Options(2_000, 8, 4);
  }

  /** Commit numbers of one deployment shape. */
  public record CommitResult(int voters, double p50Ms, double p99Ms, double sequentialPerSec,
      double concurrentPerSec) {}

  /** Heap of the broker image. */
  public record MemoryResult(double bytesPerObject, double bytesPer100kObjects, double bytesPerStream,
      double bytesPer10kStreams) {}

  public static void main(String[] args) throws Exception {
    int commits = args.length > 0 ? Integer.parseInt(args[0]) : Options.DEFAULT.commits();
    int writers = args.length > 1 ? Integer.parseInt(args[1]) : Options.DEFAULT.writers();
    Options options = new Options(commits, writers, Options.DEFAULT.rangesPerCommit());
    MemoryResult memory = measureImageMemory();
    System.out.printf("image memory: %.0f bytes/object (%.1f MiB per 100k objects), %.0f bytes/stream "
        + "(%.2f MiB per 10k streams)%n", memory.bytesPerObject(), memory.bytesPer100kObjects() / (1 << 20),
        memory.bytesPerStream(), memory.bytesPer10kStreams() / (1 << 20));
    for (int voters : new int[] {1, 3}) {
      CommitResult r = measureCommits(voters, options);
      System.out.printf("%d voter(s): commit p50 %.2f ms, p99 %.2f ms, sequential %.0f commits/s, "
          + "%d writers %.0f commits/s (%d ranges per commit)%n", r.voters(), r.p50Ms(), r.p99Ms(),
          r.sequentialPerSec(), options.writers(), r.concurrentPerSec(), options.rangesPerCommit());
    }
  }

  /** Commits through Ratis on loopback with {@code voters} voters. */
  public static CommitResult measureCommits(int voters, Options options) throws Exception {
    Path root = Files.createTempDirectory("metadata-bench");
    StringJoiner spec = new StringJoiner(",");
    for (int id = 1; id <= voters; id++) {
      spec.add(id + "@127.0.0.1:" + freePort());
    }
    List<ControllerNode> nodes = new ArrayList<>();
    List<ControllerClient> clients = new ArrayList<>();
    try {
      for (int id = 1; id <= voters; id++) {
        Map<String, String> m = new HashMap<>();
        m.put(ControllerConfig.NODE_ID.name(), String.valueOf(id));
        m.put(ControllerConfig.VOTERS.name(), spec.toString());
        m.put(ControllerConfig.DIR.name(), root.resolve("n" + id).toString());
        m.put(ControllerConfig.SESSION_TIMEOUT_MS.name(), "3600000");
        m.put(ControllerConfig.ELECTION_TIMEOUT_MS.name(), "300");
        nodes.add(new ControllerNode(new ControllerConfig(new Settings(m)), Clock.systemUTC(),
            new MemoryObjectStorage(), ObjectKeys.defaults()::key).start());
      }
      ControllerConfig clientConfig = new ControllerConfig(new Settings(Map.of(ControllerConfig.VOTERS.name(),
          spec.toString())));
      ControllerClient admin = new ControllerClient(clientConfig);
      clients.add(admin);
      NodeRef node = admin.registerBroker(1, List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), "").join();
      // warm-up and latency: one request in flight
      Writer single = new Writer(admin, node, options.rangesPerCommit());
      single.commit(200);
      long[] latencies = new long[options.commits()];
      long t0 = System.nanoTime();
      for (int i = 0; i < latencies.length; i++) {
        long s = System.nanoTime();
        single.commit(1);
        latencies[i] = System.nanoTime() - s;
      }
      double seqPerSec = latencies.length / ((System.nanoTime() - t0) / 1e9);
      Arrays.sort(latencies);
      // throughput: several brokers' clients writing at once
      List<Writer> writers = new ArrayList<>();
      for (int w = 0; w < options.writers(); w++) {
        ControllerClient c = new ControllerClient(clientConfig);
        clients.add(c);
        writers.add(new Writer(c, node, options.rangesPerCommit()));
      }
      int each = Math.max(1, options.commits() / options.writers());
      long t1 = System.nanoTime();
      CompletableFuture.allOf(writers.stream().map(w -> CompletableFuture.runAsync(() -> w.commit(each)))
          .toArray(CompletableFuture[]::new)).join();
      double concurrentPerSec = each * (double) options.writers() / ((System.nanoTime() - t1) / 1e9);
      return new CommitResult(voters, latencies[latencies.length / 2] / 1e6,
          latencies[(int) (latencies.length * 0.99)] / 1e6, seqPerSec, concurrentPerSec);
    } finally {
      clients.forEach(ControllerClient::close);
      nodes.forEach(ControllerNode::close);
      try (Stream<Path> files = Files.walk(root)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** One broker writing upload commits (a stream-set object over a few of its own streams). */
  private static final class Writer {
    private final ControllerClient client;
    private final NodeRef node;
    private final long[] streams;
    private final long[] ends;
    private long nextId;
    private long idsLeft;

    Writer(ControllerClient client, NodeRef node, int ranges) {
      this.client = client;
      this.node = node;
      this.streams = new long[ranges];
      this.ends = new long[ranges];
      for (int i = 0; i < ranges; i++) {
        streams[i] = client.createStream(node, Map.of()).join();
        client.openStream(node, streams[i], 1).join();
      }
    }

    void commit(int count) {
      for (int i = 0; i < count; i++) {
        if (idsLeft == 0) {
          nextId = client.prepareObjects(node, 1000, 3_600_000).join();
          idsLeft = 1000;
        }
        List<StreamRange> ranges = new ArrayList<>(streams.length);
        for (int s = 0; s < streams.length; s++) {
          ranges.add(new StreamRange(streams[s], 1, ends[s], ends[s] + 100));
          ends[s] += 100;
        }
        client.commitStreamSetObject(node, new CommitStreamSetObjectRequest(nextId++, 4 << 20, ranges, List.of(),
            List.of())).join();
        idsLeft--;
      }
    }
  }

  /**
   * Heap of an image holding 100k committed stream objects over 1k streams, and of one holding 10k
   * open streams (two tags, one owner range). Built by replaying records, as a broker does.
   */
  public static MemoryResult measureImageMemory() {
    Controller controller = new Controller(new ControllerLimits(100_000, 3_600_000, 1000, 100_000, 100_000));
    long base = usedHeap();
    MetadataImage objects = imageWithObjects(controller, 1_000, 100_000);
    long withObjects = usedHeap();
    MetadataImage streamsOnly = imageWithObjects(controller, 1_000, 0);
    long withBoth = usedHeap();
    double perObject = (withObjects - base - (withBoth - withObjects)) / 100_000.0;
    MetadataImage tenK = imageWithObjects(controller, 10_000, 0);
    long withStreams = usedHeap();
    double perStream = (withStreams - withBoth) / 10_000.0;
    if (objects.objects().size() + streamsOnly.streams().size() + tenK.streams().size() == 0) {
      throw new IllegalStateException("images were collected early");
    }
    return new MemoryResult(perObject, perObject * 100_000, perStream, perStream * 10_000);
  }

  private static MetadataImage imageWithObjects(Controller controller, int streamCount, int objectCount) {
    MetadataReplica replica = new MetadataReplica(controller, 1);
    long[] offset = {0};
    java.util.function.Function<ControllerRequest.Write, ByteBuffer> entry =
        w -> ByteBuffer.wrap(MetadataReplica.entry(1_000, w));
    var reg = replica.apply(++offset[0], entry.apply(new ControllerRequest.RegisterBroker(1, List.of(), "")));
    NodeRef node = new NodeRef(1, reg.bodyOrThrow().readLong());
    long[] streams = new long[streamCount];
    long[] ends = new long[streamCount];
    for (int i = 0; i < streamCount; i++) {
      streams[i] = replica.apply(++offset[0], entry.apply(new ControllerRequest.CreateStream(node,
          Map.of("topic", "t" + (i / 16), "partition", String.valueOf(i % 16))))).bodyOrThrow().readLong();
      replica.apply(++offset[0], entry.apply(new ControllerRequest.OpenStream(node, streams[i], 1)));
    }
    int batch = 10_000;
    for (int done = 0; done < objectCount; done += batch) {
      long first = replica.apply(++offset[0], entry.apply(new ControllerRequest.PrepareObjects(node, batch,
          3_600_000))).bodyOrThrow().readLong();
      List<StreamObject> sos = new ArrayList<>(batch);
      for (int k = 0; k < batch; k++) {
        int s = k % streamCount;
        sos.add(new StreamObject(first + k, 8 << 20, new StreamRange(streams[s], 1, ends[s], ends[s] + 1000)));
        ends[s] += 1000;
      }
      replica.apply(++offset[0], entry.apply(new ControllerRequest.CommitStreamSetObject(node,
          new CommitStreamSetObjectRequest(-1, 0, List.of(), sos, List.of())))).bodyOrThrow();
    }
    return replica.image();
  }

  private static long usedHeap() {
    Runtime rt = Runtime.getRuntime();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      used = Math.min(used, rt.totalMemory() - rt.freeMemory());
    }
    return used;
  }

  private static int freePort() throws IOException {
    return LoopbackPorts.pick();
  }

  private MetadataBench() {}
}
