package io.tidemark.table.rest;

import com.fasterxml.jackson.core.JacksonException;
import io.tidemark.registry.http.HttpGuard;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.apache.iceberg.exceptions.UnprocessableEntityException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.rest.responses.ErrorResponse;

/**
 * The one place that maps catalog outcomes to REST catalog status codes and error bodies. The
 * error type is the Iceberg exception's simple name, which is what Iceberg's REST client matches
 * on (a 404 of type {@code NoSuchNamespaceException} versus {@code NoSuchTableException}, a 409 on
 * commit becoming {@link CommitFailedException}). Messages leave without internals: a 4xx message
 * that would carry class names or SQL is replaced ({@link HttpGuard#publicMessage}), and a 500
 * answers only an incident number (the server logs the detail). Stateless.
 */
final class RestErrors {

  private RestErrors() {}

  /** Thrown by handlers for an endpoint the configured catalog cannot serve: HTTP 501. */
  static final class NotImplemented extends RuntimeException {
    NotImplemented(String message) {
      super(message);
    }
  }

  static int status(Throwable e) {
    return switch (e) {
      case NoSuchNamespaceException x -> 404;
      case NoSuchTableException x -> 404;
      case NoSuchViewException x -> 404;
      case NotFoundException x -> 404;
      case AlreadyExistsException x -> 409;
      case CommitFailedException x -> 409;
      case NamespaceNotEmptyException x -> 409;
      case NotAuthorizedException x -> 401;
      case ForbiddenException x -> 403;
      case UnprocessableEntityException x -> 422;
      case ValidationException x -> 400;
      case BadRequestException x -> 400;
      case IllegalArgumentException x -> 400;
      case JacksonException x -> 400;
      case NotImplemented x -> 501;
      case UnsupportedOperationException x -> 406;
      case ServiceUnavailableException x -> 503;
      case CommitStateUnknownException x -> 500;
      default -> 500;
    };
  }

  static String type(Throwable e) {
    return switch (e) {
      case JacksonException x -> BadRequestException.class.getSimpleName();
      case IllegalArgumentException x -> BadRequestException.class.getSimpleName();
      case NotImplemented x -> UnsupportedOperationException.class.getSimpleName();
      case CommitStateUnknownException x -> CommitStateUnknownException.class.getSimpleName();
      default -> isInternal(status(e)) ? INTERNAL : e.getClass().getSimpleName(); // the Iceberg types of status()
    };
  }

  /** The type of an error answered by the HTTP layer itself (413, 431, 404 of no route, 500, ...). */
  static String typeOf(int status) {
    return switch (status) {
      case 404 -> "NotFoundException";
      case 405 -> "MethodNotAllowedException";
      case 413 -> "RequestTooLargeException";
      case 431 -> "RequestHeaderFieldsTooLargeException";
      default -> status >= 500 ? INTERNAL : BadRequestException.class.getSimpleName();
    };
  }

  /** Whether a status is a failure of the server whose detail stays in the log (501 and 503 are outcomes). */
  static boolean isInternal(int status) {
    return status >= 500 && status != 501 && status != 503;
  }

  /** The type of an internal failure, as in the REST catalog spec's examples. */
  static final String INTERNAL = "InternalServerError";

  static ErrorResponse body(Throwable e) {
    int status = status(e);
    String message = e instanceof JacksonException j ? "malformed request body: " + HttpGuard.describe(j)
        : HttpGuard.publicMessage(e.getMessage(), "the request was refused (HTTP " + status + ")");
    return ErrorResponse.builder().responseCode(status).withType(type(e)).withMessage(message).build();
  }

  /** A 500 for {@code e} whose message is only {@code publicMessage} (the incident); the type says unknown commits. */
  static ErrorResponse internal(Throwable e, String publicMessage) {
    String message = e instanceof CommitStateUnknownException
        ? "the commit's outcome is unknown: " + publicMessage + "; reload the table to see whether it was applied"
        : publicMessage;
    return ErrorResponse.builder().responseCode(status(e)).withType(type(e)).withMessage(message).build();
  }

  static ErrorResponse of(int status, String type, String message) {
    return ErrorResponse.builder().responseCode(status).withType(type).withMessage(message).build();
  }
}
