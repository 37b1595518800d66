package io.tidemark.table.convert;

import io.tidemark.registry.client.SchemaRegistryClient;
import io.tidemark.registry.client.SchemaRegistryClientException;
import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.avro.AvroSchema;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * {@link SchemaSource} (and {@link AvroSchemaSource}) over the built-in schema registry's client.
 * Schemas by id are cached by the client (bounded LRU). The latest version of each subject is kept
 * for {@code latestRefreshMs}, at most {@code maxSubjects} subjects (least recently used out); a
 * {@link #refreshLatest} sooner than {@code minRefreshMs} after the last fetch is ignored, so a
 * stream of undecodable records cannot flood the registry. Time comes from the injected clock.
 * Thread-safe: the subject cache is guarded by this object's monitor; registry calls run on the
 * caller's thread outside it.
 */
public final class RegistrySchemas implements SchemaSource, AvroSchemaSource {

  /** Default time a subject's latest version is used before it is fetched again. */
  public static final long DEFAULT_LATEST_REFRESH_MS = 10_000;
  static final long MIN_REFRESH_MS = 1_000;
  static final int DEFAULT_MAX_SUBJECTS = 1024;

  private record Fetched(Latest latest, long atMs) {}

  private final SchemaRegistryClient client;
  private final LongSupplier clockMs;
  private final long latestRefreshMs;
  private final Map<String, Fetched> latest;

  public RegistrySchemas(SchemaRegistryClient client, LongSupplier clockMs, long latestRefreshMs, int maxSubjects) {
    if (latestRefreshMs < 0 || maxSubjects < 1) {
      throw new IllegalArgumentException("latestRefreshMs must be >= 0 and maxSubjects >= 1");
    }
    this.client = client;
    this.clockMs = clockMs;
    this.latestRefreshMs = latestRefreshMs;
    this.latest = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Fetched> eldest) {
        return size() > maxSubjects;
      }
    };
  }

  public RegistrySchemas(SchemaRegistryClient client, LongSupplier clockMs) {
    this(client, clockMs, DEFAULT_LATEST_REFRESH_MS, DEFAULT_MAX_SUBJECTS);
  }

  @Override
  public ParsedSchema schemaById(int id) throws InvalidRecordException, ConversionFailedException {
    try {
      return client.parsedSchemaById(id);
    } catch (SchemaRegistryClientException e) {
      if (e.httpStatus() == 404) {
        throw new InvalidRecordException("schema id " + id + " is not registered", e);
      }
      throw new ConversionFailedException("schema registry lookup of id " + id + " failed: " + e.getMessage(), e);
    } catch (InvalidSchemaException e) {
      throw new InvalidRecordException("schema id " + id + " does not parse: " + e.getMessage(), e);
    }
  }

  @Override
  public org.apache.avro.Schema avroSchema(int id) throws InvalidRecordException, ConversionFailedException {
    ParsedSchema parsed = schemaById(id);
    if (parsed instanceof AvroSchema avro) {
      return avro.schema();
    }
    throw new InvalidRecordException("schema id " + id + " is " + parsed.type() + ", not Avro");
  }

  @Override
  public Latest latest(String subject) throws InvalidRecordException, ConversionFailedException {
    long now = clockMs.getAsLong();
    synchronized (this) {
      Fetched f = latest.get(subject);
      if (f != null && now - f.atMs() < latestRefreshMs) {
        return f.latest();
      }
    }
    SchemaRegistryClient.SubjectVersion v;
    try {
      v = client.latest(subject);
    } catch (SchemaRegistryClientException e) {
      // a missing subject is a setup problem, not the record's: the partition waits for it (skipped only under all)
      throw new ConversionFailedException("schema registry lookup of subject " + subject + " failed: " + e.getMessage(), e);
    }
    Latest fresh = new Latest(subject, v.version(), v.id(), schemaById(v.id()));
    synchronized (this) {
      latest.put(subject, new Fetched(fresh, now));
    }
    return fresh;
  }

  @Override
  public synchronized boolean refreshLatest(String subject) {
    Fetched f = latest.get(subject);
    if (f == null) {
      return true;
    }
    if (clockMs.getAsLong() - f.atMs() < MIN_REFRESH_MS) {
      return false;
    }
    latest.remove(subject);
    return true;
  }
}
