package io.tidemark.stream.objectstore;

import static io.tidemark.stream.objectstore.ObjectStorageContractTest.bytes;
import static io.tidemark.stream.objectstore.ObjectStorageContractTest.join;
import static io.tidemark.stream.objectstore.ObjectStorageContractTest.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.IntStream;

import io.tidemark.stream.objectstore.ScriptedHttpClient.Action;
import io.tidemark.stream.testing.S3ProxyFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;

/**
 * S3ObjectStorage behaviour that the contract cannot show: retries through throttling, unknown
 * outcomes after timeouts, the concurrency bound and batch splitting, against S3Proxy with faults
 * scripted at the HTTP level between the SDK and the server.
 */
class S3ObjectStorageTest {
  private static final long SEED = 20261202L;

  private static S3ProxyFixture s3;
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final List<S3ObjectStorage> opened = new ArrayList<>();
  private ScriptedHttpClient http;

  @BeforeAll
  static void startS3() {
    s3 = S3ProxyFixture.shared();
  }

  @AfterEach
  void closeAll() {
    opened.forEach(S3ObjectStorage::close);
    scheduler.shutdownNow();
  }

  private S3Options options() {
    return S3Options.of(s3.endpoint(), s3.newBucket("s3test"), s3.accessKey(), s3.secretKey())
        .withRetry(new RetryPolicy(5, 5, 50));
  }

  private S3ObjectStorage open(S3Options options) {
    Random random = new Random(SEED);
    S3ObjectStorage storage = new S3ObjectStorage(options, scheduler, random::nextDouble,
        client -> http = new ScriptedHttpClient(client));
    opened.add(storage);
    return storage;
  }

  @Test
  void throttledPutSucceedsThroughRetries() {
    // Goal: three 503 SlowDown answers in a row are retried with backoff and the put then succeeds.
    S3ObjectStorage storage = open(options());
    http.onlyMethod(SdkHttpMethod.PUT).script(Action.THROTTLE, Action.THROTTLE, Action.THROTTLE);
    byte[] data = randomBytes(1, 10_000);
    join(storage.put("throttled", ByteBuffer.wrap(data)));
    assertThat(http.throttled.get()).isEqualTo(3);
    assertThat(storage.retries()).isEqualTo(3);
    assertThat(bytes(join(storage.get("throttled")))).isEqualTo(data);
  }

  @Test
  void throttlingBeyondTheAttemptLimitFailsAsThrottled() {
    // Goal: when every allowed attempt is throttled the caller gets ThrottledException and nothing was written.
    S3ObjectStorage storage = open(options().withRetry(new RetryPolicy(3, 1, 5)));
    http.onlyMethod(SdkHttpMethod.PUT).script(Action.THROTTLE, Action.THROTTLE, Action.THROTTLE, Action.THROTTLE);
    assertThatThrownBy(() -> join(storage.put("refused", ByteBuffer.wrap(new byte[] {1}))))
        .isInstanceOf(ThrottledException.class)
        .hasMessageContaining("refused")
        .hasMessageContaining("3 attempt");
    assertThat(http.throttled.get()).isEqualTo(3);
    assertThatThrownBy(() -> join(storage.get("refused"))).isInstanceOf(ObjectNotFoundException.class);
  }

  @Test
  void timeoutAfterSendingAPutIsAnUnknownOutcome() {
    // Goal: a put whose response is lost times out as UnknownOutcomeException, although it did take effect.
    S3ObjectStorage storage = open(options().withRetry(RetryPolicy.none()).withRequestTimeoutMs(500));
    http.onlyMethod(SdkHttpMethod.PUT).script(Action.LOSE_RESPONSE);
    byte[] data = randomBytes(2, 1000);
    assertThatThrownBy(() -> join(storage.put("lost", ByteBuffer.wrap(data))))
        .isInstanceOf(UnknownOutcomeException.class)
        .hasMessageContaining("lost")
        .hasMessageContaining("outcome unknown");
    // The caller reconciles by reading: here the write had landed.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(
        () -> assertThat(bytes(join(storage.get("lost")))).isEqualTo(data));
  }

  @Test
  void unknownOutcomeIsKeptWhenLaterRetriesAreRefused() {
    // Goal: once an attempt may have taken effect, exhausting retries on throttling still reports an unknown outcome.
    S3ObjectStorage storage = open(options().withRetry(new RetryPolicy(3, 1, 5)).withRequestTimeoutMs(500));
    http.onlyMethod(SdkHttpMethod.PUT).script(Action.LOSE_RESPONSE, Action.THROTTLE, Action.THROTTLE);
    assertThatThrownBy(() -> join(storage.put("maybe", ByteBuffer.wrap(new byte[] {7}))))
        .isInstanceOf(UnknownOutcomeException.class);
    assertThat(http.lost.get()).isEqualTo(1);
    assertThat(http.throttled.get()).isEqualTo(2);
  }

  @Test
  void lostResponseIsRetriedAndThePutSucceeds() {
    // Goal: a timeout is retried like throttling; an idempotent put that then succeeds reports success.
    S3ObjectStorage storage = open(options().withRequestTimeoutMs(500));
    http.onlyMethod(SdkHttpMethod.PUT).script(Action.LOSE_RESPONSE);
    join(storage.put("retried", ByteBuffer.wrap(new byte[] {3})));
    assertThat(storage.retries()).isEqualTo(1);
    assertThat(bytes(join(storage.get("retried")))).containsExactly(3);
  }

  @Test
  void timedOutReadIsAPlainFailure() {
    // Goal: a read that times out fails with ObjectStorageException, not an unknown outcome: reads change nothing.
    S3ObjectStorage storage = open(options().withRetry(RetryPolicy.none()).withRequestTimeoutMs(500));
    join(storage.put("read", ByteBuffer.wrap(new byte[] {1})));
    http.onlyMethod(SdkHttpMethod.GET).script(Action.LOSE_RESPONSE);
    assertThatThrownBy(() -> join(storage.get("read")))
        .isInstanceOf(ObjectStorageException.class)
        .isNotInstanceOf(UnknownOutcomeException.class);
  }

  @Test
  void requestsInFlightNeverExceedTheConcurrencyLimit() {
    // Goal: with max concurrency 4, 40 concurrent puts keep exactly 4 requests at the server and queue the rest.
    S3ObjectStorage storage = open(options().withConcurrency(4, 100));
    http.onlyMethod(SdkHttpMethod.PUT).closeGate();
    http.script(IntStream.range(0, 40).mapToObj(i -> Action.HOLD).toArray(Action[]::new));
    List<CompletableFuture<Void>> puts = IntStream.range(0, 40)
        .mapToObj(i -> storage.put("bounded/" + i, ByteBuffer.wrap(new byte[] {(byte) i})))
        .toList();
    await().atMost(Duration.ofSeconds(20)).until(() -> http.inFlight.get() == 4);
    assertThat(storage.inFlight()).isEqualTo(4);
    assertThat(puts).noneMatch(CompletableFuture::isDone);
    http.release();
    puts.forEach(ObjectStorageContractTest::join);
    assertThat(http.maxInFlight.get()).isEqualTo(4);
    assertThat(join(storage.list("bounded/"))).hasSize(40);
  }

  @Test
  void requestsBeyondTheQueueFailClearly() {
    // Goal: when permits and queue are full, further calls fail at once with an "overloaded" error; queued ones still run.
    S3ObjectStorage storage = open(options().withConcurrency(2, 3));
    http.onlyMethod(SdkHttpMethod.PUT).closeGate();
    http.script(IntStream.range(0, 10).mapToObj(i -> Action.HOLD).toArray(Action[]::new));
    List<CompletableFuture<Void>> puts = IntStream.range(0, 10)
        .mapToObj(i -> storage.put("overload/" + i, ByteBuffer.wrap(new byte[] {(byte) i})))
        .toList();
    List<CompletableFuture<Void>> refused = puts.subList(5, 10);
    assertThat(refused).allMatch(CompletableFuture::isCompletedExceptionally);
    assertThatThrownBy(() -> join(refused.get(0)))
        .isInstanceOf(ObjectStorageException.class)
        .hasMessageContaining("overloaded");
    http.release();
    puts.subList(0, 5).forEach(ObjectStorageContractTest::join);
    assertThat(join(storage.list("overload/"))).hasSize(5);
  }

  @Test
  void largeBatchDeleteIsSplitIntoRequestsOfAtMost1000Keys() {
    // Goal: deleting 2,500 keys sends three DeleteObjects requests and removes every key.
    S3ObjectStorage storage = open(options());
    List<String> keys = IntStream.range(0, 2500).mapToObj(i -> "batch/" + i).toList();
    join(storage.put("batch/7", ByteBuffer.wrap(new byte[] {1})));
    join(storage.put("batch/2499", ByteBuffer.wrap(new byte[] {1})));
    int postsBefore = http.requests(SdkHttpMethod.POST);
    join(storage.delete(keys));
    assertThat(http.requests(SdkHttpMethod.POST) - postsBefore).isEqualTo(3);
    assertThat(join(storage.list("batch/"))).isEmpty();
  }

  @Test
  void whenRequiredSendsNoFlexibleChecksumsAndMd5ForBatchDelete() {
    // Goal: in the default mode puts carry no x-amz-checksum headers or trailers, and DeleteObjects carries Content-MD5 only.
    S3ObjectStorage storage = open(options());
    join(storage.put("plain", ByteBuffer.wrap(new byte[] {1, 2, 3})));
    join(storage.delete(List.of("plain", "other")));
    SdkHttpRequest put = http.lastRequest(SdkHttpMethod.PUT);
    assertThat(put.headers().keySet()).noneMatch(h -> h.toLowerCase().startsWith("x-amz-checksum")
        || h.equalsIgnoreCase("x-amz-trailer") || h.equalsIgnoreCase("x-amz-sdk-checksum-algorithm"));
    SdkHttpRequest delete = http.lastRequest(SdkHttpMethod.POST);
    assertThat(delete.firstMatchingHeader("Content-MD5")).isPresent();
    assertThat(delete.headers().keySet()).noneMatch(h -> h.toLowerCase().startsWith("x-amz-checksum")
        || h.equalsIgnoreCase("x-amz-sdk-checksum-algorithm"));
  }

  @Test
  void whenSupportedSendsChecksumsOnPuts() {
    // Goal: storage.s3.checksum=when_supported makes the SDK send a CRC checksum with every put (header or trailer).
    S3ObjectStorage storage = open(options().withChecksum(S3Options.Checksum.WHEN_SUPPORTED).withRetry(RetryPolicy.none()));
    storage.put("checked", ByteBuffer.wrap(new byte[] {1, 2, 3})).handle((v, e) -> null).join();
    SdkHttpRequest put = http.lastRequest(SdkHttpMethod.PUT);
    assertThat(put.headers().keySet()).anyMatch(h -> h.toLowerCase().startsWith("x-amz-checksum")
        || h.equalsIgnoreCase("x-amz-trailer"));
  }

  @Test
  void keysTheStoreFailedToDeleteAreReportedOneByOne() {
    // Goal: per-key errors of a DeleteObjects answer surface as DeleteFailedException naming each key; NoSuchKey is not an error.
    S3ObjectStorage storage = open(options());
    http.onlyMethod(SdkHttpMethod.POST).script(Action.CANNED).canned(200,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            + "<Error><Key>locked</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
            + "<Error><Key>gone</Key><Code>NoSuchKey</Code><Message>missing</Message></Error>"
            + "</DeleteResult>");
    assertThatThrownBy(() -> join(storage.delete(List.of("locked", "gone", "fine"))))
        .isInstanceOfSatisfying(DeleteFailedException.class, e -> assertThat(e.failedKeys())
            .containsOnlyKeys("locked").containsEntry("locked", "AccessDenied: Access Denied"))
        .hasMessageContaining("locked");
  }

  @Test
  void verifyAcceptsAWorkingBucket() {
    // Goal: the start-up check passes for a reachable bucket with valid keys.
    S3ObjectStorage storage = open(options());
    join(storage.verify());
  }
}
