package io.tidemark.table.maintenance;

/**
 * What built-in maintenance did to one table since its coordinator started here (counters), what
 * the last run did, and the table's live file counts after it. Times in epoch ms, -1 when never.
 * {@code state}: DISABLED, WAITING (for the table or the next run), RUNNING or STOPPED. Immutable.
 *
 * @param dataFilesRewritten data files compaction replaced
 * @param dataFilesWritten data files compaction wrote in their place
 * @param bytesRewritten bytes of data and delete files compaction read
 * @param deleteFilesRemoved delete files (equality, position, deletion vectors) that no longer applied, removed
 * @param snapshotsExpired snapshots expired
 * @param expiredFilesDeleted files deleted by snapshot expiry (data, manifests, manifest lists)
 * @param conflicts maintenance commits that lost to a concurrent commit (they are retried at a later run)
 * @param lastRun one line on what the last run did
 */
public record MaintenanceReport(String state, long runs, long lastRunMs, long lastRunDurationMs, long dataFilesRewritten,
    long dataFilesWritten, long bytesRewritten, long deleteFilesRemoved, long manifestsRewritten, long snapshotsExpired,
    long expiredFilesDeleted, long orphanFilesRemoved, long conflicts, long liveDataFiles, long liveDeleteFiles,
    String lastRun, String lastError) {

  static MaintenanceReport initial(String state) {
    return new MaintenanceReport(state, 0, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, "", "");
  }

  MaintenanceReport withState(String next) {
    return new MaintenanceReport(next, runs, lastRunMs, lastRunDurationMs, dataFilesRewritten, dataFilesWritten,
        bytesRewritten, deleteFilesRemoved, manifestsRewritten, snapshotsExpired, expiredFilesDeleted, orphanFilesRemoved,
        conflicts, liveDataFiles, liveDeleteFiles, lastRun, lastError);
  }

  /** This report with one more run added. */
  MaintenanceReport plus(RunResult r, long startedMs, long durationMs, String next) {
    return new MaintenanceReport(next, runs + 1, startedMs, durationMs, dataFilesRewritten + r.dataFilesRewritten,
        dataFilesWritten + r.dataFilesWritten, bytesRewritten + r.bytesRewritten, deleteFilesRemoved + r.deleteFilesRemoved,
        manifestsRewritten + r.manifestsRewritten, snapshotsExpired + r.snapshotsExpired,
        expiredFilesDeleted + r.expiredFilesDeleted, orphanFilesRemoved + r.orphanFilesRemoved, conflicts + r.conflicts,
        r.liveDataFiles, r.liveDeleteFiles, r.summary(), r.error == null ? "" : r.error);
  }

  /** What one run did; filled by the run on the maintenance owner thread. */
  static final class RunResult {
    long dataFilesRewritten;
    long dataFilesWritten;
    long bytesRewritten;
    long deleteFilesRemoved;
    long manifestsRewritten;
    long snapshotsExpired;
    long expiredFilesDeleted;
    long orphanFilesRemoved;
    long conflicts;
    long liveDataFiles = -1;
    long liveDeleteFiles = -1;
    String error;
    final StringBuilder skipped = new StringBuilder();

    String summary() {
      return "rewrote " + dataFilesRewritten + " data files into " + dataFilesWritten + " (" + bytesRewritten
          + " bytes read), removed " + deleteFilesRemoved + " delete files, rewrote " + manifestsRewritten
          + " manifests, expired " + snapshotsExpired + " snapshots, removed " + orphanFilesRemoved + " orphan files, "
          + conflicts + " conflicts" + (skipped.isEmpty() ? "" : "; " + skipped);
    }
  }
}
