package io.tidemark.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Picks free loopback ports for settings that cannot take port 0: the controller voters must be
 * named before any of them binds. The port is free when picked; a test binds it at once.
 */
public final class FreePorts {

  private FreePorts() {}

  /** Ports handed out by this JVM: the kernel may offer a port again once its probe socket closed. */
  private static final java.util.Set<Integer> PICKED = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** A free port that no earlier call of this JVM returned (two settings of one cluster never share a port). */
  public static int pick() {
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = probe();
      if (PICKED.add(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no free port on 127.0.0.1 that was not already picked");
  }

  private static int probe() {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port on 127.0.0.1", e);
    }
  }

  /** A single controller voter (node 0, the default node.id) on a free port. */
  public static String singleVoter() {
    return "0@127.0.0.1:" + pick();
  }
}
