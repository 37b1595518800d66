package io.tidemark.broker.record;

/**
 * One record of an internal topic: key, value (null for a tombstone) and its offset. For loaders
 * that follow transactions ({@code __consumer_offsets}), {@code txnProducerId} names the producer
 * of a transactional batch (-1 otherwise), and an end-transaction marker of that producer comes as
 * a KeyValue with no key or value and {@code committed} set (true: COMMIT, false: ABORT; null for
 * every ordinary record).
 */
public record KeyValue(long offset, byte[] key, byte[] value, long txnProducerId, Boolean committed) {

  public KeyValue(long offset, byte[] key, byte[] value) {
    this(offset, key, value, -1, null);
  }

  /** Whether this is an end-transaction marker rather than a record. */
  public boolean marker() {
    return committed != null;
  }
}
