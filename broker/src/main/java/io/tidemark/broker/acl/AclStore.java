package io.tidemark.broker.acl;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclBinding;

/**
 * Where the cluster's ACLs live: the seam between the broker and the metadata authority (the
 * server implements it on the replicated controller). {@link #acls()} is read on every request
 * and must be cheap; writes complete once durable and visible in {@link #acls()} of this broker.
 * Implementations are thread-safe.
 */
public interface AclStore {

  /** The current ACLs. */
  Acls acls();

  /** Adds the bindings (present ones are kept as they are). */
  CompletableFuture<Void> create(List<AclBinding> bindings);

  /** Removes exactly these bindings; completes with, per binding in order, whether it was present. */
  CompletableFuture<List<Boolean>> delete(List<AclBinding> bindings);

  /** ACLs in this process's memory, for a broker alone (tests, {@code KafkaBroker.inMemory}); lost on exit. */
  static AclStore memory() {
    return new AclStore() {
      private volatile Acls current = Acls.EMPTY;

      @Override
      public Acls acls() {
        return current;
      }

      @Override
      public synchronized CompletableFuture<Void> create(List<AclBinding> bindings) {
        Set<AclBinding> next = new LinkedHashSet<>(current.all());
        next.addAll(bindings);
        current = new Acls(next);
        return CompletableFuture.completedFuture(null);
      }

      @Override
      public synchronized CompletableFuture<List<Boolean>> delete(List<AclBinding> bindings) {
        Set<AclBinding> next = new LinkedHashSet<>(current.all());
        List<Boolean> out = new ArrayList<>(bindings.size());
        for (AclBinding b : bindings) {
          out.add(next.remove(b));
        }
        current = new Acls(next);
        return CompletableFuture.completedFuture(out);
      }
    };
  }
}
