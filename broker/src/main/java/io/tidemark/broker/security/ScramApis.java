package io.tidemark.broker.security;

import io.tidemark.broker.protocol.RequestContext;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;

/**
 * AlterUserScramCredentials (51) and DescribeUserScramCredentials (50) with Kafka's checks and
 * errors, over a {@link ScramCredentialStore}; and the answers to SaslHandshake and
 * SaslAuthenticate where no SASL exchange is due (a non-SASL listener): ILLEGAL_SASL_STATE.
 *
 * <p>Alter is checked per user first (unknown mechanism: UNSUPPORTED_SASL_MECHANISM; empty
 * name or iterations outside 4096..16384: UNACCEPTABLE_CREDENTIAL; the same user and mechanism
 * twice: DUPLICATE_RESOURCE; deleting a missing credential: RESOURCE_NOT_FOUND); a user with any
 * error changes nothing, the others are written. The store keeps salted keys only. Stateless.
 */
public final class ScramApis {

  private final ScramCredentialStore store;

  public ScramApis(ScramCredentialStore store) {
    this.store = store;
  }

  public CompletableFuture<ApiMessage> describe(RequestContext context, AbstractRequest request) {
    DescribeUserScramCredentialsRequestData data = ((DescribeUserScramCredentialsRequest) request).data();
    DescribeUserScramCredentialsResponseData body = new DescribeUserScramCredentialsResponseData();
    Map<String, List<ScramCredential>> all = store.all();
    if (data.users() == null || data.users().isEmpty()) {
      all.forEach((user, creds) -> body.results().add(result(user, creds)));
      return CompletableFuture.completedFuture(body);
    }
    Map<String, Integer> counts = new LinkedHashMap<>();
    data.users().forEach(u -> counts.merge(u.name(), 1, Integer::sum));
    for (Map.Entry<String, Integer> e : counts.entrySet()) {
      String user = e.getKey();
      if (e.getValue() > 1) {
        body.results().add(new DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult().setUser(user)
            .setErrorCode(Errors.DUPLICATE_RESOURCE.code())
            .setErrorMessage("Cannot describe SCRAM credentials for the same user twice in a single request: " + user));
      } else if (!all.containsKey(user)) {
        body.results().add(new DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult().setUser(user)
            .setErrorCode(Errors.RESOURCE_NOT_FOUND.code())
            .setErrorMessage("Attempt to describe a user credential that does not exist: " + user));
      } else {
        body.results().add(result(user, all.get(user)));
      }
    }
    return CompletableFuture.completedFuture(body);
  }

  private static DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult result(String user,
      List<ScramCredential> creds) {
    var r = new DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult().setUser(user)
        .setErrorCode(Errors.NONE.code());
    creds.stream().sorted((a, b) -> Byte.compare(a.algorithm().type(), b.algorithm().type())).forEach(c ->
        r.credentialInfos().add(new DescribeUserScramCredentialsResponseData.CredentialInfo()
            .setMechanism(c.algorithm().type()).setIterations(c.iterations())));
    return r;
  }

  public CompletableFuture<ApiMessage> alter(RequestContext context, AbstractRequest request) {
    AlterUserScramCredentialsRequestData data = ((AlterUserScramCredentialsRequest) request).data();
    Map<String, Errors> errors = new LinkedHashMap<>();
    Map<String, String> messages = new LinkedHashMap<>();
    Set<String> seen = new HashSet<>();
    for (var d : data.deletions()) {
      errors.putIfAbsent(d.name(), Errors.NONE);
      check(d.name(), d.mechanism(), null, seen, errors, messages);
    }
    for (var u : data.upsertions()) {
      errors.putIfAbsent(u.name(), Errors.NONE);
      check(u.name(), u.mechanism(), u.iterations(), seen, errors, messages);
      if (errors.get(u.name()) == Errors.NONE && (u.salt() == null || u.salt().length == 0 || u.saltedPassword() == null
          || u.saltedPassword().length == 0)) {
        fail(u.name(), Errors.UNACCEPTABLE_CREDENTIAL, "Salt and salted password must not be empty", errors, messages);
      }
    }
    for (var d : data.deletions()) {
      if (errors.get(d.name()) == Errors.NONE
          && store.credential(d.name(), ScramAlgorithm.ofType(d.mechanism()).orElseThrow()).isEmpty()) {
        fail(d.name(), Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist", errors, messages);
      }
    }
    List<CompletableFuture<?>> writes = new ArrayList<>();
    Map<String, List<CompletableFuture<?>>> byUser = new LinkedHashMap<>();
    for (var d : data.deletions()) {
      if (errors.get(d.name()) == Errors.NONE) {
        CompletableFuture<?> w = store.delete(d.name(), ScramAlgorithm.ofType(d.mechanism()).orElseThrow());
        writes.add(w);
        byUser.computeIfAbsent(d.name(), k -> new ArrayList<>()).add(w);
      }
    }
    for (var u : data.upsertions()) {
      if (errors.get(u.name()) == Errors.NONE) {
        ScramAlgorithm a = ScramAlgorithm.ofType(u.mechanism()).orElseThrow();
        CompletableFuture<?> w = store.upsert(u.name(), a.credential(u.salt(), u.saltedPassword(), u.iterations()));
        writes.add(w);
        byUser.computeIfAbsent(u.name(), k -> new ArrayList<>()).add(w);
      }
    }
    return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).handle((ok, e) -> {
      AlterUserScramCredentialsResponseData body = new AlterUserScramCredentialsResponseData();
      errors.forEach((user, error) -> {
        Errors outcome = error;
        String message = messages.get(user);
        for (CompletableFuture<?> w : byUser.getOrDefault(user, List.of())) {
          if (w.isCompletedExceptionally()) {
            Throwable cause = w.handle((x, t) -> t).join();
            outcome = io.tidemark.broker.protocol.ErrorMapping.toErrors(io.tidemark.broker.protocol.ErrorMapping.unwrap(cause));
            message = cause.getMessage();
          }
        }
        body.results().add(new AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult().setUser(user)
            .setErrorCode(outcome.code()).setErrorMessage(outcome == Errors.NONE ? null : message));
      });
      return body;
    });
  }

  private static void check(String name, byte mechanism, Integer iterations, Set<String> seen, Map<String, Errors> errors,
      Map<String, String> messages) {
    Optional<ScramAlgorithm> a = ScramAlgorithm.ofType(mechanism);
    if (a.isEmpty()) {
      fail(name, Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism", errors, messages);
    } else if (name == null || name.isEmpty()) {
      fail(name, Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty", errors, messages);
    } else if (iterations != null && iterations < ScramAlgorithm.MIN_ITERATIONS) {
      fail(name, Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations", errors, messages);
    } else if (iterations != null && iterations > ScramAlgorithm.MAX_ITERATIONS) {
      fail(name, Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations", errors, messages);
    } else if (!seen.add(name + "\0" + mechanism)) {
      fail(name, Errors.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request", errors,
          messages);
    }
  }

  private static void fail(String name, Errors error, String message, Map<String, Errors> errors,
      Map<String, String> messages) {
    if (errors.get(name) == Errors.NONE) {
      errors.put(name, error);
      messages.put(name, message);
    }
  }

  /** SaslHandshake where no SASL exchange is due (not a SASL listener, or already authenticated). */
  public static CompletableFuture<ApiMessage> handshakeOutOfTurn(RequestContext context, AbstractRequest request) {
    return CompletableFuture.completedFuture(new SaslHandshakeResponseData().setErrorCode(Errors.ILLEGAL_SASL_STATE.code()));
  }

  /** SaslAuthenticate where no SASL exchange is due. */
  public static CompletableFuture<ApiMessage> authenticateOutOfTurn(RequestContext context, AbstractRequest request) {
    return CompletableFuture.completedFuture(new SaslAuthenticateResponseData().setErrorCode(Errors.ILLEGAL_SASL_STATE.code())
        .setErrorMessage("SaslAuthenticate on a " + context.securityProtocol() + " listener").setAuthBytes(new byte[0]));
  }
}
