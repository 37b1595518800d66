package io.tidemark.metadata.controller;

import io.tidemark.stream.api.OffsetOutOfRangeException;
import io.tidemark.stream.api.StreamFencedException;
import io.tidemark.stream.api.StreamNotFoundException;
import io.tidemark.stream.metadata.InvalidCommitException;
import io.tidemark.stream.metadata.MetadataException;
import io.tidemark.stream.metadata.NodeFencedException;

/**
 * Outcomes of a controller request, the one place that maps them to the storage engine's named
 * exceptions. Every code but {@link #NONE} means the request changed nothing.
 */
public enum ErrorCode {
  NONE,
  NODE_FENCED,
  STREAM_FENCED,
  STREAM_NOT_FOUND,
  INVALID_COMMIT,
  OFFSET_OUT_OF_RANGE,
  INVALID_REQUEST,
  /** An argument is out of its allowed range (a count, a time-to-live). */
  INVALID_ARGUMENT,
  NOT_FOUND,
  ALREADY_EXISTS,
  /** The node cannot serve (for example it stopped on corrupt metadata). */
  UNAVAILABLE,
  /**
   * A stream is still open on another node: its holder must close it (a move's source flushing its
   * data) or the failover of a dead holder must close it first. Retriable.
   */
  STREAM_NOT_CLOSED;

  /** The named exception for this outcome (never called for NONE). */
  public RuntimeException toException(String message) {
    return switch (this) {
      case NODE_FENCED -> new NodeFencedException(message);
      case STREAM_FENCED -> new StreamFencedException(message);
      case STREAM_NOT_FOUND -> new StreamNotFoundException(message);
      case INVALID_COMMIT -> new InvalidCommitException(message);
      case OFFSET_OUT_OF_RANGE -> new OffsetOutOfRangeException(message);
      case INVALID_ARGUMENT -> new IllegalArgumentException(message);
      case NOT_FOUND -> new NotFoundException(message);
      case ALREADY_EXISTS -> new AlreadyExistsException(message);
      case UNAVAILABLE -> new ControllerUnavailableException(message);
      case STREAM_NOT_CLOSED -> new StreamNotClosedException(message);
      case INVALID_REQUEST, NONE -> new MetadataException(message);
    };
  }

  static ErrorCode of(int code) {
    ErrorCode[] all = values();
    return code >= 0 && code < all.length ? all[code] : UNAVAILABLE;
  }

  /** A topic, partition or other named entity does not exist. */
  public static class NotFoundException extends MetadataException {
    public NotFoundException(String message) {
      super(message);
    }
  }

  /** The entity to create exists already. */
  public static class AlreadyExistsException extends MetadataException {
    public AlreadyExistsException(String message) {
      super(message);
    }
  }

  /** The stream to open is still open on another node; retry once that node closed it (or failed over). */
  public static class StreamNotClosedException extends MetadataException {
    public StreamNotClosedException(String message) {
      super(message);
    }
  }

  /** No controller could answer (no leader within the retry bound, or the node stopped). */
  public static class ControllerUnavailableException extends MetadataException {
    public ControllerUnavailableException(String message) {
      super(message);
    }
  }
}
