package io.tidemark.table.sync;

import io.tidemark.table.convert.KafkaColumns;
import io.tidemark.table.convert.RecordConverter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.iceberg.data.Record;

/**
 * A record schema that evolves step by step (add a field, add a field to a struct, widen int to
 * long or float to double, make a field optional), its versions as Avro schemas, random values of
 * each version, and what a table row must hold for a value: {@link #expected} and {@link #actual}
 * bring both sides to one form (integers as long, floating point as double, text as string,
 * structs as maps, nulls left out) so that a table row is checked value by value. Immutable.
 */
final class EvolvingSchema {

  enum Kind { INT, LONG, FLOAT, DOUBLE, STRING, STRUCT }

  /** One field; {@code nested} holds a struct's fields (primitives), empty otherwise. */
  record Field(String name, Kind kind, boolean optional, List<Field> nested) {

    Field withKind(Kind k) {
      return new Field(name, k, optional, nested);
    }

    Field optionalNow() {
      return new Field(name, kind, true, nested);
    }

    Field withNested(List<Field> n) {
      return new Field(name, kind, optional, n);
    }
  }

  /** A change from one version to the next; {@code pick} chooses among the fields it applies to (modulo their count). */
  sealed interface Step permits AddField, AddNested, Widen, MakeOptional {}

  /** Adds a top-level field of {@code kind} (a struct gets one string field). */
  record AddField(Kind kind) implements Step {}

  /** Adds a field of {@code kind} (a primitive) to a struct field; adds a struct when there is none. */
  record AddNested(int pick, Kind kind) implements Step {}

  /** Widens an int field to long or a float field to double, at any depth; nothing when there is none. */
  record Widen(int pick) implements Step {}

  /** Makes a required field optional, at any depth; nothing when all are optional. */
  record MakeOptional(int pick) implements Step {}

  /** The versions, oldest first: {@code versions.get(0)} is the starting schema. */
  final List<List<Field>> versions = new ArrayList<>();
  final List<Schema> avro = new ArrayList<>();
  private final boolean flatten;
  private int names;

  EvolvingSchema(List<Step> steps, boolean flatten) {
    this.flatten = flatten;
    List<Field> first = List.of(new Field(name("f"), Kind.INT, false, List.of()), new Field(name("f"), Kind.STRING, false, List.of()),
        new Field(name("s"), Kind.STRUCT, false, List.of(new Field(name("n"), Kind.FLOAT, false, List.of()))));
    add(first);
    for (Step step : steps) {
      add(apply(versions.getLast(), step));
    }
  }

  private String name(String prefix) {
    return prefix + (names++);
  }

  private void add(List<Field> fields) {
    versions.add(List.copyOf(fields));
    avro.add(new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"Row\",\"fields\":" + avroFields(fields) + "}"));
  }

  private List<Field> apply(List<Field> fields, Step step) {
    List<Field> out = new ArrayList<>(fields);
    switch (step) {
      case AddField a -> out.add(a.kind() == Kind.STRUCT
          ? new Field(name("s"), Kind.STRUCT, false, List.of(new Field(name("n"), Kind.STRING, false, List.of())))
          : new Field(name("f"), a.kind(), false, List.of()));
      case AddNested a -> {
        List<Integer> structs = new ArrayList<>();
        for (int i = 0; i < out.size(); i++) {
          if (out.get(i).kind() == Kind.STRUCT) {
            structs.add(i);
          }
        }
        Kind kind = a.kind() == Kind.STRUCT ? Kind.STRING : a.kind();
        Field added = new Field(name("n"), kind, false, List.of());
        if (structs.isEmpty()) {
          out.add(new Field(name("s"), Kind.STRUCT, false, List.of(added)));
        } else {
          int i = structs.get(Math.floorMod(a.pick(), structs.size()));
          List<Field> nested = new ArrayList<>(out.get(i).nested());
          nested.add(added);
          out.set(i, out.get(i).withNested(nested));
        }
      }
      case Widen w -> change(out, w.pick(), f -> f.kind() == Kind.INT || f.kind() == Kind.FLOAT,
          f -> f.withKind(f.kind() == Kind.INT ? Kind.LONG : Kind.DOUBLE));
      case MakeOptional m -> change(out, m.pick(), f -> !f.optional(), Field::optionalNow);
    }
    return out;
  }

  /** Replaces the {@code pick}-th field (any depth) that {@code applies} with {@code how} of it. */
  private static void change(List<Field> fields, int pick, java.util.function.Predicate<Field> applies,
      java.util.function.UnaryOperator<Field> how) {
    List<int[]> candidates = new ArrayList<>(); // {top, nested or -1}
    for (int i = 0; i < fields.size(); i++) {
      if (applies.test(fields.get(i))) {
        candidates.add(new int[] {i, -1});
      }
      for (int j = 0; j < fields.get(i).nested().size(); j++) {
        if (applies.test(fields.get(i).nested().get(j))) {
          candidates.add(new int[] {i, j});
        }
      }
    }
    if (candidates.isEmpty()) {
      return;
    }
    int[] c = candidates.get(Math.floorMod(pick, candidates.size()));
    Field top = fields.get(c[0]);
    if (c[1] < 0) {
      fields.set(c[0], how.apply(top));
    } else {
      List<Field> nested = new ArrayList<>(top.nested());
      nested.set(c[1], how.apply(nested.get(c[1])));
      fields.set(c[0], top.withNested(nested));
    }
  }

  private static String avroFields(List<Field> fields) {
    List<String> out = new ArrayList<>();
    for (Field f : fields) {
      String type = switch (f.kind()) {
        case INT -> "\"int\"";
        case LONG -> "\"long\"";
        case FLOAT -> "\"float\"";
        case DOUBLE -> "\"double\"";
        case STRING -> "\"string\"";
        case STRUCT -> "{\"type\":\"record\",\"name\":\"R_" + f.name() + "\",\"fields\":" + avroFields(f.nested()) + "}";
      };
      out.add(f.optional() ? "{\"name\":\"" + f.name() + "\",\"type\":[\"null\"," + type + "],\"default\":null}"
          : "{\"name\":\"" + f.name() + "\",\"type\":" + type + "}");
    }
    return "[" + String.join(",", out) + "]";
  }

  /** A random value of version {@code version} (optional fields are null a third of the time). */
  GenericData.Record randomValue(int version, Random random) {
    return record(avro.get(version), versions.get(version), random);
  }

  private static GenericData.Record record(Schema schema, List<Field> fields, Random random) {
    GenericData.Record r = new GenericData.Record(schema);
    for (Field f : fields) {
      if (f.optional() && random.nextInt(3) == 0) {
        continue;
      }
      r.put(f.name(), switch (f.kind()) {
        case INT -> random.nextInt();
        case LONG -> random.nextLong();
        case FLOAT -> random.nextFloat() * 1000;
        case DOUBLE -> random.nextDouble() * 1e9;
        case STRING -> "v" + random.nextInt(1_000_000);
        case STRUCT -> record(nonNull(schema.getField(f.name()).schema()), f.nested(), random);
      });
    }
    return r;
  }

  private static Schema nonNull(Schema s) {
    return s.getType() == Schema.Type.UNION ? s.getTypes().get(1) : s;
  }

  /** The value columns a table row must hold for {@code value} (of any version). */
  Map<String, Object> expected(GenericData.Record value) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (Schema.Field f : value.getSchema().getFields()) {
      Object v = value.get(f.name());
      if (v == null) {
        continue;
      }
      if (v instanceof GenericData.Record nested) {
        Map<String, Object> inner = expected(nested);
        if (flatten) {
          inner.forEach((k, x) -> out.put(f.name() + RecordConverter.FLATTEN_SEPARATOR + k, x));
        } else {
          out.put(f.name(), inner);
        }
      } else {
        out.put(f.name(), normal(v));
      }
    }
    return out;
  }

  /** The value columns of a row read back from the table, in the form of {@link #expected}. */
  static Map<String, Object> actual(Record row) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (org.apache.iceberg.types.Types.NestedField f : row.struct().fields()) {
      Object v = row.getField(f.name());
      if (v == null || f.name().startsWith(KafkaColumns.PREFIX)) {
        continue;
      }
      out.put(f.name(), v instanceof Record nested ? actual(nested) : normal(v));
    }
    return out;
  }

  private static Object normal(Object v) {
    return switch (v) {
      case Integer i -> i.longValue();
      case Float f -> f.doubleValue();
      case CharSequence s -> s.toString();
      default -> v;
    };
  }

  @Override
  public String toString() {
    return "versions " + versions;
  }
}
