package io.tidemark.registry.cluster;

import io.tidemark.registry.RegistryError;
import io.tidemark.registry.RegistryException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/**
 * Sends one registry write to the leading registry and hands back its answer unchanged (status,
 * content type, body), so a client talking to any node sees exactly what the writer said. A
 * forwarded request carries {@link #FORWARDED_HEADER}; a node receiving one never forwards it again
 * (leadership moved in between: the client gets {@code 50004} and retries), so requests cannot loop.
 *
 * <p>Thread-safe: one shared {@link HttpClient}; each call blocks its request thread for at most
 * the timeout given at construction.
 */
public final class WriteForwarder {
  /** Marks a request that one registry already forwarded to another. */
  public static final String FORWARDED_HEADER = "X-Tidemark-Forwarded";
  private static final String[] COPIED_HEADERS = {"Content-Type", "Accept", "Authorization"};

  /** The leader's answer, relayed as is. */
  public record Answer(int status, String contentType, byte[] body) {
    public boolean succeeded() {
      return status >= 200 && status < 300;
    }
  }

  /** A request header by name, as the receiving HTTP layer exposes them. */
  @FunctionalInterface
  public interface Headers {
    String get(String name);
  }

  private final HttpClient client;
  private final Duration timeout;

  public WriteForwarder(Duration timeout) {
    this.timeout = timeout;
    this.client = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NEVER).build();
  }

  /**
   * Forwards {@code method pathAndQuery} with {@code body} to {@code leader}. Throws a registry
   * exception with {@code 50003} when the leader cannot be reached or does not answer in time; the
   * write may or may not have been applied then, as with any timed-out write.
   */
  public Answer forward(URI leader, String method, String pathAndQuery, byte[] body, Headers headers) {
    HttpRequest.Builder request = HttpRequest.newBuilder(leader.resolve(pathAndQuery)).timeout(timeout)
        .method(method, body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body))
        .header(FORWARDED_HEADER, "1");
    for (String name : COPIED_HEADERS) {
      String value = headers.get(name);
      if (value != null && !value.isEmpty()) {
        request.header(name, value);
      }
    }
    try {
      HttpResponse<byte[]> response = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
      Optional<String> type = response.headers().firstValue("Content-Type");
      return new Answer(response.statusCode(), type.orElse("application/json"), response.body());
    } catch (IOException e) {
      // The cause stays on the exception for the log; the client gets the outcome without internals.
      throw new RegistryException(RegistryError.FORWARD_FAILED, "Error while forwarding the request to the leader "
          + leader + ": it could not be reached or did not answer in time; retry the request", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw RegistryError.FORWARD_FAILED.exception("Interrupted while forwarding the request to the leader " + leader);
    }
  }
}
