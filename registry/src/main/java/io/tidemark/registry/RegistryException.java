package io.tidemark.registry;

/**
 * A registry operation did not happen; {@link #error()} says why and which code clients see. Bad
 * input raises this before anything is written, so the registry state is unchanged.
 */
public class RegistryException extends RuntimeException {
  private final RegistryError error;

  public RegistryException(RegistryError error, String message) {
    super(message);
    this.error = error;
  }

  public RegistryException(RegistryError error, String message, Throwable cause) {
    super(message, cause);
    this.error = error;
  }

  public RegistryError error() {
    return error;
  }
}
