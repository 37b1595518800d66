package io.tidemark.broker.protocol;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.message.UpdateFeaturesResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.UpdateFeaturesRequest;

/**
 * The Kafka feature levels (KIP-584) this broker implements, fixed by its code: what ApiVersions
 * reports as supported and finalized, and the answer to UpdateFeatures. Only features whose levels
 * describe behaviour Tidemark has are listed: {@code group.version} 1 (the KIP-848 consumer group
 * protocol), {@code share.version} 1 (KIP-932 share groups, finalized once they worked with the Java
 * 4.x {@code KafkaShareConsumer}), {@code transaction.version} 2 (transactions V2, KIP-890: partitions
 * verified or added by their leaders, the epoch bumped by every EndTxn v5; Kafka 4.x clients then use
 * it, older ones keep V1, which is served too), and at level 0 only (supported 0–0, not finalized)
 * {@code streams.version}. {@code metadata.version} and
 * {@code kraft.version} name KRaft's record formats, which Tidemark's Raft log (Apache Ratis) does
 * not use, so they are not claimed. Levels cannot change at run time: UpdateFeatures succeeds when
 * every update asks for the level in force and otherwise fails whole with INVALID_UPDATE_VERSION.
 * Immutable.
 */
public final class FeatureLevels {

  /** One feature: supported range and the finalized level (0: not finalized, not listed as such). */
  public record Feature(String name, short minSupported, short maxSupported, short finalized) {}

  /** Never changes, since the levels are fixed by the code. */
  static final long FINALIZED_EPOCH = 1;

  public static final List<Feature> FEATURES = List.of(new Feature("group.version", (short) 0, (short) 1, (short) 1),
      new Feature("transaction.version", (short) 0, (short) 2, (short) 2), new Feature("share.version", (short) 0, (short) 1, (short) 1),
      new Feature("streams.version", (short) 0, (short) 0, (short) 0));

  private FeatureLevels() {}

  /**
   * Adds supported and finalized features to an ApiVersions response (v3+); {@code share.version}
   * only at level 0 when share groups are not served ({@code kafka.share.enable=false}).
   */
  static void describe(ApiVersionsResponseData body, boolean shareServed) {
    for (Feature listed : FEATURES) {
      Feature f = listed.name().equals("share.version") && !shareServed ? new Feature(listed.name(), (short) 0, (short) 0, (short) 0)
          : listed;
      body.supportedFeatures().add(new ApiVersionsResponseData.SupportedFeatureKey().setName(f.name())
          .setMinVersion(f.minSupported()).setMaxVersion(f.maxSupported()));
      if (f.finalized() > 0) {
        body.finalizedFeatures().add(new ApiVersionsResponseData.FinalizedFeatureKey().setName(f.name())
            .setMinVersionLevel(f.finalized()).setMaxVersionLevel(f.finalized()));
      }
    }
    body.setFinalizedFeaturesEpoch(FINALIZED_EPOCH);
  }

  /** UpdateFeatures (v0–2): all or nothing as in Kafka (the first refusal is the request's error); nothing ever changes. */
  public static CompletableFuture<ApiMessage> updateFeatures(RequestContext context, AbstractRequest request) {
    UpdateFeaturesRequestData req = ((UpdateFeaturesRequest) request).data();
    UpdateFeaturesResponseData body = new UpdateFeaturesResponseData().setErrorCode(Errors.NONE.code());
    for (UpdateFeaturesRequestData.FeatureUpdateKey u : req.featureUpdates()) {
      UpdateFeaturesResponseData.UpdatableFeatureResult r = new UpdateFeaturesResponseData.UpdatableFeatureResult().setFeature(u.feature());
      Feature f = FEATURES.stream().filter(x -> x.name().equals(u.feature())).findFirst().orElse(null);
      if (f == null) {
        r.setErrorCode(Errors.INVALID_UPDATE_VERSION.code()).setErrorMessage("feature " + u.feature() + " is not supported by Tidemark");
      } else if (u.maxVersionLevel() != f.finalized()) {
        r.setErrorCode(Errors.INVALID_UPDATE_VERSION.code()).setErrorMessage("feature " + f.name() + " is fixed at level " + f.finalized()
            + " in Tidemark (supported " + f.minSupported() + "-" + f.maxSupported() + "); it cannot be changed to "
            + u.maxVersionLevel() + " at run time");
      } else {
        r.setErrorCode(Errors.NONE.code());
      }
      body.results().add(r);
      if (r.errorCode() != Errors.NONE.code() && body.errorCode() == Errors.NONE.code()) {
        body.setErrorCode(r.errorCode()).setErrorMessage(r.errorMessage());
      }
    }
    if (request.version() >= 2 || body.errorCode() != Errors.NONE.code()) {
      body.results().clear(); // as Kafka: all or nothing, a refusal answers the whole request (v2 has no per-feature results)
    }
    return CompletableFuture.completedFuture(body);
  }
}
