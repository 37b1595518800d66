package io.tidemark.broker.protocol;

/**
 * The request-time quota the {@link RequestDispatcher} asks about every request it times (Kafka's
 * {@code request_percentage}): whether the client has one, and the handling time to record
 * against it. Implementations are thread-safe and cheap when no quota is set.
 */
public interface RequestTimeQuota {

  /** Whether the request's client is under a request-time quota (only then is its handling timed). */
  boolean applies(RequestContext context);

  /** Records {@code nanos} of handling of the request's client; how long to throttle it, in ms (0: within). */
  long record(RequestContext context, long nanos);

  /** No quota: nothing timed. */
  RequestTimeQuota NONE = new RequestTimeQuota() {
    @Override
    public boolean applies(RequestContext context) {
      return false;
    }

    @Override
    public long record(RequestContext context, long nanos) {
      return 0;
    }
  };
}
