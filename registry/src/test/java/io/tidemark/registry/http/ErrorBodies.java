package io.tidemark.registry.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;

/** Checks, independent of the product's own filter, that an error body carries no internals. Test helper. */
public final class ErrorBodies {

  private static final Pattern[] INTERNALS = {
      Pattern.compile("\\bat [\\w$]+\\.[\\w$.]+\\("),                        // a stack frame
      Pattern.compile("\\b(?:java|javax|jakarta|jdk|kotlin)\\.[a-z]+\\."),   // JDK class names
      Pattern.compile("\\b(?:org\\.apache|org\\.eclipse|com\\.fasterxml|com\\.google|io\\.javalin|io\\.tidemark|org\\.sqlite)\\."),
      Pattern.compile("\\b\\w+(?:Exception|Error)\\b"),                       // exception class names
      Pattern.compile("(?i)\\bsqlite\\b|\\bjdbc\\b|\\bSQL\\b"),
      Pattern.compile("\\b(?:SELECT|INSERT INTO|UPDATE|DELETE FROM)\\b"),
  };

  private ErrorBodies() {}

  /** The first internal {@code text} carries, or null. */
  public static String internalIn(String text) {
    for (Pattern p : INTERNALS) {
      var m = p.matcher(text);
      if (m.find()) {
        return m.group();
      }
    }
    return null;
  }

  public static void assertFreeOfInternals(String text) {
    assertThat(internalIn(text)).as("internals in the error body %s", text).isNull();
  }
}
