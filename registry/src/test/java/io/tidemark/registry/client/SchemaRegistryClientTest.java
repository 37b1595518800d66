package io.tidemark.registry.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tidemark.registry.http.RegistryHarness;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.schema.avro.AvroSchema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Goal: the Java client registers, reads and caches schemas (bounded), and its schemas decode Confluent wire-format records. */
class SchemaRegistryClientTest {
  static final String CLICK = "{\"type\":\"record\",\"name\":\"Click\",\"namespace\":\"web\",\"fields\":["
      + "{\"name\":\"user\",\"type\":\"string\"},{\"name\":\"ts\",\"type\":\"long\"},"
      + "{\"name\":\"page\",\"type\":[\"null\",\"string\"],\"default\":null}]}";

  RegistryHarness h;
  SchemaRegistryClient client;

  @BeforeEach
  void start() {
    h = new RegistryHarness();
    client = new SchemaRegistryClient(URI.create(h.baseUrl()), 2);
  }

  @AfterEach
  void stop() {
    h.close();
  }

  @Test
  void wireFormatRecordsRoundTripWithPlainAvro() throws IOException {
    // Goal: a record framed as magic 0 + 4-byte id + Avro binary decodes with plain Avro using the schema fetched by id.
    int id = client.register("clicks-value", SchemaType.AVRO, CLICK);
    Schema writerSchema = new Schema.Parser().parse(client.latest("clicks-value").schema());
    GenericRecord click = new GenericData.Record(writerSchema);
    click.put("user", "ada");
    click.put("ts", 1_700_000_000_000L);
    click.put("page", "/home");
    ByteArrayOutputStream payload = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(payload, null);
    new GenericDatumWriter<GenericRecord>(writerSchema).write(click, encoder);
    encoder.flush();
    byte[] framed = WireFormat.frame(id, payload.toByteArray());

    assertThat(framed[0]).isZero();
    assertThat(ByteBuffer.wrap(framed, 1, 4).getInt()).isEqualTo(id);
    int readId = WireFormat.schemaId(framed);
    Schema readerSchema = new Schema.Parser().parse(client.schemaById(readId).schema());
    ByteBuffer body = WireFormat.payload(framed);
    GenericRecord decoded = new GenericDatumReader<GenericRecord>(readerSchema).read(null,
        DecoderFactory.get().binaryDecoder(body.array(), body.arrayOffset() + body.position(), body.remaining(), null));
    assertThat(decoded.get("user").toString()).isEqualTo("ada");
    assertThat(decoded.get("ts")).isEqualTo(1_700_000_000_000L);
    assertThat(decoded.get("page").toString()).isEqualTo("/home");
    assertThat(((AvroSchema) client.parsedSchemaById(readId)).schema()).isEqualTo(writerSchema);
    assertThatThrownBy(() -> WireFormat.schemaId(new byte[] {1, 0, 0, 0, 1})).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void schemasByIdAreCachedWithinTheBound() {
    // Goal: once fetched, a schema is served from the cache even when the registry is gone; the cache keeps at most its bound.
    int a = client.register("a", SchemaType.AVRO, "\"string\"");
    int b = client.register("b", SchemaType.AVRO, "\"long\"");
    int c = client.register("c", SchemaType.AVRO, "\"int\"");
    client.schemaById(a);
    client.schemaById(b);
    client.schemaById(c);
    assertThat(client.cachedSchemas()).isEqualTo(2);
    h.close();
    assertThat(client.schemaById(c).schema()).isEqualTo("\"int\"");
    assertThatThrownBy(() -> client.schemaById(a)).as("evicted and the registry is down")
        .isInstanceOf(SchemaRegistryClientException.class);
    h = new RegistryHarness();
  }

  @Test
  void errorsCarryConfluentCodes() {
    // Goal: registry errors surface with their HTTP status and Confluent error code.
    assertThatThrownBy(() -> client.schemaById(42)).isInstanceOfSatisfying(SchemaRegistryClientException.class,
        e -> assertThat(e.errorCode()).isEqualTo(40403));
    assertThatThrownBy(() -> client.latest("nope")).isInstanceOfSatisfying(SchemaRegistryClientException.class,
        e -> assertThat(e.errorCode()).isEqualTo(40401));
    assertThatThrownBy(() -> client.register("x", SchemaType.AVRO, "{")).isInstanceOfSatisfying(SchemaRegistryClientException.class,
        e -> assertThat(e.errorCode()).isEqualTo(42201));
  }

  @Test
  void parsedSchemasResolveReferences() {
    // Goal: a schema with references parses on the client side by fetching the referenced versions.
    client.register("address", SchemaType.AVRO,
        "{\"type\":\"record\",\"name\":\"Address\",\"namespace\":\"acme\",\"fields\":[{\"name\":\"city\",\"type\":\"string\"}]}");
    int id = client.register("customer", SchemaType.AVRO,
        "{\"type\":\"record\",\"name\":\"Customer\",\"namespace\":\"acme\",\"fields\":[{\"name\":\"home\",\"type\":\"acme.Address\"}]}",
        List.of(new SchemaReference("acme.Address", "address", 1)));
    AvroSchema parsed = (AvroSchema) client.parsedSchemaById(id);
    assertThat(parsed.schema().getField("home").schema().getField("city")).isNotNull();
  }
}
