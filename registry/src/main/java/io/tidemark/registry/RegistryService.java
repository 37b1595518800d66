package io.tidemark.registry;

import io.tidemark.registry.http.RegistryHttpServer;
import io.tidemark.registry.store.SchemaStore;

/**
 * The schema registry as the server wires it: a {@link SchemaRegistry} on a {@link SchemaStore}
 * (the {@code _schemas} partition on the broker that leads it) behind its REST API. States: created,
 * running after {@link #start()} (log replayed, port bound), closed. Start and close from one thread.
 */
public final class RegistryService implements AutoCloseable {
  private final SchemaRegistry registry;
  private final RegistryHttpServer http;
  private boolean started;

  public RegistryService(RegistryConfig config, SchemaStore store) {
    this.registry = new SchemaRegistry(config, store);
    this.http = new RegistryHttpServer(registry, config);
  }

  /** Replays the log, then serves the REST API. */
  public RegistryService start() {
    if (started) {
      throw new IllegalStateException("registry service already started");
    }
    registry.start();
    http.start();
    started = true;
    return this;
  }

  /** The bound REST port. */
  public int port() {
    return http.port();
  }

  public SchemaRegistry registry() {
    return registry;
  }

  @Override
  public void close() {
    http.close();
    registry.close();
  }
}
