package io.tidemark.stream.engine;

import io.tidemark.stream.api.Stream;
import io.tidemark.stream.metadata.MemoryStreamMetadata;
import io.tidemark.stream.metadata.MemoryStreamMetadataTest;
import io.tidemark.stream.metadata.StreamMetadataContractTest.MetadataFixture;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamMetadata;
import io.tidemark.stream.metadata.StreamMetadataConfig;
import io.tidemark.stream.object.ObjectKeys;
import io.tidemark.stream.objectstore.LocalObjectStorage;
import io.tidemark.stream.objectstore.ObjectStorage;
import io.tidemark.stream.wal.BlockWalOptions;
import io.tidemark.stream.wal.BlockWriteAheadLog;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.zip.CRC32;

/**
 * A standalone node on the local filesystem (journaled metadata by default, local object storage, the block
 * WAL on a preallocated file), run as a child JVM by {@link CrashRecoveryTest}: it recovers, opens its streams with a
 * bumped epoch, and appends to all of them until killed, writing one line per event to the file
 * named by its fourth argument:
 * {@code OPEN stream offset}, {@code READY}, {@code SEND stream seq count crc} (before the append)
 * and {@code ACK stream seq offset} (after the acknowledgement). An optional fifth argument names
 * the {@link MetadataOpener} class (default: journaled metadata).
 */
public final class CrashTestNode {

  static final int OUTSTANDING_PER_STREAM = 4;

  /**
   * Opens the node's metadata authority on its directory: a public class with a public no-argument
   * constructor, named to the child JVM by class name (so the metadata module can run this test
   * against the replicated controller without the stream module depending on it).
   */
  public interface MetadataOpener {
    MetadataFixture open(Path dir, ObjectStorage storage, ObjectKeys keys) throws Exception;
  }

  /** The default authority: journaled in-memory metadata in {@code dir/metadata.journal}. */
  public static final class JournaledOpener implements MetadataOpener {
    @Override
    public MetadataFixture open(Path dir, ObjectStorage storage, ObjectKeys keys) throws IOException {
      return MemoryStreamMetadataTest.fixtureOf(MemoryStreamMetadata.openJournaled(dir.resolve("metadata.journal"),
          System::currentTimeMillis, storage, keys, StreamMetadataConfig.defaults()));
    }
  }

  /** The node's parts, opened on {@code dir}; closing stops them without uploading (the test kills anyway). */
  record Node(StreamEngine engine, MetadataFixture metadata, LocalObjectStorage storage) {
    void halt() throws Exception {
      engine.halt();
      metadata.close();
      storage.close();
    }
  }

  static StreamEngineConfig config() {
    return new StreamEngineConfig(2 * 1024 * 1024, 256 * 1024, 300, 96 * 1024, 16 * 1024, 1024 * 1024, 3_600_000,
        8 * 1024 * 1024, 10, 200, 8);
  }

  /** Opens the node on {@code dir} with the metadata of {@code openerClass} and runs its recovery. */
  static Node open(Path dir, String openerClass) throws Exception {
    LocalObjectStorage storage = new LocalObjectStorage(Files.createDirectories(dir.resolve("objects")), 4, 1024);
    MetadataOpener opener = (MetadataOpener) Class.forName(openerClass).getDeclaredConstructor().newInstance();
    MetadataFixture metadata = opener.open(dir, storage, ObjectKeys.defaults());
    NodeRef node = metadata.registerNode(1);
    BlockWriteAheadLog wal = new BlockWriteAheadLog(BlockWalOptions.of(
        Files.createDirectories(dir.resolve("wal")).resolve("wal.log"), 64L * 1024 * 1024, 1, node.nodeEpoch()));
    StreamEngine engine = StreamEngine.builder().node(node).wal(wal)
        .objectStorage(storage).streamManager(metadata.streams()).objectManager(metadata.objects()).config(config()).build();
    engine.start().join();
    return new Node(engine, metadata, storage);
  }

  /** Opens streams {@code 0..count-1} (creating the missing ones) with their epoch bumped. */
  static List<Stream> openStreams(Node node, int count) {
    List<Long> ids = new ArrayList<>();
    for (long i = 0; i < count; i++) {
      ids.add(i);
    }
    List<StreamMetadata> existing = node.metadata().streams().getStreams(ids).join();
    for (int i = existing.size(); i < count; i++) {
      node.engine().createStream(Map.of("crash-test", "true")).join();
    }
    List<Stream> streams = new ArrayList<>();
    for (StreamMetadata meta : node.metadata().streams().getStreams(ids).join()) {
      streams.add(node.engine().openStream(meta.streamId(), meta.epoch() + 1).join());
    }
    return streams;
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    long seed = Long.parseLong(args[1]);
    int streamCount = Integer.parseInt(args[2]);
    // Events go to a file, not a pipe: the page cache keeps every completed write after SIGKILL.
    PrintStream out = new PrintStream(new FileOutputStream(args[3], true), true, StandardCharsets.UTF_8);
    out.println("STARTING");
    Node node = open(dir, args.length > 4 ? args[4] : JournaledOpener.class.getName());
    List<Stream> streams = openStreams(node, streamCount);
    for (Stream s : streams) {
      out.println("OPEN " + s.streamId() + " " + s.nextOffset());
    }
    out.println("READY");
    for (Stream s : streams) {
      Appender appender = new Appender(s, new Random(seed * 1_000_003L + s.streamId()), out);
      for (int i = 0; i < OUTSTANDING_PER_STREAM; i++) {
        appender.next();
      }
    }
    new CountDownLatch(1).await();
  }

  /** Keeps appending random batches to one stream; each acknowledgement issues the next append. */
  private static final class Appender {
    private final Stream stream;
    private final Random random;
    private final PrintStream out;
    private long seq;

    Appender(Stream stream, Random random, PrintStream out) {
      this.stream = stream;
      this.random = random;
      this.out = out;
    }

    synchronized void next() {
      long mySeq = seq++;
      byte[] payload = new byte[1 + random.nextInt(2048)];
      random.nextBytes(payload);
      int count = 1 + random.nextInt(5);
      CRC32 crc = new CRC32();
      crc.update(payload);
      out.println("SEND " + stream.streamId() + " " + mySeq + " " + count + " " + crc.getValue());
      stream.append(count, ByteBuffer.wrap(payload)).whenComplete((offset, error) -> {
        if (error == null) {
          out.println("ACK " + stream.streamId() + " " + mySeq + " " + offset);
          next();
        } else {
          out.println("ERROR " + stream.streamId() + " " + mySeq + " " + error);
        }
      });
    }
  }
}
