package io.tidemark.stream.compaction;

import io.tidemark.stream.api.StreamException;

/**
 * A compaction run stopped before committing because its inputs or outputs failed a check
 * (overlapping batches of one stream in the inputs, an input range not present in the outputs, an
 * output holding data no input had, a stream trimmed past an output while the run worked). The
 * message names the objects, stream and offsets. Nothing was committed: the inputs are intact and
 * still the readable copy; the run's uploaded outputs were deleted.
 */
public class CompactionAbortedException extends StreamException {
  public CompactionAbortedException(String message) {
    super(message);
  }
}
