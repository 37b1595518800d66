package io.tidemark.registry.cluster;

import java.net.URI;
import java.util.Optional;

/**
 * Where this node's registry sends writes. In a cluster only the registry on the broker leading
 * {@code _schemas} partition 0 appends to the schema log, so ids stay unique and dense; every other
 * node forwards writes there and serves reads from its own replay of the log.
 *
 * <p>Implementations answer from the current cluster view and are called on request threads.
 */
@FunctionalInterface
public interface WriteLeader {

  /**
   * Empty when this node is the writer; otherwise the base URL ({@code http://host:port}) of the
   * registry that is. Throws {@link io.tidemark.registry.RegistryException} with
   * {@link io.tidemark.registry.RegistryError#NOT_LEADER} while no node leads the schema log.
   */
  Optional<URI> remote();

  /** A single node: this registry always writes itself. */
  static WriteLeader self() {
    return Optional::empty;
  }
}
