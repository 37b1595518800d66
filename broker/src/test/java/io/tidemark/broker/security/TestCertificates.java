package io.tidemark.broker.security;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test certificates made with the JDK's keytool: self-signed EC key pairs in PKCS12 stores, a
 * trust store of chosen certificates, and PEM exports (certificate; key + chain for Kafka's PEM
 * key store type). Password everywhere: {@link #PASSWORD}.
 */
public final class TestCertificates {

  public static final String PASSWORD = "test-pass";

  private TestCertificates() {}

  /** A PKCS12 key store with one self-signed key pair for {@code dn} (SAN localhost and 127.0.0.1). */
  public static Path keyPair(Path dir, String alias, String dn) throws Exception {
    Path store = dir.resolve(alias + ".p12");
    keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", dn, "-validity", "30",
        "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-storetype", "PKCS12", "-keystore", store.toString(),
        "-storepass", PASSWORD, "-keypass", PASSWORD);
    return store;
  }

  /** The certificate of {@code alias} in PEM. */
  public static Path exportPem(Path keystore, String alias, Path out) throws Exception {
    keytool("-exportcert", "-rfc", "-alias", alias, "-keystore", keystore.toString(), "-storepass", PASSWORD, "-file",
        out.toString());
    return out;
  }

  /** A PKCS12 trust store holding the given PEM certificates. */
  public static Path trustStore(Path dir, String name, List<Path> pems) throws Exception {
    Path store = dir.resolve(name + ".p12");
    int i = 0;
    for (Path pem : pems) {
      keytool("-importcert", "-noprompt", "-alias", "c" + i++, "-file", pem.toString(), "-storetype", "PKCS12",
          "-keystore", store.toString(), "-storepass", PASSWORD);
    }
    return store;
  }

  /** Kafka's PEM key store: the PKCS#8 private key (unencrypted) followed by the certificate chain. */
  public static Path pemKeyStore(Path keystore, String alias, Path out) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      ks.load(in, PASSWORD.toCharArray());
    }
    Key key = ks.getKey(alias, PASSWORD.toCharArray());
    StringBuilder pem = new StringBuilder();
    pem.append(block("PRIVATE KEY", key.getEncoded()));
    for (Certificate c : ks.getCertificateChain(alias)) {
      pem.append(block("CERTIFICATE", c.getEncoded()));
    }
    Files.writeString(out, pem, StandardCharsets.US_ASCII);
    return out;
  }

  /**
   * The certificate a TLS listener on 127.0.0.1:{@code port} presents to a new connection of a client
   * that trusts anything, presenting the key pair of {@code clientKeyStore} (null: none).
   */
  public static java.security.cert.X509Certificate peerCertificate(int port, Path clientKeyStore) throws Exception {
    javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
    javax.net.ssl.KeyManager[] keys = null;
    if (clientKeyStore != null) {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(clientKeyStore)) {
        ks.load(in, PASSWORD.toCharArray());
      }
      javax.net.ssl.KeyManagerFactory kmf = javax.net.ssl.KeyManagerFactory.getInstance("PKIX");
      kmf.init(ks, PASSWORD.toCharArray());
      keys = kmf.getKeyManagers();
    }
    context.init(keys, new javax.net.ssl.TrustManager[] {new javax.net.ssl.X509TrustManager() {
      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType) {}

      @Override
      public java.security.cert.X509Certificate[] getAcceptedIssuers() {
        return new java.security.cert.X509Certificate[0];
      }
    }}, null);
    try (javax.net.ssl.SSLSocket socket = (javax.net.ssl.SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(20_000);
      socket.startHandshake();
      return (java.security.cert.X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }

  private static String block(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
        .encodeToString(der) + "\n-----END " + type + "-----\n";
  }

  private static void keytool(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!p.waitFor(2, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException("keytool timed out: " + command);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.exitValue() != 0) {
      throw new IllegalStateException("keytool failed (" + p.exitValue() + "): " + out + " for " + command);
    }
  }
}
