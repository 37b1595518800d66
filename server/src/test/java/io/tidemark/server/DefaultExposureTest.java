package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.tidemark.server.storage.EmbeddedStorage;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a default start exposes, read from the kernel's socket table: the admin endpoint and the
 * Raft voter answer on loopback only, Kafka, the schema registry and the REST catalog on every
 * interface (as README.md and docs/operations.md say), and no raw stream API exists.
 */
class DefaultExposureTest {

  @TempDir Path dataDir;

  @Test
  void aDefaultStartBindsTheDocumentedAddresses() throws Exception {
    // Goal: every listener of a default start (only ports and data.dir changed) binds the documented address.
    assumeThat(Files.isReadable(Path.of("/proc/net/tcp"))).as("Linux socket table").isTrue();
    int raftPort = FreePorts.pick();
    // No host setting here: the defaults under test. Ports are ephemeral, the voter's port is picked free.
    List<String> args = List.of("--set", "data.dir=" + dataDir, "--set", "admin.port=0", "--set", "kafka.listener.port=0",
        "--set", "registry.port=0", "--set", "table.rest.port=0", "--set", "controller.voters=0@127.0.0.1:" + raftPort,
        "--set", "wal.capacity.bytes=" + (32L << 20));
    try (TidemarkServer server = Main.start(args, Map.of(), new EmbeddedStorage())) {
      Map<Integer, Set<InetAddress>> listening = listeningSockets();
      assertLoopbackOnly(listening, server.adminPort(), "admin");
      assertLoopbackOnly(listening, raftPort, "controller (Raft)");
      assertAllInterfaces(listening, server.kafkaPort().orElseThrow(), "Kafka");
      assertAllInterfaces(listening, server.registryPort().orElseThrow(), "schema registry");
      assertAllInterfaces(listening, server.tableRestPort().orElseThrow(), "Iceberg REST catalog");

      HttpClient http = HttpClient.newHttpClient();
      for (String path : List.of("/v1/streams", "/v1/streams/0/records")) {
        for (String method : List.of("GET", "POST")) {
          HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + path))
              .method(method, HttpRequest.BodyPublishers.ofByteArray(new byte[] {1})).build(), HttpResponse.BodyHandlers.ofString());
          assertThat(r.statusCode()).as(method + " " + path + " on a default start").isEqualTo(404);
        }
      }
      assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.adminPort() + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    }
  }

  private static void assertLoopbackOnly(Map<Integer, Set<InetAddress>> listening, int port, String what) {
    assertThat(listening.get(port)).as(what + " listener on port " + port).isNotEmpty()
        .allSatisfy(a -> assertThat(a.isLoopbackAddress()).as(what + " bound " + a.getHostAddress()).isTrue());
  }

  private static void assertAllInterfaces(Map<Integer, Set<InetAddress>> listening, int port, String what) {
    assertThat(listening.get(port)).as(what + " listener on port " + port).isNotEmpty()
        .anySatisfy(a -> assertThat(a.isAnyLocalAddress()).as(what + " bound " + a.getHostAddress()).isTrue());
  }

  /** Port → local addresses of the TCP sockets in LISTEN state, from /proc/net/tcp and /proc/net/tcp6. */
  static Map<Integer, Set<InetAddress>> listeningSockets() throws IOException {
    Map<Integer, Set<InetAddress>> out = new HashMap<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      Path file = Path.of(table);
      if (!Files.isReadable(file)) {
        continue;
      }
      List<String> lines = Files.readAllLines(file);
      for (String line : lines.subList(1, lines.size())) { // the first line is the header
        String[] f = line.trim().split("\\s+");
        if (f.length < 4 || !f[3].equals("0A")) { // 0A = TCP_LISTEN
          continue;
        }
        String[] local = f[1].split(":");
        out.computeIfAbsent(Integer.parseInt(local[1], 16), p -> new HashSet<>()).add(address(local[0]));
      }
    }
    return out;
  }

  /** The kernel prints each 32-bit word of the address in host (little-endian) order. */
  private static InetAddress address(String hex) throws UnknownHostException {
    byte[] bytes = new byte[hex.length() / 2];
    for (int word = 0; word < bytes.length / 4; word++) {
      for (int i = 0; i < 4; i++) {
        int at = word * 8 + (3 - i) * 2;
        bytes[word * 4 + i] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
      }
    }
    return InetAddress.getByAddress(bytes);
  }
}
