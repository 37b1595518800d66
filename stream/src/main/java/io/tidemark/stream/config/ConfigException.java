package io.tidemark.stream.config;

/** A setting has a value that cannot be used; the message names the setting, the value and why. */
public class ConfigException extends RuntimeException {
  private final String key;

  public ConfigException(String key, String value, String reason) {
    super("invalid value '" + value + "' for setting " + key + ": " + reason);
    this.key = key;
  }

  public ConfigException(String key, String message) {
    super("setting " + key + ": " + message);
    this.key = key;
  }

  /** The setting at fault. */
  public String key() {
    return key;
  }
}
