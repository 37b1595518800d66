package io.tidemark.registry.http;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;

/**
 * The per-request checks of {@link HttpGuard}, in front of the application: a declared
 * {@code Content-Length} over the limit and more than {@link HttpGuard#MAX_HEADER_FIELDS} header
 * fields are answered here (413, 431) and the connection closed; a path with a broken
 * percent-encoding is answered 400 here (routes would fail decoding it); every other request reaches the
 * application with a body stream that counts the bytes read, whatever the framing (length or chunked),
 * and throws {@link RequestBodyTooLargeException} once more than the limit has been read.
 * Stateless; one instance serves all request threads.
 */
final class GuardFilter implements Filter {

  private final HttpGuard guard;

  GuardFilter(HttpGuard guard) {
    this.guard = guard;
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    if (headerFields(request) > HttpGuard.MAX_HEADER_FIELDS) {
      guard.respond(response, 431, "Request has more than " + HttpGuard.MAX_HEADER_FIELDS + " header fields", true);
      HttpGuard.closeAfterAnswer(request);
      return;
    }
    if (!wellEncoded(request.getRequestURI()) || !wellEncoded(request.getQueryString())) {
      guard.respond(response, 400, "the request target has a '%' not followed by two hex digits", false);
      return;
    }
    long declared = request.getContentLengthLong();
    if (declared > guard.maxBodyBytes()) {
      guard.respond(response, 413, guard.tooLargeMessage(declared), true);
      HttpGuard.closeAfterAnswer(request);
      return;
    }
    LimitedRequest limited = new LimitedRequest(request, guard);
    chain.doFilter(limited, response);
    if (limited.exceeded() && !request.isAsyncStarted()) {
      // The 413 is written; a body may still be streaming in. Close rather than read it to its end.
      response.flushBuffer();
      HttpGuard.closeAfterAnswer(request);
    }
  }

  /** Whether every '%' in {@code uri} starts a two-hex-digit escape. */
  static boolean wellEncoded(String uri) {
    if (uri == null) {
      return true;
    }
    for (int i = uri.indexOf('%'); i >= 0; i = uri.indexOf('%', i + 1)) {
      if (i + 2 >= uri.length() || Character.digit(uri.charAt(i + 1), 16) < 0 || Character.digit(uri.charAt(i + 2), 16) < 0) {
        return false;
      }
    }
    return true;
  }

  private static int headerFields(HttpServletRequest request) {
    int count = 0;
    Enumeration<String> names = request.getHeaderNames();
    while (names.hasMoreElements()) {
      Enumeration<String> values = request.getHeaders(names.nextElement());
      while (values.hasMoreElements()) {
        values.nextElement();
        if (++count > HttpGuard.MAX_HEADER_FIELDS) {
          return count;
        }
      }
    }
    return count;
  }

  /** The request with its body stream bounded; the reader reads through the same stream. */
  private static final class LimitedRequest extends HttpServletRequestWrapper {
    private final HttpGuard guard;
    private LimitedStream stream;

    LimitedRequest(HttpServletRequest request, HttpGuard guard) {
      super(request);
      this.guard = guard;
    }

    boolean exceeded() {
      return stream != null && stream.exceeded;
    }

    @Override
    public ServletInputStream getInputStream() throws IOException {
      if (stream == null) {
        stream = new LimitedStream(super.getInputStream(), guard);
      }
      return stream;
    }

    @Override
    public BufferedReader getReader() throws IOException {
      String encoding = getCharacterEncoding();
      Charset charset = encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
      return new BufferedReader(new InputStreamReader(getInputStream(), charset));
    }
  }

  /** Counts what the application reads; past the limit it fails, and a failed read says why. */
  private static final class LimitedStream extends ServletInputStream {
    private final ServletInputStream in;
    private final HttpGuard guard;
    private long read;
    private boolean exceeded;

    LimitedStream(ServletInputStream in, HttpGuard guard) {
      this.in = in;
      this.guard = guard;
    }

    @Override
    public int read() throws IOException {
      int b = readChecked(() -> in.read());
      if (b >= 0) {
        count(1);
      }
      return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      // Never ask for more than one byte past the limit, so at most limit + 1 bytes are ever read.
      long room = guard.maxBodyBytes() + 1 - read;
      int n = readChecked(() -> in.read(buffer, offset, (int) Math.min(length, Math.max(1, room))));
      if (n > 0) {
        count(n);
      }
      return n;
    }

    private void count(int n) {
      read += n;
      if (read > guard.maxBodyBytes()) {
        exceeded = true;
        throw new RequestBodyTooLargeException(guard.tooLargeMessage(-1));
      }
    }

    private interface Read {
      int run() throws IOException;
    }

    private static int readChecked(Read read) {
      try {
        return read.run();
      } catch (IOException | RuntimeException e) { // Jetty reports broken chunking as an unchecked BadMessageException
        throw new RequestBodyUnreadableException(
            "the request body could not be read: the client closed the connection, stopped sending, or sent broken"
                + " chunked framing", e);
      }
    }

    @Override
    public int available() throws IOException {
      return in.available();
    }

    @Override
    public boolean isFinished() {
      return in.isFinished();
    }

    @Override
    public boolean isReady() {
      return in.isReady();
    }

    @Override
    public void setReadListener(ReadListener listener) {
      in.setReadListener(listener);
    }
  }
}
