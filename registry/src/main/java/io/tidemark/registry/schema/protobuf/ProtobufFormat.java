package io.tidemark.registry.schema.protobuf;

import com.google.protobuf.AnyProto;
import com.google.protobuf.ApiProto;
import com.google.protobuf.DescriptorProtos;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DurationProto;
import com.google.protobuf.EmptyProto;
import com.google.protobuf.FieldMaskProto;
import com.google.protobuf.SourceContextProto;
import com.google.protobuf.StructProto;
import com.google.protobuf.TimestampProto;
import com.google.protobuf.TypeProto;
import com.google.protobuf.WrappersProto;
import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaFormat;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Protobuf schemas as .proto text. The text is parsed by {@link ProtoParser} into a
 * {@code FileDescriptorProto} and linked with protobuf-java's {@code FileDescriptor.buildFrom}, which
 * resolves type names and validates the file; imports resolve to referenced schemas (by import path)
 * or to the well-known types shipped with protobuf-java. The resulting descriptor serves
 * {@code DynamicMessage} decoding (table topics) and the compatibility rules in
 * {@link ProtobufCompatibility}.
 *
 * <p>Why a parser of our own: protobuf-java reads descriptors, not .proto text, and Square's
 * wire-schema would bring the Kotlin/okio runtime for a grammar this small.
 */
public final class ProtobufFormat implements SchemaFormat {
  private static final Map<String, FileDescriptor> WELL_KNOWN = Map.ofEntries(
      Map.entry("google/protobuf/any.proto", AnyProto.getDescriptor()),
      Map.entry("google/protobuf/api.proto", ApiProto.getDescriptor()),
      Map.entry("google/protobuf/descriptor.proto", DescriptorProtos.getDescriptor()),
      Map.entry("google/protobuf/duration.proto", DurationProto.getDescriptor()),
      Map.entry("google/protobuf/empty.proto", EmptyProto.getDescriptor()),
      Map.entry("google/protobuf/field_mask.proto", FieldMaskProto.getDescriptor()),
      Map.entry("google/protobuf/source_context.proto", SourceContextProto.getDescriptor()),
      Map.entry("google/protobuf/struct.proto", StructProto.getDescriptor()),
      Map.entry("google/protobuf/timestamp.proto", TimestampProto.getDescriptor()),
      Map.entry("google/protobuf/type.proto", TypeProto.getDescriptor()),
      Map.entry("google/protobuf/wrappers.proto", WrappersProto.getDescriptor()));

  @Override
  public SchemaType type() {
    return SchemaType.PROTOBUF;
  }

  @Override
  public ParsedSchema parse(String text, List<SchemaReference> references, List<ResolvedReference> dependencies) {
    Map<String, FileDescriptor> built = new HashMap<>();
    for (ResolvedReference dependency : dependencies) {
      if (!built.containsKey(dependency.name())) {
        built.put(dependency.name(), build(ProtoParser.parse(dependency.name(), dependency.schema()), built));
      }
    }
    String name = "schema.proto";
    while (built.containsKey(name)) {
      name = "_" + name;
    }
    FileDescriptorProto proto = ProtoParser.parse(name, text);
    return new ProtobufSchema(build(proto, built), proto, text.strip(), references);
  }

  private static FileDescriptor build(FileDescriptorProto proto, Map<String, FileDescriptor> available) {
    List<FileDescriptor> dependencies = new ArrayList<>();
    for (String path : proto.getDependencyList()) {
      FileDescriptor dependency = available.get(path);
      if (dependency == null) {
        dependency = WELL_KNOWN.get(path);
      }
      if (dependency == null) {
        throw new InvalidSchemaException("import \"" + path + "\" of " + proto.getName()
            + " cannot be resolved: register it and pass a reference named \"" + path + "\"");
      }
      dependencies.add(dependency);
    }
    try {
      return FileDescriptor.buildFrom(proto, dependencies.toArray(FileDescriptor[]::new));
    } catch (DescriptorValidationException e) {
      throw new InvalidSchemaException("Invalid Protobuf schema: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      throw new InvalidSchemaException("Invalid Protobuf schema: " + e.getMessage(), e);
    }
  }
}
