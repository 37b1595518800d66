package io.tidemark.metadata.controller;

import io.tidemark.metadata.image.BrokerEntry;
import io.tidemark.metadata.image.MetadataImage;
import io.tidemark.metadata.record.MetadataRecord.Stream;
import io.tidemark.stream.metadata.NodeRef;

/** Shared validations; each throws a {@link Rejection} naming what is wrong. Stateless. */
final class Checks {
  private Checks() {}

  /** The node is registered with exactly this epoch and not fenced. */
  static BrokerEntry requireActive(MetadataImage image, NodeRef node) {
    BrokerEntry b = requireCurrent(image, node);
    if (b.fenced()) {
      throw new Rejection(ErrorCode.NODE_FENCED, "node " + node.nodeId() + " epoch " + node.nodeEpoch()
          + " is fenced (missed heartbeats); it must heartbeat or register again");
    }
    return b;
  }

  /** The node is registered with exactly this epoch (fenced or not). */
  static BrokerEntry requireCurrent(MetadataImage image, NodeRef node) {
    BrokerEntry b = image.broker(node.nodeId());
    if (b == null) {
      throw new Rejection(ErrorCode.NODE_FENCED, "node " + node.nodeId() + " is not registered");
    }
    if (b.nodeEpoch() != node.nodeEpoch()) {
      throw new Rejection(ErrorCode.NODE_FENCED, "node " + node.nodeId() + " epoch " + node.nodeEpoch()
          + " is not current (current epoch " + b.nodeEpoch() + "); this node instance was replaced and must stop");
    }
    return b;
  }

  static Stream requireStream(MetadataImage image, long streamId) {
    Stream s = image.stream(streamId);
    if (s == null) {
      throw new Rejection(ErrorCode.STREAM_NOT_FOUND, "stream " + streamId + " does not exist");
    }
    return s;
  }

  /** The request carries the stream's current epoch. */
  static void requireEpoch(Stream s, long epoch) {
    if (epoch != s.epoch()) {
      throw new Rejection(ErrorCode.STREAM_FENCED, "stream " + s.streamId() + " epoch " + epoch
          + " is not the current epoch " + s.epoch());
    }
  }

  static void require(boolean condition, ErrorCode code, String message) {
    if (!condition) {
      throw new Rejection(code, message);
    }
  }
}
