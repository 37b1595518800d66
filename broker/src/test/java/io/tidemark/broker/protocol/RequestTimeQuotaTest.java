package io.tidemark.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;

/**
 * The dispatcher's side of the request-time quota, with a fake quota: a timed request records its
 * handling time and carries the throttle time in its encoded response and on its connection; the
 * exempt APIs (ApiVersions here) are neither timed nor throttled; a client the quota does not apply
 * to is not timed.
 */
class RequestTimeQuotaTest {

  /** Records what it is given; throttles 500 ms when it applies. */
  private static final class FakeQuota implements RequestTimeQuota {
    final List<Long> recorded = new ArrayList<>();
    boolean applies = true;

    @Override
    public boolean applies(RequestContext context) {
      return applies;
    }

    @Override
    public synchronized long record(RequestContext context, long nanos) {
      recorded.add(nanos);
      return 500;
    }
  }

  private static RequestDispatcher dispatcher(FakeQuota quota) {
    ApiRegistry apis = new ApiRegistry()
        .register(ApiKeys.API_VERSIONS, 0, 4, (c, r) -> CompletableFuture.completedFuture((ApiMessage) new ApiVersionsResponseData()))
        .register(ApiKeys.METADATA, 0, 13, (c, r) -> CompletableFuture.completedFuture((ApiMessage) new MetadataResponseData()));
    RequestDispatcher d = new RequestDispatcher(apis);
    d.requestTimeQuota(quota);
    return d;
  }

  private static RequestContext context(RequestHeader header) {
    return new RequestContext(header, InetAddress.getLoopbackAddress(), "c1");
  }

  private static int throttleOf(ByteBuffer encoded, RequestHeader header) {
    encoded.getInt(); // frame size
    return AbstractResponse.parseResponse(encoded, header).throttleTimeMs();
  }

  @Test
  void aTimedRequestIsThrottledInItsResponseAndOnItsConnection() {
    FakeQuota quota = new FakeQuota();
    RequestDispatcher d = dispatcher(quota);
    RequestHeader header = new RequestHeader(ApiKeys.METADATA, (short) 12, "slow", 3);
    long start = System.nanoTime();
    ByteBuffer encoded = d.dispatch(new RequestDecoder.Decoded(header,
        new MetadataRequest(new MetadataRequestData(), (short) 12)), context(header), start).join();
    assertThat(throttleOf(encoded, header)).isEqualTo(500);
    assertThat(d.throttles().take("c1")).isEqualTo(500);
    assertThat(quota.recorded).as("handling, then encoding").hasSize(2).allMatch(n -> n >= 0);
  }

  @Test
  void exemptApisAndClientsWithoutAQuotaAreNotTimed() {
    FakeQuota quota = new FakeQuota();
    RequestDispatcher d = dispatcher(quota);
    RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "slow", 4);
    ByteBuffer encoded = d.dispatch(new RequestDecoder.Decoded(header, new ApiVersionsRequest.Builder().build((short) 3)),
        context(header), System.nanoTime()).join();
    assertThat(throttleOf(encoded, header)).isZero();
    assertThat(RequestDispatcher.exempt(ApiKeys.SASL_HANDSHAKE)).isTrue();
    assertThat(RequestDispatcher.exempt(ApiKeys.SASL_AUTHENTICATE)).isTrue();
    assertThat(RequestDispatcher.exempt(ApiKeys.WRITE_TXN_MARKERS)).as("a cluster action").isTrue();
    assertThat(RequestDispatcher.exempt(ApiKeys.PRODUCE)).isFalse();

    quota.applies = false;
    RequestHeader metadata = new RequestHeader(ApiKeys.METADATA, (short) 12, "free", 5);
    ByteBuffer free = d.dispatch(new RequestDecoder.Decoded(metadata, new MetadataRequest(new MetadataRequestData(), (short) 12)),
        context(metadata), System.nanoTime()).join();
    assertThat(throttleOf(free, metadata)).isZero();
    assertThat(quota.recorded).isEmpty();
    assertThat(d.throttles().take("c1")).isZero();
  }
}
