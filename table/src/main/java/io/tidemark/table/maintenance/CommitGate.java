package io.tidemark.table.maintenance;

/**
 * Where a maintenance commit runs. On a node, the table's coordinator runs it on its own thread
 * between two rounds' commits ({@link io.tidemark.table.coordinator.TableCoordinator#betweenCommits}),
 * so that maintenance never races the commit cycle to the catalog; the work before the commit
 * (reading, writing files) stays on the maintenance thread. {@link #direct()} commits on the calling
 * thread (tests, a table without a commit cycle here).
 */
@FunctionalInterface
public interface CommitGate {

  /** Runs {@code change} and returns when it ended; its exception (a lost race, a failure) is rethrown as is. */
  void commit(Runnable change) throws InterruptedException;

  static CommitGate direct() {
    return Runnable::run;
  }
}
