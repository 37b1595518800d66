package io.tidemark.registry.state;

import io.tidemark.registry.log.RegistryRecord;
import io.tidemark.registry.log.RegistryRecord.ConfigRecord;
import io.tidemark.registry.log.RegistryRecord.DeleteSubjectRecord;
import io.tidemark.registry.log.RegistryRecord.Ignored;
import io.tidemark.registry.log.RegistryRecord.ModeRecord;
import io.tidemark.registry.log.RegistryRecord.SchemaRecord;
import io.tidemark.registry.log.RegistryRecord.SchemaTombstone;
import io.tidemark.registry.schema.SchemaReference;
import io.tidemark.registry.schema.SchemaType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * What the {@code _schemas} log says: subjects and their versions (soft-deleted ones marked), schemas
 * by id, compatibility and mode settings, and the offset of the next record to apply. Only
 * {@link #replay} changes it.
 *
 * <p>Threading: one thread (the registry's writer) replays; any thread reads. Replay takes the write
 * lock and queries the read lock, so a reader sees each record applied whole.
 */
public final class RegistryState {

  /** A schema's identity: two registrations with the same identity get the same id. */
  public record SchemaKey(SchemaType type, String schema, List<SchemaReference> references) {}

  /** The schema behind an id. */
  public record StoredSchema(int id, SchemaType type, String schema, List<SchemaReference> references) {}

  /** One place a schema is registered. */
  public record SubjectVersion(String subject, int version) {}

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Map<String, NavigableMap<Integer, SchemaRecord>> subjects = new TreeMap<>();
  private final Map<Integer, StoredSchema> schemasById = new HashMap<>();
  private final Map<SchemaKey, Integer> idsByKey = new HashMap<>();
  private final Map<Integer, Set<SubjectVersion>> usesById = new HashMap<>();
  private final Map<String, String> compatibility = new HashMap<>();
  private final Map<String, String> modes = new HashMap<>();
  private int maxId;
  private long nextOffset;

  /** Applies the record at {@code offset}; records must come in log order (gaps, e.g. from compaction, are fine). */
  public void replay(long offset, RegistryRecord record) {
    lock.writeLock().lock();
    try {
      if (offset < nextOffset) {
        throw new IllegalStateException("replay expected offset " + nextOffset + " or later but got " + offset);
      }
      apply(record);
      nextOffset = offset + 1;
    } finally {
      lock.writeLock().unlock();
    }
  }

  private void apply(RegistryRecord record) {
    switch (record) {
      case SchemaRecord s -> putVersion(s);
      case SchemaTombstone t -> removeVersion(t.subject(), t.version());
      case ConfigRecord c -> putOrRemove(compatibility, globalKey(c.subject()), c.compatibilityLevel());
      case ModeRecord m -> putOrRemove(modes, globalKey(m.subject()), m.mode());
      case DeleteSubjectRecord d -> {
        NavigableMap<Integer, SchemaRecord> versions = subjects.get(d.subject());
        if (versions != null) {
          versions.headMap(d.version(), true).replaceAll((v, s) -> s.softDeleted());
        }
      }
      case Ignored i -> { }
    }
  }

  private void putVersion(SchemaRecord s) {
    removeVersion(s.subject(), s.version());
    subjects.computeIfAbsent(s.subject(), k -> new TreeMap<>()).put(s.version(), s);
    StoredSchema stored = new StoredSchema(s.id(), s.type(), s.schema(), s.references());
    schemasById.putIfAbsent(s.id(), stored);
    idsByKey.putIfAbsent(new SchemaKey(s.type(), s.schema(), s.references()), s.id());
    usesById.computeIfAbsent(s.id(), k -> new LinkedHashSet<>()).add(new SubjectVersion(s.subject(), s.version()));
    maxId = Math.max(maxId, s.id());
  }

  private void removeVersion(String subject, int version) {
    NavigableMap<Integer, SchemaRecord> versions = subjects.get(subject);
    if (versions == null) {
      return;
    }
    SchemaRecord removed = versions.remove(version);
    if (versions.isEmpty()) {
      subjects.remove(subject);
    }
    if (removed == null) {
      return;
    }
    Set<SubjectVersion> uses = usesById.get(removed.id());
    if (uses != null) {
      uses.remove(new SubjectVersion(subject, version));
      if (uses.isEmpty()) {
        usesById.remove(removed.id());
        StoredSchema gone = schemasById.remove(removed.id());
        if (gone != null) {
          idsByKey.remove(new SchemaKey(gone.type(), gone.schema(), gone.references()));
        }
      }
    }
  }

  private static void putOrRemove(Map<String, String> map, String key, String value) {
    if (value == null) {
      map.remove(key);
    } else {
      map.put(key, value);
    }
  }

  private static String globalKey(String subject) {
    return subject == null ? "" : "subject:" + subject;
  }

  private <T> T read(Supplier<T> query) {
    lock.readLock().lock();
    try {
      return query.get();
    } finally {
      lock.readLock().unlock();
    }
  }

  public long nextOffset() {
    return read(() -> nextOffset);
  }

  /** The largest id ever applied; new ids are {@code maxId() + 1} so ids stay dense. */
  public int maxId() {
    return read(() -> maxId);
  }

  /** Subject names, optionally including subjects whose versions are all soft-deleted. */
  public List<String> subjects(boolean includeDeleted) {
    return read(() -> {
      List<String> names = new ArrayList<>();
      subjects.forEach((name, versions) -> {
        if (includeDeleted || versions.values().stream().anyMatch(s -> !s.deleted())) {
          names.add(name);
        }
      });
      return names;
    });
  }

  /** Every version of a subject (soft-deleted included), oldest first; empty when the subject has none. */
  public List<SchemaRecord> versions(String subject) {
    return read(() -> {
      NavigableMap<Integer, SchemaRecord> versions = subjects.get(subject);
      return versions == null ? List.<SchemaRecord>of() : List.copyOf(versions.values());
    });
  }

  public Optional<SchemaRecord> version(String subject, int version) {
    return read(() -> {
      NavigableMap<Integer, SchemaRecord> versions = subjects.get(subject);
      return Optional.ofNullable(versions == null ? null : versions.get(version));
    });
  }

  public Optional<StoredSchema> schema(int id) {
    return read(() -> Optional.ofNullable(schemasById.get(id)));
  }

  public Optional<Integer> idOf(SchemaKey key) {
    return read(() -> Optional.ofNullable(idsByKey.get(key)));
  }

  /** Where schema {@code id} is registered (soft-deleted versions included), in registration order. */
  public List<SchemaRecord> uses(int id) {
    return read(() -> {
      List<SchemaRecord> result = new ArrayList<>();
      for (SubjectVersion sv : usesById.getOrDefault(id, Set.of())) {
        result.add(subjects.get(sv.subject()).get(sv.version()));
      }
      return result;
    });
  }

  /** Ids of the live schemas that reference {@code subject}/{@code version}. */
  public List<Integer> referencedBy(String subject, int version) {
    return read(() -> {
      Set<Integer> ids = new java.util.TreeSet<>();
      for (NavigableMap<Integer, SchemaRecord> versions : subjects.values()) {
        for (SchemaRecord s : versions.values()) {
          if (!s.deleted() && s.references().stream()
              .anyMatch(r -> r.subject().equals(subject) && r.version() == version)) {
            ids.add(s.id());
          }
        }
      }
      return List.copyOf(ids);
    });
  }

  /** The compatibility level set for {@code subject} (null: the global one), if any. */
  public Optional<String> compatibility(String subject) {
    return read(() -> Optional.ofNullable(compatibility.get(globalKey(subject))));
  }

  /** The mode set for {@code subject} (null: the global one), if any. */
  public Optional<String> mode(String subject) {
    return read(() -> Optional.ofNullable(modes.get(globalKey(subject))));
  }
}
