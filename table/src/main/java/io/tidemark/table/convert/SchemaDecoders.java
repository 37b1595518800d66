package io.tidemark.table.convert;

import com.google.protobuf.Descriptors.Descriptor;
import io.tidemark.registry.client.WireFormat;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.avro.AvroSchema;
import io.tidemark.registry.schema.json.JsonSchemaDocument;
import io.tidemark.registry.schema.protobuf.ProtobufSchema;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Finds the {@link ValueDecoder} of a record value: by the schema id in its Confluent framing
 * ({@code by_schema_id}; for Protobuf also the message-index list after the id) or by a subject's
 * latest version ({@code by_latest_schema}; for Protobuf the message named by
 * {@code messageFullName}, else the file's first message). Decoders are cached per schema id, at
 * most {@link #MAX_SCHEMAS} (least recently used out). Thread-safe: the cache is guarded by its
 * monitor; schema lookups run outside it.
 */
final class SchemaDecoders {

  static final int MAX_SCHEMAS = 1000;

  /** A decoder and the bytes it decodes (the payload after the framing). */
  record Decoding(ValueDecoder decoder, ByteBuffer payload, int schemaId) {}

  private final SchemaSource schemas;
  private final AvroSchemaSource avroOnly;
  private final String messageFullName;
  private final Map<String, ValueDecoder> cache = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, ValueDecoder> eldest) {
      return size() > MAX_SCHEMAS;
    }
  };

  /**
   * @param schemas every format by id and latest; when null, {@code avroOnly} serves by_schema_id for Avro alone
   * @param messageFullName the Protobuf message {@code by_latest_schema} decodes; null for the first one
   */
  SchemaDecoders(SchemaSource schemas, AvroSchemaSource avroOnly, String messageFullName) {
    this.schemas = schemas;
    this.avroOnly = avroOnly;
    this.messageFullName = messageFullName;
  }

  /** The decoder of a framed value. */
  Decoding framed(byte[] framed) throws InvalidRecordException, ConversionFailedException {
    int id;
    try {
      id = WireFormat.schemaId(framed);
    } catch (IllegalArgumentException e) {
      throw new InvalidRecordException("the bytes are " + e.getMessage(), e);
    }
    ByteBuffer payload = WireFormat.payload(framed);
    if (schemas == null) {
      ValueDecoder d = cached("avro:" + id);
      if (d == null) {
        d = remember("avro:" + id, new AvroDecoder(avroOnly.avroSchema(id)));
      }
      return new Decoding(d, payload, id);
    }
    String key = Integer.toString(id);
    ValueDecoder d = cached(key); // Avro and JSON Schema; Protobuf decoders are kept per message
    if (d != null) {
      return new Decoding(d, payload, id);
    }
    ParsedSchema schema = schemas.schemaById(id);
    if (schema instanceof ProtobufSchema proto) {
      Descriptor message = ProtobufDecoder.messageAt(proto.descriptor(), payload);
      return new Decoding(protobuf(id, message), payload.slice(), id);
    }
    return new Decoding(remember(key, decoder(id, schema)), payload, id);
  }

  /** The decoder of an unframed value written with {@code subject}'s latest schema. */
  Decoding latest(String subject, byte[] value) throws InvalidRecordException, ConversionFailedException {
    if (schemas == null) {
      throw new ConversionFailedException("by_latest_schema needs the schema registry", null);
    }
    SchemaSource.Latest latest = schemas.latest(subject);
    ParsedSchema schema = latest.schema();
    ValueDecoder d;
    if (schema instanceof ProtobufSchema proto) {
      Descriptor message = messageFullName == null ? proto.firstMessage() : findMessage(proto, messageFullName);
      if (message == null) {
        throw new InvalidRecordException("the latest schema of subject " + subject + " has no message "
            + (messageFullName == null ? "" : messageFullName));
      }
      d = protobuf(latest.id(), message);
    } else {
      d = cached(Integer.toString(latest.id()));
      if (d == null) {
        d = remember(Integer.toString(latest.id()), decoder(latest.id(), schema));
      }
    }
    return new Decoding(d, ByteBuffer.wrap(value), latest.id());
  }

  /** Asks the source for a fresh latest version; true when the next {@link #latest} call fetches it. */
  boolean refreshLatest(String subject) {
    return schemas != null && schemas.refreshLatest(subject);
  }

  private static Descriptor findMessage(ProtobufSchema proto, String fullName) {
    for (Descriptor d : proto.descriptor().getMessageTypes()) {
      Descriptor found = find(d, fullName);
      if (found != null) {
        return found;
      }
    }
    return null;
  }

  private static Descriptor find(Descriptor d, String fullName) {
    if (d.getFullName().equals(fullName)) {
      return d;
    }
    for (Descriptor nested : d.getNestedTypes()) {
      Descriptor found = find(nested, fullName);
      if (found != null) {
        return found;
      }
    }
    return null;
  }

  private ValueDecoder protobuf(int id, Descriptor message) throws InvalidRecordException {
    String key = id + ":" + message.getFullName();
    ValueDecoder d = cached(key);
    return d != null ? d : remember(key, new ProtobufDecoder(message));
  }

  private static ValueDecoder decoder(int id, ParsedSchema schema) throws InvalidRecordException {
    if (schema instanceof AvroSchema avro) {
      return new AvroDecoder(avro.schema());
    }
    if (schema instanceof JsonSchemaDocument json) {
      return new JsonSchemaDecoder(json.root(), json.documents());
    }
    throw new InvalidRecordException("schema id " + id + " is " + schema.type() + ", which has no converter");
  }

  private synchronized ValueDecoder cached(String key) {
    return cache.get(key);
  }

  private synchronized ValueDecoder remember(String key, ValueDecoder d) {
    cache.put(key, d);
    return d;
  }
}
