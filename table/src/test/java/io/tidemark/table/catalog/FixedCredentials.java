package io.tidemark.table.catalog;

import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;

/**
 * Test credentials for iceberg-aws clients, named by {@code client.credentials-provider} and configured by
 * {@code client.credentials-provider.access-key-id} and {@code .secret-access-key}: no environment or profile read.
 */
public final class FixedCredentials implements AwsCredentialsProvider {

  private final AwsCredentials credentials;

  private FixedCredentials(AwsCredentials credentials) {
    this.credentials = credentials;
  }

  /** Iceberg's factory method: it passes the {@code client.credentials-provider.*} properties without the prefix. */
  public static FixedCredentials create(Map<String, String> properties) {
    return new FixedCredentials(AwsBasicCredentials.create(properties.get("access-key-id"),
        properties.get("secret-access-key")));
  }

  @Override
  public AwsCredentials resolveCredentials() {
    return credentials;
  }
}
