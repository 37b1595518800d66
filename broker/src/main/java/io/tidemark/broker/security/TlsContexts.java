package io.tidemark.broker.security;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS server context of one listener, built from Kafka's {@code ssl.*} settings (PKCS12, JKS
 * or PEM key and trust stores) with the engine {@code ssl.provider} names (OpenSSL through
 * netty-tcnative's BoringSSL, or the JDK's {@code SSLEngine}), and reloaded without a restart: at most
 * every {@code ssl.keystore.reload.check.interval.ms}, a new connection's call to
 * {@link #current()} compares the store files' modification time and size with those loaded, and
 * a changed file is loaded for that and later connections (existing connections keep their
 * session). A store that fails to load keeps the previous context and logs why. A dynamic broker
 * config ({@code listener.name.<l>.ssl.keystore.*}, {@link DynamicListenerStores}) switches to other
 * store files or passwords with {@link #reconfigure}: the new stores are loaded first and must
 * present the same subject names and alternative names as the current ones (Kafka's check), so a
 * refused change keeps the current context.
 *
 * <p>Thread-safe: event loops call {@link #current()} concurrently; the context is published
 * through a volatile field and a reload runs under this object's monitor.
 */
public final class TlsContexts {

  private static final Logger log = LoggerFactory.getLogger(TlsContexts.class);

  /** The files and passwords one context is built from. */
  public record Stores(String keystore, String keystoreType, String keystorePassword, String keyPassword,
      String truststore, String truststoreType, String truststorePassword, String clientAuth, List<String> protocols,
      String provider) {

    static Stores of(SecurityConfig config, String listener) {
      return new Stores(config.value(listener, SecurityConfig.SSL_KEYSTORE_LOCATION),
          config.value(listener, SecurityConfig.SSL_KEYSTORE_TYPE),
          config.value(listener, SecurityConfig.SSL_KEYSTORE_PASSWORD),
          config.value(listener, SecurityConfig.SSL_KEY_PASSWORD),
          config.value(listener, SecurityConfig.SSL_TRUSTSTORE_LOCATION),
          config.value(listener, SecurityConfig.SSL_TRUSTSTORE_TYPE),
          config.value(listener, SecurityConfig.SSL_TRUSTSTORE_PASSWORD),
          config.value(listener, SecurityConfig.SSL_CLIENT_AUTH).trim().toLowerCase(Locale.ROOT),
          Arrays.stream(config.value(listener, SecurityConfig.SSL_ENABLED_PROTOCOLS).split(",")).map(String::trim)
              .filter(s -> !s.isEmpty()).toList(),
          config.value(listener, SecurityConfig.SSL_PROVIDER).trim().toLowerCase(Locale.ROOT));
    }
  }

  private volatile Stores stores;
  /** The engine chosen at start from {@code ssl.provider}; kept across reloads and reconfigurations. */
  private final SslProvider engine;
  private final long checkIntervalNanos;
  private final LongSupplier nanoClock;
  private volatile SslContext context;
  private volatile String fingerprint;
  private volatile long nextCheckNanos;

  public TlsContexts(SecurityConfig config, String listener, LongSupplier nanoClock) {
    this(Stores.of(config, listener), config.sslReloadCheckMs(), nanoClock);
  }

  TlsContexts(Stores stores, long checkIntervalMs, LongSupplier nanoClock) {
    this.stores = stores;
    this.engine = engine(stores.provider());
    this.checkIntervalNanos = checkIntervalMs * 1_000_000L;
    this.nanoClock = nanoClock;
    this.fingerprint = fingerprint();
    this.context = build(stores, engine);
    this.nextCheckNanos = nanoClock.getAsLong() + checkIntervalNanos;
  }

  /**
   * The engine {@code ssl.provider} names: {@code jdk}; {@code openssl}, which throws
   * {@link IllegalStateException} with the reason when netty-tcnative's native library does not
   * load here; {@code auto}, OpenSSL when it loads and the JDK's engine otherwise.
   */
  static SslProvider engine(String setting) {
    return switch (setting.trim().toLowerCase(Locale.ROOT)) {
      case "jdk" -> SslProvider.JDK;
      case "openssl" -> {
        if (!OpenSsl.isAvailable()) {
          throw new IllegalStateException(SecurityConfig.SSL_PROVIDER.name() + "=openssl but netty-tcnative's OpenSSL does "
              + "not load on this machine (" + OpenSsl.unavailabilityCause() + "); use auto or jdk");
        }
        yield SslProvider.OPENSSL;
      }
      case "auto" -> OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
      default -> throw new IllegalStateException(SecurityConfig.SSL_PROVIDER.name() + " is '" + setting
          + "'; must be one of auto, openssl, jdk");
    };
  }

  /** What the listener's connections are encrypted by, for the start log: {@code OpenSSL (BoringSSL ...)} or {@code JDK}. */
  public String engineDescription() {
    return engine == SslProvider.OPENSSL ? "OpenSSL (" + OpenSsl.versionString() + ", netty-tcnative)" : "JDK SSLEngine";
  }

  /** True when the listener uses netty-tcnative's OpenSSL engine, false for the JDK's. */
  public boolean openSsl() {
    return engine == SslProvider.OPENSSL;
  }

  /** The context for a new connection, reloaded first if a store file changed since the last check. */
  public SslContext current() {
    if (checkIntervalNanos > 0 && nanoClock.getAsLong() - nextCheckNanos >= 0) {
      reloadIfChanged();
    }
    return context;
  }

  /** The stores the current context was built from. */
  public Stores stores() {
    return stores;
  }

  /**
   * Switches to {@code next} for new connections (existing ones keep their session): builds its
   * context first and throws {@link IllegalStateException} with the reason, changing nothing, when it
   * does not load or its key store names another subject than the current one. The same stores
   * again reload their files if they changed.
   */
  public synchronized void reconfigure(Stores next) {
    SslContext built = build(next, engine);
    ensureSameIdentity(stores, next);
    stores = next;
    fingerprint = fingerprint();
    context = built;
    nextCheckNanos = nanoClock.getAsLong() + checkIntervalNanos;
    log.info("TLS stores of a listener reconfigured: key store {}, trust store {}; new connections use them", next.keystore(),
        next.truststore().isBlank() ? "(none)" : next.truststore());
  }

  /**
   * Throws when {@code next}'s key store certificates differ from {@code current}'s in subject or
   * subject alternative names, as Kafka refuses such an update of a listener's key store (clients
   * verifying the broker's name would stop connecting).
   */
  static void ensureSameIdentity(Stores current, Stores next) {
    List<String> before = identities(current);
    List<String> after = identities(next);
    if (!before.equals(after)) {
      throw new IllegalStateException("Keystore DistinguishedName or SubjectAltNames do not match: existing=" + before + ", new="
          + after);
    }
  }

  /** Subject and alternative names of each certificate of the key store's key entries (first of each chain), sorted. */
  static List<String> identities(Stores s) {
    try {
      List<java.security.cert.Certificate> leaves = new java.util.ArrayList<>();
      if (s.keystoreType().trim().equalsIgnoreCase("PEM")) {
        String text = Files.readString(Path.of(s.keystore()), java.nio.charset.StandardCharsets.US_ASCII);
        int start = text.indexOf("-----BEGIN CERTIFICATE-----");
        if (start >= 0) {
          leaves.add(java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(
              new java.io.ByteArrayInputStream(text.substring(start).getBytes(java.nio.charset.StandardCharsets.US_ASCII))));
        }
      } else {
        KeyStore ks = load(s.keystore(), s.keystoreType(), s.keystorePassword());
        for (String alias : java.util.Collections.list(ks.aliases())) {
          if (ks.isKeyEntry(alias) && ks.getCertificate(alias) != null) {
            leaves.add(ks.getCertificate(alias));
          }
        }
      }
      List<String> out = new java.util.ArrayList<>();
      for (java.security.cert.Certificate c : leaves) {
        java.security.cert.X509Certificate x = (java.security.cert.X509Certificate) c;
        java.util.Collection<List<?>> sans = x.getSubjectAlternativeNames();
        out.add(x.getSubjectX500Principal().getName() + " SAN=" + (sans == null ? "[]" : new java.util.TreeSet<>(
            sans.stream().map(Object::toString).toList())));
      }
      java.util.Collections.sort(out);
      return out;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot read the certificates of key store " + s.keystore() + ": " + e.getMessage(), e);
    }
  }

  /** Whether the client must, may or may not present a certificate. */
  public boolean clientAuthEnabled() {
    return !stores.clientAuth().equals("none");
  }

  private synchronized void reloadIfChanged() {
    if (nanoClock.getAsLong() - nextCheckNanos < 0) {
      return;
    }
    nextCheckNanos = nanoClock.getAsLong() + checkIntervalNanos;
    String now = fingerprint();
    if (now.equals(fingerprint)) {
      return;
    }
    try {
      context = build(stores, engine);
      fingerprint = now;
      log.info("TLS key or trust store {} changed; new connections use the new one", stores.keystore());
    } catch (RuntimeException e) {
      log.warn("TLS key or trust store changed but does not load ({}); keeping the previous one", e.getMessage());
    }
  }

  private String fingerprint() {
    return stamp(stores.keystore()) + "|" + stamp(stores.truststore());
  }

  private static String stamp(String location) {
    if (location == null || location.isBlank()) {
      return "";
    }
    try {
      Path p = Path.of(location);
      return Files.getLastModifiedTime(p).toMillis() + ":" + Files.size(p);
    } catch (IOException e) {
      return "missing";
    }
  }

  /** Builds {@code s} with the engine its {@code provider} names (a check of stores given at run time). */
  static SslContext build(Stores s) {
    return build(s, engine(s.provider()));
  }

  static SslContext build(Stores s, SslProvider engine) {
    try {
      SslContextBuilder builder;
      if (s.keystoreType().trim().equalsIgnoreCase("PEM")) {
        Path pem = Path.of(s.keystore());
        builder = SslContextBuilder.forServer(pem.toFile(), pem.toFile(), s.keyPassword().isEmpty() ? null : s.keyPassword());
      } else {
        KeyStore ks = load(s.keystore(), s.keystoreType(), s.keystorePassword());
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        String keyPassword = s.keyPassword().isEmpty() ? s.keystorePassword() : s.keyPassword();
        kmf.init(ks, keyPassword.toCharArray());
        builder = SslContextBuilder.forServer(kmf);
      }
      if (!s.truststore().isBlank()) {
        if (s.truststoreType().trim().equalsIgnoreCase("PEM")) {
          builder.trustManager(Path.of(s.truststore()).toFile());
        } else {
          TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
          tmf.init(load(s.truststore(), s.truststoreType(), s.truststorePassword()));
          builder.trustManager(tmf);
        }
      }
      builder.clientAuth(switch (s.clientAuth()) {
        case "required" -> ClientAuth.REQUIRE;
        case "requested" -> ClientAuth.OPTIONAL;
        default -> ClientAuth.NONE;
      });
      return builder.sslProvider(engine).protocols(s.protocols()).build();
    } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
      throw new IllegalStateException("cannot load TLS key store " + s.keystore() + " (" + s.keystoreType() + ") or trust "
          + "store " + s.truststore() + ": " + e.getMessage(), e);
    }
  }

  private static KeyStore load(String location, String type, String password) throws IOException, GeneralSecurityException {
    KeyStore ks = KeyStore.getInstance(type.trim().toUpperCase(Locale.ROOT));
    try (InputStream in = Files.newInputStream(Path.of(location))) {
      ks.load(in, password.isEmpty() ? null : password.toCharArray());
    }
    return ks;
  }
}
