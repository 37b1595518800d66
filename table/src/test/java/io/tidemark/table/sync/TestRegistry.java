package io.tidemark.table.sync;

import com.google.protobuf.DynamicMessage;
import io.tidemark.registry.RegistryConfig;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.client.SchemaRegistryClient;
import io.tidemark.registry.client.WireFormat;
import io.tidemark.registry.http.RegistryHttpServer;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.store.MemorySchemaStore;
import io.tidemark.table.convert.RegistrySchemas;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;

/**
 * A real schema registry (in-memory store) behind its REST server on an ephemeral port, the
 * registry client over HTTP, and the table's {@link RegistrySchemas} on a test clock; plus the
 * encoders producers use (Confluent framing).
 */
final class TestRegistry implements AutoCloseable {

  final SchemaRegistry registry;
  final RegistryHttpServer server;
  final SchemaRegistryClient client;
  final AtomicLong clockMs = new AtomicLong(1_000_000);
  final RegistrySchemas schemas;

  TestRegistry() {
    RegistryConfig config = RegistryConfig.defaults(0);
    registry = new SchemaRegistry(config, new MemorySchemaStore());
    registry.start();
    // the tests register incompatible versions on purpose (the table must cope with what producers send)
    registry.setCompatibility(null, "NONE");
    server = new RegistryHttpServer(registry, config).start();
    client = new SchemaRegistryClient(URI.create("http://localhost:" + server.port()), 100);
    schemas = new RegistrySchemas(client, clockMs::get, 10_000, 16);
  }

  int register(String subject, SchemaType type, String schema, SchemaReference... refs) {
    return client.register(subject, type, schema, List.of(refs));
  }

  static byte[] avro(Schema schema, Map<String, Object> fields) {
    GenericData.Record r = new GenericData.Record(schema);
    fields.forEach(r::put);
    return avroDatum(schema, r);
  }

  /** Avro binary of any datum (a record, or a primitive for a primitive schema). */
  static byte[] avroDatum(Schema schema, Object datum) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
    try {
      new GenericDatumWriter<Object>(schema).write(datum, enc);
      enc.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  static byte[] framedAvro(int id, Schema schema, Map<String, Object> fields) {
    return WireFormat.frame(id, avro(schema, fields));
  }

  /** Confluent Protobuf framing: the message-index list as zig-zag varints (a lone 0 for [0]), then the message. */
  static byte[] framedProtobuf(int id, List<Integer> messageIndexes, DynamicMessage message) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    if (messageIndexes.equals(List.of(0))) {
      out.write(0);
    } else {
      zigZag(out, messageIndexes.size());
      messageIndexes.forEach(i -> zigZag(out, i));
    }
    out.writeBytes(message.toByteArray());
    return WireFormat.frame(id, out.toByteArray());
  }

  private static void zigZag(ByteArrayOutputStream out, int v) {
    int z = (v << 1) ^ (v >> 31);
    while ((z & ~0x7f) != 0) {
      out.write((z & 0x7f) | 0x80);
      z >>>= 7;
    }
    out.write(z);
  }

  @Override
  public void close() {
    server.close();
    registry.close();
  }
}
