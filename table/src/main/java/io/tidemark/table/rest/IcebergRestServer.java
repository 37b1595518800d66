package io.tidemark.table.rest;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.tidemark.registry.http.HttpAccess;
import io.tidemark.registry.http.HttpGuard;
import io.tidemark.registry.http.HttpSecurity;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The built-in Iceberg REST catalog endpoint: serves one {@link Catalog} (whatever
 * {@code table.catalog.type} builds) over the Iceberg REST catalog API on Javalin, with Iceberg's
 * own request/response model and JSON. Errors are Iceberg {@code ErrorResponse} bodies
 * ({@link RestErrors}) without internals: a 500 says only its incident number, the log has the
 * detail. {@code POST /v1/oauth/tokens} issues the node's bearer tokens to Kafka users
 * ({@link OAuthTokenEndpoint}). The limits (bodies, chunked ones included, over {@link RestCatalogConfig#maxRequestBytes()}
 * get 413; headers; idle timeouts; JSON depth) are the shared {@link HttpGuard}'s; optional HTTP
 * basic authentication and TLS.
 *
 * <p>States: created, started ({@link #start()}), stopped ({@link #close()}). It does not own the
 * catalog: whoever opened it closes it after this server. Handlers run on Jetty's request threads.
 */
public final class IcebergRestServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(IcebergRestServer.class);

  private final RestCatalogConfig config;
  private final RestJson json;
  private final HttpGuard guard;
  private final Javalin app;
  private final CatalogAccess access;

  public IcebergRestServer(Catalog catalog, RestCatalogConfig config) {
    this(catalog, config, new CatalogAccess(HttpAccess.endpointUsersOnly(config.basicAuthUsers()), CatalogAccess.BY_NAME));
  }

  /** A catalog whose requests are authenticated and authorized by {@code access} (the node's Kafka users and ACLs). */
  public IcebergRestServer(Catalog catalog, RestCatalogConfig config, CatalogAccess access) {
    this.access = access;
    this.config = config;
    this.json = new RestJson(config.maxRequestBytes());
    this.guard = new HttpGuard(RestCatalogConfig.MAX_REQUEST_BYTES.name(), config.maxRequestBytes(),
        (status, message) -> json.error(RestErrors.of(status, RestErrors.typeOf(status), message)), LOG);
    CatalogRoutes routes = new CatalogRoutes(catalog, config.clientOverrides(), json, access);
    this.app = Javalin.create(cfg -> {
      cfg.showJavalinBanner = false;
      guard.configure(cfg);
      cfg.router.ignoreTrailingSlashes = true;
      cfg.jetty.defaultHost = config.host();
      cfg.jetty.defaultPort = config.port();
      if (config.tlsEnabled()) {
        cfg.jetty.addConnector((server, httpConfig) -> HttpSecurity.tlsConnector(server, httpConfig, config.host(),
            config.port(), config.tlsKeystorePath(), config.tlsKeystorePassword(), config.tlsKeystoreType()));
      }
    });
    guard.install(app);
    app.before(this::guard);
    app.exception(HttpResponseException.class, this::failed);
    app.exception(Exception.class, this::failed);
    app.error(404, ctx -> genericError(ctx, 404, "NotFoundException", "no such endpoint: " + ctx.method() + " "
        + ctx.path()));
    app.error(405, ctx -> genericError(ctx, 405, "MethodNotAllowedException", "method " + ctx.method()
        + " is not allowed on " + ctx.path()));
    routes.register(app);
    OAuthTokenEndpoint tokens = new OAuthTokenEndpoint(access.http());
    app.post(OAuthTokenEndpoint.PATH, tokens::handle);
  }

  /** Binds the port and serves; returns this for chaining. */
  public IcebergRestServer start() {
    app.start();
    return this;
  }

  /** The bound port (useful when configured with 0). */
  public int port() {
    return app.port();
  }

  @Override
  public void close() {
    app.stop();
  }

  private void guard(Context ctx) {
    if (ctx.path().equals(OAuthTokenEndpoint.PATH) || ctx.path().equals(OAuthTokenEndpoint.PATH + "/")) {
      return; // the token endpoint checks the client's credentials itself
    }
    try {
      access.http().authenticate(ctx);
    } catch (HttpAccess.Unauthenticated e) {
      ctx.header("WWW-Authenticate", "Basic realm=\"tidemark-iceberg-rest\"");
      throw new NotAuthorizedException("Unauthorized: %s (clients set rest.auth.type=basic, or credential=<user>:<password> "
          + "for an OAuth2 token)", e.getMessage());
    }
  }

  private void failed(Exception e, Context ctx) {
    if (e instanceof HttpResponseException http) {
      String message = http.getStatus() == 404 ? "no such endpoint: " + ctx.method() + " " + ctx.path()
          : HttpGuard.publicMessage(http.getMessage(), "HTTP " + http.getStatus());
      respondError(ctx, RestErrors.of(http.getStatus(), RestErrors.typeOf(http.getStatus()), message));
      return;
    }
    ErrorResponse error = RestErrors.body(e);
    if (RestErrors.isInternal(error.code())) {
      error = RestErrors.internal(e, guard.internalError(ctx, e));
    }
    respondError(ctx, error);
  }

  private void genericError(Context ctx, int status, String type, String message) {
    String current = ctx.result();
    if (current == null || current.isEmpty()) {
      respondError(ctx, RestErrors.of(status, type, message));
    }
  }

  /** Every error leaves here, its message checked once more for internals (a path may echo anything). */
  private void respondError(Context ctx, ErrorResponse error) {
    if (!HttpGuard.isPublic(error.message())) {
      error = RestErrors.of(error.code(), error.type(), "the request was refused (HTTP " + error.code() + ")");
    }
    ctx.status(error.code());
    if (ctx.method().name().equals("HEAD")) {
      return;
    }
    ctx.contentType("application/json").result(json.error(error));
  }

}
