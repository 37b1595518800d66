package io.tidemark.table.convert;

import java.nio.ByteBuffer;
import org.apache.iceberg.types.Type;

/**
 * Decodes record values (or keys) written with one registered schema into values of
 * {@link #type()}: a struct is a {@code Map} of field name to value, a list a {@code List}, a map a
 * {@code Map}, primitives in Iceberg's generic representation. Every field of the type is optional.
 * Built once per schema and cached; immutable and thread-safe.
 */
interface ValueDecoder {

  /** The Iceberg type of every value this decoder returns (field ids are placeholders). */
  Type type();

  /** The value held in {@code payload} (the bytes after any framing). */
  Object decode(ByteBuffer payload) throws InvalidRecordException;

  /** Hands out placeholder field ids while a type is built. Not thread-safe; one per build. */
  final class FieldIds {
    private int next = 1;

    int next() {
      return next++;
    }
  }
}
