package io.tidemark.bench.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * What every node and tool of one comparison run shares: the JDK, the JVM options (identical for
 * both brokers), the class paths, the scratch directory (deleted at the end) and the log directory
 * (kept for inspection). Immutable.
 *
 * @param java the java binary for brokers and tools
 * @param nodeJvmOptions options of both broker JVMs, e.g. {@code -Xmx2g}
 * @param toolJvmOptions options of the tool JVMs
 * @param kafkaClasspath Apache Kafka's broker and kafka-tools jars
 * @param tidemarkClasspath the Tidemark server jar and its libraries
 * @param workDir scratch space for the nodes' data
 * @param logDir where every child's output is kept
 */
public record Setup(Path java, List<String> nodeJvmOptions, List<String> toolJvmOptions, String kafkaClasspath,
             String tidemarkClasspath, Path workDir, Path logDir) {

  static final String LOOPBACK = "127.0.0.1";

  /** The 1, 5 and 15 minute load averages (Linux), for the record of a run. */
  public static String loadAverage() {
    try {
      String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return String.join(", ", Arrays.copyOf(fields, 3));
    } catch (IOException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  /** A port that was free on the loopback address a moment ago (the child binds it soon after). */
  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }
}
