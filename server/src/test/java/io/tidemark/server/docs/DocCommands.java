package io.tidemark.server.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The shell commands of the project's Markdown pages: every line of a fenced code block (of no
 * language, {@code bash}, {@code sh} or {@code shell}) with its continuation lines ({@code \} at the
 * end) joined, as one {@link Command} that knows its file and line.
 */
public final class DocCommands {

  /** One command as printed, where it is printed, and the text of its block after it (a here-document's input). */
  public record Command(Path file, int line, String text) {
    public String where() {
      return file.getFileName() + ":" + line;
    }

    /** The first word: the tool the command names. */
    public String tool() {
      String t = text.strip();
      int space = t.indexOf(' ');
      return space < 0 ? t : t.substring(0, space);
    }
  }

  private DocCommands() {}

  /** The repository's root (tests run in a module's directory). */
  public static Path repositoryRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !(Files.exists(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs")))) {
      dir = dir.getParent();
    }
    if (dir == null) {
      throw new IllegalStateException("no README.md with docs/ above " + Path.of("").toAbsolutePath());
    }
    return dir;
  }

  /** README.md and every docs/*.md, in name order. */
  public static List<Path> pages() {
    Path root = repositoryRoot();
    List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
    try (var docs = Files.list(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return pages;
  }

  /** Every command of every page. */
  public static List<Command> all() {
    List<Command> out = new ArrayList<>();
    for (Path page : pages()) {
      out.addAll(of(page));
    }
    return out;
  }

  /**
   * The words of a command as a POSIX shell splits them: blanks separate words, single quotes keep
   * everything, double quotes keep everything but {@code \"} and {@code \\}, a backslash outside
   * quotes keeps the next character. No expansion ({@code $}, globs) is done.
   */
  public static List<String> words(String command) {
    List<String> words = new ArrayList<>();
    StringBuilder word = null;
    for (int i = 0; i < command.length(); i++) {
      char c = command.charAt(i);
      if (c == ' ' || c == '\t') {
        if (word != null) {
          words.add(word.toString());
          word = null;
        }
        continue;
      }
      if (word == null) {
        word = new StringBuilder();
      }
      if (c == '\'') {
        int end = command.indexOf('\'', i + 1);
        if (end < 0) {
          throw new IllegalArgumentException("unclosed ' in: " + command);
        }
        word.append(command, i + 1, end);
        i = end;
      } else if (c == '"') {
        int j = i + 1;
        for (; j < command.length() && command.charAt(j) != '"'; j++) {
          char d = command.charAt(j);
          if (d == '\\' && j + 1 < command.length() && "\"\\$`".indexOf(command.charAt(j + 1)) >= 0) {
            j++;
            d = command.charAt(j);
          }
          word.append(d);
        }
        if (j >= command.length()) {
          throw new IllegalArgumentException("unclosed \" in: " + command);
        }
        i = j;
      } else if (c == '\\' && i + 1 < command.length()) {
        word.append(command.charAt(++i));
      } else {
        word.append(c);
      }
    }
    if (word != null) {
      words.add(word.toString());
    }
    return words;
  }

  /** The commands of one page. */
  public static List<Command> of(Path page) {
    List<String> lines;
    try {
      lines = Files.readAllLines(page);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<Command> out = new ArrayList<>();
    boolean inShell = false;
    boolean inOther = false;
    StringBuilder current = null;
    int start = 0;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      String fence = line.strip();
      if (fence.startsWith("```")) {
        if (inShell || inOther) {
          inShell = false;
          inOther = false;
          continue;
        }
        String language = fence.substring(3).strip();
        inShell = language.isEmpty() || language.equals("bash") || language.equals("sh") || language.equals("shell");
        inOther = !inShell;
        continue;
      }
      if (!inShell) {
        continue;
      }
      if (current == null) {
        if (line.isBlank() || line.strip().startsWith("#")) {
          continue;
        }
        current = new StringBuilder();
        start = i + 1;
      }
      if (line.endsWith("\\")) {
        current.append(line, 0, line.length() - 1).append(' ');
      } else {
        current.append(line);
        out.add(new Command(page, start, current.toString().strip()));
        current = null;
      }
    }
    return out;
  }
}
