package io.tidemark.server.config;

import io.tidemark.registry.http.HttpSecurity;
import io.tidemark.stream.config.ConfigException;
import io.tidemark.stream.config.ConfigKey;
import io.tidemark.stream.config.Settings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The settings of the process itself: which node it is, where its data lives, which roles it
 * plays and how its admin/metrics HTTP endpoint listens. Every other component declares its own
 * keys beside its code; {@link ConfigCatalog} gathers them all.
 *
 * <p>Immutable; built once at start-up from validated {@link Settings}.
 */
public record ServerConfig(
    int nodeId,
    Path dataDir,
    Set<Role> roles,
    String adminHost,
    int adminPort,
    boolean adminStreamsApiEnabled,
    Map<String, String> adminBasicAuthUsers,
    int adminMaxRequestBytes,
    int adminMaxFetchBytes,
    int adminMaxOpenStreams,
    long shutdownTimeoutMs,
    AdminTls adminTls) {

  /** The admin endpoint's HTTPS key store; {@link #enabled} false: plain HTTP. */
  public record AdminTls(String keystorePath, String keystorePassword, String keystoreType) {
    public boolean enabled() {
      return !keystorePath.isBlank();
    }

    @Override
    public String toString() {
      return enabled() ? "https(" + keystorePath + ")" : "http";
    }
  }

  /** What a process does; one process may play every role (the embedded default). */
  public enum Role {
    CONTROLLER,
    BROKER,
    REGISTRY;

    String word() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  public static final ConfigKey<Integer> NODE_ID = ConfigKey.integer("node.id", 0,
          "Id of this node in the cluster; unique per process, stable across restarts.")
      .validate(ConfigKey.between(0, 1_000_000));

  public static final ConfigKey<String> DATA_DIR = ConfigKey.string("data.dir", "./data",
      "Directory for everything this node keeps locally: the WAL file, local object storage "
          + "(embedded default), the controller voter's Raft log. Relative paths resolve against the working directory.");

  public static final ConfigKey<String> PROCESS_ROLES = ConfigKey.string("process.roles", "controller,broker,registry",
          "Comma-separated roles this process plays: controller, broker, registry. The storage engine "
              + "and the admin endpoint always run.")
      .validate(ServerConfig::checkRoles);

  public static final ConfigKey<String> ADMIN_HOST = ConfigKey.string("admin.host", "127.0.0.1",
      "Address the admin/metrics HTTP endpoint binds to. The default answers this machine only; set 0.0.0.0 "
          + "(or one interface's address) so that Prometheus or an orchestrator's probes reach it from elsewhere.");

  public static final ConfigKey<Integer> ADMIN_PORT = ConfigKey.integer("admin.port", 9644,
          "Port of the admin/metrics HTTP endpoint (/health, /ready, /metrics, /v1/streams); 0 picks a free port.")
      .validate(ConfigKey.between(0, 65_535));

  public static final ConfigKey<Boolean> ADMIN_STREAMS_API_ENABLED = ConfigKey.bool("admin.streams.api.enabled", false,
      "Serve the stream debugging API (/v1/streams): create, append to and read debugging streams of its own, and "
          + "read (never write) the streams of partitions open on this node. On an admin.host other than loopback it "
          + "requires admin.auth.basic.users.");

  public static final ConfigKey<String> ADMIN_AUTH_BASIC_USERS = ConfigKey.password("admin.auth.basic.users", "",
      "HTTP basic authentication users of the admin endpoint as user:password pairs separated by commas; when set, "
          + "every route but /health and /ready requires one of them. Empty disables authentication.");

  public static final ConfigKey<Integer> ADMIN_MAX_REQUEST_BYTES = ConfigKey.integer("admin.max.request.bytes",
          8 * 1024 * 1024, "Largest request body the admin endpoint accepts (one appended batch); larger requests get 413.")
      .validate(ConfigKey.between(1024, 256 * 1024 * 1024));

  public static final ConfigKey<Integer> ADMIN_MAX_FETCH_BYTES = ConfigKey.integer("admin.max.fetch.bytes",
          16 * 1024 * 1024, "Upper bound of maxBytes in GET /v1/streams/{id}/records.")
      .validate(ConfigKey.between(1024, 256 * 1024 * 1024));

  public static final ConfigKey<Integer> ADMIN_MAX_OPEN_STREAMS = ConfigKey.integer("admin.max.open.streams", 10_000,
          "How many streams the stream admin API keeps open at once; creating or opening more fails with 429.")
      .validate(ConfigKey.between(1, 1_000_000));

  public static final ConfigKey<String> ADMIN_TLS_KEYSTORE_PATH = ConfigKey.string("admin.tls.keystore.path", "",
      "Key store with the admin endpoint's certificate; set to serve HTTPS instead of HTTP (client certificates as "
          + "http.ssl.client.auth says, as on the registry and REST catalog).");
  public static final ConfigKey<String> ADMIN_TLS_KEYSTORE_PASSWORD = ConfigKey.password("admin.tls.keystore.password",
      "", "Password of admin.tls.keystore.path.");
  public static final ConfigKey<String> ADMIN_TLS_KEYSTORE_TYPE = ConfigKey.string("admin.tls.keystore.type", "PKCS12",
      "Type of admin.tls.keystore.path: PKCS12 or JKS.");

  public static final ConfigKey<Long> SHUTDOWN_TIMEOUT_MS = ConfigKey.longKey("shutdown.timeout.ms", 30_000,
          "How long a graceful shutdown (SIGTERM) may take to flush, upload and close before the process exits anyway.")
      .validate(ConfigKey.between(0L, 3_600_000L));

  public static final List<ConfigKey<?>> KEYS = List.of(NODE_ID, DATA_DIR, PROCESS_ROLES, ADMIN_HOST, ADMIN_PORT,
      ADMIN_STREAMS_API_ENABLED, ADMIN_AUTH_BASIC_USERS, ADMIN_MAX_REQUEST_BYTES, ADMIN_MAX_FETCH_BYTES, ADMIN_MAX_OPEN_STREAMS,
      SHUTDOWN_TIMEOUT_MS,
      ADMIN_TLS_KEYSTORE_PATH, ADMIN_TLS_KEYSTORE_PASSWORD, ADMIN_TLS_KEYSTORE_TYPE);

  /** Reads the server settings; throws {@link io.tidemark.stream.config.ConfigException} naming a bad key. */
  public static ServerConfig from(Settings settings) {
    Map<String, String> adminUsers = HttpSecurity.parseBasicUsers(ADMIN_AUTH_BASIC_USERS.name(),
        settings.get(ADMIN_AUTH_BASIC_USERS));
    boolean streamsApi = settings.get(ADMIN_STREAMS_API_ENABLED);
    String adminHost = settings.get(ADMIN_HOST);
    if (streamsApi && adminUsers.isEmpty() && !loopback(adminHost)) {
      throw new ConfigException(ADMIN_STREAMS_API_ENABLED.name(), "the stream debugging API on admin.host=" + adminHost
          + " would be reachable from other machines without authentication: set admin.auth.basic.users, "
          + "bind admin.host to 127.0.0.1, or turn the API off");
    }
    return new ServerConfig(
        settings.get(NODE_ID),
        Path.of(settings.get(DATA_DIR)).toAbsolutePath().normalize(),
        parseRoles(settings.get(PROCESS_ROLES)),
        adminHost,
        settings.get(ADMIN_PORT),
        streamsApi,
        Map.copyOf(adminUsers),
        settings.get(ADMIN_MAX_REQUEST_BYTES),
        settings.get(ADMIN_MAX_FETCH_BYTES),
        settings.get(ADMIN_MAX_OPEN_STREAMS),
        settings.get(SHUTDOWN_TIMEOUT_MS),
        new AdminTls(settings.get(ADMIN_TLS_KEYSTORE_PATH), settings.get(ADMIN_TLS_KEYSTORE_PASSWORD),
            settings.get(ADMIN_TLS_KEYSTORE_TYPE)));
  }

  /** The settings without the admin users' passwords (a record would print them). */
  @Override
  public String toString() {
    return "ServerConfig[nodeId=" + nodeId + ", dataDir=" + dataDir + ", roles=" + roles + ", admin=" + adminHost + ":"
        + adminPort + ", streamsApi=" + adminStreamsApiEnabled + ", adminUsers=" + adminBasicAuthUsers.keySet() + ", adminTls=" + adminTls + "]";
  }

  /** Whether {@code host} names only this machine (a loopback address, or a name resolving to one). */
  static boolean loopback(String host) {
    try {
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (UnknownHostException e) {
      throw new ConfigException(ADMIN_HOST.name(), "cannot resolve '" + host + "': " + e.getMessage());
    }
  }

  public boolean has(Role role) {
    return roles.contains(role);
  }

  private static String checkRoles(String value) {
    try {
      parseRoles(value);
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  static Set<Role> parseRoles(String value) {
    Set<Role> roles = EnumSet.noneOf(Role.class);
    for (String part : value.split(",")) {
      String word = part.trim().toLowerCase(Locale.ROOT);
      if (word.isEmpty()) {
        continue;
      }
      Role role = null;
      for (Role r : Role.values()) {
        if (r.word().equals(word)) {
          role = r;
        }
      }
      if (role == null) {
        throw new IllegalArgumentException("'" + word + "' is not a role; roles are controller, broker, registry");
      }
      roles.add(role);
    }
    return roles;
  }
}
