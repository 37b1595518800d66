package io.tidemark.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Test;

/** {@code request_percentage} in the quota manager, on a fake clock: percent of one thread over the window. */
class RequestPercentageTest {

  @Test
  void handlingTimeIsMeasuredAsPercentOfOneThreadOverTheWindow() {
    AtomicLong now = new AtomicLong(1_000_000);
    Map<ClientQuotaEntity, Map<String, Double>> quotas = Map.of(
        new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "c")), Map.of(ClientQuotaManager.REQUEST_PERCENTAGE, 10.0));
    ClientQuotaManager m = new ClientQuotaManager(new QuotaConfig(2, 1000, 30_000), () -> quotas, now::get);
    assertThat(m.anySet(ClientQuotaManager.REQUEST_PERCENTAGE)).isTrue();
    assertThat(m.anySet(ClientQuotaManager.PRODUCER_BYTE_RATE)).isFalse();
    // 50 ms of thread time over the (at least) 1 s window is 5%: within 10%
    assertThat(m.recordRequestTime("ANONYMOUS", "c", TimeUnit.MILLISECONDS.toNanos(50))).isZero();
    // 150 ms is 15%: silent for (15 - 10) / 10 of the window
    assertThat(m.recordRequestTime("ANONYMOUS", "c", TimeUnit.MILLISECONDS.toNanos(100))).isEqualTo(500);
    // another client id has no quota
    assertThat(m.recordRequestTime("ANONYMOUS", "other", TimeUnit.SECONDS.toNanos(5))).isZero();
    // the window passed: the old time no longer counts
    now.addAndGet(5_000);
    assertThat(m.recordRequestTime("ANONYMOUS", "c", TimeUnit.MILLISECONDS.toNanos(1))).isZero();
  }
}
