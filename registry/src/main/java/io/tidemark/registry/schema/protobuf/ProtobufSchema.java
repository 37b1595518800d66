package io.tidemark.registry.schema.protobuf;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.List;

/**
 * A linked Protobuf schema. The stored text is the submitted text (trimmed); the normalized form is
 * printed from the descriptor (fields by number, imports sorted), so equivalent files normalize
 * alike. Immutable.
 */
public final class ProtobufSchema implements ParsedSchema {
  private final FileDescriptor descriptor;
  private final FileDescriptorProto proto;
  private final String canonical;
  private final List<SchemaReference> references;

  ProtobufSchema(FileDescriptor descriptor, FileDescriptorProto proto, String canonical, List<SchemaReference> references) {
    this.descriptor = descriptor;
    this.proto = proto;
    this.canonical = canonical;
    this.references = List.copyOf(references);
  }

  /** The linked file, for {@code DynamicMessage}. */
  public FileDescriptor descriptor() {
    return descriptor;
  }

  /** The first message of the file: the record type Confluent serializers use by default. */
  public Descriptor firstMessage() {
    return descriptor.getMessageTypes().isEmpty() ? null : descriptor.getMessageTypes().get(0);
  }

  @Override
  public SchemaType type() {
    return SchemaType.PROTOBUF;
  }

  @Override
  public String canonical() {
    return canonical;
  }

  @Override
  public List<SchemaReference> references() {
    return references;
  }

  @Override
  public ParsedSchema normalize() {
    return new ProtobufSchema(descriptor, proto, ProtoPrinter.print(proto), references);
  }

  @Override
  public List<String> readerIncompatibilities(ParsedSchema writer) {
    return ProtobufCompatibility.check(descriptor, ((ProtobufSchema) writer).descriptor);
  }
}
