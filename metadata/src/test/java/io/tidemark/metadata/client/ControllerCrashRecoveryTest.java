package io.tidemark.metadata.client;

import io.tidemark.stream.engine.CrashRecoveryTest;

/**
 * The storage engine's kill -9 test ({@link CrashRecoveryTest}, unchanged) with the replicated
 * controller as the node's metadata: each child JVM embeds one Ratis voter, as a combined
 * broker-controller does.
 */
class ControllerCrashRecoveryTest extends CrashRecoveryTest {

  @Override
  protected String metadataOpener() {
    return ControllerCrashMetadata.class.getName();
  }
}
