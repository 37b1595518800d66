package io.tidemark.registry.client;

/** The registry answered with an error, or could not be reached ({@code httpStatus} 0); {@code errorCode} is Confluent's. */
public class SchemaRegistryClientException extends RuntimeException {
  private final int httpStatus;
  private final int errorCode;

  public SchemaRegistryClientException(int httpStatus, int errorCode, String message, Throwable cause) {
    super(message, cause);
    this.httpStatus = httpStatus;
    this.errorCode = errorCode;
  }

  public int httpStatus() {
    return httpStatus;
  }

  public int errorCode() {
    return errorCode;
  }
}
