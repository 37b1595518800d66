package io.tidemark.broker.group;

import org.apache.kafka.common.protocol.Errors;

/**
 * A group operation was refused. Group errors are protocol states in their own right
 * (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, ...) that drive the client's state machine, so the
 * coordinator names the Kafka error directly.
 */
public class GroupException extends RuntimeException {
  private final Errors error;

  public GroupException(Errors error, String message) {
    super(message);
    this.error = error;
  }

  public Errors error() {
    return error;
  }
}
