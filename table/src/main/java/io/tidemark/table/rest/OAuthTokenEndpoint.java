package io.tidemark.table.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.http.Context;
import io.tidemark.broker.security.InvalidTokenException;
import io.tidemark.broker.security.TokenIssuer;
import io.tidemark.registry.http.HttpAccess;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The REST catalog's OAuth2 token endpoint ({@code POST /v1/oauth/tokens}, RFC 6749 as the Iceberg
 * REST spec describes it), so that Iceberg clients configured with {@code credential=<user>:<password>}
 * log in with a Kafka user: grant {@code client_credentials} (client id and secret in the form or in
 * HTTP basic) checks the password as HTTP basic does and answers a bearer token of this node's
 * {@link TokenIssuer} for {@code User:<client id>}; grant
 * {@code urn:ietf:params:oauth:grant-type:token-exchange} with a valid {@code subject_token} (how
 * Iceberg refreshes a token) answers a fresh token for the same user. Errors are OAuth error bodies
 * ({@code {"error":"invalid_client",...}}): 400 for a bad request or grant, 401 for wrong credentials
 * or an invalid subject token, 501 when this catalog issues no tokens (it runs without the node's
 * users). The endpoint itself needs no authentication. Stateless; thread-safe.
 */
final class OAuthTokenEndpoint {

  static final String PATH = "/v1/oauth/tokens";
  private static final String TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
  private static final String ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpAccess access;

  OAuthTokenEndpoint(HttpAccess access) {
    this.access = access;
  }

  void handle(Context ctx) {
    ctx.header("Cache-Control", "no-store");
    Optional<TokenIssuer> issuer = access.tokenIssuer();
    if (issuer.isEmpty()) {
      error(ctx, 501, "unsupported_grant_type", "this catalog issues no tokens: it runs without the node's Kafka users");
      return;
    }
    String grant = ctx.formParam("grant_type");
    if (grant == null) {
      error(ctx, 400, "invalid_request", "grant_type is required");
      return;
    }
    String user;
    if (grant.equals("client_credentials")) {
      String[] client = clientCredentials(ctx);
      if (client == null) {
        error(ctx, 400, "invalid_request", "client_id and client_secret are required");
        return;
      }
      if (!access.checkPassword(client[0], client[1])) {
        error(ctx, 401, "invalid_client", "invalid client id or secret");
        return;
      }
      user = client[0];
    } else if (grant.equals(TOKEN_EXCHANGE)) {
      String subject = ctx.formParam("subject_token");
      if (subject == null || subject.isBlank()) {
        error(ctx, 400, "invalid_request", "subject_token is required");
        return;
      }
      try {
        user = access.tokenPrincipal(subject);
      } catch (InvalidTokenException e) {
        error(ctx, 401, "invalid_grant", "invalid subject token: " + e.getMessage());
        return;
      }
    } else {
      error(ctx, 400, "unsupported_grant_type", "grant_type must be client_credentials or " + TOKEN_EXCHANGE);
      return;
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("access_token", issuer.get().issue(user));
    body.put("token_type", "bearer");
    body.put("issued_token_type", ACCESS_TOKEN_TYPE);
    body.put("expires_in", issuer.get().lifetimeMs() / 1000);
    write(ctx, 200, body);
  }

  /** {client id, secret} from the form, else from HTTP basic; null when absent. */
  private static String[] clientCredentials(Context ctx) {
    String id = ctx.formParam("client_id");
    String secret = ctx.formParam("client_secret");
    if (id != null && secret != null) {
      return new String[] {id, secret};
    }
    String header = ctx.header("Authorization");
    if (header != null && header.regionMatches(true, 0, "Basic ", 0, 6)) {
      try {
        String decoded = new String(Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
        int colon = decoded.indexOf(':');
        if (colon > 0) {
          return new String[] {decoded.substring(0, colon), decoded.substring(colon + 1)};
        }
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    return null;
  }

  private static void error(Context ctx, int status, String error, String description) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("error", error);
    body.put("error_description", description);
    write(ctx, status, body);
  }

  private static void write(Context ctx, int status, Map<String, Object> body) {
    try {
      ctx.status(status).contentType("application/json").result(JSON.writeValueAsString(body));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
