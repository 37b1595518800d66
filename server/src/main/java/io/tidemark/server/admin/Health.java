package io.tidemark.server.admin;

import java.util.Map;

/**
 * What the health endpoints report; supplied by the process owner. {@code /health} is liveness:
 * 503 when the process stops or a component failed for good (restart it); {@code /ready} is
 * readiness: 503 whenever the node cannot serve, for example cannot acknowledge a produce, and
 * 200 again once it can. Called from HTTP threads.
 */
public interface Health {

  /** Liveness: false once the process is stopping or failed (an orchestrator should restart it). */
  boolean live();

  /** Readiness checks by name; the process is ready when every check is true. */
  Map<String, Boolean> readiness();

  /**
   * Components by name that can fail for good while the process lives (a fenced storage engine, a
   * WAL after an I/O error): each false names one that only a restart heals, and {@code /health}
   * answers 503 while any is false. Components that heal by themselves are not listed here; they
   * show in {@link #readiness()} while they cannot serve.
   */
  default Map<String, Boolean> components() {
    return Map.of();
  }
}
