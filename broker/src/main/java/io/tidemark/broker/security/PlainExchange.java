package io.tidemark.broker.security;

import java.nio.charset.StandardCharsets;

/**
 * SASL PLAIN (RFC 4616): one token {@code [authzid] NUL user NUL password}, checked by a
 * {@link PasswordCheck}. An authorization id other than the user is refused, as Kafka refuses it.
 */
final class PlainExchange implements SaslExchange {

  private final PasswordCheck check;
  private String user;

  PlainExchange(PasswordCheck check) {
    this.check = check;
  }

  @Override
  public byte[] evaluate(byte[] token) throws AuthenticationFailedException {
    if (user != null) {
      throw new AuthenticationFailedException("PLAIN takes a single token");
    }
    String text = new String(token, StandardCharsets.UTF_8);
    int first = text.indexOf('\0');
    int second = first < 0 ? -1 : text.indexOf('\0', first + 1);
    if (second < 0 || text.indexOf('\0', second + 1) >= 0) {
      throw new AuthenticationFailedException("Invalid SASL/PLAIN response: expected 3 tokens");
    }
    String authzid = text.substring(0, first);
    String name = text.substring(first + 1, second);
    String password = text.substring(second + 1);
    if (name.isEmpty() || password.isEmpty()) {
      throw new AuthenticationFailedException("Authentication failed: username or password not specified");
    }
    if (!authzid.isEmpty() && !authzid.equals(name)) {
      throw new AuthenticationFailedException("Authentication failed: Client requested an authorization id that is "
          + "different from username");
    }
    if (!check.verify(name, password)) {
      throw new AuthenticationFailedException("Authentication failed: Invalid username or password");
    }
    user = name;
    return new byte[0];
  }

  @Override
  public boolean complete() {
    return user != null;
  }

  @Override
  public String user() {
    return user;
  }
}
