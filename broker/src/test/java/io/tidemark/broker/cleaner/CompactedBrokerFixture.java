package io.tidemark.broker.cleaner;

import io.tidemark.broker.BrokerConfig;
import io.tidemark.broker.KafkaBroker;
import io.tidemark.stream.config.Settings;
import io.tidemark.stream.engine.StreamEngine;
import io.tidemark.stream.engine.StreamEngineConfig;
import io.tidemark.stream.metadata.MemoryStreamMetadata;
import io.tidemark.stream.metadata.StreamMetadataConfig;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.MemoryObjectStorage;
import io.tidemark.stream.wal.MemoryWriteAheadLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Time;

/**
 * A broker on the real storage engine (memory WAL, memory object storage, memory metadata) whose
 * uploads write a stream object per stream (split threshold 1 byte), so data becomes cleanable as
 * soon as it is uploaded; time runs ahead of the wall clock by a skew the test moves, so that
 * {@code delete.retention.ms} can pass without waiting. The automatic cleaner is off: tests run
 * {@link LogCleaner#runOnce()} themselves.
 */
final class CompactedBrokerFixture implements AutoCloseable {

  final MemoryObjectStorage storage = new MemoryObjectStorage();
  final ObjectKeys keys = ObjectKeys.defaults();
  final MemoryStreamMetadata metadata = new MemoryStreamMetadata(System::currentTimeMillis, storage, keys,
      new StreamMetadataConfig(1000, 1000, 10_000));
  final MemoryWriteAheadLog wal = new MemoryWriteAheadLog();
  final SkewedTime time = new SkewedTime();
  final Path dir;
  StreamEngine engine;
  KafkaBroker broker;

  final long splitBytes;
  final long cleanerIntervalMs;

  CompactedBrokerFixture(Path dir) {
    this(dir, 1, 0);
  }

  /**
   * With uploads splitting streams of at least {@code splitBytes} into stream objects (the rest goes
   * into shared stream-set objects) and the automatic cleaner every {@code cleanerIntervalMs} (0: off).
   */
  CompactedBrokerFixture(Path dir, long splitBytes, long cleanerIntervalMs) {
    this.dir = dir;
    this.splitBytes = splitBytes;
    this.cleanerIntervalMs = cleanerIntervalMs;
    start();
  }

  void start() {
    StreamEngineConfig config = new StreamEngineConfig(4L * 1024 * 1024, 256 * 1024, 100, splitBytes, 4096, 1024 * 1024,
        60_000, 8L * 1024 * 1024, 5, 50, 8);
    engine = StreamEngine.builder().node(metadata.registerNode(1)).wal(wal).objectStorage(storage).streamManager(metadata)
        .objectManager(metadata).objectKeys(keys).config(config).build();
    engine.start().join();
    Settings s = new Settings(Map.of("kafka.listener.port", "0", "kafka.listener.host", "127.0.0.1",
        "kafka.advertised.host", "127.0.0.1", "kafka.data.dir", dir.toString(), "kafka.group.initial.rebalance.delay.ms", "0",
        "kafka.log.cleaner.interval.ms", Long.toString(cleanerIntervalMs), "kafka.log.cleaner.dedupe.buffer.bytes", "1048576"));
    broker = new KafkaBroker(new BrokerConfig(s), engine, time);
    broker.start();
  }

  /** Closes broker and engine (uploading everything) and starts both again on the same WAL, objects and metadata. */
  void restart() {
    stop();
    start();
  }

  void stop() {
    broker.close();
    engine.close();
  }

  String bootstrap() {
    return broker.bootstrapServers();
  }

  LogCleaner cleaner() {
    return broker.logCleaner().orElseThrow();
  }

  /** Uploads what the engine holds, so that everything written so far is in stream objects. */
  void upload() throws Exception {
    engine.flush().get(60, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    stop();
  }

  /** Every record of the partition from the beginning up to its end, read with a real consumer. */
  static List<ConsumerRecord<String, String>> readAll(String bootstrap, TopicPartition tp, Supplier<Long> endOffset) {
    List<ConsumerRecord<String, String>> got = new ArrayList<>();
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 4096);
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      long end = endOffset.get();
      long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      while (c.position(tp) < end) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("consumer stuck at " + c.position(tp) + " of " + end + " in " + tp);
        }
        c.poll(Duration.ofMillis(100)).forEach(got::add);
      }
    }
    return got;
  }

  /** Wall-clock time plus a skew the test moves forward. */
  static final class SkewedTime implements Time {
    final AtomicLong skewMs = new AtomicLong();

    @Override
    public long milliseconds() {
      return System.currentTimeMillis() + skewMs.get();
    }

    @Override
    public long nanoseconds() {
      return System.nanoTime() + skewMs.get() * 1_000_000;
    }

    @Override
    public void sleep(long ms) {
      Time.SYSTEM.sleep(ms);
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) throws InterruptedException {
      Time.SYSTEM.waitObject(obj, condition, deadlineMs - skewMs.get());
    }
  }
}
