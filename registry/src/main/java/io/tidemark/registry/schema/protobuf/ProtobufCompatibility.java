package io.tidemark.registry.schema.protobuf;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor.Type;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Protobuf evolution rules by wire compatibility, for a reader and a writer file: fields match by
 * number. Compatible: adding or removing optional fields, renaming fields, changing between types of
 * one wire group (int32/uint32/int64/uint64/bool/enum; sint32/sint64; fixed32/sfixed32;
 * fixed64/sfixed64; string/bytes), singular to repeated for scalars, adding enum values. Incompatible:
 * package change, a writer message missing from the reader, a field number reused with a type of
 * another wire group or another message/enum type, a required field the writer does not have,
 * several existing fields moved into one oneof, a field moved into an existing oneof, a message
 * field's label changed. Stateless.
 */
final class ProtobufCompatibility {

  private ProtobufCompatibility() {}

  static List<String> check(FileDescriptor reader, FileDescriptor writer) {
    List<String> messages = new ArrayList<>();
    if (!reader.getPackage().equals(writer.getPackage())) {
      report(messages, "PACKAGE_CHANGED", "#", "package changed from '" + writer.getPackage() + "' to '" + reader.getPackage() + "'");
    }
    Map<String, Descriptor> readerMessages = new HashMap<>();
    reader.getMessageTypes().forEach(m -> collect(m, readerMessages));
    Map<String, Descriptor> writerMessages = new LinkedHashMap<>();
    writer.getMessageTypes().forEach(m -> collect(m, writerMessages));
    for (Descriptor w : writerMessages.values()) {
      String relative = relativeName(w, writer.getPackage());
      Descriptor r = readerMessages.get(relative);
      if (r == null) {
        report(messages, "MESSAGE_REMOVED", "#/" + relative, "message " + relative + " was removed");
      } else {
        compareMessage(r, w, "#/" + relative, messages);
      }
    }
    return messages;
  }

  private static void collect(Descriptor message, Map<String, Descriptor> out) {
    out.put(relativeName(message, message.getFile().getPackage()), message);
    message.getNestedTypes().forEach(n -> collect(n, out));
  }

  private static String relativeName(Descriptor message, String pkg) {
    String full = message.getFullName();
    return pkg.isEmpty() ? full : full.substring(pkg.length() + 1);
  }

  private static void compareMessage(Descriptor r, Descriptor w, String path, List<String> messages) {
    Map<OneofDescriptor, Integer> movedIntoOneof = new HashMap<>();
    for (FieldDescriptor wf : w.getFields()) {
      FieldDescriptor rf = r.findFieldByNumber(wf.getNumber());
      if (rf == null) {
        continue;
      }
      String at = path + "/" + wf.getNumber();
      compareField(rf, wf, at, messages);
      OneofDescriptor rOneof = rf.getRealContainingOneof();
      OneofDescriptor wOneof = wf.getRealContainingOneof();
      if (rOneof != null && wOneof == null) {
        movedIntoOneof.merge(rOneof, 1, Integer::sum);
        boolean existing = rOneof.getFields().stream().anyMatch(other -> other != rf
            && w.findFieldByNumber(other.getNumber()) != null
            && w.findFieldByNumber(other.getNumber()).getRealContainingOneof() != null);
        if (existing) {
          report(messages, "FIELD_MOVED_TO_EXISTING_ONEOF", at, "field " + rf.getName() + " moved into existing oneof " + rOneof.getName());
        }
      }
    }
    movedIntoOneof.forEach((oneof, count) -> {
      if (count > 1) {
        report(messages, "MULTIPLE_FIELDS_MOVED_TO_ONEOF", path, count + " existing fields moved into oneof " + oneof.getName());
      }
    });
    for (FieldDescriptor rf : r.getFields()) {
      if (rf.isRequired() && w.findFieldByNumber(rf.getNumber()) == null) {
        report(messages, "REQUIRED_FIELD_ADDED", path + "/" + rf.getNumber(), "required field " + rf.getName()
            + " is missing from data written with the old schema");
      }
    }
  }

  private static void compareField(FieldDescriptor rf, FieldDescriptor wf, String at, List<String> messages) {
    int rGroup = wireGroup(rf.getType());
    int wGroup = wireGroup(wf.getType());
    if (rGroup != wGroup) {
      boolean message = rf.getType() == Type.MESSAGE || wf.getType() == Type.MESSAGE
          || rf.getType() == Type.GROUP || wf.getType() == Type.GROUP;
      report(messages, message ? "FIELD_KIND_CHANGED" : "FIELD_SCALAR_KIND_CHANGED", at,
          "field " + wf.getNumber() + " changed from " + describe(wf) + " to " + describe(rf));
      return;
    }
    if (rf.getType() == Type.MESSAGE && wf.getType() == Type.MESSAGE) {
      if (rf.isMapField() && wf.isMapField()) {
        compareField(rf.getMessageType().findFieldByNumber(1), wf.getMessageType().findFieldByNumber(1), at + "/key", messages);
        compareField(rf.getMessageType().findFieldByNumber(2), wf.getMessageType().findFieldByNumber(2), at + "/value", messages);
        return;
      }
      String rName = relativeName(rf.getMessageType(), rf.getFile().getPackage());
      String wName = relativeName(wf.getMessageType(), wf.getFile().getPackage());
      if (!rName.equals(wName)) {
        report(messages, "FIELD_NAMED_TYPE_CHANGED", at, "field " + wf.getNumber() + " changed type from " + wName + " to " + rName);
      }
    }
    if (rf.getType() == Type.ENUM && wf.getType() == Type.ENUM
        && !rf.getEnumType().getName().equals(wf.getEnumType().getName())) {
      report(messages, "FIELD_NAMED_TYPE_CHANGED", at, "field " + wf.getNumber() + " changed enum type from "
          + wf.getEnumType().getName() + " to " + rf.getEnumType().getName());
    }
    if (rf.isRepeated() != wf.isRepeated() && (rf.getType() == Type.MESSAGE || rf.isMapField() || wf.isMapField())) {
      report(messages, "FIELD_LABEL_CHANGED", at, "message field " + wf.getNumber() + " changed between singular and repeated");
    }
  }

  private static String describe(FieldDescriptor f) {
    return switch (f.getType()) {
      case MESSAGE -> f.getMessageType().getFullName();
      case ENUM -> "enum " + f.getEnumType().getFullName();
      default -> f.getType().name().toLowerCase(java.util.Locale.ROOT);
    };
  }

  /** Types that read each other's encoded values share a group. */
  private static int wireGroup(Type type) {
    return switch (type) {
      case INT32, UINT32, INT64, UINT64, BOOL, ENUM -> 1;
      case SINT32, SINT64 -> 2;
      case FIXED32, SFIXED32 -> 3;
      case FIXED64, SFIXED64 -> 4;
      case FLOAT -> 5;
      case DOUBLE -> 6;
      case STRING, BYTES -> 7;
      case MESSAGE -> 8;
      case GROUP -> 9;
    };
  }

  private static void report(List<String> messages, String type, String path, String description) {
    messages.add("{errorType:'" + type + "', description:'" + description + "', path:'" + path + "'}");
  }
}
