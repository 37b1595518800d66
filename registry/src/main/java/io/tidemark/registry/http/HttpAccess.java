package io.tidemark.registry.http;

import io.javalin.http.Context;
import io.tidemark.broker.acl.Authorizer;
import io.tidemark.broker.security.InvalidTokenException;
import io.tidemark.broker.security.JwtValidator;
import io.tidemark.broker.security.PasswordCheck;
import io.tidemark.broker.security.TokenIssuer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Who an HTTP request is, and what it may do: the same principals and the same ACL authorizer as
 * the Kafka port, for the schema registry, the Iceberg REST catalog and the admin endpoint.
 *
 * <p><b>Authentication.</b> {@code Authorization: Basic} credentials are checked against the
 * endpoint's own users ({@code *.auth.basic.users}) and then against the Kafka users
 * ({@link PasswordCheck}: SASL PLAIN users of the listeners' JAAS config, SCRAM users of the
 * controller); a match makes the request {@code User:<name>}. Credentials that do not match are
 * always refused (401), never downgraded to anonymous. {@code Authorization: Bearer} tokens are
 * JWTs: the node's own ({@link TokenIssuer}, handed out by the REST catalog's OAuth2 token
 * endpoint) or the identity provider's, checked as OAUTHBEARER checks them on the Kafka port
 * ({@code sasl.oauthbearer.*}); the request is {@code User:<sub>}. Without credentials the request is
 * {@code User:ANONYMOUS} when authentication is not required, and refused (401) when it is.
 *
 * <p><b>Authorization.</b> {@link #allowed} asks the broker's {@link Authorizer} with the request's
 * principal and client address, so ACLs, super users, hosts and
 * {@code kafka.allow.everyone.if.no.acl.found} mean for HTTP exactly what they mean for Kafka.
 * Each endpoint maps its paths to Kafka resources (documented in docs/authorization.md).
 *
 * <p>Immutable; the password check is read through a supplier because the broker that owns the
 * credentials may start after the endpoint (the admin endpoint answers probes during recovery).
 * Thread-safe.
 */
public final class HttpAccess {

  /** The request attribute holding the authenticated principal ({@code User:<name>}). */
  public static final String PRINCIPAL_ATTRIBUTE = "tidemark.principal";
  /** Kafka's anonymous principal, as the Kafka port names it. */
  public static final String ANONYMOUS = "User:ANONYMOUS";

  private final boolean required;
  private final Map<String, String> endpointUsers;
  private final Supplier<PasswordCheck> kafkaUsers;
  private final Authorizer authorizer;
  private final Optional<TokenIssuer> issuer;
  private final Supplier<Optional<JwtValidator>> externalTokens;

  /**
   * @param required whether a request without credentials is refused
   * @param endpointUsers the endpoint's own {@code user:password} users (may be empty)
   * @param kafkaUsers the Kafka users' check, or a supplier of null while there is none
   * @param authorizer the ACL authorizer ({@link Authorizer#off()} allows everything)
   */
  public HttpAccess(boolean required, Map<String, String> endpointUsers, Supplier<PasswordCheck> kafkaUsers,
      Authorizer authorizer) {
    this(required, endpointUsers, kafkaUsers, authorizer, Optional.empty(), Optional::empty);
  }

  /**
   * @param issuer the node's own bearer tokens (empty: none are issued or accepted)
   * @param externalTokens the identity provider's tokens' validator, when sasl.oauthbearer.jwks.endpoint.url is set
   */
  public HttpAccess(boolean required, Map<String, String> endpointUsers, Supplier<PasswordCheck> kafkaUsers,
      Authorizer authorizer, Optional<TokenIssuer> issuer, Supplier<Optional<JwtValidator>> externalTokens) {
    this.required = required || !endpointUsers.isEmpty();
    this.endpointUsers = Map.copyOf(endpointUsers);
    this.kafkaUsers = kafkaUsers;
    this.authorizer = authorizer;
    this.issuer = issuer;
    this.externalTokens = externalTokens;
  }

  /** What an endpoint did before Kafka principals reached HTTP: its own users, when set, required; no ACLs. */
  public static HttpAccess endpointUsersOnly(Map<String, String> endpointUsers) {
    return new HttpAccess(false, endpointUsers, () -> null, Authorizer.off());
  }

  /** Whether a request must carry valid credentials. */
  public boolean required() {
    return required;
  }

  /** Whether the ACL authorizer decides (false: every authenticated principal may do everything). */
  public boolean authorizing() {
    return authorizer.enabled();
  }

  /**
   * Authenticates {@code ctx} and records its principal on it ({@link #principal(Context)}).
   *
   * @throws Unauthenticated when credentials are required and missing, or given and wrong
   */
  public String authenticate(Context ctx) {
    String principal = principalOf(ctx.header("Authorization"));
    ctx.attribute(PRINCIPAL_ATTRIBUTE, principal);
    return principal;
  }

  /** The principal for an {@code Authorization} header value (may be null). */
  String principalOf(String header) {
    if (header == null || header.isBlank()) {
      if (required) {
        throw new Unauthenticated("this endpoint requires authentication (HTTP basic with a Kafka user's name and password)");
      }
      return ANONYMOUS;
    }
    if (header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      try {
        return "User:" + tokenPrincipal(header.substring(7).trim());
      } catch (InvalidTokenException e) {
        throw new Unauthenticated("invalid bearer token: " + e.getMessage());
      }
    }
    if (!header.regionMatches(true, 0, "Basic ", 0, 6)) {
      if (required) {
        throw new Unauthenticated("unsupported authentication scheme; use HTTP basic with a Kafka user's name and password");
      }
      return ANONYMOUS;
    }
    String decoded;
    try {
      decoded = new String(Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new Unauthenticated("the basic credentials are not valid base64");
    }
    int colon = decoded.indexOf(':');
    if (colon <= 0) {
      throw new Unauthenticated("the basic credentials must be user:password");
    }
    String user = decoded.substring(0, colon);
    String password = decoded.substring(colon + 1);
    if (!verify(user, password)) {
      throw new Unauthenticated("authentication failed: invalid user name or password");
    }
    return "User:" + user;
  }

  /**
   * The user a bearer token names: a token of this node's issuer, else one of the identity
   * provider; refused when neither accepts it.
   */
  public String tokenPrincipal(String token) throws InvalidTokenException {
    if (issuer.isPresent()) {
      try {
        return issuer.get().validator().validate(token).principal();
      } catch (InvalidTokenException notOurs) {
        if (externalTokens.get().isEmpty()) {
          throw notOurs;
        }
      }
    }
    Optional<JwtValidator> external = externalTokens.get();
    if (external.isEmpty()) {
      throw new InvalidTokenException("this node accepts no bearer tokens (set sasl.oauthbearer.jwks.endpoint.url)");
    }
    return external.get().validate(token).principal();
  }

  /** The node's token issuer (the REST catalog's OAuth2 token endpoint), when it issues tokens. */
  public Optional<TokenIssuer> tokenIssuer() {
    return issuer;
  }

  /** Whether {@code password} is {@code user}'s (the endpoint's own users, then the Kafka users). */
  public boolean checkPassword(String user, String password) {
    return verify(user, password);
  }

  private boolean verify(String user, String password) {
    String configured = endpointUsers.get(user);
    if (configured != null) {
      return MessageDigest.isEqual(configured.getBytes(StandardCharsets.UTF_8), password.getBytes(StandardCharsets.UTF_8));
    }
    PasswordCheck check = kafkaUsers.get();
    return check != null && check.verify(user, password);
  }

  /** The principal {@link #authenticate} recorded on {@code ctx} (anonymous when it did not run). */
  public static String principal(Context ctx) {
    String p = ctx.attribute(PRINCIPAL_ATTRIBUTE);
    return p == null ? ANONYMOUS : p;
  }

  /** Whether the request's principal, from its client address, may do {@code op} on the resource. */
  public boolean allowed(Context ctx, AclOperation op, ResourceType type, String name) {
    return authorizer.allowed(principal(ctx), ctx.req().getRemoteAddr(), op, type, name);
  }

  /** Whether the request's principal may do {@code op} on the cluster. */
  public boolean allowedOnCluster(Context ctx, AclOperation op) {
    return allowed(ctx, op, ResourceType.CLUSTER, Authorizer.CLUSTER_NAME);
  }

  /** Missing or wrong credentials: the endpoint answers 401 with a {@code WWW-Authenticate} challenge. */
  public static final class Unauthenticated extends RuntimeException {
    public Unauthenticated(String message) {
      super(message);
    }
  }
}
