package io.tidemark.server.cluster;

import io.tidemark.broker.security.ScramAlgorithm;
import io.tidemark.broker.security.ScramCredential;
import io.tidemark.broker.security.ScramCredentialStore;
import io.tidemark.metadata.client.ControllerClient;
import io.tidemark.metadata.controller.ControllerRequest.AlterScramCredential;
import io.tidemark.metadata.controller.MetadataReplica;
import io.tidemark.metadata.record.MetadataRecord.UserScramCredential;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * SCRAM credentials in the controller's replicated metadata ({@code UserScramCredential}
 * records): reads come from this node's image, writes go through the controller and complete
 * once this node's image has applied them, so a user created here can log in here at once.
 * Thread-safe (the image is immutable, the client is).
 */
final class ControllerScramCredentials implements ScramCredentialStore {

  private final ControllerClient client;
  private final MetadataReplica replica;

  ControllerScramCredentials(ControllerClient client, MetadataReplica replica) {
    this.client = client;
    this.replica = replica;
  }

  @Override
  public Optional<ScramCredential> credential(String user, ScramAlgorithm algorithm) {
    return Optional.ofNullable(replica.image().scramCredential(user, algorithm.type()))
        .flatMap(ControllerScramCredentials::toCredential);
  }

  @Override
  public Map<String, List<ScramCredential>> all() {
    Map<String, List<ScramCredential>> out = new TreeMap<>();
    for (UserScramCredential c : replica.image().scramCredentials().values()) {
      toCredential(c).ifPresent(s -> out.computeIfAbsent(c.user(), u -> new ArrayList<>()).add(s));
    }
    return out;
  }

  private static Optional<ScramCredential> toCredential(UserScramCredential c) {
    return ScramAlgorithm.ofType(c.mechanism())
        .map(a -> new ScramCredential(a, c.salt(), c.storedKey(), c.serverKey(), c.iterations()));
  }

  @Override
  public CompletableFuture<Void> upsert(String user, ScramCredential credential) {
    return write(new AlterScramCredential(user, credential.algorithm().type(), credential.salt(), credential.storedKey(),
        credential.serverKey(), credential.iterations(), false)).thenApply(existed -> null);
  }

  @Override
  public CompletableFuture<Boolean> delete(String user, ScramAlgorithm algorithm) {
    return write(new AlterScramCredential(user, algorithm.type(), null, null, null, 0, true));
  }

  private CompletableFuture<Boolean> write(AlterScramCredential request) {
    return client.alterScramCredential(request)
        .thenCompose(existed -> replica.awaitOffset(client.lastWriteOffset()).thenApply(x -> existed));
  }
}
