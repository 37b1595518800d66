package io.tidemark.stream.object;

/**
 * Layout constants of a Tidemark object: {@code [data block]* [index] [footer]}, big-endian.
 *
 * <pre>
 * data block  = header (24 B) + encoded batches of ONE stream, consecutive offsets
 *   magic        i32  0x54444231 ("TDB1")
 *   streamId     i64
 *   batchCount   i32
 *   dataLength   i32  bytes of encoded batches after the header
 *   dataCrc32c   i32  over those bytes
 * index       = IndexEntry[] (40 B each), sorted by (streamId, startOffset)
 *   streamId i64, startOffset i64, endOffset i64, recordCount i32, blockPosition i64, blockSize i32
 * footer      = 48 B at the end of the object
 *   indexPosition i64, indexLength i32, indexCrc32c i32, formatVersion i16, reserved 22 B (zero),
 *   magic i64 0x544944454D41524B ("TIDEMARK")
 * </pre>
 *
 * A reader needs the object size (from metadata) to fetch the footer with one ranged GET, then
 * the index with a second, then only the blocks it needs.
 */
final class ObjectFormat {
  static final int BLOCK_MAGIC = 0x54444231;
  static final int BLOCK_HEADER_BYTES = 24;
  static final int FOOTER_BYTES = 48;
  static final long FOOTER_MAGIC = 0x544944454D41524BL;
  static final short FORMAT_VERSION = 1;

  private ObjectFormat() {}
}
