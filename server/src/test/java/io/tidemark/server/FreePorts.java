package io.tidemark.server;

import io.tidemark.stream.net.LoopbackPorts;

/**
 * Picks free loopback ports for settings that cannot take port 0: the controller voters must be
 * named before any of them binds. The port is free when picked, outside the kernel's ephemeral range
 * ({@link LoopbackPorts}); a test binds it at once.
 */
public final class FreePorts {

  private FreePorts() {}

  public static int pick() {
    return LoopbackPorts.pick();
  }

  /** A single controller voter (node 0, the default node.id) on a free port. */
  public static String singleVoter() {
    return "0@127.0.0.1:" + pick();
  }
}
