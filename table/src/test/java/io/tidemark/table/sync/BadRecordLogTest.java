package io.tidemark.table.sync;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Goal: bad records are logged at a bounded rate, and the next logged line says how many were left out. */
class BadRecordLogTest {

  @Test
  void atMostPerWindowLinesThenTheNextWindowReportsWhatWasLeftOut() {
    AtomicLong now = new AtomicLong(1_000);
    BadRecordLog log = new BadRecordLog(now::get, 100, 3);
    assertThat(log.admit()).isZero();
    assertThat(log.admit()).isZero();
    assertThat(log.admit()).isZero();
    for (int i = 0; i < 5; i++) {
      assertThat(log.admit()).isEqualTo(-1);
    }
    now.addAndGet(99);
    assertThat(log.admit()).as("still the same window").isEqualTo(-1);
    now.addAndGet(1);
    assertThat(log.admit()).as("first line of the next window").isEqualTo(6);
    assertThat(log.admit()).isZero();
  }
}
