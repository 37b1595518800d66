package io.tidemark.registry;

/**
 * Every failure the registry reports, with the HTTP status and the Confluent Schema Registry
 * {@code error_code} that clients switch on. This is the one place where outcomes map to codes:
 * the registry throws {@link RegistryException} carrying one of these, the HTTP layer only prints it.
 */
public enum RegistryError {
  BAD_REQUEST(400, 400),
  UNAUTHORIZED(401, 401),
  /** The principal's ACLs do not allow the request (Confluent's code for a denied operation). */
  FORBIDDEN(403, 40301),
  SUBJECT_NOT_FOUND(404, 40401),
  VERSION_NOT_FOUND(404, 40402),
  SCHEMA_NOT_FOUND(404, 40403),
  SUBJECT_SOFT_DELETED(404, 40404),
  SUBJECT_NOT_SOFT_DELETED(404, 40405),
  VERSION_SOFT_DELETED(404, 40406),
  VERSION_NOT_SOFT_DELETED(404, 40407),
  SUBJECT_COMPATIBILITY_NOT_CONFIGURED(404, 40408),
  SUBJECT_MODE_NOT_CONFIGURED(404, 40409),
  INCOMPATIBLE_SCHEMA(409, 409),
  REQUEST_TOO_LARGE(413, 41301),
  UNSUPPORTED_MEDIA_TYPE(415, 415),
  UNPROCESSABLE_ENTITY(422, 422),
  INVALID_SCHEMA(422, 42201),
  INVALID_VERSION(422, 42202),
  INVALID_COMPATIBILITY_LEVEL(422, 42203),
  INVALID_MODE(422, 42204),
  OPERATION_NOT_PERMITTED(422, 42205),
  REFERENCE_EXISTS(422, 42206),
  ID_DOES_NOT_MATCH(422, 42207),
  INVALID_SUBJECT(422, 42208),
  SCHEMA_TOO_LARGE(422, 42209),
  WRITER_BUSY(429, 42901),
  STORE_ERROR(500, 50001),
  OPERATION_TIMEOUT(500, 50002),
  FORWARD_FAILED(500, 50003),
  NOT_LEADER(500, 50004);

  private final int httpStatus;
  private final int errorCode;

  RegistryError(int httpStatus, int errorCode) {
    this.httpStatus = httpStatus;
    this.errorCode = errorCode;
  }

  public int httpStatus() {
    return httpStatus;
  }

  public int errorCode() {
    return errorCode;
  }

  /** An exception for this outcome with a message that names the values at fault. */
  public RegistryException exception(String message) {
    return new RegistryException(this, message);
  }
}
