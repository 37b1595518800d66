package io.tidemark.server.admin;

import java.util.Map;

/** What the health endpoints report; supplied by the process owner. Called from HTTP threads. */
public interface Health {

  /** Liveness: false once the process is stopping or failed (an orchestrator should restart it). */
  boolean live();

  /** Readiness checks by name; the process is ready when every check is true. */
  Map<String, Boolean> readiness();
}
