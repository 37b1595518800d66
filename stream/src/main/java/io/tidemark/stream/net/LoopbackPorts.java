package io.tidemark.stream.net;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for servers that must be named before they bind (Raft voters, which peers
 * address by port) and that bind the same port again after a restart.
 *
 * <p>A port from the kernel's ephemeral range ({@code net.ipv4.ip_local_port_range}) is unsafe for
 * that: between a stop and the restart, any outgoing connection on the machine may be given it as
 * its local port, and the restart then fails to bind (Ratis even ends the process when its server
 * cannot bind). The kernel never hands out a port below that range to a connection, so ports are
 * picked at random below it, each checked free by binding it, and never given twice in this
 * process. Where the range cannot be read, the kernel picks (port 0).
 */
public final class LoopbackPorts {

  private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
  /** The lowest port picked: above the registered ports most services use. */
  private static final int LOWEST = 20_000;
  private static final int ATTEMPTS = 200;
  private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

  private LoopbackPorts() {}

  /** A loopback port free now, outside the ephemeral range where the kernel allows it. */
  public static int pick() {
    int ephemeralLow = ephemeralLow();
    if (ephemeralLow - LOWEST >= 1_000) {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int i = 0; i < ATTEMPTS; i++) {
        int port = random.nextInt(LOWEST, ephemeralLow);
        if (GIVEN.add(port)) {
          if (bindable(port)) {
            return port;
          }
          GIVEN.remove(port);
        }
      }
    }
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      GIVEN.add(socket.getLocalPort());
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port on 127.0.0.1", e);
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** The first port of the kernel's ephemeral range, or 0 when it cannot be read (not Linux). */
  private static int ephemeralLow() {
    try {
      String[] range = Files.readString(EPHEMERAL_RANGE).trim().split("\\s+");
      return Integer.parseInt(range[0]);
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }
}
