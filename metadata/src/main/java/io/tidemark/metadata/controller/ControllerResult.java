package io.tidemark.metadata.controller;

import io.tidemark.metadata.record.MetadataRecord;
import java.util.List;

/**
 * What a handler computed: the records to replay (empty for a rejection or a no-op) and the
 * reply. Handlers never change state; {@code replay} of these records does.
 */
public record ControllerResult(List<MetadataRecord> records, ErrorCode code, String message, byte[] body) {
  public ControllerResult {
    records = List.copyOf(records);
  }

  static ControllerResult of(List<MetadataRecord> records, byte[] body) {
    return new ControllerResult(records, ErrorCode.NONE, "", body);
  }

  static ControllerResult rejected(Rejection r) {
    return new ControllerResult(List.of(), r.code, r.getMessage(), new byte[0]);
  }

  public ControllerReply reply(long offset) {
    return new ControllerReply(code, message, body, offset);
  }
}
