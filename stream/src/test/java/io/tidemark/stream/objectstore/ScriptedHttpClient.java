package io.tidemark.stream.objectstore;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.http.async.AsyncExecuteRequest;
import software.amazon.awssdk.http.async.SdkAsyncHttpClient;
import software.amazon.awssdk.http.async.SdkAsyncHttpResponseHandler;

/**
 * Test double at the HTTP level between the S3 SDK and a real server: requests pass through to the
 * real HTTP client unless a scripted action for the next matching request says otherwise: answer
 * 503 SlowDown without forwarding, forward but lose the response (the SDK's attempt timeout then
 * fires: a timeout after sending), or hold the request until a gate opens. Counts requests and the
 * most requests in flight at once.
 */
final class ScriptedHttpClient implements SdkAsyncHttpClient {

  enum Action { PASS, THROTTLE, LOSE_RESPONSE, HOLD, CANNED }

  private final SdkAsyncHttpClient delegate;
  private final ConcurrentLinkedQueue<Action> script = new ConcurrentLinkedQueue<>();
  private volatile Predicate<SdkHttpRequest> scripted = r -> true;
  private volatile int cannedStatus = 200;
  private volatile String cannedBody = "";
  private volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);
  final AtomicInteger requests = new AtomicInteger();
  final AtomicInteger inFlight = new AtomicInteger();
  final AtomicInteger maxInFlight = new AtomicInteger();
  final AtomicInteger throttled = new AtomicInteger();
  final AtomicInteger lost = new AtomicInteger();
  private final java.util.Map<SdkHttpMethod, SdkHttpRequest> lastRequest = new java.util.concurrent.ConcurrentHashMap<>();
  private final java.util.Map<SdkHttpMethod, AtomicInteger> byMethod = new java.util.concurrent.ConcurrentHashMap<>();

  ScriptedHttpClient(SdkAsyncHttpClient delegate) {
    this.delegate = delegate;
  }

  /** The next matching requests get these actions, in order; later ones pass. */
  ScriptedHttpClient script(Action... actions) {
    script.addAll(java.util.List.of(actions));
    return this;
  }

  /** Only requests with this method count as "matching" for the script (others always pass). */
  ScriptedHttpClient onlyMethod(SdkHttpMethod method) {
    scripted = r -> r.method() == method;
    return this;
  }

  /** What CANNED actions answer (without forwarding the request). */
  ScriptedHttpClient canned(int status, String xmlBody) {
    cannedStatus = status;
    cannedBody = xmlBody;
    return this;
  }

  /** From now on, HOLD requests wait until {@link #release()}. */
  void closeGate() {
    gate = new CompletableFuture<>();
  }

  void release() {
    gate.complete(null);
  }

  @Override
  public CompletableFuture<Void> execute(AsyncExecuteRequest request) {
    requests.incrementAndGet();
    lastRequest.put(request.request().method(), request.request());
    byMethod.computeIfAbsent(request.request().method(), m -> new AtomicInteger()).incrementAndGet();
    Action action = scripted.test(request.request()) ? next() : Action.PASS;
    if (action == Action.PASS || action == Action.HOLD) {
      maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    }
    return switch (action) {
      case THROTTLE -> {
        throttled.incrementAndGet();
        yield answer(request.responseHandler(), 503, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
            + "<Message>Please reduce your request rate.</Message><RequestId>T1</RequestId></Error>");
      }
      case CANNED -> answer(request.responseHandler(), cannedStatus, cannedBody);
      case LOSE_RESPONSE -> loseResponse(request);
      case HOLD -> gate.thenCompose(v -> forwardCounted(request));
      case PASS -> forwardCounted(request);
    };
  }

  /** The last request sent with this method, or null. */
  SdkHttpRequest lastRequest(SdkHttpMethod method) {
    return lastRequest.get(method);
  }

  /** Requests of this method seen so far. */
  int requests(SdkHttpMethod method) {
    AtomicInteger n = byMethod.get(method);
    return n == null ? 0 : n.get();
  }

  private Action next() {
    Action a = script.poll();
    return a == null ? Action.PASS : a;
  }

  /**
   * Forwards a request counted as in flight from its arrival (held or sent) until the last byte of
   * its response reaches the SDK, which is before the SDK completes the caller's future.
   */
  private CompletableFuture<Void> forwardCounted(AsyncExecuteRequest request) {
    java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
    Runnable finish = () -> {
      if (done.compareAndSet(false, true)) {
        inFlight.decrementAndGet();
      }
    };
    SdkAsyncHttpResponseHandler handler = request.responseHandler();
    SdkAsyncHttpResponseHandler counting = new SdkAsyncHttpResponseHandler() {
      @Override
      public void onHeaders(SdkHttpResponse headers) {
        handler.onHeaders(headers);
      }

      @Override
      public void onStream(Publisher<ByteBuffer> stream) {
        handler.onStream(subscriber -> stream.subscribe(new Subscriber<ByteBuffer>() {
          @Override
          public void onSubscribe(Subscription s) {
            subscriber.onSubscribe(s);
          }

          @Override
          public void onNext(ByteBuffer b) {
            subscriber.onNext(b);
          }

          @Override
          public void onError(Throwable t) {
            finish.run();
            subscriber.onError(t);
          }

          @Override
          public void onComplete() {
            finish.run();
            subscriber.onComplete();
          }
        }));
      }

      @Override
      public void onError(Throwable error) {
        finish.run();
        handler.onError(error);
      }
    };
    return delegate.execute(copyWith(request, counting)).whenComplete((v, e) -> finish.run());
  }

  private static AsyncExecuteRequest copyWith(AsyncExecuteRequest request, SdkAsyncHttpResponseHandler handler) {
    return AsyncExecuteRequest.builder()
        .request(request.request())
        .requestContentPublisher(request.requestContentPublisher())
        .responseHandler(handler)
        .metricCollector(request.metricCollector().orElse(null))
        .fullDuplex(request.fullDuplex())
        .httpExecutionAttributes(request.httpExecutionAttributes())
        .build();
  }

  private static CompletableFuture<Void> answer(SdkAsyncHttpResponseHandler handler, int status, String xml) {
    byte[] body = xml.getBytes(StandardCharsets.UTF_8);
    handler.onHeaders(SdkHttpResponse.builder().statusCode(status)
        .putHeader("Content-Type", "application/xml")
        .putHeader("Content-Length", String.valueOf(body.length))
        .build());
    handler.onStream(AsyncRequestBody.fromBytes(body));
    return CompletableFuture.completedFuture(null);
  }

  /** Sends the request for real, drains and drops the answer, and never completes. */
  private CompletableFuture<Void> loseResponse(AsyncExecuteRequest request) {
    lost.incrementAndGet();
    SdkAsyncHttpResponseHandler swallow = new SdkAsyncHttpResponseHandler() {
      @Override
      public void onHeaders(SdkHttpResponse headers) {}

      @Override
      public void onStream(Publisher<ByteBuffer> stream) {
        stream.subscribe(new Subscriber<>() {
          @Override
          public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
          }

          @Override
          public void onNext(ByteBuffer b) {}

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onComplete() {}
        });
      }

      @Override
      public void onError(Throwable error) {}
    };
    delegate.execute(copyWith(request, swallow));
    return new CompletableFuture<>();
  }

  @Override
  public String clientName() {
    return "scripted-" + delegate.clientName();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
