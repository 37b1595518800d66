package io.tidemark.registry.http;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.Javalin;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpChannel;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.FilterHolder;
import org.eclipse.jetty.util.component.LifeCycle;
import org.slf4j.Logger;

/**
 * The limits and the error discipline every Tidemark HTTP endpoint installs (schema registry,
 * Iceberg REST catalog, admin/metrics): one place, so that the three endpoints cannot drift apart.
 *
 * <ul>
 *   <li><b>Bodies</b>: a servlet filter in front of the application ({@link GuardFilter}) refuses
 *       a declared {@code Content-Length} over the limit with 413 before anything is read, and
 *       hands the application a request whose body stream counts the bytes as they are read, so a
 *       chunked body (no length) fails with 413 as soon as it passes the limit; no more than the
 *       limit is ever buffered. A 413 closes the connection ({@code Connection: close}) so the
 *       rest of a body still streaming is never read.
 *   <li><b>Targets</b>: a path or query with a {@code %} not followed by two hex digits is a 400
 *       before any route decodes it.
 *   <li><b>Headers</b>: Jetty's request header size ({@value #MAX_HEADER_BYTES} bytes; larger get
 *       431 from Jetty's parser) and at most {@value #MAX_HEADER_FIELDS} header fields (431).
 *   <li><b>Stalls</b>: the connectors' idle timeout and Jetty's blocking-read timeout
 *       ({@code idleTimeoutMs}, default {@value #DEFAULT_IDLE_TIMEOUT_MS} ms), so a client that sends
 *       part of a body and stops holds a request thread for at most that long.
 *   <li><b>JSON</b>: {@link #bounded(ObjectMapper)} caps nesting ({@value #MAX_JSON_DEPTH}), number
 *       length ({@value #MAX_JSON_NUMBER_CHARS} characters) and string length (the body limit).
 *   <li><b>Errors</b>: every error body is the API's own JSON ({@link ErrorFormat}) with a status and
 *       a message. Jetty's own errors (bad request line, oversized headers, bad chunking) are
 *       rendered by {@link JsonErrorHandler}; an unexpected failure answers 500 with an incident
 *       number while the stack trace goes to the log under the same number; messages that would
 *       carry internals (class names, stack frames, SQL) are replaced ({@link #publicMessage}).
 * </ul>
 *
 * <p>Use: {@link #configure(JavalinConfig)} inside {@code Javalin.create}, then {@link #install(Javalin)}
 * before the routes; the API registers its own exception mappers after it (more specific types win).
 * Immutable apart from the incident counter; safe on every request thread.
 */
public final class HttpGuard {

  /** Request line plus headers, in bytes; Jetty answers 431 above it. Large enough for OAuth bearer tokens. */
  public static final int MAX_HEADER_BYTES = 16 * 1024;
  /** Header fields per request; more get 431. */
  public static final int MAX_HEADER_FIELDS = 100;
  /** How long a connection may stay silent, mid-request included, before Jetty closes it. */
  public static final long DEFAULT_IDLE_TIMEOUT_MS = 30_000;
  /**
   * How long a connection answered 413 or 431 may still deliver (discarded) bytes before it is closed
   * hard: long enough for the client to read the answer (closing at once could reset the connection
   * before it does), short enough that a body still streaming stops costing anything.
   */
  public static final long LINGER_MS = 1_000;
  /** Nesting levels of a JSON body (objects and arrays). */
  public static final int MAX_JSON_DEPTH = 256;
  /** Characters of one JSON number. */
  public static final int MAX_JSON_NUMBER_CHARS = 100;

  /** How one API writes its error bodies. */
  public interface ErrorFormat {
    /** Content type of the error bodies. */
    default String contentType() {
      return "application/json";
    }

    /** The body answering {@code status} with {@code message} (already free of internals). */
    String body(int status, String message);
  }

  /** Java packages of the JDK and of the libraries behind the endpoints (user namespaces like com.example pass). */
  private static final Pattern QUALIFIED_NAME = Pattern.compile("\\b(?:(?:java|javax|jakarta|jdk|sun|kotlin|scala)\\.[a-z]"
      + "|(?:org\\.(?:apache|eclipse|slf4j|sqlite|xerial|jdbi)|com\\.(?:fasterxml|google|networknt|zaxxer)"
      + "|io\\.(?:javalin|tidemark|micrometer|netty)|software\\.amazon)\\.)");
  private static final Pattern CLASS_NAME = Pattern.compile("\\b[A-Z]\\w*(?:Exception|Error)\\b");
  private static final Pattern STACK_FRAME = Pattern.compile("\\bat [\\w$.]+\\([\\w$.]*(?::\\d+)?\\)");
  private static final Pattern SQL = Pattern.compile("(?i:sqlite|\\bjdbc\\b|\\bsql\\b)"
      + "|\\b(?:SELECT|INSERT|UPDATE|DELETE)\\b[^.]*\\b(?:FROM|INTO|SET|WHERE)\\b|\\bCREATE TABLE\\b");

  private final String bodyLimitKey;
  private final long maxBodyBytes;
  private final long idleTimeoutMs;
  private final ErrorFormat format;
  private final Logger log;
  private final AtomicLong incidents = new AtomicLong();

  /**
   * @param bodyLimitKey the config key of the body limit, named in the 413 message
   * @param maxBodyBytes largest request body; more is refused with 413
   * @param idleTimeoutMs how long a connection may stall before it is closed
   * @param format the API's error bodies
   * @param log where failures are logged with their detail
   */
  public HttpGuard(String bodyLimitKey, long maxBodyBytes, long idleTimeoutMs, ErrorFormat format, Logger log) {
    this.bodyLimitKey = bodyLimitKey;
    this.maxBodyBytes = maxBodyBytes;
    this.idleTimeoutMs = idleTimeoutMs;
    this.format = format;
    this.log = log;
  }

  public HttpGuard(String bodyLimitKey, long maxBodyBytes, ErrorFormat format, Logger log) {
    this(bodyLimitKey, maxBodyBytes, DEFAULT_IDLE_TIMEOUT_MS, format, log);
  }

  /** Installs the limits into Jetty and Javalin; call inside {@code Javalin.create}. */
  public void configure(JavalinConfig cfg) {
    cfg.http.maxRequestSize = maxBodyBytes;
    cfg.jetty.modifyHttpConfiguration(http -> {
      http.setRequestHeaderSize(MAX_HEADER_BYTES);
      http.setIdleTimeout(idleTimeoutMs);
      // Dispatch at the end of the headers, not at the first body byte, so that a declared length over the
      // limit is refused at once instead of after the client starts sending (or the idle timeout).
      http.setDelayDispatchUntilContent(false);
      http.setSendServerVersion(false);
      http.setSendXPoweredBy(false);
    });
    JsonErrorHandler errors = new JsonErrorHandler(format);
    cfg.jetty.modifyServer(server -> {
      server.setErrorHandler(errors);
      // Connectors are added after this hook runs; set their idle timeout once the server starts.
      server.addEventListener(new LifeCycle.Listener() {
        @Override
        public void lifeCycleStarting(LifeCycle event) {
          for (Connector connector : server.getConnectors()) {
            if (connector instanceof ServerConnector c) {
              c.setIdleTimeout(idleTimeoutMs);
            }
          }
        }
      });
    });
    cfg.jetty.modifyServletContextHandler(context -> {
      context.setErrorHandler(errors);
      FilterHolder filter = new FilterHolder(new GuardFilter(this));
      filter.setAsyncSupported(true);
      context.addFilter(filter, "/*", EnumSet.of(DispatcherType.REQUEST));
    });
  }

  /**
   * Registers the exception mappers every endpoint shares: body too large (413, connection closed),
   * body unreadable (400, connection closed), Javalin's own responses (404, 405, ...) in the API's
   * format, and everything unexpected as a 500 without internals. Call before the API's own mappers.
   */
  public void install(Javalin app) {
    app.exception(RequestBodyTooLargeException.class, (e, ctx) -> {
      ctx.header("Connection", "close");
      respond(ctx, 413, e.getMessage()); // GuardFilter closes the connection once this is written
    });
    app.exception(RequestBodyUnreadableException.class, (e, ctx) -> {
      log.debug("{} {}: {}", ctx.method(), ctx.path(), e.getMessage(), e.getCause());
      ctx.header("Connection", "close");
      respond(ctx, 400, e.getMessage());
    });
    app.exception(HttpResponseException.class, (e, ctx) -> respond(ctx, e.getStatus(), publicMessage(e.getMessage(),
        HttpStatus.getMessage(e.getStatus()))));
    app.exception(Exception.class, (e, ctx) -> respond(ctx, 500, internalError(ctx, e)));
    // Errors (StackOverflowError, ...) are not Exceptions: Javalin sets 500 and leaves the body empty.
    app.error(500, ctx -> {
      if (ctx.result() == null || ctx.result().isEmpty()) {
        respond(ctx, 500, "internal error; the server log has the details");
      }
    });
  }

  /** Logs {@code e} with its stack trace under a new incident number and returns the public message. */
  public String internalError(Context ctx, Throwable e) {
    long incident = incidents.incrementAndGet();
    log.warn("{} {} failed (incident {})", ctx.method(), ctx.path(), incident, e);
    return "internal error (incident " + incident + "); the server log has the details";
  }

  /** Closes the connection of {@code request} {@link #LINGER_MS} from now, whatever the client still sends. */
  static void closeAfterAnswer(HttpServletRequest request) {
    Request base = Request.getBaseRequest(request);
    if (base == null || base.getHttpChannel() == null) {
      return;
    }
    HttpChannel channel = base.getHttpChannel();
    EndPoint endPoint = channel.getEndPoint();
    channel.getScheduler().schedule(endPoint::close, LINGER_MS, TimeUnit.MILLISECONDS);
  }

  /** The limit a body must stay within, in bytes. */
  long maxBodyBytes() {
    return maxBodyBytes;
  }

  /** The 413 message: what passed which limit, and the key that sets it. */
  String tooLargeMessage(long declaredLength) {
    String what = declaredLength >= 0 ? "Request body of " + declaredLength + " bytes" : "Request body";
    return what + " is larger than the limit of " + maxBodyBytes + " bytes (" + bodyLimitKey + ")";
  }

  private void respond(Context ctx, int status, String message) {
    message = publicMessage(message, "HTTP " + status);
    ctx.status(status);
    if (!ctx.method().name().equals("HEAD")) {
      ctx.contentType(format.contentType()).result(format.body(status, message));
    }
  }

  /** Answers {@code status} outside Javalin (the filter), in the API's format. */
  void respond(HttpServletResponse response, int status, String message, boolean close) throws IOException {
    response.setStatus(status);
    if (close) {
      response.setHeader("Connection", "close");
    }
    response.setContentType(format.contentType());
    byte[] body = format.body(status, message).getBytes(StandardCharsets.UTF_8);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
    response.flushBuffer();
  }

  // ---------------------------------------------------------------- messages

  /**
   * {@code message} if it carries no internals (qualified class names, exception class names,
   * stack frames, SQL), otherwise {@code fallback}. The last check before any message leaves.
   */
  public static String publicMessage(String message, String fallback) {
    if (message == null || message.isBlank() || !isPublic(message)) {
      return fallback;
    }
    return message;
  }

  /** Whether {@code text} is free of the internals an error body must not carry. */
  public static boolean isPublic(String text) {
    return !QUALIFIED_NAME.matcher(text).find() && !CLASS_NAME.matcher(text).find()
        && !STACK_FRAME.matcher(text).find() && !SQL.matcher(text).find();
  }

  /**
   * A message for a JSON body Jackson refused, built from what the client can act on (the limit
   * passed, the field path, the position) and never from Jackson's text, which names Java types.
   */
  public static String describe(JacksonException e) {
    JsonLocation at = e.getLocation();
    String where = at == null || at.getLineNr() < 0 ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
    if (e instanceof StreamConstraintsException) {
      return "the JSON body passes a limit (nesting deeper than " + MAX_JSON_DEPTH + ", a number longer than "
          + MAX_JSON_NUMBER_CHARS + " characters, or a string longer than the body limit)" + where;
    }
    if (e instanceof JsonMappingException mapping) {
      String path = path(mapping);
      String reason = mapping.getCause() == null ? null : mapping.getCause().getMessage();
      String detail = reason == null ? "" : ": " + publicMessage(reason, "invalid value");
      return "the JSON body does not have the expected shape" + (path.isEmpty() ? "" : " at " + path) + where + detail;
    }
    return "malformed JSON" + where + ": " + publicMessage(e.getOriginalMessage(), "unexpected content");
  }

  private static String path(JsonMappingException e) {
    StringBuilder path = new StringBuilder();
    for (JsonMappingException.Reference ref : e.getPath()) {
      if (ref.getFieldName() != null) {
        path.append(path.isEmpty() ? "" : ".").append(ref.getFieldName());
      } else if (ref.getIndex() >= 0) {
        path.append('[').append(ref.getIndex()).append(']');
      }
    }
    return path.toString();
  }

  /** {@code mapper} with its parser bounded: nesting, number length, string length. */
  public static <M extends ObjectMapper> M bounded(M mapper, long maxBodyBytes) {
    mapper.getFactory().setStreamReadConstraints(StreamReadConstraints.builder()
        .maxNestingDepth(MAX_JSON_DEPTH)
        .maxNumberLength(MAX_JSON_NUMBER_CHARS)
        .maxStringLength((int) Math.min(Integer.MAX_VALUE, Math.max(1024, maxBodyBytes)))
        .build());
    return mapper;
  }
}
