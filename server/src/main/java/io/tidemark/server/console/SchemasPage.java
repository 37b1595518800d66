package io.tidemark.server.console;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.tidemark.registry.RegistryException;
import io.tidemark.registry.SchemaRegistry;
import io.tidemark.registry.log.RegistryRecord.SchemaRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * The schema registry page: subjects (paged) with their latest version, each subject's versions with
 * their schemas, and a line diff between two versions of a subject ({@link TextDiff}). Avro and JSON
 * schemas are shown and diffed pretty-printed (one field per line), Protobuf as registered. Reads this
 * node's registry (every registry node replays the same {@code _schemas} log).
 */
final class SchemasPage {

  /** Versions listed per subject, newest first. */
  static final int MAX_VERSIONS = 200;
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  record Subject(String subject, int latestVersion, int latestId, String type, int versions, String compatibility) {}

  record SubjectList(int total, int offset, int limit, List<Subject> subjects, String globalCompatibility, long atMs) {}

  record Version(int version, int id, String type, String schema, List<String> references) {}

  record SubjectDetail(Subject subject, List<Version> versions, long atMs) {}

  record Diff(String subject, int from, int to, List<TextDiff.Line> lines, int added, int removed, long atMs) {}

  private final Sources s;

  SchemasPage(Sources sources) {
    this.s = sources;
  }

  SubjectList subjects(Paging paging) {
    SchemaRegistry registry = s.requireRegistry();
    List<String> all = registry.subjects(false, null).stream().filter(paging::matches).sorted().toList();
    List<Subject> rows = new ArrayList<>();
    for (String subject : paging.of(all)) {
      try {
        rows.add(summary(registry, subject));
      } catch (RegistryException e) {
        // deleted between the listing and now: left out
      }
    }
    return new SubjectList(all.size(), paging.offset(), paging.limit(), rows, registry.globalCompatibility(), s.nowMs());
  }

  SubjectDetail subject(String subject) {
    SchemaRegistry registry = s.requireRegistry();
    try {
      Subject summary = summary(registry, subject);
      List<Integer> versions = registry.versions(subject, false);
      List<Version> rows = new ArrayList<>();
      for (int i = versions.size() - 1; i >= 0 && rows.size() < MAX_VERSIONS; i--) {
        SchemaRecord r = registry.version(subject, Integer.toString(versions.get(i)), false);
        rows.add(new Version(r.version(), r.id(), r.type().name(), pretty(r), r.references().stream()
            .map(Object::toString).toList()));
      }
      return new SubjectDetail(summary, rows, s.nowMs());
    } catch (RegistryException e) {
      throw new Console.NotFound("no subject '" + subject + "' with versions in the registry");
    }
  }

  Diff diff(String subject, int from, int to) {
    SchemaRegistry registry = s.requireRegistry();
    SchemaRecord a;
    SchemaRecord b;
    try {
      a = registry.version(subject, Integer.toString(from), false);
      b = registry.version(subject, Integer.toString(to), false);
    } catch (RegistryException e) {
      throw new Console.NotFound("subject '" + subject + "' has no version " + from + " or " + to);
    }
    List<TextDiff.Line> lines;
    try {
      lines = TextDiff.diff(pretty(a), pretty(b));
    } catch (IllegalArgumentException e) {
      throw new Paging.BadParameter(e.getMessage());
    }
    int added = (int) lines.stream().filter(l -> l.op().equals("+")).count();
    int removed = (int) lines.stream().filter(l -> l.op().equals("-")).count();
    return new Diff(subject, from, to, lines, added, removed, s.nowMs());
  }

  private static Subject summary(SchemaRegistry registry, String subject) {
    List<Integer> versions = registry.versions(subject, false);
    SchemaRecord latest = registry.version(subject, "latest", false);
    return new Subject(subject, latest.version(), latest.id(), latest.type().name(), versions.size(),
        registry.subjectCompatibility(subject, true));
  }

  /** Avro and JSON Schema pretty-printed; anything that is not JSON as registered. */
  static String pretty(SchemaRecord r) {
    String text = r.schema();
    String trimmed = text.strip();
    if (!trimmed.startsWith("{") && !trimmed.startsWith("[") && !trimmed.startsWith("\"")) {
      return text;
    }
    try {
      return JSON.writeValueAsString(JSON.readTree(trimmed));
    } catch (JsonProcessingException e) {
      return text;
    }
  }
}
