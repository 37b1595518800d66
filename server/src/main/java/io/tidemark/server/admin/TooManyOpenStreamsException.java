package io.tidemark.server.admin;

/** The stream admin API already holds its configured maximum of open streams; nothing was opened. */
final class TooManyOpenStreamsException extends RuntimeException {

  TooManyOpenStreamsException(int max) {
    super("the stream admin API already holds " + max + " open streams (admin.max.open.streams); raise it or use fewer streams");
  }
}
