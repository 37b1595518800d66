package io.tidemark.stream.read;

import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.util.List;

/**
 * Settings of the cold read path: the block cache, the index cache, adaptive read-ahead and the
 * cold-read executor with its bound on in-flight GETs. Declared once here; the server reads
 * {@link #KEYS} to validate configuration and to generate the reference page.
 */
public record ReadConfig(
    long blockCacheSizeBytes,
    int readAheadCacheSharePercent,
    long indexCacheSizeBytes,
    long readAheadInitialBytes,
    long readAheadMaxBytes,
    int readAheadMaxReaders,
    long readAheadIdleMs,
    int coldReadThreads,
    int coldReadMaxPending,
    int coldReadMaxInflightGets,
    int coldReadParallelObjects) {

  private static final long KIB = 1024;
  private static final long MIB = 1024 * KIB;

  public static final ConfigKey<Long> BLOCK_CACHE_SIZE_BYTES = ConfigKey.longKey("stream.block.cache.size.bytes",
          256 * MIB, "Bytes of object data blocks kept in memory for cold reads, counting GETs in flight (LRU).")
      .validate(ConfigKey.between(1L * MIB, Long.MAX_VALUE));
  public static final ConfigKey<Integer> READAHEAD_CACHE_SHARE_PERCENT = ConfigKey.integer(
          "stream.readahead.cache.share.percent", 50,
          "Share of the block cache that read-ahead blocks not yet read (plus GETs in flight) may hold; "
              + "above it read-ahead is skipped.")
      .validate(ConfigKey.between(1, 100));
  public static final ConfigKey<Long> INDEX_CACHE_SIZE_BYTES = ConfigKey.longKey("stream.index.cache.size.bytes",
          32 * MIB, "Bytes of parsed object indexes kept in memory for cold reads (LRU).")
      .validate(ConfigKey.between(64 * KIB, Long.MAX_VALUE));
  public static final ConfigKey<Long> READAHEAD_INITIAL_BYTES = ConfigKey.longKey("stream.readahead.initial.bytes",
          512 * KIB, "Read-ahead window of a reader on its first sequential continuation; doubles on each next one.")
      .validate(ConfigKey.between(4 * KIB, 1024 * MIB));
  public static final ConfigKey<Long> READAHEAD_MAX_BYTES = ConfigKey.longKey("stream.readahead.max.bytes",
          32 * MIB, "Largest read-ahead window of one sequential reader.")
      .validate(ConfigKey.between(4 * KIB, 1024 * MIB));
  public static final ConfigKey<Integer> READAHEAD_MAX_READERS = ConfigKey.integer("stream.readahead.max.readers",
          10_000, "Readers (stream and position) whose read-ahead state is remembered; the least recent is forgotten.")
      .validate(ConfigKey.between(1, 10_000_000));
  public static final ConfigKey<Long> READAHEAD_IDLE_MS = ConfigKey.longKey("stream.readahead.idle.ms",
          60_000, "A reader idle this long is forgotten; its next read starts with no read-ahead.")
      .validate(ConfigKey.between(1L, Long.MAX_VALUE));
  public static final ConfigKey<Integer> COLD_READ_THREADS = ConfigKey.integer("stream.cold.read.threads", 4,
          "Threads decoding cold reads (index and block parsing); separate from the append path.")
      .validate(ConfigKey.between(1, 256));
  public static final ConfigKey<Integer> COLD_READ_MAX_PENDING = ConfigKey.integer("stream.cold.read.max.pending",
          1024, "Cold-read tasks that may wait for a thread; beyond it cold reads fail fast with a busy error.")
      .validate(ConfigKey.between(1, 1_000_000));
  public static final ConfigKey<Integer> COLD_READ_MAX_INFLIGHT_GETS = ConfigKey.integer(
          "stream.cold.read.max.inflight.gets", 64,
          "Object storage GETs the cold read path keeps in flight; read-ahead uses at most half of them.")
      .validate(ConfigKey.between(1, 10_000));

  public static final ConfigKey<Integer> COLD_READ_PARALLEL_OBJECTS = ConfigKey.integer(
          "stream.cold.read.parallel.objects", 8,
          "Objects one cold read fetches from at once (their indexes and this stream's blocks, within the read's "
              + "byte budget and half of the in-flight GETs); 1 reads them one after another.")
      .validate(ConfigKey.between(1, 64));

  public static final List<ConfigKey<?>> KEYS = List.of(BLOCK_CACHE_SIZE_BYTES, READAHEAD_CACHE_SHARE_PERCENT,
      INDEX_CACHE_SIZE_BYTES, READAHEAD_INITIAL_BYTES, READAHEAD_MAX_BYTES, READAHEAD_MAX_READERS, READAHEAD_IDLE_MS,
      COLD_READ_THREADS, COLD_READ_MAX_PENDING, COLD_READ_MAX_INFLIGHT_GETS, COLD_READ_PARALLEL_OBJECTS);

  /** A configuration with the default {@link #COLD_READ_PARALLEL_OBJECTS}. */
  public ReadConfig(long blockCacheSizeBytes, int readAheadCacheSharePercent, long indexCacheSizeBytes,
      long readAheadInitialBytes, long readAheadMaxBytes, int readAheadMaxReaders, long readAheadIdleMs,
      int coldReadThreads, int coldReadMaxPending, int coldReadMaxInflightGets) {
    this(blockCacheSizeBytes, readAheadCacheSharePercent, indexCacheSizeBytes, readAheadInitialBytes, readAheadMaxBytes,
        readAheadMaxReaders, readAheadIdleMs, coldReadThreads, coldReadMaxPending, coldReadMaxInflightGets,
        COLD_READ_PARALLEL_OBJECTS.defaultValue());
  }

  public ReadConfig withColdReadParallelObjects(int objects) {
    return new ReadConfig(blockCacheSizeBytes, readAheadCacheSharePercent, indexCacheSizeBytes, readAheadInitialBytes,
        readAheadMaxBytes, readAheadMaxReaders, readAheadIdleMs, coldReadThreads, coldReadMaxPending,
        coldReadMaxInflightGets, objects);
  }

  public ReadConfig {
    if (coldReadParallelObjects < 1) {
      throw new io.tidemark.stream.config.ConfigException(COLD_READ_PARALLEL_OBJECTS.name(),
          String.valueOf(coldReadParallelObjects), "must be at least 1");
    }
    if (readAheadMaxBytes < readAheadInitialBytes) {
      throw new io.tidemark.stream.config.ConfigException(READAHEAD_MAX_BYTES.name(), String.valueOf(readAheadMaxBytes),
          "must be at least " + READAHEAD_INITIAL_BYTES.name() + " (" + readAheadInitialBytes + ")");
    }
  }

  public static ReadConfig from(Settings settings) {
    return new ReadConfig(settings.get(BLOCK_CACHE_SIZE_BYTES), settings.get(READAHEAD_CACHE_SHARE_PERCENT),
        settings.get(INDEX_CACHE_SIZE_BYTES), settings.get(READAHEAD_INITIAL_BYTES), settings.get(READAHEAD_MAX_BYTES),
        settings.get(READAHEAD_MAX_READERS), settings.get(READAHEAD_IDLE_MS), settings.get(COLD_READ_THREADS),
        settings.get(COLD_READ_MAX_PENDING), settings.get(COLD_READ_MAX_INFLIGHT_GETS),
        settings.get(COLD_READ_PARALLEL_OBJECTS));
  }

  public static ReadConfig defaults() {
    return from(Settings.empty());
  }
}
