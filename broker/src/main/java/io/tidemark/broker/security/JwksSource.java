package io.tidemark.broker.security;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JSON Web Key Set of {@code sasl.oauthbearer.jwks.endpoint.url}, kept current: a
 * {@code file:} URL (or a plain path) is read, an {@code http(s):} URL fetched (at most
 * {@link #MAX_BYTES}, with a timeout), first at start and then every
 * {@code sasl.oauthbearer.jwks.endpoint.refresh.ms}. A failed load keeps the previous set and is
 * retried with a backoff growing from {@code ...retry.backoff.ms} to {@code ...retry.backoff.max.ms};
 * until a first set loads every token is refused. A token naming an unknown key id asks for an
 * early refresh ({@link #refreshSoon}), at most once per {@code ...retry.backoff.max.ms}.
 *
 * <p>Threading: one daemon thread of its own loads the set; readers see the last loaded set through
 * a volatile field (never block on the network). {@link #close()} stops the thread.
 */
public final class JwksSource implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(JwksSource.class);

  /** A key set document larger than this is refused. */
  public static final int MAX_BYTES = 1 << 20;

  private final String url;
  private final long refreshMs;
  private final long backoffMs;
  private final long backoffMaxMs;
  private final LongSupplier clockMs;
  private final ScheduledExecutorService loader;
  private final HttpClient http;
  private volatile JsonWebKeySet current;
  /** Owned by the loader thread. */
  private long failures;
  private ScheduledFuture<?> next;
  private volatile long lastEarlyRefreshMs = Long.MIN_VALUE / 2;

  public JwksSource(String url, long refreshMs, long backoffMs, long backoffMaxMs, LongSupplier clockMs) {
    this.url = url.trim();
    this.refreshMs = refreshMs;
    this.backoffMs = Math.max(1, backoffMs);
    this.backoffMaxMs = Math.max(this.backoffMs, backoffMaxMs);
    this.clockMs = clockMs;
    this.http = this.url.startsWith("http") ? HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
        .followRedirects(HttpClient.Redirect.NEVER).build() : null;
    this.loader = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "jwks-loader");
      t.setDaemon(true);
      return t;
    });
  }

  /** Loads the set once now (waiting at most {@code waitMs} for it) and keeps it current afterwards. */
  public JwksSource start(long waitMs) {
    try {
      loader.submit(this::load).get(waitMs, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      log.warn("the JSON Web Key Set at {} did not load within {} ms; OAUTHBEARER tokens are refused until it does",
          url, waitMs);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException e) {
      log.warn("loading the JSON Web Key Set at {} failed: {}", url, e.getCause().toString());
    }
    return this;
  }

  /** The last set loaded, or null when none has loaded yet. */
  public JsonWebKeySet current() {
    return current;
  }

  /** Asks for a refresh now (a token named an unknown key id); at most once per retry.backoff.max.ms. */
  public void refreshSoon(String kid) {
    long now = clockMs.getAsLong();
    if (now - lastEarlyRefreshMs < backoffMaxMs) {
      return;
    }
    lastEarlyRefreshMs = now;
    log.info("a token names key id {}, which the key set does not hold; refreshing {}", kid, url);
    try {
      loader.execute(this::load);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // closing
    }
  }

  private void load() {
    if (next != null) {
      next.cancel(false);
    }
    long delay;
    try {
      JsonWebKeySet set = JsonWebKeySet.parse(fetch());
      if (current == null || !current.keys().equals(set.keys())) {
        log.info("loaded {} keys from the JSON Web Key Set at {}", set.keys().size(), url);
      }
      current = set;
      failures = 0;
      delay = refreshMs;
    } catch (IOException | RuntimeException e) {
      failures++;
      delay = Math.min(backoffMaxMs, backoffMs << Math.min(20, failures - 1));
      log.warn("loading the JSON Web Key Set at {} failed ({}); {}, retrying in {} ms", url, e.getMessage(),
          current == null ? "OAUTHBEARER tokens are refused until it loads" : "the previous set stays in use", delay);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    if (delay > 0) {
      next = loader.schedule(this::load, delay, TimeUnit.MILLISECONDS);
    }
  }

  private byte[] fetch() throws IOException, InterruptedException {
    if (http == null) {
      Path path = url.startsWith("file:") ? Path.of(URI.create(url)) : Path.of(url);
      if (Files.size(path) > MAX_BYTES) {
        throw new IOException(path + " is larger than " + MAX_BYTES + " bytes");
      }
      return Files.readAllBytes(path);
    }
    HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
        .header("Accept", "application/json").GET().build();
    HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream in = response.body()) {
      if (response.statusCode() != 200) {
        throw new IOException("HTTP " + response.statusCode());
      }
      byte[] body = in.readNBytes(MAX_BYTES + 1);
      if (body.length > MAX_BYTES) {
        throw new IOException("the answer is larger than " + MAX_BYTES + " bytes");
      }
      return body;
    }
  }

  @Override
  public void close() {
    loader.shutdownNow();
    if (http != null) {
      http.close();
    }
  }
}
