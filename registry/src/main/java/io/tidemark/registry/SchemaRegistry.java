package io.tidemark.registry;

import io.tidemark.registry.client.SchemaRegistryClient;
import io.tidemark.registry.client.SchemaRegistryClientException;
import io.tidemark.registry.compatibility.CompatibilityChecker;
import io.tidemark.registry.compatibility.CompatibilityLevel;
import io.tidemark.registry.log.RecordCodec;
import io.tidemark.registry.log.RegistryRecord;
import io.tidemark.registry.log.RegistryRecord.ConfigRecord;
import io.tidemark.registry.log.RegistryRecord.DeleteSubjectRecord;
import io.tidemark.registry.log.RegistryRecord.Ignored;
import io.tidemark.registry.log.RegistryRecord.ModeRecord;
import io.tidemark.registry.log.RegistryRecord.SchemaRecord;
import io.tidemark.registry.log.RegistryRecord.SchemaTombstone;
import io.tidemark.registry.schema.InvalidSchemaException;
import io.tidemark.registry.schema.ParsedSchema;
import io.tidemark.registry.schema.SchemaFormat;
import io.tidemark.registry.schema.SchemaFormat.ResolvedReference;
import io.tidemark.registry.schema.SchemaFormats;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import io.tidemark.registry.state.RegistryState;
import io.tidemark.registry.state.RegistryState.SchemaKey;
import io.tidemark.registry.state.RegistryState.StoredSchema;
import io.tidemark.registry.store.SchemaStore;
import io.tidemark.registry.store.SchemaStoreException;
import io.tidemark.registry.store.StoredRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schema registry: subjects, versions, schema ids, compatibility and mode settings, kept as
 * records in a {@link SchemaStore} log and answered from the {@link RegistryState} rebuilt by
 * replaying it.
 *
 * <p>Writes follow compute-then-replay: a write is handed to the single writer thread, which first
 * replays any records it has not applied, validates the request against that state, appends the
 * resulting records and replays them. Only replay changes state, so a registry started on an existing
 * log has the same ids and versions. One writer keeps ids unique and dense. The writer's queue is
 * bounded ({@link RegistryConfig#writerQueueMax()}); a full queue refuses the write (429).
 *
 * <p>Reads run on the caller's thread against the state. Lifecycle: NEW, then RUNNING after
 * {@link #start()} (the log has been replayed), then CLOSED.
 */
public final class SchemaRegistry implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SchemaRegistry.class);
  private static final int REPLAY_BATCH_RECORDS = 1000;
  private static final int MAX_REFERENCE_DEPTH = 32;
  private static final int PARSED_CACHE_MAX = 1000;
  private static final Set<String> MODES = Set.of("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT");

  private enum Lifecycle { NEW, RUNNING, CLOSED }

  private final RegistryConfig config;
  private final SchemaStore store;
  private final RegistryState state = new RegistryState();
  private final SchemaFormats formats = new SchemaFormats();
  private final ThreadPoolExecutor writer;
  private final Map<Integer, ParsedSchema> parsedById =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, ParsedSchema> eldest) {
          return size() > PARSED_CACHE_MAX;
        }
      };
  private volatile Lifecycle lifecycle = Lifecycle.NEW;

  public SchemaRegistry(RegistryConfig config, SchemaStore store) {
    this.config = config;
    this.store = store;
    this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(config.writerQueueMax()), r -> {
          Thread t = new Thread(r, "schema-registry-writer");
          t.setDaemon(true);
          return t;
        }, new ThreadPoolExecutor.AbortPolicy());
  }

  /** Replays the whole log; afterwards the registry serves requests. */
  public synchronized void start() {
    if (lifecycle != Lifecycle.NEW) {
      throw new IllegalStateException("registry cannot start in state " + lifecycle);
    }
    write(() -> null);
    lifecycle = Lifecycle.RUNNING;
    LOG.info("schema registry replayed {} records of the schema log", state.nextOffset());
  }

  @Override
  public synchronized void close() {
    lifecycle = Lifecycle.CLOSED;
    writer.shutdownNow();
  }

  public RegistryConfig config() {
    return config;
  }

  // ---------------------------------------------------------------- reads

  public List<String> subjects(boolean includeDeleted, String prefix) {
    List<String> all = state.subjects(includeDeleted);
    if (prefix == null || prefix.isEmpty() || prefix.equals(":*:")) {
      return all;
    }
    return all.stream().filter(s -> s.startsWith(prefix)).toList();
  }

  public List<Integer> versions(String subject, boolean includeDeleted) {
    List<Integer> versions = state.versions(subject).stream()
        .filter(s -> includeDeleted || !s.deleted()).map(SchemaRecord::version).toList();
    if (versions.isEmpty()) {
      throw subjectNotFound(subject);
    }
    return versions;
  }

  /** {@code subject} at {@code version} ("latest", "-1" or a number). */
  public SchemaRecord version(String subject, String version, boolean includeDeleted) {
    return resolveVersion(subject, parseVersion(version), includeDeleted);
  }

  public List<Integer> referencedBy(String subject, String version) {
    SchemaRecord record = resolveVersion(subject, parseVersion(version), true);
    return state.referencedBy(subject, record.version());
  }

  /**
   * This registry as the read side of a {@link SchemaRegistryClient} in the same process: the same
   * answers and error codes as the REST API, with no HTTP, credentials or certificates in between.
   */
  public SchemaRegistryClient.Lookup lookup() {
    return new SchemaRegistryClient.Lookup() {
      @Override
      public SchemaRegistryClient.RegisteredSchema schemaById(int id) {
        try {
          StoredSchema s = SchemaRegistry.this.schemaById(id);
          return new SchemaRegistryClient.RegisteredSchema(s.id(), s.type(), s.schema(), s.references());
        } catch (RegistryException e) {
          throw clientError(e);
        }
      }

      @Override
      public SchemaRegistryClient.SubjectVersion version(String subject, String version) {
        try {
          SchemaRecord r = SchemaRegistry.this.version(subject, version, false);
          return new SchemaRegistryClient.SubjectVersion(r.subject(), r.version(), r.id(), r.type(), r.schema(),
              r.references());
        } catch (RegistryException e) {
          throw clientError(e);
        }
      }
    };
  }

  private static SchemaRegistryClientException clientError(RegistryException e) {
    return new SchemaRegistryClientException(e.error().httpStatus(), e.error().errorCode(), e.getMessage(), e);
  }

  public StoredSchema schemaById(int id) {
    return state.schema(id).orElseThrow(() -> RegistryError.SCHEMA_NOT_FOUND.exception("Schema " + id + " not found"));
  }

  public List<String> subjectsOfSchema(int id, boolean includeDeleted) {
    schemaById(id);
    return state.uses(id).stream().filter(s -> includeDeleted || !s.deleted())
        .map(SchemaRecord::subject).distinct().toList();
  }

  public List<SchemaRecord> versionsOfSchema(int id, boolean includeDeleted) {
    schemaById(id);
    return state.uses(id).stream().filter(s -> includeDeleted || !s.deleted()).toList();
  }

  /** Every version (or only the latest live one per subject) of subjects starting with {@code prefix}, by subject then version. */
  public List<SchemaRecord> allVersions(String prefix, boolean includeDeleted, boolean latestOnly) {
    List<SchemaRecord> out = new ArrayList<>();
    for (String subject : subjects(includeDeleted, prefix)) {
      List<SchemaRecord> versions = state.versions(subject).stream().filter(s -> includeDeleted || !s.deleted()).toList();
      if (latestOnly && !versions.isEmpty()) {
        out.add(versions.get(versions.size() - 1));
      } else if (!latestOnly) {
        out.addAll(versions);
      }
    }
    return out;
  }

  /** The version of {@code subject} that holds this schema, as {@code POST /subjects/{subject}} answers. */
  public SchemaRecord lookup(String subject, SchemaRequest request, boolean normalize, boolean includeDeleted) {
    List<SchemaRecord> versions = state.versions(subject).stream().filter(s -> includeDeleted || !s.deleted()).toList();
    if (versions.isEmpty()) {
      throw subjectNotFound(subject);
    }
    ParsedSchema parsed = parse(request, normalize);
    SchemaKey key = keyOf(parsed);
    for (int i = versions.size() - 1; i >= 0; i--) {
      SchemaRecord s = versions.get(i);
      if (keyOf(s).equals(key)) {
        return s;
      }
    }
    throw RegistryError.SCHEMA_NOT_FOUND.exception("Schema not found");
  }

  public String globalCompatibility() {
    return state.compatibility(null).orElse(config.defaultCompatibility());
  }

  public String subjectCompatibility(String subject, boolean defaultToGlobal) {
    Optional<String> level = state.compatibility(subject);
    if (level.isPresent()) {
      return level.get();
    }
    if (defaultToGlobal) {
      return globalCompatibility();
    }
    throw RegistryError.SUBJECT_COMPATIBILITY_NOT_CONFIGURED.exception(
        "Subject '" + subject + "' does not have subject-level compatibility configured");
  }

  public String globalMode() {
    return state.mode(null).orElse("READWRITE");
  }

  public String subjectMode(String subject, boolean defaultToGlobal) {
    Optional<String> mode = state.mode(subject);
    if (mode.isPresent()) {
      return mode.get();
    }
    if (defaultToGlobal) {
      return globalMode();
    }
    throw RegistryError.SUBJECT_MODE_NOT_CONFIGURED.exception(
        "Subject '" + subject + "' does not have subject-level mode configured");
  }

  /**
   * Whether {@code request} may follow the given version of {@code subject} (null: the versions the
   * subject's compatibility level compares against).
   */
  public CompatibilityResult checkCompatibility(String subject, String version, SchemaRequest request,
                                                boolean normalize, boolean verbose) {
    ParsedSchema candidate = parse(request, normalize);
    List<SchemaRecord> live = state.versions(subject).stream().filter(s -> !s.deleted()).toList();
    List<SchemaRecord> against;
    if (version == null) {
      against = live;
    } else {
      int v = parseVersion(version);
      if (live.isEmpty() && v == -1) {
        return new CompatibilityResult(true, List.of());
      }
      against = List.of(resolveVersion(subject, v, false));
    }
    CompatibilityLevel level = CompatibilityLevel.parse(subjectCompatibility(subject, true));
    List<String> messages = CompatibilityChecker.check(level, candidate, parsedAll(against));
    return new CompatibilityResult(messages.isEmpty(), verbose ? messages : List.of());
  }

  // ---------------------------------------------------------------- writes

  /** Registers {@code request} under {@code subject} and returns its id (the existing one when already registered). */
  public int register(String subject, SchemaRequest request, boolean normalize) {
    checkSubjectName(subject);
    return write(() -> registerOnWriter(subject, request, normalize));
  }

  private int registerOnWriter(String subject, SchemaRequest request, boolean normalize) {
    String mode = subjectMode(subject, true);
    requireWritable(subject, mode);
    boolean importing = mode.equals("IMPORT");
    ParsedSchema parsed = parse(request, normalize);
    SchemaKey key = keyOf(parsed);
    List<SchemaRecord> versions = state.versions(subject);
    for (int i = versions.size() - 1; i >= 0; i--) {
      SchemaRecord existing = versions.get(i);
      if (!existing.deleted() && keyOf(existing).equals(key)) {
        if (request.id() != null && request.id() != existing.id()) {
          throw RegistryError.ID_DOES_NOT_MATCH.exception("Schema already registered with id " + existing.id()
              + " instead of input id " + request.id());
        }
        return existing.id();
      }
    }
    Optional<Integer> knownId = state.idOf(key);
    if (!importing && request.id() != null && !knownId.equals(Optional.of(request.id()))) {
      throw RegistryError.OPERATION_NOT_PERMITTED.exception("Subject '" + subject
          + "' is not in import mode: a schema id can only be chosen in IMPORT mode");
    }
    int nextVersion = versions.isEmpty() ? 1 : versions.get(versions.size() - 1).version() + 1;
    if (!importing && request.version() != null && request.version() != nextVersion) {
      throw RegistryError.OPERATION_NOT_PERMITTED.exception("Subject '" + subject
          + "' is not in import mode: the next version is " + nextVersion + ", not " + request.version());
    }
    if (!importing) {
      CompatibilityLevel level = CompatibilityLevel.parse(subjectCompatibility(subject, true));
      List<SchemaRecord> live = versions.stream().filter(s -> !s.deleted()).toList();
      List<String> messages = CompatibilityChecker.check(level, parsed, parsedAll(live));
      if (!messages.isEmpty()) {
        throw RegistryError.INCOMPATIBLE_SCHEMA.exception("Schema being registered is incompatible with an earlier schema for subject \""
            + subject + "\", details: " + messages);
      }
    }
    int id;
    if (importing && request.id() != null) {
      id = request.id();
      if (id <= 0) {
        throw RegistryError.INVALID_SCHEMA.exception("Schema id " + id + " is not valid: ids are positive");
      }
      Optional<StoredSchema> taken = state.schema(id);
      if (taken.isPresent() && !keyOf(taken.get()).equals(key)) {
        throw RegistryError.ID_DOES_NOT_MATCH.exception("Overwrite new schema with id " + id
            + " is not permitted: id " + id + " holds another schema");
      }
    } else {
      id = knownId.orElse(state.maxId() + 1);
    }
    int version = request.version() != null ? request.version() : nextVersion;
    if (version <= 0) {
      throw invalidVersion(String.valueOf(version));
    }
    if (state.version(subject, version).isPresent()) {
      throw RegistryError.OPERATION_NOT_PERMITTED.exception("Subject '" + subject + "' already has version " + version);
    }
    append(new SchemaRecord(subject, version, id, parsed.type(), parsed.canonical(), parsed.references(), false));
    return id;
  }

  /** Soft-deletes every live version, or with {@code permanent} removes the soft-deleted subject. Returns the versions deleted. */
  public List<Integer> deleteSubject(String subject, boolean permanent) {
    return write(() -> {
      requireWritable(subject, subjectMode(subject, true));
      List<SchemaRecord> versions = state.versions(subject);
      if (versions.isEmpty()) {
        throw subjectNotFound(subject);
      }
      List<SchemaRecord> live = versions.stream().filter(s -> !s.deleted()).toList();
      if (!permanent) {
        if (live.isEmpty()) {
          throw RegistryError.SUBJECT_SOFT_DELETED.exception("Subject '" + subject
              + "' was soft deleted.Set permanent=true to delete permanently");
        }
        for (SchemaRecord s : live) {
          requireUnreferenced(s);
        }
        append(new DeleteSubjectRecord(subject, live.get(live.size() - 1).version()));
        return live.stream().map(SchemaRecord::version).toList();
      }
      if (!live.isEmpty()) {
        throw RegistryError.SUBJECT_NOT_SOFT_DELETED.exception("Subject '" + subject
            + "' was not deleted first before being permanently deleted");
      }
      for (SchemaRecord s : versions) {
        append(new SchemaTombstone(subject, s.version()));
      }
      if (state.compatibility(subject).isPresent()) {
        append(new ConfigRecord(subject, null));
      }
      if (state.mode(subject).isPresent()) {
        append(new ModeRecord(subject, null));
      }
      return versions.stream().map(SchemaRecord::version).toList();
    });
  }

  /** Soft-deletes one version, or with {@code permanent} removes a soft-deleted one. Returns the version number. */
  public int deleteVersion(String subject, String version, boolean permanent) {
    int requested = parseVersion(version);
    return write(() -> {
      requireWritable(subject, subjectMode(subject, true));
      SchemaRecord record = requested == -1
          ? resolveVersion(subject, -1, permanent)
          : resolveVersion(subject, requested, true);
      if (!permanent) {
        if (record.deleted()) {
          throw RegistryError.VERSION_SOFT_DELETED.exception("Subject '" + subject + "' Version " + record.version()
              + " was soft deleted.Set permanent=true to delete permanently");
        }
        requireUnreferenced(record);
        append(record.softDeleted());
      } else {
        if (!record.deleted()) {
          throw RegistryError.VERSION_NOT_SOFT_DELETED.exception("Subject '" + subject + "' Version " + record.version()
              + " was not deleted first before being permanently deleted");
        }
        append(new SchemaTombstone(subject, record.version()));
      }
      return record.version();
    });
  }

  /** Sets the compatibility level of {@code subject}, or the global one when it is null. */
  public String setCompatibility(String subject, String level) {
    CompatibilityLevel parsed = CompatibilityLevel.parse(level);
    if (parsed == null) {
      throw RegistryError.INVALID_COMPATIBILITY_LEVEL.exception("Invalid compatibility level. Valid values are none, "
          + "backward, forward, full, backward_transitive, forward_transitive, and full_transitive");
    }
    if (subject != null) {
      checkSubjectName(subject);
    }
    return write(() -> {
      append(new ConfigRecord(subject, parsed.name()));
      return parsed.name();
    });
  }

  /** Removes the level of {@code subject} (or resets the global one) and returns the level it had. */
  public String deleteCompatibility(String subject) {
    return write(() -> {
      String previous;
      if (subject == null) {
        previous = globalCompatibility();
      } else {
        Optional<String> own = state.compatibility(subject);
        if (own.isEmpty()) {
          if (state.versions(subject).isEmpty()) {
            throw subjectNotFound(subject);
          }
          throw RegistryError.SUBJECT_COMPATIBILITY_NOT_CONFIGURED.exception(
              "Subject '" + subject + "' does not have subject-level compatibility configured");
        }
        previous = own.get();
      }
      append(new ConfigRecord(subject, null));
      return previous;
    });
  }

  /** Sets the mode of {@code subject} (null: global). IMPORT needs an empty subject or registry unless {@code force}. */
  public String setMode(String subject, String mode, boolean force) {
    String parsed = mode == null ? "" : mode.trim().toUpperCase(java.util.Locale.ROOT);
    if (!MODES.contains(parsed)) {
      throw RegistryError.INVALID_MODE.exception("Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, IMPORT");
    }
    if (subject != null) {
      checkSubjectName(subject);
    }
    return write(() -> {
      if (parsed.equals("IMPORT") && !force) {
        boolean hasSchemas = subject == null ? !state.subjects(true).isEmpty() : !state.versions(subject).isEmpty();
        if (hasSchemas) {
          throw RegistryError.OPERATION_NOT_PERMITTED.exception("Cannot import since found existing subjects; "
              + "set force=true to switch to IMPORT anyway");
        }
      }
      append(new ModeRecord(subject, parsed));
      return parsed;
    });
  }

  public String deleteMode(String subject) {
    return write(() -> {
      String previous;
      if (subject == null) {
        previous = globalMode();
      } else {
        previous = state.mode(subject).orElseThrow(() -> RegistryError.SUBJECT_MODE_NOT_CONFIGURED.exception(
            "Subject '" + subject + "' does not have subject-level mode configured"));
      }
      append(new ModeRecord(subject, null));
      return previous;
    });
  }

  // ---------------------------------------------------------------- parsing

  /** Parses a schema as a stored version would be, resolving its references against the registry. */
  public ParsedSchema parse(SchemaRequest request, boolean normalize) {
    if (request.type() == null) {
      throw RegistryError.INVALID_SCHEMA.exception("Invalid schema type; valid types are AVRO, JSON, PROTOBUF");
    }
    if (request.schema() == null || request.schema().isBlank()) {
      throw RegistryError.INVALID_SCHEMA.exception("Empty schema");
    }
    SchemaFormat format = formats.format(request.type());
    List<ResolvedReference> dependencies = new ArrayList<>();
    resolve(request.references(), dependencies, new HashSet<>(), 0);
    try {
      ParsedSchema parsed = format.parse(request.schema(), request.references(), dependencies);
      return normalize ? parsed.normalize() : parsed;
    } catch (InvalidSchemaException e) {
      throw new RegistryException(RegistryError.INVALID_SCHEMA, "Invalid schema " + e.getMessage(), e);
    }
  }

  /** The parsed schema behind an id (cached). */
  public ParsedSchema parsedSchema(int id) {
    synchronized (parsedById) {
      ParsedSchema cached = parsedById.get(id);
      if (cached != null) {
        return cached;
      }
    }
    StoredSchema stored = schemaById(id);
    ParsedSchema parsed = parse(new SchemaRequest(stored.schema(), stored.type(), stored.references(), null, null), false);
    synchronized (parsedById) {
      parsedById.put(id, parsed);
    }
    return parsed;
  }

  private List<ParsedSchema> parsedAll(List<SchemaRecord> records) {
    List<ParsedSchema> parsed = new ArrayList<>();
    for (SchemaRecord r : records) {
      parsed.add(parsedSchema(r.id()));
    }
    return parsed;
  }

  private void resolve(List<SchemaReference> references, List<ResolvedReference> out, Set<String> seen, int depth) {
    if (depth > MAX_REFERENCE_DEPTH) {
      throw RegistryError.INVALID_SCHEMA.exception("Invalid schema: references nest deeper than " + MAX_REFERENCE_DEPTH);
    }
    for (SchemaReference ref : references) {
      if (!seen.add(ref.subject() + "\u0000" + ref.version())) {
        continue;
      }
      int version = ref.version();
      Optional<SchemaRecord> target = version == -1
          ? latestLive(ref.subject())
          : state.version(ref.subject(), version);
      SchemaRecord record = target.orElseThrow(() -> RegistryError.INVALID_SCHEMA.exception("Invalid schema: reference '"
          + ref.name() + "' names subject '" + ref.subject() + "' version " + ref.version() + ", which does not exist"));
      resolve(record.references(), out, seen, depth + 1);
      out.add(new ResolvedReference(ref.name(), record.schema()));
    }
  }

  // ---------------------------------------------------------------- helpers

  private Optional<SchemaRecord> latestLive(String subject) {
    List<SchemaRecord> versions = state.versions(subject);
    for (int i = versions.size() - 1; i >= 0; i--) {
      if (!versions.get(i).deleted()) {
        return Optional.of(versions.get(i));
      }
    }
    return Optional.empty();
  }

  private SchemaRecord resolveVersion(String subject, int version, boolean includeDeleted) {
    List<SchemaRecord> versions = state.versions(subject);
    if (versions.isEmpty() || (!includeDeleted && versions.stream().allMatch(SchemaRecord::deleted))) {
      throw subjectNotFound(subject);
    }
    if (version == -1) {
      for (int i = versions.size() - 1; i >= 0; i--) {
        if (includeDeleted || !versions.get(i).deleted()) {
          return versions.get(i);
        }
      }
      throw versionNotFound("latest");
    }
    SchemaRecord record = state.version(subject, version).orElseThrow(() -> versionNotFound(String.valueOf(version)));
    if (record.deleted() && !includeDeleted) {
      throw versionNotFound(String.valueOf(version));
    }
    return record;
  }

  /** -1 for "latest"; otherwise a positive version number. */
  static int parseVersion(String version) {
    if (version == null) {
      throw invalidVersion("null");
    }
    if (version.equalsIgnoreCase("latest")) {
      return -1;
    }
    try {
      int v = Integer.parseInt(version.trim());
      if (v == -1 || v >= 1) {
        return v;
      }
    } catch (NumberFormatException e) {
      // falls through to the error below
    }
    throw invalidVersion(version);
  }

  private static RegistryException invalidVersion(String version) {
    return RegistryError.INVALID_VERSION.exception("The specified version '" + version + "' is not a valid version id. "
        + "Allowed values are between [1, 2^31-1] and the string \"latest\"");
  }

  private static RegistryException subjectNotFound(String subject) {
    return RegistryError.SUBJECT_NOT_FOUND.exception("Subject '" + subject + "' not found.");
  }

  private static RegistryException versionNotFound(String version) {
    return RegistryError.VERSION_NOT_FOUND.exception("Version " + version + " not found.");
  }

  private static void checkSubjectName(String subject) {
    if (subject == null || subject.isEmpty() || subject.chars().anyMatch(Character::isISOControl)) {
      throw RegistryError.INVALID_SUBJECT.exception("The specified subject '" + subject + "' is not a valid subject name");
    }
  }

  private static void requireWritable(String subject, String mode) {
    if (mode.equals("READONLY") || mode.equals("READONLY_OVERRIDE")) {
      throw RegistryError.OPERATION_NOT_PERMITTED.exception("Subject " + subject + " is in read-only mode");
    }
  }

  private void requireUnreferenced(SchemaRecord record) {
    List<Integer> referrers = state.referencedBy(record.subject(), record.version());
    if (!referrers.isEmpty()) {
      throw RegistryError.REFERENCE_EXISTS.exception("One or more references exist to the schema {subject="
          + record.subject() + ", version=" + record.version() + "}: schema ids " + referrers);
    }
  }

  private static SchemaKey keyOf(ParsedSchema parsed) {
    return new SchemaKey(parsed.type(), parsed.canonical(), parsed.references());
  }

  private static SchemaKey keyOf(SchemaRecord record) {
    return new SchemaKey(record.type(), record.schema(), record.references());
  }

  private static SchemaKey keyOf(StoredSchema stored) {
    return new SchemaKey(stored.type(), stored.schema(), stored.references());
  }

  /** Runs {@code op} on the writer thread after catching up with the log, waiting at most the write timeout. */
  private <T> T write(Callable<T> op) {
    if (lifecycle == Lifecycle.CLOSED) {
      throw RegistryError.STORE_ERROR.exception("the schema registry is closed");
    }
    Future<T> future;
    try {
      future = writer.submit(() -> {
        catchUp();
        return op.call();
      });
    } catch (RejectedExecutionException e) {
      throw RegistryError.WRITER_BUSY.exception("the registry already has " + config.writerQueueMax()
          + " writes queued; retry later");
    }
    try {
      return future.get(config.writeTimeoutMs(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RegistryException re) {
        throw re;
      }
      if (cause instanceof SchemaStoreException se) {
        throw new RegistryException(RegistryError.STORE_ERROR, "Error while writing to the schema log: " + se.getMessage(), se);
      }
      throw new RegistryException(RegistryError.STORE_ERROR, "Error in the schema registry: " + cause, cause);
    } catch (TimeoutException e) {
      throw RegistryError.OPERATION_TIMEOUT.exception("the write was not applied within " + config.writeTimeoutMs()
          + " ms; it may still be applied: read the subject back before retrying");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw RegistryError.OPERATION_TIMEOUT.exception("interrupted while waiting for the write");
    }
  }

  private void append(RegistryRecord record) {
    byte[][] kv = RecordCodec.encode(record);
    store.append(kv[0], kv[1]);
    catchUp();
  }

  /** Replays every record the state has not applied yet. Writer thread only. */
  private void catchUp() {
    while (true) {
      List<StoredRecord> batch = store.read(state.nextOffset(), REPLAY_BATCH_RECORDS);
      if (batch.isEmpty()) {
        return;
      }
      for (StoredRecord r : batch) {
        RegistryRecord decoded;
        try {
          decoded = RecordCodec.decode(r.key(), r.value());
        } catch (RuntimeException e) { // bad bytes in the log must not stop the registry
          LOG.warn("skipping unreadable _schemas record at offset {}: {}", r.offset(), e.getMessage());
          decoded = new Ignored("UNREADABLE");
        }
        state.replay(r.offset(), decoded);
      }
    }
  }

  /**
   * Applies records other writers appended to the log since the last write or replay (on a broker
   * that does not lead {@code _schemas}, call this when the log grows, or before answering a read
   * that must see the latest writes). Runs on the writer thread like every state change.
   */
  public void replayNewRecords() {
    write(() -> null);
  }

  /** How many log records the state has applied. */
  public long appliedOffset() {
    return state.nextOffset();
  }

  /** Returns {@code type} names served by {@code /schemas/types}. */
  public List<String> schemaTypes() {
    return List.of(SchemaType.JSON.name(), SchemaType.PROTOBUF.name(), SchemaType.AVRO.name());
  }
}
