package io.tidemark.server.storage;

import io.tidemark.stream.api.StreamStore;
import io.tidemark.stream.metadata.NodeRef;
import io.tidemark.stream.metadata.StreamManager;
import io.tidemark.server.cluster.ControllerLink;
import io.tidemark.stream.objectstore.ObjectStorage;
import java.util.Map;
import java.util.Optional;

/**
 * This process's storage engine once assembled and recovered: the object storage, the
 * write-ahead log, the metadata authority it commits to and the {@link StreamStore} over them.
 * It owns all of them and closes them in order (streams, upload of what the WAL holds, WAL,
 * metadata, object storage).
 *
 * <p>Thread-safe: the stream store is called from any thread; {@link #close()} is called once, by
 * the process owner, after every user of the store stopped.
 */
public interface StorageNode extends AutoCloseable {

  /** Who this node is towards the metadata authority. */
  NodeRef node();

  StreamStore streamStore();

  /** The metadata authority's stream view (epochs, committed offsets). */
  StreamManager streamManager();

  /** The object storage the streams live in, for components that keep files beside them (table warehouse). */
  default Optional<ObjectStorage> objectStorage() {
    return Optional.empty();
  }

  /**
   * The link to the controller quorum (local voter, client, registration), when this storage
   * commits to one; test assemblies without a controller return empty.
   */
  default Optional<ControllerLink> controller() {
    return Optional.empty();
  }

  /**
   * Readiness checks by name ({@code storage.recovered}, {@code wal.open},
   * {@code storage.appends.accepted}, ...): all true means the node serves appends and reads.
   */
  Map<String, Boolean> readiness();

  /**
   * Components that can fail for good by name ({@code storage.engine}, {@code wal.healthy}): a
   * false one only a restart heals, and {@code /health} reports it.
   */
  default Map<String, Boolean> liveness() {
    return Map.of();
  }

  /**
   * Completes once, with the reason, when a component failed for good while the process lives (the
   * storage engine after a WAL I/O error): only starting the node again heals it, and the
   * server's supervisor does so in-process. Never completes for assemblies that cannot fail so.
   */
  default java.util.concurrent.CompletionStage<String> onFailed() {
    return new java.util.concurrent.CompletableFuture<>();
  }

  /** Closes every stream, uploads what the WAL holds, and releases everything. */
  @Override
  void close();
}
