package io.tidemark.broker.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The server side of SCRAM (RFC 5802) for one connection. States: AWAIT_CLIENT_FIRST →
 * AWAIT_CLIENT_FINAL → COMPLETE, or FAILED from either (any error is final).
 *
 * <ol>
 *   <li>client-first {@code n,,n=<user>,r=<client nonce>}: the user's credential is looked up;
 *       answered {@code r=<client nonce><server nonce>,s=<salt>,i=<iterations>}. Channel binding
 *       ({@code p=}) and extensions other than none are refused (Kafka's delegation-token
 *       extension {@code tokenauth} is not supported).</li>
 *   <li>client-final {@code c=biws,r=<nonce>,p=<proof>}: the proof is checked against the stored
 *       key (ClientKey = proof XOR HMAC(StoredKey, AuthMessage); H(ClientKey) must equal
 *       StoredKey); answered {@code v=<server signature>}.</li>
 * </ol>
 * An unknown user fails at the first step; the client sees the same error as for a wrong
 * password.
 */
final class ScramExchange implements SaslExchange {

  private enum State { AWAIT_CLIENT_FIRST, AWAIT_CLIENT_FINAL, COMPLETE, FAILED }

  private static final String GS2_HEADER = "n,,";

  private final ScramAlgorithm algorithm;
  private final ScramCredentialStore store;
  private final Supplier<byte[]> nonceBytes;
  private State state = State.AWAIT_CLIENT_FIRST;
  private String user;
  private ScramCredential credential;
  private String clientFirstBare;
  private String serverFirst;
  private String nonce;

  ScramExchange(ScramAlgorithm algorithm, ScramCredentialStore store, Supplier<byte[]> nonceBytes) {
    this.algorithm = algorithm;
    this.store = store;
    this.nonceBytes = nonceBytes;
  }

  @Override
  public byte[] evaluate(byte[] token) throws AuthenticationFailedException {
    try {
      return switch (state) {
        case AWAIT_CLIENT_FIRST -> clientFirst(new String(token, StandardCharsets.UTF_8));
        case AWAIT_CLIENT_FINAL -> clientFinal(new String(token, StandardCharsets.UTF_8));
        case COMPLETE, FAILED -> throw new AuthenticationFailedException("SCRAM exchange is already " + state);
      };
    } catch (AuthenticationFailedException e) {
      state = State.FAILED;
      throw e;
    } catch (RuntimeException e) {
      state = State.FAILED;
      throw new AuthenticationFailedException("Invalid SCRAM message: " + e.getMessage());
    }
  }

  private byte[] clientFirst(String message) throws AuthenticationFailedException {
    if (!message.startsWith(GS2_HEADER)) {
      throw new AuthenticationFailedException("Invalid SCRAM client first message: channel binding and authorization "
          + "ids are not supported");
    }
    clientFirstBare = message.substring(GS2_HEADER.length());
    Map<String, String> fields = fields(clientFirstBare);
    String name = fields.get("n");
    String clientNonce = fields.get("r");
    if (name == null || name.isEmpty() || clientNonce == null || clientNonce.isEmpty()) {
      throw new AuthenticationFailedException("Invalid SCRAM client first message: missing user or nonce");
    }
    if (fields.keySet().stream().anyMatch(k -> !k.equals("n") && !k.equals("r"))) {
      throw new AuthenticationFailedException("Invalid SCRAM client first message: unsupported extension");
    }
    user = name.replace("=2C", ",").replace("=3D", "=");
    Optional<ScramCredential> found = store.credential(user, algorithm);
    if (found.isEmpty()) {
      throw new AuthenticationFailedException("Authentication failed: Invalid user credentials");
    }
    credential = found.get();
    nonce = clientNonce + Base64.getEncoder().withoutPadding().encodeToString(nonceBytes.get())
        .replace('+', '-').replace('/', '_');
    serverFirst = "r=" + nonce + ",s=" + Base64.getEncoder().encodeToString(credential.salt()) + ",i="
        + credential.iterations();
    state = State.AWAIT_CLIENT_FINAL;
    return serverFirst.getBytes(StandardCharsets.UTF_8);
  }

  private byte[] clientFinal(String message) throws AuthenticationFailedException {
    int proofAt = message.lastIndexOf(",p=");
    if (proofAt < 0) {
      throw new AuthenticationFailedException("Invalid SCRAM client final message: no proof");
    }
    String withoutProof = message.substring(0, proofAt);
    Map<String, String> fields = fields(withoutProof);
    String binding = fields.get("c");
    if (binding == null || !GS2_HEADER.equals(new String(Base64.getDecoder().decode(binding), StandardCharsets.UTF_8))) {
      throw new AuthenticationFailedException("Invalid SCRAM client final message: channel binding");
    }
    // Kafka accepts a final nonce that ends with the server-first one (librdkafka repeats the client nonce in front);
    // the proof covers the message as sent either way.
    String finalNonce = fields.get("r");
    if (finalNonce == null || !finalNonce.endsWith(nonce)) {
      throw new AuthenticationFailedException("Invalid SCRAM client final message: nonce does not match");
    }
    byte[] proof = Base64.getDecoder().decode(message.substring(proofAt + 3));
    String authMessage = clientFirstBare + "," + serverFirst + "," + withoutProof;
    byte[] signature = algorithm.hmac(credential.storedKey(), authMessage);
    if (proof.length != signature.length) {
      throw new AuthenticationFailedException("Authentication failed: Invalid user credentials");
    }
    byte[] clientKey = new byte[proof.length];
    for (int i = 0; i < proof.length; i++) {
      clientKey[i] = (byte) (proof[i] ^ signature[i]);
    }
    if (!MessageDigest.isEqual(algorithm.hash(clientKey), credential.storedKey())) {
      throw new AuthenticationFailedException("Authentication failed: Invalid user credentials");
    }
    state = State.COMPLETE;
    byte[] serverSignature = algorithm.hmac(credential.serverKey(), authMessage);
    return ("v=" + Base64.getEncoder().encodeToString(serverSignature)).getBytes(StandardCharsets.UTF_8);
  }

  /** {@code k=v,k=v}: a value may contain '=' (base64) but not ','. Repeated keys are refused. */
  private static Map<String, String> fields(String text) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String part : text.split(",", -1)) {
      if (part.length() < 2 || part.charAt(1) != '=') {
        throw new IllegalArgumentException("attribute '" + (part.length() > 16 ? part.substring(0, 16) + "..." : part) + "'");
      }
      if (out.put(part.substring(0, 1), part.substring(2)) != null) {
        throw new IllegalArgumentException("attribute " + part.charAt(0) + " repeated");
      }
    }
    return out;
  }

  @Override
  public boolean complete() {
    return state == State.COMPLETE;
  }

  @Override
  public String user() {
    return user;
  }
}
