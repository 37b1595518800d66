package io.tidemark.registry.schema.protobuf;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.SchemaLimits;
import io.tidemark.registry.schema.protobuf.ProtoTokenizer.Kind;
import io.tidemark.registry.schema.protobuf.ProtoTokenizer.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Parses .proto source (proto2 and proto3) into a {@link FileDescriptorProto}, which
 * {@code Descriptors.FileDescriptor.buildFrom} then links and validates (type names, duplicate
 * numbers, reserved ranges). Covers syntax, package, imports, file options java_package /
 * java_outer_classname / java_multiple_files / go_package, messages with nested messages and enums,
 * fields with labels and options (default, json_name, packed, deprecated), proto3 optional, oneofs,
 * maps, reserved, extensions ranges and services. Custom options and {@code extend} blocks are read
 * and skipped; groups and editions are refused. Single use, not thread-safe.
 */
final class ProtoParser {
  private static final Map<String, Type> SCALARS = Map.ofEntries(
      Map.entry("double", Type.TYPE_DOUBLE), Map.entry("float", Type.TYPE_FLOAT),
      Map.entry("int64", Type.TYPE_INT64), Map.entry("uint64", Type.TYPE_UINT64),
      Map.entry("int32", Type.TYPE_INT32), Map.entry("fixed64", Type.TYPE_FIXED64),
      Map.entry("fixed32", Type.TYPE_FIXED32), Map.entry("bool", Type.TYPE_BOOL),
      Map.entry("string", Type.TYPE_STRING), Map.entry("bytes", Type.TYPE_BYTES),
      Map.entry("uint32", Type.TYPE_UINT32), Map.entry("sfixed32", Type.TYPE_SFIXED32),
      Map.entry("sfixed64", Type.TYPE_SFIXED64), Map.entry("sint32", Type.TYPE_SINT32),
      Map.entry("sint64", Type.TYPE_SINT64));
  private static final int MAX_FIELD_NUMBER = 536_870_911;

  private final ProtoTokenizer tokens;
  private boolean proto3;
  /** Message declarations open around the parser now; bounded by {@link SchemaLimits#MAX_NESTING_DEPTH}. */
  private int depth;

  private ProtoParser(String source) {
    this.tokens = new ProtoTokenizer(source);
  }

  static FileDescriptorProto parse(String fileName, String source) {
    return new ProtoParser(source).file(fileName);
  }

  private FileDescriptorProto file(String fileName) {
    FileDescriptorProto.Builder file = FileDescriptorProto.newBuilder().setName(fileName);
    boolean first = true;
    while (tokens.peek().kind() != Kind.EOF) {
      Token t = tokens.next();
      if (first && t.is("syntax")) {
        expect("=");
        String syntax = string();
        if (!syntax.equals("proto2") && !syntax.equals("proto3")) {
          throw error(t, "unsupported syntax '" + syntax + "'; use proto2 or proto3");
        }
        proto3 = syntax.equals("proto3");
        if (proto3) {
          file.setSyntax("proto3");
        }
        expect(";");
      } else if (t.is("edition")) {
        throw error(t, "protobuf editions are not supported; use syntax = \"proto3\"");
      } else if (t.is("package")) {
        file.setPackage(ident());
        expect(";");
      } else if (t.is("import")) {
        boolean isPublic = false;
        if (tokens.peek().is("public") || tokens.peek().is("weak")) {
          isPublic = tokens.next().is("public");
        }
        String path = string();
        if (isPublic) {
          file.addPublicDependency(file.getDependencyCount());
        }
        file.addDependency(path);
        expect(";");
      } else if (t.is("option")) {
        fileOption(file);
      } else if (t.is("message")) {
        file.addMessageType(message());
      } else if (t.is("enum")) {
        file.addEnumType(enumType());
      } else if (t.is("service")) {
        file.addService(service());
      } else if (t.is("extend")) {
        ident();
        skipBlock();
      } else if (!t.is(";")) {
        throw error(t, "unexpected '" + t.text() + "'");
      }
      first = false;
    }
    return file.build();
  }

  private void fileOption(FileDescriptorProto.Builder file) {
    String name = optionName();
    expect("=");
    Token value = optionValue();
    expect(";");
    var options = file.getOptionsBuilder();
    switch (name) {
      case "java_package" -> options.setJavaPackage(value.text());
      case "java_outer_classname" -> options.setJavaOuterClassname(value.text());
      case "java_multiple_files" -> options.setJavaMultipleFiles(Boolean.parseBoolean(value.text()));
      case "go_package" -> options.setGoPackage(value.text());
      case "csharp_namespace" -> options.setCsharpNamespace(value.text());
      default -> { }
    }
  }

  private DescriptorProto message() {
    Token at = tokens.peek();
    if (++depth > SchemaLimits.MAX_NESTING_DEPTH) {
      throw error(at, "messages nest deeper than " + SchemaLimits.MAX_NESTING_DEPTH
          + " levels; declare the inner messages at the top level instead");
    }
    try {
      return messageBody();
    } finally {
      depth--;
    }
  }

  private DescriptorProto messageBody() {
    DescriptorProto.Builder message = DescriptorProto.newBuilder().setName(ident());
    List<String> syntheticOneofs = new ArrayList<>();
    List<Integer> syntheticFields = new ArrayList<>();
    expect("{");
    while (!tokens.peek().is("}")) {
      Token t = tokens.peek();
      if (t.kind() == Kind.EOF) {
        throw error(t, "message " + message.getName() + " is not closed");
      }
      if (t.is("message")) {
        tokens.next();
        message.addNestedType(message());
      } else if (t.is("enum")) {
        tokens.next();
        message.addEnumType(enumType());
      } else if (t.is("oneof")) {
        tokens.next();
        oneof(message);
      } else if (t.is("option")) {
        tokens.next();
        optionName();
        expect("=");
        optionValue();
        expect(";");
      } else if (t.is("reserved")) {
        tokens.next();
        reserved(message);
      } else if (t.is("extensions")) {
        tokens.next();
        extensions(message);
      } else if (t.is("extend")) {
        tokens.next();
        ident();
        skipBlock();
      } else if (t.is("map")) {
        tokens.next();
        map(message);
      } else if (t.is(";")) {
        tokens.next();
      } else if (t.is("group")) {
        throw error(t, "groups are not supported");
      } else {
        FieldDescriptorProto.Builder field = field(true);
        if (field.getProto3Optional()) {
          syntheticOneofs.add("_" + field.getName());
          syntheticFields.add(message.getFieldCount());
        }
        message.addField(field);
      }
    }
    expect("}");
    int realOneofs = message.getOneofDeclCount();
    for (int i = 0; i < syntheticOneofs.size(); i++) {
      message.addOneofDecl(OneofDescriptorProto.newBuilder().setName(syntheticOneofs.get(i)));
      message.getFieldBuilder(syntheticFields.get(i)).setOneofIndex(realOneofs + i);
    }
    return message.build();
  }

  private static boolean isLabel(Token t) {
    return t.is("optional") || t.is("required") || t.is("repeated");
  }

  private FieldDescriptorProto.Builder field(boolean labelAllowed) {
    Token start = tokens.peek();
    Label label = Label.LABEL_OPTIONAL;
    boolean explicitOptional = false;
    if (labelAllowed && isLabel(start)) {
      String word = tokens.next().text();
      label = switch (word) {
        case "required" -> Label.LABEL_REQUIRED;
        case "repeated" -> Label.LABEL_REPEATED;
        default -> Label.LABEL_OPTIONAL;
      };
      explicitOptional = word.equals("optional");
      if (proto3 && label == Label.LABEL_REQUIRED) {
        throw error(start, "required fields are not allowed in proto3");
      }
    }
    if (tokens.peek().is("group")) {
      throw error(tokens.peek(), "groups are not supported");
    }
    String typeName = ident();
    String name = ident();
    expect("=");
    int number = fieldNumber();
    FieldDescriptorProto.Builder field = FieldDescriptorProto.newBuilder().setName(name).setNumber(number).setLabel(label);
    Type scalar = SCALARS.get(typeName);
    if (scalar != null) {
      field.setType(scalar);
    } else {
      field.setTypeName(typeName);
    }
    if (proto3 && explicitOptional) {
      field.setProto3Optional(true);
    }
    if (tokens.peek().is("[")) {
      fieldOptions(field);
    }
    expect(";");
    return field;
  }

  private void fieldOptions(FieldDescriptorProto.Builder field) {
    expect("[");
    while (true) {
      String name = optionName();
      expect("=");
      Token value = optionValue();
      switch (name) {
        case "default" -> field.setDefaultValue(value.text());
        case "json_name" -> field.setJsonName(value.text());
        case "packed" -> field.getOptionsBuilder().setPacked(Boolean.parseBoolean(value.text()));
        case "deprecated" -> field.getOptionsBuilder().setDeprecated(Boolean.parseBoolean(value.text()));
        default -> { }
      }
      if (tokens.peek().is(",")) {
        tokens.next();
        continue;
      }
      expect("]");
      return;
    }
  }

  private void oneof(DescriptorProto.Builder message) {
    String name = ident();
    int index = message.getOneofDeclCount();
    message.addOneofDecl(OneofDescriptorProto.newBuilder().setName(name));
    expect("{");
    while (!tokens.peek().is("}")) {
      if (tokens.peek().is("option")) {
        tokens.next();
        optionName();
        expect("=");
        optionValue();
        expect(";");
      } else if (tokens.peek().is(";")) {
        tokens.next();
      } else if (tokens.peek().kind() == Kind.EOF) {
        throw error(tokens.peek(), "oneof " + name + " is not closed");
      } else {
        message.addField(field(false).setOneofIndex(index));
      }
    }
    expect("}");
  }

  private void map(DescriptorProto.Builder message) {
    expect("<");
    String keyType = ident();
    expect(",");
    String valueType = ident();
    expect(">");
    String name = ident();
    expect("=");
    int number = fieldNumber();
    String entryName = entryName(name);
    DescriptorProto.Builder entry = DescriptorProto.newBuilder().setName(entryName)
        .setOptions(MessageOptions.newBuilder().setMapEntry(true));
    entry.addField(typed(FieldDescriptorProto.newBuilder().setName("key").setNumber(1).setLabel(Label.LABEL_OPTIONAL), keyType));
    entry.addField(typed(FieldDescriptorProto.newBuilder().setName("value").setNumber(2).setLabel(Label.LABEL_OPTIONAL), valueType));
    message.addNestedType(entry);
    FieldDescriptorProto.Builder field = FieldDescriptorProto.newBuilder().setName(name).setNumber(number)
        .setLabel(Label.LABEL_REPEATED).setType(Type.TYPE_MESSAGE).setTypeName(entryName);
    if (tokens.peek().is("[")) {
      fieldOptions(field);
    }
    expect(";");
    message.addField(field);
  }

  private static FieldDescriptorProto.Builder typed(FieldDescriptorProto.Builder field, String typeName) {
    Type scalar = SCALARS.get(typeName);
    return scalar != null ? field.setType(scalar) : field.setTypeName(typeName);
  }

  private static String entryName(String fieldName) {
    StringBuilder out = new StringBuilder();
    boolean upper = true;
    for (char c : fieldName.toCharArray()) {
      if (c == '_') {
        upper = true;
      } else {
        out.append(upper ? Character.toUpperCase(c) : c);
        upper = false;
      }
    }
    return out.append("Entry").toString();
  }

  private void reserved(DescriptorProto.Builder message) {
    if (tokens.peek().kind() == Kind.STRING) {
      do {
        message.addReservedName(string());
      } while (comma());
    } else {
      do {
        int[] range = range();
        message.addReservedRange(DescriptorProto.ReservedRange.newBuilder().setStart(range[0]).setEnd(range[1] + 1));
      } while (comma());
    }
    expect(";");
  }

  private void extensions(DescriptorProto.Builder message) {
    do {
      int[] range = range();
      message.addExtensionRange(DescriptorProto.ExtensionRange.newBuilder().setStart(range[0]).setEnd(range[1] + 1));
    } while (comma());
    if (tokens.peek().is("[")) {
      skipBracket("[", "]");
    }
    expect(";");
  }

  private int[] range() {
    int start = fieldNumber();
    int end = start;
    if (tokens.peek().is("to")) {
      tokens.next();
      if (tokens.peek().is("max")) {
        tokens.next();
        end = MAX_FIELD_NUMBER;
      } else {
        end = fieldNumber();
      }
    }
    return new int[] {start, end};
  }

  private boolean comma() {
    if (tokens.peek().is(",")) {
      tokens.next();
      return true;
    }
    return false;
  }

  private EnumDescriptorProto enumType() {
    EnumDescriptorProto.Builder e = EnumDescriptorProto.newBuilder().setName(ident());
    expect("{");
    while (!tokens.peek().is("}")) {
      Token t = tokens.next();
      if (t.kind() == Kind.EOF) {
        throw error(t, "enum " + e.getName() + " is not closed");
      }
      if (t.is("option")) {
        String name = optionName();
        expect("=");
        Token value = optionValue();
        if (name.equals("allow_alias")) {
          e.getOptionsBuilder().setAllowAlias(Boolean.parseBoolean(value.text()));
        }
        expect(";");
      } else if (t.is("reserved")) {
        if (tokens.peek().kind() == Kind.STRING) {
          do {
            e.addReservedName(string());
          } while (comma());
        } else {
          do {
            int start = signedInt();
            int end = start;
            if (tokens.peek().is("to")) {
              tokens.next();
              end = tokens.peek().is("max") ? maxToken() : signedInt();
            }
            e.addReservedRange(EnumDescriptorProto.EnumReservedRange.newBuilder().setStart(start).setEnd(end));
          } while (comma());
        }
        expect(";");
      } else if (t.kind() == Kind.IDENT) {
        expect("=");
        int number = signedInt();
        if (tokens.peek().is("[")) {
          skipBracket("[", "]");
        }
        expect(";");
        e.addValue(EnumValueDescriptorProto.newBuilder().setName(t.text()).setNumber(number));
      } else if (!t.is(";")) {
        throw error(t, "unexpected '" + t.text() + "' in enum " + e.getName());
      }
    }
    expect("}");
    return e.build();
  }

  private int maxToken() {
    tokens.next();
    return Integer.MAX_VALUE;
  }

  private ServiceDescriptorProto service() {
    ServiceDescriptorProto.Builder service = ServiceDescriptorProto.newBuilder().setName(ident());
    expect("{");
    while (!tokens.peek().is("}")) {
      Token t = tokens.next();
      if (t.kind() == Kind.EOF) {
        throw error(t, "service " + service.getName() + " is not closed");
      }
      if (t.is("option")) {
        optionName();
        expect("=");
        optionValue();
        expect(";");
      } else if (t.is("rpc")) {
        MethodDescriptorProto.Builder method = MethodDescriptorProto.newBuilder().setName(ident());
        expect("(");
        if (tokens.peek().is("stream")) {
          tokens.next();
          method.setClientStreaming(true);
        }
        method.setInputType(ident());
        expect(")");
        expectWord("returns");
        expect("(");
        if (tokens.peek().is("stream")) {
          tokens.next();
          method.setServerStreaming(true);
        }
        method.setOutputType(ident());
        expect(")");
        if (tokens.peek().is("{")) {
          skipBlock();
        } else {
          expect(";");
        }
        service.addMethod(method);
      } else if (!t.is(";")) {
        throw error(t, "unexpected '" + t.text() + "' in service " + service.getName());
      }
    }
    expect("}");
    return service.build();
  }

  // ---------------------------------------------------------------- small pieces

  private String optionName() {
    StringBuilder name = new StringBuilder();
    if (tokens.peek().is("(")) {
      tokens.next();
      name.append('(').append(ident()).append(')');
      expect(")");
      if (tokens.peek().kind() == Kind.IDENT && tokens.peek().text().startsWith(".")) {
        name.append(tokens.next().text());
      }
    } else {
      name.append(ident());
    }
    return name.toString();
  }

  private Token optionValue() {
    Token t = tokens.peek();
    if (t.is("{")) {
      skipBlock();
      return new Token(Kind.STRING, "", t.line());
    }
    if (t.is("-")) {
      tokens.next();
      Token number = tokens.next();
      return new Token(Kind.NUMBER, "-" + number.text(), number.line());
    }
    if (t.kind() == Kind.STRING) {
      StringBuilder joined = new StringBuilder(tokens.next().text());
      while (tokens.peek().kind() == Kind.STRING) {
        joined.append(tokens.next().text());
      }
      return new Token(Kind.STRING, joined.toString(), t.line());
    }
    if (t.kind() == Kind.IDENT || t.kind() == Kind.NUMBER) {
      return tokens.next();
    }
    throw error(t, "expected an option value but found '" + t.text() + "'");
  }

  private void skipBlock() {
    skipBracket("{", "}");
  }

  private void skipBracket(String open, String close) {
    expect(open);
    int depth = 1;
    while (depth > 0) {
      Token t = tokens.next();
      if (t.kind() == Kind.EOF) {
        throw error(t, "'" + open + "' is not closed");
      }
      if (t.is(open)) {
        depth++;
      } else if (t.is(close)) {
        depth--;
      }
    }
  }

  private int fieldNumber() {
    Token t = tokens.next();
    if (t.kind() != Kind.NUMBER) {
      throw error(t, "expected a field number but found '" + t.text() + "'");
    }
    try {
      int n = Integer.decode(t.text());
      if (n < 1 || n > MAX_FIELD_NUMBER) {
        throw error(t, "field number " + n + " is outside [1, " + MAX_FIELD_NUMBER + "]");
      }
      return n;
    } catch (NumberFormatException e) {
      throw error(t, "'" + t.text() + "' is not a field number");
    }
  }

  private int signedInt() {
    boolean negative = false;
    if (tokens.peek().is("-")) {
      tokens.next();
      negative = true;
    }
    Token t = tokens.next();
    try {
      int n = Integer.decode(t.text());
      return negative ? -n : n;
    } catch (NumberFormatException e) {
      throw error(t, "expected a number but found '" + t.text() + "'");
    }
  }

  private String ident() {
    Token t = tokens.next();
    if (t.kind() != Kind.IDENT) {
      throw error(t, "expected a name but found '" + t.text() + "'");
    }
    return t.text();
  }

  private String string() {
    Token t = tokens.next();
    if (t.kind() != Kind.STRING) {
      throw error(t, "expected a quoted string but found '" + t.text() + "'");
    }
    return t.text();
  }

  private void expect(String symbol) {
    Token t = tokens.next();
    if (!t.is(symbol)) {
      throw error(t, "expected '" + symbol + "' but found '" + t.text() + "'");
    }
  }

  private void expectWord(String word) {
    expect(word);
  }

  private static InvalidSchemaException error(Token at, String message) {
    return new InvalidSchemaException("line " + at.line() + ": " + message);
  }
}
