package io.tidemark.stream.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** Exponential backoff with full jitter, and the classification of S3 answers that drives retries. */
class RetryPolicyTest {

  @Property(tries = 500)
  void delayIsBelowTheExponentialCeiling(@ForAll @IntRange(min = 1, max = 200) int attempt,
      @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double random) {
    // Goal: the delay after any attempt lies in [0, min(max, base * 2^(attempt-1))), even for huge attempt numbers.
    RetryPolicy policy = new RetryPolicy(10, 100, 10_000);
    long ceiling = Math.min(10_000, 100L << Math.min(attempt - 1, 30));
    assertThat(policy.delayMs(attempt, random)).isBetween(0L, ceiling).isLessThanOrEqualTo(ceiling);
  }

  @Test
  void delaysGrowThenCapAndAreSpreadByJitter() {
    // Goal: the ceiling doubles per attempt up to the cap, and seeded jitter spreads delays across it.
    RetryPolicy policy = new RetryPolicy(10, 100, 1_000);
    assertThat(policy.delayMs(1, 0.999)).isEqualTo(99);
    assertThat(policy.delayMs(2, 0.999)).isEqualTo(199);
    assertThat(policy.delayMs(3, 0.999)).isEqualTo(399);
    assertThat(policy.delayMs(5, 0.999)).isEqualTo(999);
    assertThat(policy.delayMs(9, 0.5)).isEqualTo(500);
    Random random = new Random(1);
    long below = 0;
    for (int i = 0; i < 1000; i++) {
      if (policy.delayMs(6, random.nextDouble()) < 500) {
        below++;
      }
    }
    assertThat(below).isBetween(400L, 600L);
  }

  @Test
  void aWholeObjectAnswerToARangedGetIsCut() {
    // Goal: when a store ignores the Range header, S3ObjectStorage still returns only the requested bytes.
    byte[] body = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    assertThat(ObjectStorageContractTest.bytes(S3ObjectStorage.rangeOf(body, true, 2, 5))).containsExactly(2, 3, 4);
    assertThat(ObjectStorageContractTest.bytes(S3ObjectStorage.rangeOf(body, true, 8, 20))).containsExactly(8, 9);
    assertThat(ObjectStorageContractTest.bytes(S3ObjectStorage.rangeOf(body, true, 12, ObjectStorage.TO_END))).isEmpty();
    assertThat(ObjectStorageContractTest.bytes(S3ObjectStorage.rangeOf(new byte[] {5, 6}, false, 2, 4))).containsExactly(5, 6);
  }

  @Test
  void invalidPoliciesAreRefused() {
    // Goal: a policy without attempts or with a cap below its base is refused.
    assertThatThrownBy(() -> new RetryPolicy(0, 1, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new RetryPolicy(3, 100, 10)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void s3AnswersAreClassifiedByWhatTheyMeanForARetry() {
    // Goal: throttling and server errors are retried as definite failures, 504 as maybe-applied, 4xx and 501 not at all.
    assertThat(S3Failure.classifyStatus(503, "SlowDown")).isEqualTo(S3Failure.Kind.THROTTLED);
    assertThat(S3Failure.classifyStatus(429, null)).isEqualTo(S3Failure.Kind.THROTTLED);
    assertThat(S3Failure.classifyStatus(503, null)).isEqualTo(S3Failure.Kind.THROTTLED);
    assertThat(S3Failure.classifyStatus(500, "InternalError")).isEqualTo(S3Failure.Kind.SERVER_ERROR);
    assertThat(S3Failure.classifyStatus(400, "RequestTimeout")).isEqualTo(S3Failure.Kind.SERVER_ERROR);
    assertThat(S3Failure.classifyStatus(504, null)).isEqualTo(S3Failure.Kind.AMBIGUOUS);
    assertThat(S3Failure.classifyStatus(404, "NoSuchKey")).isEqualTo(S3Failure.Kind.NOT_FOUND);
    assertThat(S3Failure.classifyStatus(416, "InvalidRange")).isEqualTo(S3Failure.Kind.RANGE_NOT_SATISFIABLE);
    assertThat(S3Failure.classifyStatus(403, "AccessDenied")).isEqualTo(S3Failure.Kind.FATAL);
    assertThat(S3Failure.classifyStatus(501, "NotImplemented")).isEqualTo(S3Failure.Kind.FATAL);
    assertThat(S3Failure.classify(new java.net.ConnectException("refused"))).isEqualTo(S3Failure.Kind.NOT_SENT);
    assertThat(S3Failure.classify(new java.util.concurrent.CompletionException(
        new java.io.IOException("Connection reset")))).isEqualTo(S3Failure.Kind.AMBIGUOUS);
  }
}
