package io.tidemark.server.console;

import io.javalin.http.Context;
import java.util.List;

/**
 * One page of a list: {@code offset} (default 0) and {@code limit} (default {@value Console#DEFAULT_LIMIT},
 * at most {@value Console#MAX_LIMIT}), with an optional name filter {@code q} (a substring, at most 200 characters).
 */
record Paging(int offset, int limit, String query) {

  /** A query parameter out of its bounds; answered 400 with the reason. */
  static final class BadParameter extends RuntimeException {
    BadParameter(String message) {
      super(message);
    }
  }

  static Paging of(Context ctx) {
    String q = ctx.queryParam("q");
    if (q != null && q.length() > 200) {
      throw new BadParameter("query parameter q may have at most 200 characters");
    }
    return new Paging(intParam(ctx, "offset", 0, 0, 1_000_000_000), intParam(ctx, "limit", Console.DEFAULT_LIMIT, 1,
        Console.MAX_LIMIT), q == null ? "" : q);
  }

  static int intParam(Context ctx, String name, int defaultValue, int min, int max) {
    String raw = ctx.queryParam(name);
    if (raw == null || raw.isBlank()) {
      return defaultValue;
    }
    long value;
    try {
      value = Long.parseLong(raw.trim());
    } catch (NumberFormatException e) {
      throw new BadParameter("query parameter " + name + " must be a number");
    }
    if (value < min || value > max) {
      throw new BadParameter("query parameter " + name + " must be between " + min + " and " + max);
    }
    return (int) value;
  }

  boolean matches(String name) {
    return query.isEmpty() || name.contains(query);
  }

  /** This page of {@code all} (already filtered and sorted). */
  <T> List<T> of(List<T> all) {
    if (offset >= all.size()) {
      return List.of();
    }
    return all.subList(offset, Math.min(all.size(), offset + limit));
  }

  @Override
  public String toString() {
    return offset + ":" + limit + ":" + query;
  }
}
