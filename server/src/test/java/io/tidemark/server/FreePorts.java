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

  public static int pick() {
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
