package io.tidemark.stream.wal;

/**
 * A newer writer (higher epoch) has taken over this log; this writer can neither append nor trim
 * and must stop. Nothing it had not yet acknowledged is durable.
 */
public class WalFencedException extends WalException {
  public WalFencedException(String message) {
    super(message);
  }
}
