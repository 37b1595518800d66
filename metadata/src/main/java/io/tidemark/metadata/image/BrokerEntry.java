package io.tidemark.metadata.image;

import io.tidemark.metadata.record.MetadataRecord.BrokerRegistration;

/** A registered broker: its latest registration and whether it is fenced. */
public record BrokerEntry(BrokerRegistration registration, boolean fenced) {
  public int nodeId() {
    return registration.nodeId();
  }

  public long nodeEpoch() {
    return registration.nodeEpoch();
  }
}
