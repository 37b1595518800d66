package io.tidemark.stream.compaction;

import java.util.ArrayList;
import java.util.List;

/**
 * What one compaction run did: the objects it replaced, the objects it wrote (a stream-set object
 * id or -1, and stream object ids), bytes read and written, and payload bytes of trimmed or
 * deleted streams dropped. {@code skippedReason} is non-null when the run did nothing and says
 * why; {@code failures} lists parts of a run that failed (their inputs intact) while others
 * succeeded.
 */
public record CompactionReport(
    List<Long> compactedObjectIds,
    long streamSetObjectId,
    List<Long> streamObjectIds,
    long bytesRead,
    long bytesWritten,
    long bytesDropped,
    String skippedReason,
    List<String> failures) {

  public CompactionReport {
    compactedObjectIds = List.copyOf(compactedObjectIds);
    streamObjectIds = List.copyOf(streamObjectIds);
    failures = List.copyOf(failures);
  }

  public static CompactionReport skipped(String reason) {
    return new CompactionReport(List.of(), -1, List.of(), 0, 0, 0, reason, List.of());
  }

  public boolean didWork() {
    return skippedReason == null;
  }

  /** Sums two reports (the stream-object compactor merges several groups per run). */
  CompactionReport plus(CompactionReport other) {
    if (!other.didWork()) {
      return this;
    }
    if (!didWork()) {
      return other;
    }
    List<Long> compacted = new ArrayList<>(compactedObjectIds);
    compacted.addAll(other.compactedObjectIds);
    List<Long> written = new ArrayList<>(streamObjectIds);
    written.addAll(other.streamObjectIds);
    List<String> failed = new ArrayList<>(failures);
    failed.addAll(other.failures);
    return new CompactionReport(compacted, streamSetObjectId, written, bytesRead + other.bytesRead,
        bytesWritten + other.bytesWritten, bytesDropped + other.bytesDropped, null, failed);
  }

  /** This report with {@code more} failures added. */
  CompactionReport withFailures(List<String> more) {
    List<String> failed = new ArrayList<>(failures);
    failed.addAll(more);
    return new CompactionReport(compactedObjectIds, streamSetObjectId, streamObjectIds, bytesRead, bytesWritten,
        bytesDropped, skippedReason, failed);
  }
}
