package io.tidemark.table.rest;

import com.fasterxml.jackson.core.JacksonException;
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
 * commit becoming {@link CommitFailedException}). Stateless.
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
      default -> e.getClass().getSimpleName();
    };
  }

  static ErrorResponse body(Throwable e) {
    int status = status(e);
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    if (e instanceof JacksonException j) {
      message = "malformed request body: " + j.getOriginalMessage();
    }
    return ErrorResponse.builder().responseCode(status).withType(type(e)).withMessage(message).build();
  }

  static ErrorResponse of(int status, String type, String message) {
    return ErrorResponse.builder().responseCode(status).withType(type).withMessage(message).build();
  }
}
