package io.tidemark.broker.protocol;

import io.tidemark.broker.record.BatchRejectedException;
import io.tidemark.broker.partition.PartitionException;
import io.tidemark.broker.topic.InvalidTopicConfigException;
import io.tidemark.broker.topic.TopicException;
import io.tidemark.stream.api.OffsetOutOfRangeException;
import io.tidemark.stream.api.StreamClosedException;
import io.tidemark.stream.api.StreamException;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamNotFoundException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;

/**
 * The one place where domain errors (stream, partition, record, topic, group) become Kafka error
 * codes. Handlers throw domain exceptions; they ask here for the code and message to send.
 * Stateless.
 */
public final class ErrorMapping {

  private ErrorMapping() {}

  /** The root cause behind future wrappers. */
  public static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  public static Errors toErrors(Throwable t) {
    Throwable c = unwrap(t);
    if (c instanceof ApiException) {
      return Errors.forException(c);
    }
    if (c instanceof BatchRejectedException b) {
      return switch (b.reason()) {
        case CORRUPT -> Errors.CORRUPT_MESSAGE;
        case INVALID -> Errors.INVALID_RECORD;
        case TOO_LARGE -> Errors.MESSAGE_TOO_LARGE;
        case UNSUPPORTED_COMPRESSION -> Errors.UNSUPPORTED_COMPRESSION_TYPE;
      };
    }
    if (c instanceof PartitionException p) {
      return switch (p.outcome()) {
        case NOT_LEADER -> Errors.NOT_LEADER_OR_FOLLOWER;
        case OUT_OF_ORDER_SEQUENCE -> Errors.OUT_OF_ORDER_SEQUENCE_NUMBER;
        case INVALID_PRODUCER_EPOCH -> Errors.INVALID_PRODUCER_EPOCH;
        case STORAGE_ERROR -> Errors.KAFKA_STORAGE_ERROR;
        case BUSY -> Errors.REQUEST_TIMED_OUT; // retriable, and the message says it was refused, not lost
        case OFFSET_OUT_OF_RANGE -> Errors.OFFSET_OUT_OF_RANGE;
        case INVALID_REQUEST -> Errors.INVALID_REQUEST;
        case COORDINATOR_FENCED -> Errors.TRANSACTION_COORDINATOR_FENCED;
        case INVALID_TXN_STATE -> Errors.INVALID_TXN_STATE;
        case CORRUPT_DATA -> Errors.CORRUPT_MESSAGE; // what Kafka answers for a corrupt log segment
      };
    }
    if (c instanceof TopicException te) {
      return switch (te.outcome()) {
        case ALREADY_EXISTS -> Errors.TOPIC_ALREADY_EXISTS;
        case UNKNOWN_TOPIC -> Errors.UNKNOWN_TOPIC_OR_PARTITION;
        case INVALID_NAME -> Errors.INVALID_TOPIC_EXCEPTION;
        case INVALID_PARTITIONS -> Errors.INVALID_PARTITIONS;
        case INVALID_REPLICATION_FACTOR -> Errors.INVALID_REPLICATION_FACTOR;
        case INTERNAL_TOPIC -> Errors.INVALID_TOPIC_EXCEPTION;
      };
    }
    if (c instanceof InvalidTopicConfigException) {
      return Errors.INVALID_CONFIG;
    }
    if (c instanceof OffsetOutOfRangeException) {
      return Errors.OFFSET_OUT_OF_RANGE;
    }
    if (c instanceof StreamFencedException || c instanceof StreamClosedException || c instanceof StreamNotFoundException) {
      return Errors.NOT_LEADER_OR_FOLLOWER;
    }
    if (c instanceof StreamException) {
      return Errors.KAFKA_STORAGE_ERROR;
    }
    if (c instanceof io.tidemark.broker.group.GroupException g) {
      return g.error();
    }
    if (c instanceof io.tidemark.broker.transaction.TransactionException te) {
      return te.error();
    }
    return Errors.UNKNOWN_SERVER_ERROR;
  }

  /** A Kafka exception carrying the mapped code and the domain message (for getErrorResponse). */
  public static ApiException toApiException(Throwable t) {
    Throwable c = unwrap(t);
    if (c instanceof ApiException a) {
      return a;
    }
    return toErrors(c).exception(message(c));
  }

  public static String message(Throwable t) {
    Throwable c = unwrap(t);
    return c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
  }
}
