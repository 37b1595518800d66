package io.tidemark.bench.storage;

import io.tidemark.stream.api.FetchResult;
import io.tidemark.stream.api.Stream;
import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.read.ReadConfig;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Upload and cold-read figures with many active streams. Phase 1: {@code streams} streams receive
 * batches round-robin from {@code appenders} closed-loop appenders until {@code totalBytes} are
 * acknowledged; closing the engine uploads what its WAL still holds; the upload throughput is
 * acknowledged bytes over the time until the last object is committed, and the PUT count comes
 * from {@link CountingObjectStorage}. Phase 2: a fresh engine over the same objects (a restart, so
 * no cache holds anything) reads every stream from its start with {@code readers} readers: a warm-up
 * pass, then passes alternating the default reader and one fetching from one object at a time (a
 * restart each); the
 * cold-read throughput is bytes read over that time (reads stop at a time limit, so that a slow
 * store bounds the run; the bytes read then are fewer than appended, and the log says so).
 */
final class UploadAndColdRead {

  /**
   * {@code coldReadBytesPerSecond} and {@code getRequests}: the default reader; {@code
   * coldReadOneObjectBytesPerSecond}: the same reads fetching from one object at a time.
   */
  record Result(double uploadBytesPerSecond, double putsPerGib, long writeRequests, long uploadedBytes,
                double coldReadBytesPerSecond, long getRequests, double coldReadOneObjectBytesPerSecond) {}

  private UploadAndColdRead() {}

  private static void phase(String what, long startNanos) {
    System.out.printf("bench:   upload/cold-read %s at %.1f s%n", what, (System.nanoTime() - startNanos) / 1e9);
  }

  static Result run(EngineFactory factory, CountingObjectStorage storage, Path dir, int streams, int batchBytes,
                    long totalBytes, int appenders, int readers, long coldReadMaxNanos) throws Exception {
    return run(factory, storage, dir, streams, batchBytes, totalBytes, appenders, readers, coldReadMaxNanos, 1);
  }

  /** As above, with {@code pairs} cold-read passes of each reader (alternating, medians reported). */
  static Result run(EngineFactory factory, CountingObjectStorage storage, Path dir, int streams, int batchBytes,
                    long totalBytes, int appenders, int readers, long coldReadMaxNanos, int pairs) throws Exception {
    List<Long> ids = new ArrayList<>();
    byte[] payload = new byte[batchBytes];
    new SplittableRandom(7).nextBytes(payload);
    long batches = Math.max(streams, totalBytes / batchBytes);

    long uploadStart;
    long uploadEnd;
    long appended;
    long t0 = System.nanoTime();
    try (StreamStore store = factory.open(dir, storage)) {
      phase("engine started", t0);
      List<Stream> open = new ArrayList<>();
      for (int i = 0; i < streams; i++) {
        long id = store.createStream(Map.of("bench", "upload")).join();
        ids.add(id);
        open.add(store.openStream(id, 1).join());
      }
      phase(streams + " streams created and opened", t0);
      AtomicLong next = new AtomicLong();
      AtomicLong acked = new AtomicLong();
      List<Throwable> failures = new CopyOnWriteArrayList<>();
      uploadStart = System.nanoTime();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < appenders; t++) {
        threads.add(Thread.ofPlatform().name("upload-appender-" + t).start(() -> {
          try {
            for (long n = next.getAndIncrement(); n < batches; n = next.getAndIncrement()) {
              open.get((int) (n % streams)).append(1, ByteBuffer.wrap(payload).asReadOnlyBuffer()).join();
              acked.addAndGet(batchBytes);
            }
          } catch (Throwable e) {
            failures.add(e);
          }
        }));
      }
      for (Thread t : threads) {
        t.join();
      }
      if (!failures.isEmpty()) {
        throw new IllegalStateException("appends failed: " + failures.get(0), failures.get(0));
      }
      appended = acked.get();
      phase("appends acknowledged", t0);
      for (Stream s : open) {
        s.close().join();
      }
      phase("streams closed", t0);
    } // close() uploads what the WAL holds
    uploadEnd = System.nanoTime();
    phase("engine closed (uploaded)", t0);
    double uploadSeconds = (uploadEnd - uploadStart) / 1e9;
    long writes = storage.writeRequests.get();
    long written = storage.writtenBytes.get();
    double putsPerGib = written == 0 ? Double.NaN : writes / (written / (double) (1L << 30));

    // The default reader first, then the same reads fetching one object at a time (the reader before
    // stream.cold.read.parallel.objects): the second pass finds the store's files in the page cache, if anything.
    // A first pass warms the JIT (and the store's page cache) and is not counted: the first pass of a JVM runs
    // several times slower than the next ones whichever reader it uses. Then the order alternates (ABBA...) so
    // that neither reader always goes first; medians are reported.
    ColdPass warm = coldRead(factory, storage, dir, ids, readers, coldReadMaxNanos / 3, appended, ReadConfig.defaults(), t0);
    System.out.printf("bench:   cold read warm-up pass (not counted): %.1f MB/s%n", warm.bytesPerSecond() / 1e6);
    List<Double> parallelRates = new ArrayList<>();
    List<Double> sequentialRates = new ArrayList<>();
    long parallelGets = 0;
    for (int pass = 0; pass < 2 * pairs; pass++) {
      boolean parallelNow = (pass % 4 == 0) || (pass % 4 == 3);
      ReadConfig read = parallelNow ? ReadConfig.defaults() : ReadConfig.defaults().withColdReadParallelObjects(1);
      ColdPass p = coldRead(factory, storage, dir, ids, readers, coldReadMaxNanos, appended, read, t0);
      System.out.printf("bench:   cold read pass %d (%s): %.1f MB/s, %d GETs%n", pass + 1,
          parallelNow ? "default" : "one object at a time", p.bytesPerSecond() / 1e6, p.gets());
      (parallelNow ? parallelRates : sequentialRates).add(p.bytesPerSecond());
      if (parallelNow && parallelGets == 0) {
        parallelGets = p.gets();
      }
    }
    ColdPass parallel = new ColdPass(median(parallelRates), parallelGets);
    ColdPass sequential = new ColdPass(median(sequentialRates), 0);
    return new Result(appended / uploadSeconds, putsPerGib, writes, written, parallel.bytesPerSecond(), parallel.gets(),
        sequential.bytesPerSecond());
  }

  record ColdPass(double bytesPerSecond, long gets) {}

  private static double median(List<Double> values) {
    List<Double> sorted = values.stream().sorted().toList();
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  /** A restart with empty caches, then {@code readers} threads read every stream from its start. */
  static ColdPass coldRead(EngineFactory factory, CountingObjectStorage storage, Path dir, List<Long> ids,
      int readers, long coldReadMaxNanos, long appended, ReadConfig read, long t0) throws Exception {
    long getsBefore = storage.getRequests.get();
    AtomicLong readBytes = new AtomicLong();
    long readStart;
    long readEnd;
    try (StreamStore store = factory.open(dir, storage, read)) {
      phase("engine restarted (cold reads from " + read.coldReadParallelObjects() + " objects at once)", t0);
      AtomicInteger nextStream = new AtomicInteger();
      List<Throwable> failures = new CopyOnWriteArrayList<>();
      readStart = System.nanoTime();
      long readDeadline = readStart + coldReadMaxNanos;
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < readers; t++) {
        threads.add(Thread.ofPlatform().name("cold-reader-" + t).start(() -> {
          try {
            for (int i = nextStream.getAndIncrement(); i < ids.size(); i = nextStream.getAndIncrement()) {
              Stream s = store.openStream(ids.get(i), 2).join();
              long offset = s.startOffset();
              long end = s.nextOffset();
              while (offset < end && System.nanoTime() < readDeadline) {
                FetchResult r = s.fetch(offset, end, 1 << 20).join();
                if (r.batches().isEmpty()) {
                  throw new IllegalStateException("stream " + ids.get(i) + " returned nothing at " + offset);
                }
                readBytes.addAndGet(r.sizeBytes());
                offset = r.batches().get(r.batches().size() - 1).nextOffset();
              }
              CompletableFuture<Void> closed = s.close();
              closed.join();
            }
          } catch (Throwable e) {
            failures.add(e);
          }
        }));
      }
      for (Thread t : threads) {
        t.join();
      }
      readEnd = System.nanoTime();
      phase("cold reads done", t0);
      if (!failures.isEmpty()) {
        throw new IllegalStateException("cold reads failed: " + failures.get(0), failures.get(0));
      }
    }
    boolean complete = readEnd < readStart + coldReadMaxNanos;
    if (complete && readBytes.get() != appended) {
      throw new IllegalStateException("cold reads returned " + readBytes.get() + " bytes, " + appended + " were appended");
    }
    if (!complete) {
      System.out.printf("bench:   cold reads stopped at the time limit after %d of %d bytes%n", readBytes.get(), appended);
    }
    return new ColdPass(readBytes.get() / ((readEnd - readStart) / 1e9), storage.getRequests.get() - getsBefore);
  }
}
