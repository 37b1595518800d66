package io.tidemark.registry.schema.protobuf;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Prints a parsed file back as .proto text in one normal form: imports sorted, fields ordered by
 * number, oneofs where their first field falls, maps as {@code map<K, V>}. Options the parser does not
 * keep (custom options) are not printed. Stateless.
 */
final class ProtoPrinter {

  private ProtoPrinter() {}

  static String print(FileDescriptorProto file) {
    StringBuilder out = new StringBuilder();
    boolean proto3 = file.getSyntax().equals("proto3");
    out.append("syntax = \"").append(proto3 ? "proto3" : "proto2").append("\";\n");
    if (file.hasPackage()) {
      out.append("package ").append(file.getPackage()).append(";\n");
    }
    List<String> imports = new ArrayList<>();
    for (int i = 0; i < file.getDependencyCount(); i++) {
      imports.add((file.getPublicDependencyList().contains(i) ? "public " : "") + "\"" + file.getDependency(i) + "\"");
    }
    imports.sort(Comparator.comparing(s -> s.replace("public ", "")));
    if (!imports.isEmpty()) {
      out.append('\n');
      imports.forEach(i -> out.append("import ").append(i).append(";\n"));
    }
    var options = file.getOptions();
    List<String> fileOptions = new ArrayList<>();
    if (options.hasJavaPackage()) {
      fileOptions.add("java_package = " + quote(options.getJavaPackage()));
    }
    if (options.hasJavaOuterClassname()) {
      fileOptions.add("java_outer_classname = " + quote(options.getJavaOuterClassname()));
    }
    if (options.hasJavaMultipleFiles()) {
      fileOptions.add("java_multiple_files = " + options.getJavaMultipleFiles());
    }
    if (options.hasGoPackage()) {
      fileOptions.add("go_package = " + quote(options.getGoPackage()));
    }
    if (options.hasCsharpNamespace()) {
      fileOptions.add("csharp_namespace = " + quote(options.getCsharpNamespace()));
    }
    if (!fileOptions.isEmpty()) {
      out.append('\n');
      fileOptions.forEach(o -> out.append("option ").append(o).append(";\n"));
    }
    for (DescriptorProto message : file.getMessageTypeList()) {
      out.append('\n');
      message(out, message, proto3, "");
    }
    for (EnumDescriptorProto e : file.getEnumTypeList()) {
      out.append('\n');
      enumType(out, e, "");
    }
    for (ServiceDescriptorProto service : file.getServiceList()) {
      out.append('\n');
      service(out, service);
    }
    return out.toString();
  }

  private static void message(StringBuilder out, DescriptorProto message, boolean proto3, String indent) {
    out.append(indent).append("message ").append(message.getName()).append(" {\n");
    String inner = indent + "  ";
    Map<String, DescriptorProto> mapEntries = new HashMap<>();
    for (DescriptorProto nested : message.getNestedTypeList()) {
      if (nested.getOptions().getMapEntry()) {
        mapEntries.put(nested.getName(), nested);
      } else {
        message(out, nested, proto3, inner);
      }
    }
    for (EnumDescriptorProto e : message.getEnumTypeList()) {
      enumType(out, e, inner);
    }
    List<FieldDescriptorProto> fields = new ArrayList<>(message.getFieldList());
    fields.sort(Comparator.comparingInt(FieldDescriptorProto::getNumber));
    Set<Integer> printedOneofs = new HashSet<>();
    for (FieldDescriptorProto field : fields) {
      if (field.hasOneofIndex() && !field.getProto3Optional()) {
        int index = field.getOneofIndex();
        if (printedOneofs.add(index)) {
          out.append(inner).append("oneof ").append(message.getOneofDecl(index).getName()).append(" {\n");
          for (FieldDescriptorProto member : fields) {
            if (member.hasOneofIndex() && member.getOneofIndex() == index && !member.getProto3Optional()) {
              field(out, member, false, proto3, mapEntries, inner + "  ");
            }
          }
          out.append(inner).append("}\n");
        }
      } else {
        field(out, field, true, proto3, mapEntries, inner);
      }
    }
    for (DescriptorProto.ReservedRange range : message.getReservedRangeList()) {
      out.append(inner).append("reserved ").append(range(range.getStart(), range.getEnd() - 1)).append(";\n");
    }
    for (String name : message.getReservedNameList()) {
      out.append(inner).append("reserved ").append(quote(name)).append(";\n");
    }
    for (DescriptorProto.ExtensionRange range : message.getExtensionRangeList()) {
      out.append(inner).append("extensions ").append(range(range.getStart(), range.getEnd() - 1)).append(";\n");
    }
    out.append(indent).append("}\n");
  }

  private static String range(int start, int end) {
    if (start == end) {
      return Integer.toString(start);
    }
    return start + " to " + (end >= 536_870_911 ? "max" : Integer.toString(end));
  }

  private static void field(StringBuilder out, FieldDescriptorProto field, boolean labelled, boolean proto3,
                            Map<String, DescriptorProto> mapEntries, String indent) {
    out.append(indent);
    DescriptorProto entry = field.getLabel() == Label.LABEL_REPEATED ? mapEntries.get(simpleName(field.getTypeName())) : null;
    if (entry != null) {
      out.append("map<").append(typeName(entry.getField(0))).append(", ").append(typeName(entry.getField(1))).append("> ");
    } else {
      if (labelled) {
        if (field.getLabel() == Label.LABEL_REPEATED) {
          out.append("repeated ");
        } else if (field.getLabel() == Label.LABEL_REQUIRED) {
          out.append("required ");
        } else if (!proto3 || field.getProto3Optional()) {
          out.append("optional ");
        }
      }
      out.append(typeName(field)).append(' ');
    }
    out.append(field.getName()).append(" = ").append(field.getNumber());
    List<String> options = new ArrayList<>();
    if (field.hasDefaultValue()) {
      boolean text = field.getType() == Type.TYPE_STRING || field.getType() == Type.TYPE_BYTES;
      options.add("default = " + (text ? quote(field.getDefaultValue()) : field.getDefaultValue()));
    }
    if (field.hasJsonName()) {
      options.add("json_name = " + quote(field.getJsonName()));
    }
    if (field.getOptions().hasPacked()) {
      options.add("packed = " + field.getOptions().getPacked());
    }
    if (field.getOptions().hasDeprecated()) {
      options.add("deprecated = " + field.getOptions().getDeprecated());
    }
    if (!options.isEmpty()) {
      out.append(" [").append(String.join(", ", options)).append(']');
    }
    out.append(";\n");
  }

  private static String simpleName(String typeName) {
    int dot = typeName.lastIndexOf('.');
    return dot < 0 ? typeName : typeName.substring(dot + 1);
  }

  private static String typeName(FieldDescriptorProto field) {
    if (field.hasTypeName()) {
      return field.getTypeName();
    }
    return field.getType().name().substring("TYPE_".length()).toLowerCase(Locale.ROOT);
  }

  private static void enumType(StringBuilder out, EnumDescriptorProto e, String indent) {
    out.append(indent).append("enum ").append(e.getName()).append(" {\n");
    if (e.getOptions().hasAllowAlias()) {
      out.append(indent).append("  option allow_alias = ").append(e.getOptions().getAllowAlias()).append(";\n");
    }
    for (EnumValueDescriptorProto value : e.getValueList()) {
      out.append(indent).append("  ").append(value.getName()).append(" = ").append(value.getNumber()).append(";\n");
    }
    for (EnumDescriptorProto.EnumReservedRange range : e.getReservedRangeList()) {
      out.append(indent).append("  reserved ").append(range.getStart() == range.getEnd()
          ? Integer.toString(range.getStart()) : range.getStart() + " to " + range.getEnd()).append(";\n");
    }
    for (String name : e.getReservedNameList()) {
      out.append(indent).append("  reserved ").append(quote(name)).append(";\n");
    }
    out.append(indent).append("}\n");
  }

  private static void service(StringBuilder out, ServiceDescriptorProto service) {
    out.append("service ").append(service.getName()).append(" {\n");
    for (MethodDescriptorProto method : service.getMethodList()) {
      out.append("  rpc ").append(method.getName()).append(" (").append(method.getClientStreaming() ? "stream " : "")
          .append(method.getInputType()).append(") returns (").append(method.getServerStreaming() ? "stream " : "")
          .append(method.getOutputType()).append(");\n");
    }
    out.append("}\n");
  }

  private static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
