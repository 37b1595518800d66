package io.tidemark.metadata.image;

/** An ordered pair of longs, used as an index key (for example offset then object id). */
public record LongPair(long first, long second) implements Comparable<LongPair> {
  @Override
  public int compareTo(LongPair o) {
    int c = Long.compare(first, o.first);
    return c != 0 ? c : Long.compare(second, o.second);
  }
}
