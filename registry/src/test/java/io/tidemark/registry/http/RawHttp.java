package io.tidemark.registry.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a raw socket, for requests no well-behaved client sends (broken framing, stalled
 * bodies, oversized headers) and for reading exactly what the server answered. Test helper.
 */
public final class RawHttp {

  private RawHttp() {}

  /** What came back: the status (-1 when the connection closed without an answer), headers, body. */
  public record Response(int status, Map<String, String> headers, byte[] body) {
    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }

    @Override
    public String toString() {
      String text = text();
      return status + " " + headers + " " + (text.length() > 400 ? text.substring(0, 400) + "..." : text);
    }
  }

  /** Sends {@code request} whole, half-closes, and reads the answer (at most {@code maxBytes}). */
  public static Response exchange(int port, byte[] request, int timeoutMs, int maxBytes) throws IOException {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), timeoutMs);
      socket.setSoTimeout(timeoutMs);
      OutputStream out = socket.getOutputStream();
      try {
        out.write(request);
        out.flush();
        socket.shutdownOutput();
      } catch (IOException e) {
        // the server may answer and close before it read everything (413, 431); read what it said
      }
      return read(socket.getInputStream(), maxBytes);
    }
  }

  /** The request line, headers (with CRLFs) and the blank line; the body follows separately. */
  public static byte[] head(String method, String target, Map<String, String> headers) {
    StringBuilder head = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n");
    headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
    return head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  /** {@code data} as one chunk of chunked transfer coding. */
  public static byte[] chunk(byte[] data) {
    byte[] size = (Integer.toHexString(data.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
    byte[] chunk = new byte[size.length + data.length + 2];
    System.arraycopy(size, 0, chunk, 0, size.length);
    System.arraycopy(data, 0, chunk, size.length, data.length);
    chunk[chunk.length - 2] = '\r';
    chunk[chunk.length - 1] = '\n';
    return chunk;
  }

  /** The last chunk. */
  public static byte[] lastChunk() {
    return "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  }

  /** Reads one response; a connection closed or timed out before a status line gives status -1. */
  public static Response read(InputStream in, int maxBytes) throws IOException {
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    int headEnd = -1;
    byte[] buffer = new byte[8192];
    try {
      while (headEnd < 0) {
        int n = in.read(buffer);
        if (n < 0) {
          break;
        }
        raw.write(buffer, 0, n);
        headEnd = indexOf(raw.toByteArray(), "\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        if (raw.size() > maxBytes) {
          throw new IOException("response head longer than " + maxBytes + " bytes");
        }
      }
    } catch (SocketTimeoutException | java.net.SocketException e) {
      if (headEnd < 0) {
        return new Response(-1, Map.of(), raw.toByteArray());
      }
    }
    byte[] all = raw.toByteArray();
    if (headEnd < 0) {
      return new Response(-1, Map.of(), all);
    }
    String[] lines = new String(all, 0, headEnd, StandardCharsets.ISO_8859_1).split("\r\n");
    String[] statusLine = lines[0].split(" ", 3);
    int status = Integer.parseInt(statusLine[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
      }
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.write(all, headEnd + 4, all.length - headEnd - 4);
    String length = headers.get("content-length");
    boolean chunked = "chunked".equalsIgnoreCase(headers.get("transfer-encoding"));
    long expected = length == null ? Long.MAX_VALUE : Long.parseLong(length);
    try {
      while (body.size() < expected && body.size() <= maxBytes) {
        if (chunked && endsWith(body.toByteArray(), "0\r\n\r\n")) {
          break;
        }
        int n = in.read(buffer);
        if (n < 0) {
          break;
        }
        body.write(buffer, 0, n);
      }
    } catch (SocketTimeoutException | java.net.SocketException e) {
      // keep what arrived
    }
    byte[] bytes = chunked ? dechunk(body.toByteArray()) : body.toByteArray();
    if ("gzip".equalsIgnoreCase(headers.get("content-encoding"))) {
      try (InputStream gunzip = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(bytes))) {
        bytes = gunzip.readNBytes(maxBytes);
      }
    }
    return new Response(status, headers, bytes);
  }

  private static byte[] dechunk(byte[] data) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int pos = 0;
    while (pos < data.length) {
      int lineEnd = indexOf(data, pos, "\r\n".getBytes(StandardCharsets.US_ASCII));
      if (lineEnd < 0) {
        break;
      }
      String sizeText = new String(data, pos, lineEnd - pos, StandardCharsets.US_ASCII).split(";")[0].trim();
      int size;
      try {
        size = Integer.parseInt(sizeText, 16);
      } catch (NumberFormatException e) {
        break;
      }
      if (size == 0) {
        break;
      }
      int start = lineEnd + 2;
      int end = Math.min(data.length, start + size);
      out.write(data, start, end - start);
      pos = end + 2;
    }
    return out.toByteArray();
  }

  private static boolean endsWith(byte[] data, String suffix) {
    byte[] s = suffix.getBytes(StandardCharsets.US_ASCII);
    if (data.length < s.length) {
      return false;
    }
    for (int i = 0; i < s.length; i++) {
      if (data[data.length - s.length + i] != s[i]) {
        return false;
      }
    }
    return true;
  }

  private static int indexOf(byte[] data, byte[] pattern) {
    return indexOf(data, 0, pattern);
  }

  private static int indexOf(byte[] data, int from, byte[] pattern) {
    outer:
    for (int i = from; i <= data.length - pattern.length; i++) {
      for (int j = 0; j < pattern.length; j++) {
        if (data[i + j] != pattern[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
