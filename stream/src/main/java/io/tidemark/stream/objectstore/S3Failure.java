package io.tidemark.stream.objectstore;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * What one failed S3 attempt means for the caller: pure functions over the SDK's exceptions, so
 * that the retry loop in {@link S3ObjectStorage} only branches on a {@link Kind}.
 */
final class S3Failure {

  enum Kind {
    /** 404: no such key, bucket or upload. Not retried. */
    NOT_FOUND(false, false),
    /** 416: the range starts at or past the end of the object. Not retried. */
    RANGE_NOT_SATISFIABLE(false, false),
    /** 503 SlowDown, 429 and similar: refused, nothing changed. Retried. */
    THROTTLED(true, false),
    /** 500, 502, 503 without SlowDown, 400 RequestTimeout: the server failed the request. Retried. */
    SERVER_ERROR(true, false),
    /** The request never left: connection refused, unknown host, connect timeout. Retried. */
    NOT_SENT(true, false),
    /** Sent, but no answer: timeouts after sending, connection reset, 504. Retried; may have taken effect. */
    AMBIGUOUS(true, true),
    /** Any other error (403, 400, bad argument): retrying cannot help. */
    FATAL(false, false);

    final boolean retryable;
    final boolean mayHaveTakenEffect;

    Kind(boolean retryable, boolean mayHaveTakenEffect) {
      this.retryable = retryable;
      this.mayHaveTakenEffect = mayHaveTakenEffect;
    }
  }

  private S3Failure() {}

  static Throwable unwrap(Throwable error) {
    Throwable e = error;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  static Kind classify(Throwable error) {
    Throwable e = unwrap(error);
    if (e instanceof S3Exception s3) {
      return classifyStatus(s3.statusCode(), errorCode(s3));
    }
    if (causedBy(e, ConnectException.class) || causedBy(e, UnknownHostException.class)
        || causedBy(e, NoRouteToHostException.class) || acquireTimeout(e)) {
      return Kind.NOT_SENT;
    }
    // Checked after NOT_SENT: a connect timeout is a ConnectException, a read timeout is not.
    if (e instanceof ApiCallAttemptTimeoutException || e instanceof ApiCallTimeoutException
        || causedBy(e, io.netty.handler.timeout.TimeoutException.class)
        || causedBy(e, java.util.concurrent.TimeoutException.class)) {
      return Kind.AMBIGUOUS;
    }
    if (causedBy(e, IOException.class) || e instanceof SdkClientException sdk && sdk.retryable()) {
      return Kind.AMBIGUOUS;
    }
    return Kind.FATAL;
  }

  static Kind classifyStatus(int status, String code) {
    if ("SlowDown".equals(code) || "Throttling".equals(code) || "ThrottlingException".equals(code)
        || "RequestLimitExceeded".equals(code) || "TooManyRequests".equals(code) || status == 429) {
      return Kind.THROTTLED;
    }
    if (status == 404) {
      return Kind.NOT_FOUND;
    }
    if (status == 416) {
      return Kind.RANGE_NOT_SATISFIABLE;
    }
    if (status == 501 || status == 505) {
      return Kind.FATAL; // not implemented by this store: retrying cannot help
    }
    if (status == 504) {
      return Kind.AMBIGUOUS;
    }
    if (status == 503) {
      return Kind.THROTTLED;
    }
    if (status >= 500 || "RequestTimeout".equals(code) || "InternalError".equals(code)) {
      return Kind.SERVER_ERROR;
    }
    return Kind.FATAL;
  }

  static String errorCode(S3Exception e) {
    return e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
  }

  /** A short description of the error for messages: HTTP status and S3 code, or the root cause. */
  static String describe(Throwable error) {
    Throwable e = unwrap(error);
    if (e instanceof S3Exception s3) {
      String code = errorCode(s3);
      return "HTTP " + s3.statusCode() + (code == null ? "" : " " + code);
    }
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == e ? e.toString() : e.getClass().getSimpleName() + " caused by " + root;
  }

  static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  private static boolean acquireTimeout(Throwable e) {
    // The Netty client reports a connection pool wait that expired this way; nothing was sent.
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String m = t.getMessage();
      if (m != null && m.contains("Acquire operation took longer")) {
        return true;
      }
    }
    return false;
  }
}
