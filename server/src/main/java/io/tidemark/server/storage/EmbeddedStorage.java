package io.tidemark.server.storage;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.FailoverControl;
import io.tidemark.server.cluster.ControllerLink;
import io.tidemark.server.config.ServerConfig;
import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.engine.StreamEngine;
import io.tidemark.stream.engine.StreamEngineConfig;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.ObjectManager;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorageConfig;
import io.tidemark.stream.objectstore.ObjectStorages;
import io.tidemark.stream.compaction.CompactionConfig;
import io.tidemark.stream.compaction.StreamObjectCompactor;
import io.tidemark.stream.compaction.StreamSetObjectCompactor;
import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.read.CachedColdReader;
import io.tidemark.stream.read.ReadConfig;
import io.tidemark.stream.wal.WalConfig;
import io.tidemark.stream.wal.WriteAheadLog;
import io.tidemark.stream.wal.WriteAheadLogs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.ExecutionException;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The storage assembly of the real process: object storage from its settings (local files under
 * {@code data.dir/objects} by default, S3 when configured), the link to the controller quorum
 * (a local voter under {@code data.dir/controller} when the process has the controller role; the
 * quorum's client is the engine's stream and object manager), the WAL
 * ({@code data.dir/wal/wal.log} by default) and the {@link StreamEngine} over them, recovered
 * before {@link #open} returns. Paths left unset default under {@code data.dir}; set explicitly,
 * they win. The node records where its WAL lives ({@link FailoverControl#WAL_NAMESPACE}) and takes
 * part in the failover of dead nodes ({@link FailoverRecoveries}).
 */
public final class EmbeddedStorage implements StorageFactory {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedStorage.class);
  /** Longest wait for recovery before start-up fails (the WAL may hold up to wal.capacity.bytes to upload). */
  static final long RECOVERY_TIMEOUT_MINUTES = 30;

  private final UnaryOperator<ObjectStorage> objectStorageWrapper;
  private final UnaryOperator<WriteAheadLog> walWrapper;

  /** The real assembly. */
  public EmbeddedStorage() {
    this(UnaryOperator.identity());
  }

  /**
   * The real assembly with the configured object storage wrapped (fault injection in tests: the
   * engine, WAL, controller link and compaction all see the wrapper).
   */
  public EmbeddedStorage(UnaryOperator<ObjectStorage> objectStorageWrapper) {
    this(objectStorageWrapper, UnaryOperator.identity());
  }

  /** The real assembly with the object storage and the configured WAL wrapped (fault injection in tests). */
  public EmbeddedStorage(UnaryOperator<ObjectStorage> objectStorageWrapper, UnaryOperator<WriteAheadLog> walWrapper) {
    this.objectStorageWrapper = objectStorageWrapper;
    this.walWrapper = walWrapper;
  }

  @Override
  public StorageNode open(ServerConfig server, Settings given, MeterRegistry meters) {
    Settings settings = withDataDirDefaults(server.dataDir(), given);
    Deque<AutoCloseable> opened = new ArrayDeque<>();
    try {
      ObjectStorage objects = new MeteredObjectStorage(objectStorageWrapper.apply(ObjectStorages.create(settings)), meters);
      opened.push(objects);
      ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "tidemark-storage-timer");
        t.setDaemon(true);
        return t;
      });
      opened.push(scheduler::shutdownNow);
      ObjectKeys keys = ObjectKeys.defaults();
      ControllerLink controller = ControllerLink.open(server, settings, objects, keys);
      opened.push(controller);
      ControllerClient metadata = controller.client();
      NodeRef node = controller.self();
      Path walPath = Path.of(settings.get(WalConfig.PATH));
      if (walPath.getParent() != null) {
        Files.createDirectories(walPath.getParent());
      }
      // where a survivor finds this node's WAL if it fails (FailoverRecoveries); recorded before the WAL is written
      String walType = settings.get(WalConfig.TYPE);
      long walLocationNanos = System.nanoTime();
      byte[] walLocation = FailoverControl.walLocation(walType, walPath.toAbsolutePath().toString())
          .getBytes(StandardCharsets.UTF_8);
      // a restart finds it recorded already (committed, so durable): one controller write fewer before serving
      if (!java.util.Arrays.equals(walLocation, controller.replica().image().keyValue(FailoverControl.WAL_NAMESPACE,
          Integer.toString(node.nodeId())))) {
        metadata.putKeyValue(FailoverControl.WAL_NAMESPACE, Integer.toString(node.nodeId()), walLocation, false)
            .get(ControllerLink.REGISTER_TIMEOUT_MINUTES, TimeUnit.MINUTES);
      }
      walLocationNanos = System.nanoTime() - walLocationNanos;
      MeteredWriteAheadLog wal = new MeteredWriteAheadLog(walWrapper.apply(WriteAheadLogs.create(settings, objects,
          server.nodeId(), node.nodeEpoch(), Clock.systemUTC(), scheduler)), meters);
      opened.push(wal);
      CachedColdReader coldReader = CachedColdReader.create(ReadConfig.from(settings), metadata, objects, keys, meters,
          System::currentTimeMillis);
      opened.push(coldReader);
      StreamEngine engine = StreamEngine.builder().node(node).wal(wal).objectStorage(objects).streamManager(metadata)
          .objectManager(metadata).objectKeys(keys).config(StreamEngineConfig.from(settings)).scheduler(scheduler)
          .coldReader(coldReader::read).clock(System::currentTimeMillis).build();
      LOG.info("recovering node {} (epoch {}): WAL {}, objects {}", node.nodeId(), node.nodeEpoch(),
          settings.get(WalConfig.TYPE).equals("block") ? walPath : "in object storage",
          settings.get(ObjectStorageConfig.TYPE).equals("local") ? settings.get(ObjectStorageConfig.LOCAL_PATH)
              : settings.get(ObjectStorageConfig.TYPE));
      long recoveryNanos = System.nanoTime();
      engine.start().get(RECOVERY_TIMEOUT_MINUTES, TimeUnit.MINUTES);
      recoveryNanos = System.nanoTime() - recoveryNanos;
      // Failed over while alive (fenced for missed heartbeats): write nothing more under this epoch, at once; the
      // supervisor then closes the node without uploading and starts it again with a new epoch.
      // (on a thread of its own: the halt waits up to 2 s for the engine's loop, not on the controller client's threads)
      controller.onReplaced().thenRunAsync(() -> {
        LOG.warn("node {} epoch {} failed over: halting its storage engine (nothing more is written or uploaded "
            + "under this epoch)", node.nodeId(), node.nodeEpoch());
        engine.halt();
      }, task -> Thread.ofPlatform().daemon().name("tidemark-failed-over-halt").start(task));
      Gauge.builder("tidemark.stream.cache.used", engine, StreamEngine::cacheUsedBytes).baseUnit("bytes")
          .description("Bytes held by the log cache").register(meters);
      Gauge.builder("tidemark.stream.unuploaded", engine, StreamEngine::unuploadedBytes).baseUnit("bytes")
          .description("Bytes acknowledged but not yet uploaded to object storage").register(meters);
      Gauge.builder("tidemark.stream.upload.failing", engine, e -> e.health().uploadFailingForMs() / 1000.0)
          .baseUnit("seconds").description("How long uploads have failed without a success (0 while they succeed)")
          .register(meters);
      scheduleCompaction(settings, node, metadata, metadata, objects, keys, scheduler);
      FailoverRecoveries failovers = new FailoverRecoveries(node, metadata, controller.replica(), settings, objects, keys,
          scheduler, controller.heartbeatTimer(), controller.config().heartbeatIntervalMs());
      opened.push(failovers);
      failovers.start();
      LOG.info("storage recovered (WAL location recorded in {} ms, engine recovery {} ms)",
          TimeUnit.NANOSECONDS.toMillis(walLocationNanos), TimeUnit.NANOSECONDS.toMillis(recoveryNanos));
      return new Node(node, engine, controller, wal, coldReader, objects, scheduler, failovers);
    } catch (IOException e) {
      closeAll(opened);
      throw new StorageUnavailableException("cannot prepare " + server.dataDir() + " (data.dir): " + e.getMessage(), e);
    } catch (ExecutionException e) {
      closeAll(opened);
      throw new StorageUnavailableException("storage recovery failed: " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      closeAll(opened);
      throw new StorageUnavailableException("storage recovery did not finish within " + RECOVERY_TIMEOUT_MINUTES + " min", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closeAll(opened);
      throw new StorageUnavailableException("interrupted during storage recovery", e);
    } catch (RuntimeException e) {
      closeAll(opened);
      throw e;
    }
  }

  /**
   * Runs both compactions every {@code stream.compaction.interval.ms} on the storage timer: the node's
   * stream-set objects, then the stream objects of the streams open here. Each run is bounded by its
   * config; a run still going when the next is due is skipped by the compactor itself.
   */
  private static void scheduleCompaction(Settings settings, NodeRef node, StreamManager streams,
      ObjectManager objectIndex, ObjectStorage objects, ObjectKeys keys, ScheduledExecutorService scheduler) {
    CompactionConfig config = CompactionConfig.from(settings);
    StreamSetObjectCompactor setCompactor =
        new StreamSetObjectCompactor(node, objectIndex, streams, objects, keys, config, System::currentTimeMillis);
    StreamObjectCompactor streamCompactor = new StreamObjectCompactor(node, objectIndex, streams, objects, keys, config);
    long periodMs = settings.get(CompactionConfig.INTERVAL_MS);
    scheduler.scheduleWithFixedDelay(() -> setCompactor.runOnce()
        .thenCompose(report -> streams.getOpeningStreams(node))
        .thenCompose(open -> streamCompactor.runOnce(open.stream().map(StreamMetadata::streamId).toList()))
        .whenComplete((report, error) -> {
          if (error != null) {
            LOG.warn("compaction run failed; the next run retries: {}", error.toString());
          }
        }), periodMs, periodMs, TimeUnit.MILLISECONDS);
  }

  /** Local paths not set explicitly go under {@code data.dir}. */
  static Settings withDataDirDefaults(Path dataDir, Settings settings) {
    Settings result = settings;
    if (!settings.contains(ObjectStorageConfig.LOCAL_PATH)) {
      result = result.with(ObjectStorageConfig.LOCAL_PATH.name(), dataDir.resolve("objects").toString());
    }
    if (!settings.contains(WalConfig.PATH)) {
      result = result.with(WalConfig.PATH.name(), dataDir.resolve("wal").resolve("wal.log").toString());
    }
    return result;
  }

  private static void closeAll(Deque<AutoCloseable> opened) {
    while (!opened.isEmpty()) {
      try {
        opened.pop().close();
      } catch (Exception e) {
        LOG.warn("cleanup after a failed start: {}", e.toString());
      }
    }
  }

  /**
   * The assembled node; closes the engine (uploading), then the controller link, timer and object
   * storage. A node whose epoch failed over closes without uploading: a survivor committed its WAL and
   * its streams have newer epochs elsewhere, so it only halts the engine and closes the WAL, which the
   * next start (a new epoch) reads and drops what belongs to streams it no longer holds.
   */
  private static final class Node implements StorageNode {
    private final NodeRef node;
    private final StreamEngine engine;
    private final ControllerLink controller;
    private final MeteredWriteAheadLog wal;
    private final CachedColdReader coldReader;
    private final ObjectStorage objects;
    private final ScheduledExecutorService scheduler;
    private final FailoverRecoveries failovers;
    private volatile boolean closed;

    Node(NodeRef node, StreamEngine engine, ControllerLink controller, MeteredWriteAheadLog wal,
         CachedColdReader coldReader, ObjectStorage objects, ScheduledExecutorService scheduler,
         FailoverRecoveries failovers) {
      this.failovers = failovers;
      this.node = node;
      this.engine = engine;
      this.controller = controller;
      this.wal = wal;
      this.coldReader = coldReader;
      this.objects = objects;
      this.scheduler = scheduler;
    }

    @Override
    public NodeRef node() {
      return node;
    }

    @Override
    public StreamStore streamStore() {
      return engine;
    }

    @Override
    public Optional<ObjectStorage> objectStorage() {
      return Optional.of(objects);
    }

    @Override
    public StreamManager streamManager() {
      return controller.client();
    }

    @Override
    public Optional<ControllerLink> controller() {
      return Optional.of(controller);
    }

    @Override
    public Map<String, Boolean> readiness() {
      Map<String, Boolean> checks = new LinkedHashMap<>();
      checks.put("storage.recovered", !closed);
      checks.put("wal.open", wal.open());
      // False while appends are outstanding and none is acknowledged (uploads failing with the cache or WAL full).
      checks.put("storage.appends.accepted", engine.health().acceptingAppends());
      return checks;
    }

    @Override
    public java.util.concurrent.CompletionStage<String> onFailed() {
      return engine.onFailed().thenApply(cause -> "the storage engine failed: " + cause);
    }

    @Override
    public Map<String, Boolean> liveness() {
      Map<String, Boolean> checks = new LinkedHashMap<>();
      checks.put("storage.engine", engine.health().live());
      checks.put("wal.healthy", wal.healthy());
      // false once this node's epoch failed over to other brokers, until the supervisor restarted it in-process
      checks.put("controller.epoch.current", !controller.replaced());
      return checks;
    }

    @Override
    public void close() {
      closed = true;
      failovers.close();
      if (controller.replaced()) {
        engine.halt();
        wal.close();
      } else {
        engine.close(); // closes streams, uploads what the WAL holds, closes the WAL
      }
      coldReader.close();
      controller.close();
      scheduler.shutdownNow();
      objects.close();
    }
  }
}
