package io.tidemark.stream.object;

/**
 * One data block as listed in an object's index: the block holds batches of {@code streamId}
 * covering offsets {@code [startOffset, endOffset)} ({@code recordCount} records), stored at
 * bytes {@code [blockPosition, blockPosition + blockSizeBytes)} of the object.
 */
public record IndexEntry(
    long streamId, long startOffset, long endOffset, int recordCount, long blockPosition, int blockSizeBytes) {

  /** Encoded size of one entry in the index. */
  public static final int BYTES = 40;

  /** Whether this block holds any offset of {@code [start, end)} of {@code stream}. */
  public boolean overlaps(long stream, long start, long end) {
    return streamId == stream && endOffset > start && startOffset < end;
  }
}
