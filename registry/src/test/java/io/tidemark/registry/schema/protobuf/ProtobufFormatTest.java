package io.tidemark.registry.schema.protobuf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaFormat.ResolvedReference;
import io.tidemark.registry.schema.SchemaReference;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Goal: .proto text parses into linked descriptors, bad files are refused, and the wire-compatibility rules hold. */
class ProtobufFormatTest {
  private final ProtobufFormat format = new ProtobufFormat();

  static final String ORDER = """
      syntax = "proto3";
      package shop.v1;
      import "google/protobuf/timestamp.proto";
      option java_package = "com.acme.shop";

      // an order
      message Order {
        string id = 1;
        int64 amount_cents = 2;
        repeated Line lines = 3;
        map<string, int32> tags = 4;
        optional string note = 5;
        Status status = 6;
        google.protobuf.Timestamp placed_at = 7;
        oneof payment {
          string card = 8;
          string voucher = 9;
        }
        message Line {
          string sku = 1;
          uint32 quantity = 2 [deprecated = true];
        }
        reserved 20 to 25, 30;
        reserved "legacy";
      }
      enum Status {
        STATUS_UNKNOWN = 0;
        STATUS_PAID = 1;
      }
      service Orders {
        rpc Get (Order) returns (Order);
      }
      """;

  private ProtobufSchema parse(String text) {
    return (ProtobufSchema) format.parse(text, List.of(), List.of());
  }

  private List<String> backward(String oldSchema, String newSchema) {
    return parse(newSchema).readerIncompatibilities(parse(oldSchema));
  }

  @Test
  void parsesAFullFileIntoDescriptors() {
    // Goal: every construct of a realistic proto3 file links, and a DynamicMessage can be built from it.
    ProtobufSchema schema = parse(ORDER);
    Descriptor order = schema.firstMessage();
    assertThat(order.getFullName()).isEqualTo("shop.v1.Order");
    assertThat(order.findFieldByName("tags").isMapField()).isTrue();
    assertThat(order.findFieldByName("note").hasPresence()).isTrue();
    assertThat(order.findFieldByName("status").getEnumType().getFullName()).isEqualTo("shop.v1.Status");
    assertThat(order.findFieldByName("placed_at").getMessageType().getFullName()).isEqualTo("google.protobuf.Timestamp");
    assertThat(order.getRealOneofs()).hasSize(1);
    assertThat(schema.descriptor().getServices()).hasSize(1);
    DynamicMessage message = DynamicMessage.newBuilder(order).setField(order.findFieldByName("id"), "o-1").build();
    assertThat(message.toByteArray()).isNotEmpty();
  }

  @Test
  void normalizedFormReparsesToTheSameDescriptor() {
    // Goal: the printed normal form is valid .proto with the same structure; whitespace and order do not matter.
    ParsedSchema normalized = parse(ORDER).normalize();
    ProtobufSchema reparsed = parse(normalized.canonical());
    ProtobufSchema original = parse(ORDER);
    assertThat(reparsed.normalize().canonical()).isEqualTo(normalized.canonical());
    assertThat(reparsed.readerIncompatibilities(original)).isEmpty();
    assertThat(original.readerIncompatibilities(reparsed)).isEmpty();
    assertThat(reparsed.firstMessage().getFields()).extracting(f -> f.getNumber() + ":" + f.getName() + ":" + f.getType())
        .containsExactlyElementsOf(original.firstMessage().getFields().stream()
            .map(f -> f.getNumber() + ":" + f.getName() + ":" + f.getType()).toList());
    assertThat(normalized.canonical()).contains("map<string, int32> tags = 4;", "optional string note = 5;", "oneof payment {",
        "reserved 20 to 25;", "option java_package = \"com.acme.shop\";");
    String reordered = "syntax = \"proto3\"; message M { int32 b = 2; string a = 1; }";
    String ordered = "syntax = \"proto3\";\nmessage M {\n  string a = 1;\n  int32 b = 2;\n}";
    assertThat(parse(reordered).normalize().canonical()).isEqualTo(parse(ordered).normalize().canonical());
  }

  @Test
  void invalidFilesAreRefused() {
    // Goal: syntax errors, unknown types, duplicate numbers and unresolved imports are invalid schemas.
    assertThatThrownBy(() -> parse("syntax = \"proto3\"; message M { string a = 1 }")).isInstanceOf(InvalidSchemaException.class)
        .hasMessageContaining("line 1");
    assertThatThrownBy(() -> parse("syntax = \"proto3\"; message M { Missing a = 1; }")).isInstanceOf(InvalidSchemaException.class);
    assertThatThrownBy(() -> parse("syntax = \"proto3\"; message M { string a = 1; int32 b = 1; }")).isInstanceOf(InvalidSchemaException.class);
    assertThatThrownBy(() -> parse("syntax = \"proto3\"; import \"other.proto\"; message M { Other a = 1; }"))
        .isInstanceOf(InvalidSchemaException.class).hasMessageContaining("other.proto");
    assertThatThrownBy(() -> parse("syntax = \"proto3\"; message M { required string a = 1; }")).isInstanceOf(InvalidSchemaException.class);
    assertThatThrownBy(() -> parse("message M { string a = 0; }")).isInstanceOf(InvalidSchemaException.class);
  }

  @Test
  void importsResolveThroughReferences() {
    // Goal: an import names a referenced schema, whose types the importing file can use.
    String customer = "syntax = \"proto3\"; package crm; message Customer { string name = 1; }";
    String order = "syntax = \"proto3\"; package shop; import \"crm/customer.proto\"; message Order { crm.Customer buyer = 1; }";
    ProtobufSchema parsed = (ProtobufSchema) format.parse(order, List.of(new SchemaReference("crm/customer.proto", "customer", 1)),
        List.of(new ResolvedReference("crm/customer.proto", customer)));
    assertThat(parsed.firstMessage().findFieldByName("buyer").getMessageType().getFullName()).isEqualTo("crm.Customer");
  }

  @Test
  void wireCompatibleChangesPass() {
    // Goal: adding/removing fields, renames and same-wire-group type changes are compatible.
    String v1 = "syntax = \"proto3\"; message M { int32 a = 1; string b = 2; }";
    assertThat(backward(v1, "syntax = \"proto3\"; message M { int32 a = 1; string b = 2; bool c = 3; }")).isEmpty();
    assertThat(backward(v1, "syntax = \"proto3\"; message M { int32 a = 1; }")).isEmpty();
    assertThat(backward(v1, "syntax = \"proto3\"; message M { int64 renamed = 1; bytes b = 2; }")).isEmpty();
    assertThat(backward(v1, "syntax = \"proto3\"; message M { repeated int32 a = 1; string b = 2; }")).isEmpty();
  }

  @Test
  void wireIncompatibleChangesFail() {
    // Goal: number reuse with another wire type, named type changes, package change, removed messages,
    // new required fields and fields moved into a oneof are each reported.
    String v1 = "syntax = \"proto3\"; package p; message M { int32 a = 1; string b = 2; N n = 3; } message N { int32 x = 1; }";
    assertThat(backward(v1, "syntax = \"proto3\"; package p; message M { string a = 1; string b = 2; N n = 3; } message N { int32 x = 1; }"))
        .anyMatch(m -> m.contains("FIELD_SCALAR_KIND_CHANGED"));
    assertThat(backward(v1, "syntax = \"proto3\"; package p; message M { int32 a = 1; string b = 2; O n = 3; } message N { int32 x = 1; } message O { int32 x = 1; }"))
        .anyMatch(m -> m.contains("FIELD_NAMED_TYPE_CHANGED"));
    assertThat(backward(v1, "syntax = \"proto3\"; package p; message M { int32 a = 1; N b = 2; N n = 3; } message N { int32 x = 1; }"))
        .anyMatch(m -> m.contains("FIELD_KIND_CHANGED"));
    assertThat(backward(v1, "syntax = \"proto3\"; package q; message M { int32 a = 1; string b = 2; N n = 3; } message N { int32 x = 1; }"))
        .anyMatch(m -> m.contains("PACKAGE_CHANGED"));
    assertThat(backward(v1, "syntax = \"proto3\"; package p; message M { int32 a = 1; string b = 2; }"))
        .anyMatch(m -> m.contains("MESSAGE_REMOVED"));
    assertThat(backward(v1, "syntax = \"proto3\"; package p; message M { oneof o { int32 a = 1; string b = 2; } N n = 3; } message N { int32 x = 1; }"))
        .anyMatch(m -> m.contains("MULTIPLE_FIELDS_MOVED_TO_ONEOF"));
    String p2 = "syntax = \"proto2\"; message M { optional int32 a = 1; }";
    assertThat(backward(p2, "syntax = \"proto2\"; message M { optional int32 a = 1; required string b = 2; }"))
        .anyMatch(m -> m.contains("REQUIRED_FIELD_ADDED"));
  }
}
