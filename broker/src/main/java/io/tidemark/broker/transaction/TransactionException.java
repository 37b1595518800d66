package io.tidemark.broker.transaction;

import org.apache.kafka.common.protocol.Errors;

/** The transaction coordinator refused a request; {@link #error()} is the Kafka error to answer. Nothing was changed. */
public final class TransactionException extends RuntimeException {

  private final transient Errors error;

  public TransactionException(Errors error, String message) {
    super(message);
    this.error = error;
  }

  public Errors error() {
    return error;
  }
}
