package io.tidemark.broker.cleaner;

import java.nio.file.Path;

/** The engine-backed broker of {@link CompactedBrokerFixture}, for tests in other packages. */
public final class CompactedBrokerFixtureAccess implements AutoCloseable {

  private final CompactedBrokerFixture fixture;

  public CompactedBrokerFixtureAccess(Path dir) {
    this.fixture = new CompactedBrokerFixture(dir);
  }

  public String bootstrap() {
    return fixture.bootstrap();
  }

  @Override
  public void close() {
    fixture.close();
  }
}
