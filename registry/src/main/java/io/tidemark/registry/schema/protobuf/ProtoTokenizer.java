package io.tidemark.registry.schema.protobuf;

import io.tidemark.registry.schema.InvalidSchemaException;

/**
 * Splits .proto text into tokens: identifiers (dotted names included), numbers, quoted strings and
 * single-character symbols; comments and whitespace are skipped. Tracks the line for error messages.
 * Single use, not thread-safe.
 */
final class ProtoTokenizer {
  enum Kind { IDENT, NUMBER, STRING, SYMBOL, EOF }

  record Token(Kind kind, String text, int line) {
    boolean is(String s) {
      return (kind == Kind.IDENT || kind == Kind.SYMBOL) && text.equals(s);
    }
  }

  private final String source;
  private int pos;
  private int line = 1;
  private Token peeked;

  ProtoTokenizer(String source) {
    this.source = source;
  }

  Token peek() {
    if (peeked == null) {
      peeked = read();
    }
    return peeked;
  }

  Token next() {
    Token t = peek();
    peeked = null;
    return t;
  }

  int line() {
    return peek().line();
  }

  private Token read() {
    skipSpaceAndComments();
    if (pos >= source.length()) {
      return new Token(Kind.EOF, "<end of schema>", line);
    }
    char c = source.charAt(pos);
    int start = pos;
    if (Character.isLetter(c) || c == '_' || (c == '.' && pos + 1 < source.length() && Character.isLetter(source.charAt(pos + 1)))) {
      pos++;
      while (pos < source.length() && (Character.isLetterOrDigit(source.charAt(pos)) || source.charAt(pos) == '_' || source.charAt(pos) == '.')) {
        pos++;
      }
      return new Token(Kind.IDENT, source.substring(start, pos), line);
    }
    if (Character.isDigit(c) || (c == '.' && pos + 1 < source.length() && Character.isDigit(source.charAt(pos + 1)))) {
      pos++;
      while (pos < source.length() && (Character.isLetterOrDigit(source.charAt(pos)) || source.charAt(pos) == '.'
          || ((source.charAt(pos) == '-' || source.charAt(pos) == '+') && (source.charAt(pos - 1) == 'e' || source.charAt(pos - 1) == 'E')))) {
        pos++;
      }
      return new Token(Kind.NUMBER, source.substring(start, pos), line);
    }
    if (c == '"' || c == '\'') {
      return new Token(Kind.STRING, readString(c), line);
    }
    pos++;
    return new Token(Kind.SYMBOL, String.valueOf(c), line);
  }

  private String readString(char quote) {
    StringBuilder out = new StringBuilder();
    pos++;
    while (true) {
      if (pos >= source.length() || source.charAt(pos) == '\n') {
        throw new InvalidSchemaException("unterminated string at line " + line);
      }
      char c = source.charAt(pos++);
      if (c == quote) {
        return out.toString();
      }
      if (c == '\\' && pos < source.length()) {
        char e = source.charAt(pos++);
        switch (e) {
          case 'n' -> out.append('\n');
          case 't' -> out.append('\t');
          case 'r' -> out.append('\r');
          case '0' -> out.append('\0');
          default -> out.append(e);
        }
      } else {
        out.append(c);
      }
    }
  }

  private void skipSpaceAndComments() {
    while (pos < source.length()) {
      char c = source.charAt(pos);
      if (c == '\n') {
        line++;
        pos++;
      } else if (Character.isWhitespace(c)) {
        pos++;
      } else if (source.startsWith("//", pos)) {
        while (pos < source.length() && source.charAt(pos) != '\n') {
          pos++;
        }
      } else if (source.startsWith("/*", pos)) {
        int end = source.indexOf("*/", pos + 2);
        if (end < 0) {
          throw new InvalidSchemaException("unterminated comment at line " + line);
        }
        for (int i = pos; i < end; i++) {
          if (source.charAt(i) == '\n') {
            line++;
          }
        }
        pos = end + 2;
      } else {
        return;
      }
    }
  }
}
