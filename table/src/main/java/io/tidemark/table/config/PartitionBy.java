package io.tidemark.table.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Term;

/**
 * The parsed {@code table.topic.partition.by} list, e.g. {@code [day(ts), bucket(user_id, 16),
 * truncate(name, 4), region]}: each entry an Iceberg transform of one column (identity, year,
 * month, day, hour, bucket, truncate). Immutable.
 */
public record PartitionBy(List<Field> fields) {

  /** One partition field: {@code transform} of {@code column}, with {@code width} for bucket and truncate (else 0). */
  public record Field(String transform, String column, int width) {

    /** The Iceberg term for {@link org.apache.iceberg.UpdatePartitionSpec#addField(Term)}. */
    public Term term() {
      return switch (transform) {
        case "identity" -> Expressions.ref(column);
        case "year" -> Expressions.year(column);
        case "month" -> Expressions.month(column);
        case "day" -> Expressions.day(column);
        case "hour" -> Expressions.hour(column);
        case "bucket" -> Expressions.bucket(column, width);
        case "truncate" -> Expressions.truncate(column, width);
        default -> throw new IllegalStateException(transform);
      };
    }

    /** The transform as Iceberg prints it in a spec ({@code identity}, {@code day}, {@code bucket[16]}, ...). */
    public String icebergTransform() {
      return width > 0 ? transform + "[" + width + "]" : transform;
    }
  }

  private static final Pattern CALL = Pattern.compile("([a-z]+)\\(\\s*([^,()\\s]+)\\s*(?:,\\s*(\\d+)\\s*)?\\)");
  private static final Pattern NAME = Pattern.compile("[^,()\\s\\[\\]]+");

  public PartitionBy {
    fields = List.copyOf(fields);
  }

  public static PartitionBy parse(String text) {
    String body = text.trim();
    if (body.startsWith("[") && body.endsWith("]")) {
      body = body.substring(1, body.length() - 1);
    }
    List<Field> out = new ArrayList<>();
    if (body.isBlank()) {
      return new PartitionBy(out);
    }
    for (String entry : splitTopLevel(body)) {
      String e = entry.trim();
      Matcher call = CALL.matcher(e);
      if (call.matches()) {
        String transform = call.group(1).toLowerCase(Locale.ROOT);
        String column = call.group(2);
        boolean needsWidth = transform.equals("bucket") || transform.equals("truncate");
        if (needsWidth != (call.group(3) != null)) {
          throw bad(text, e + (needsWidth ? " needs a width, e.g. " + transform + "(" + column + ", 16)" : " takes no width"));
        }
        int width = needsWidth ? Integer.parseInt(call.group(3)) : 0;
        if (needsWidth && width <= 0) {
          throw bad(text, e + " needs a positive width");
        }
        if (!List.of("identity", "year", "month", "day", "hour", "bucket", "truncate").contains(transform)) {
          throw bad(text, "unknown transform " + transform + " (identity, year, month, day, hour, bucket, truncate)");
        }
        out.add(new Field(transform, column, width));
      } else if (NAME.matcher(e).matches()) {
        out.add(new Field("identity", e, 0));
      } else {
        throw bad(text, "cannot read '" + e + "'");
      }
    }
    return new PartitionBy(out);
  }

  private static List<String> splitTopLevel(String body) {
    List<String> parts = new ArrayList<>();
    int depth = 0;
    int from = 0;
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (c == ',' && depth == 0) {
        parts.add(body.substring(from, i));
        from = i + 1;
      }
    }
    parts.add(body.substring(from));
    return parts;
  }

  private static IllegalArgumentException bad(String text, String why) {
    return new IllegalArgumentException(TableTopicConfig.PARTITION_BY + "=" + text + " is invalid: " + why);
  }
}
