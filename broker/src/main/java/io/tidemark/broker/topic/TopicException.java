package io.tidemark.broker.topic;

/** A topic operation was refused; {@link #outcome()} names why. Nothing changed. */
public class TopicException extends RuntimeException {

  /** Why, in terms the protocol layer maps to one Kafka error each. */
  public enum Outcome { ALREADY_EXISTS, UNKNOWN_TOPIC, INVALID_NAME, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INTERNAL_TOPIC }

  private final Outcome outcome;

  public TopicException(Outcome outcome, String message) {
    super(message);
    this.outcome = outcome;
  }

  public Outcome outcome() {
    return outcome;
  }
}
