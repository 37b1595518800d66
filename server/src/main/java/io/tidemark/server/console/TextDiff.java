package io.tidemark.server.console;

import java.util.ArrayList;
import java.util.List;

/**
 * A line diff of two texts (two versions of a schema), by longest common subsequence: each line of
 * the result is kept ({@code " "}), removed from the old text ({@code "-"}) or added in the new one
 * ({@code "+"}). Bounded: texts of more than {@value #MAX_LINES} lines are refused
 * ({@link IllegalArgumentException}), so one request costs at most about 4 MB and a few ms. Pure.
 */
final class TextDiff {

  static final int MAX_LINES = 1000;

  /** One line of the diff: {@code op} is one of {@code " "}, {@code "-"}, {@code "+"}. */
  record Line(String op, String text) {}

  private TextDiff() {}

  static List<Line> diff(String oldText, String newText) {
    String[] a = oldText.split("\n", -1);
    String[] b = newText.split("\n", -1);
    if (a.length > MAX_LINES || b.length > MAX_LINES) {
      throw new IllegalArgumentException("the schemas have " + a.length + " and " + b.length
          + " lines; the console diffs at most " + MAX_LINES + " lines each");
    }
    int[][] common = new int[a.length + 1][b.length + 1];
    for (int i = a.length - 1; i >= 0; i--) {
      for (int j = b.length - 1; j >= 0; j--) {
        common[i][j] = a[i].equals(b[j]) ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
      }
    }
    List<Line> out = new ArrayList<>();
    int i = 0;
    int j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i].equals(b[j])) {
        out.add(new Line(" ", a[i++]));
        j++;
      } else if (i < a.length && (j == b.length || common[i + 1][j] >= common[i][j + 1])) {
        out.add(new Line("-", a[i++]));
      } else {
        out.add(new Line("+", b[j++]));
      }
    }
    return out;
  }
}
