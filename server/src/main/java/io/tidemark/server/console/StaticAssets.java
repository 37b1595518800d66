package io.tidemark.server.console;

import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The console's files (HTML, JavaScript modules, CSS), read once from the jar into memory and served
 * by name from a fixed list: nothing is looked up by a path the client sends, and nothing is fetched
 * from anywhere else (the Content-Security-Policy allows only this origin). Immutable.
 */
final class StaticAssets {

  private static final String BASE = "/io/tidemark/server/console/";
  /** Every file the console serves, with its media type. */
  static final Map<String, String> FILES = Map.of(
      "index.html", "text/html; charset=utf-8",
      "app.js", "text/javascript; charset=utf-8",
      "pages.js", "text/javascript; charset=utf-8",
      "dom.js", "text/javascript; charset=utf-8",
      "style.css", "text/css; charset=utf-8");
  private static final String POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
      + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

  private final Map<String, byte[]> contents;

  private StaticAssets(Map<String, byte[]> contents) {
    this.contents = contents;
  }

  static StaticAssets load() {
    Map<String, byte[]> contents = new LinkedHashMap<>();
    for (String name : FILES.keySet()) {
      try (InputStream in = StaticAssets.class.getResourceAsStream(BASE + name)) {
        if (in == null) {
          throw new IllegalStateException("the console's " + name + " is missing from the jar (" + BASE + name + ")");
        }
        contents.put(name, in.readAllBytes());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return new StaticAssets(Map.copyOf(contents));
  }

  void serve(Context ctx, String name) {
    byte[] body = contents.get(name);
    if (body == null) {
      ctx.status(HttpStatus.NOT_FOUND).json(Map.of("error", "Not Found", "error_code", 404,
          "message", "the console has no such file"));
      return;
    }
    ctx.header("Content-Security-Policy", POLICY)
        .header("X-Content-Type-Options", "nosniff")
        .header("Referrer-Policy", "no-referrer")
        .header("Cache-Control", "no-cache")
        .contentType(FILES.get(name))
        .result(body);
  }
}
