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

  /**
   * One entry applying many requests, each checked by {@code one} against the same image and with an
   * outcome of its own: a rejected one adds no record. The body: the count, then per request its
   * encoded {@link ControllerReply} (offset 0).
   */
  static <T> ControllerResult eachWithOwnOutcome(List<T> requests, java.util.function.Function<T, ControllerResult> one) {
    List<MetadataRecord> records = new java.util.ArrayList<>();
    io.tidemark.metadata.record.FieldWriter body =
        new io.tidemark.metadata.record.FieldWriter(requests.size() * 80 + 4).writeInt(requests.size());
    for (T request : requests) {
      ControllerResult result;
      try {
        result = one.apply(request);
      } catch (Rejection r) {
        result = rejected(r);
      }
      records.addAll(result.records());
      body.writeBytes(result.reply(0).encode());
    }
    return of(records, body.toByteArray());
  }

  static ControllerResult rejected(Rejection r) {
    return new ControllerResult(List.of(), r.code, r.getMessage(), new byte[0]);
  }

  public ControllerReply reply(long offset) {
    return new ControllerReply(code, message, body, offset);
  }
}
