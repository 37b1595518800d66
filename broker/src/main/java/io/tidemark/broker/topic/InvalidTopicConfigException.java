package io.tidemark.broker.topic;

/** A topic config name or value is not accepted; the message names it and says why. Nothing changed. */
public class InvalidTopicConfigException extends RuntimeException {
  public InvalidTopicConfigException(String message) {
    super(message);
  }
}
