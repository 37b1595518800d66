package io.tidemark.server.config;

import io.tidemark.stream.config.ConfigException;
import java.util.List;
import java.util.stream.Collectors;

/** The configuration cannot be used; lists every bad setting with its value and the reason. */
public final class InvalidConfigurationException extends RuntimeException {

  private final List<ConfigException> problems;

  public InvalidConfigurationException(List<ConfigException> problems) {
    super("invalid configuration:\n" + problems.stream().map(p -> "  " + p.getMessage()).collect(Collectors.joining("\n")));
    this.problems = List.copyOf(problems);
  }

  public List<ConfigException> problems() {
    return problems;
  }

  /** The names of the settings at fault. */
  public List<String> keys() {
    return problems.stream().map(ConfigException::key).toList();
  }
}
