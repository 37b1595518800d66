package io.tidemark.bench.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Goal: the transactions and compaction section shows measured medians, ratios to Kafka durable, and failed cells as failed. */
class TransactionBenchTest {

  @Test
  void theSectionShowsMediansRatiosAndFailures() {
    Map<Contender, Map<Integer, List<TransactionBench.Result>>> txns = new EnumMap<>(Contender.class);
    txns.put(Contender.TIDEMARK, Map.of(100, List.of(new TransactionBench.Result(3000, 2.9, 30, 10, 20),
        new TransactionBench.Result(5000, 4.9, 50, 12, 22))));
    txns.put(Contender.KAFKA_DURABLE, Map.of(100, List.of(new TransactionBench.Result(2000, 1.95, 20, 15, 30))));
    String section = TransactionBench.render(txns, 20000, 2, "4.4.0", "1.00, 2.00, 3.00", "2026-12-04T14:00:00Z", "bench/run-transactions.sh");
    assertThat(section).startsWith("## Transactions and compaction (issue 12)\n")
        .contains("| Tidemark | 100 | 4000 | 3.9 | 40.0 | 11.0 | 21.0 | 2.00× |")
        .contains("| Kafka, default (no fsync) | 100 | failed |");

    Map<Contender, List<CompactionBench.Result>> cleaning = new EnumMap<>(Contender.class);
    cleaning.put(Contender.TIDEMARK, List.of(new CompactionBench.Result(32, 2), new CompactionBench.Result(16, 4)));
    cleaning.put(Contender.KAFKA_DURABLE, List.of(new CompactionBench.Result(12, 5.3), new CompactionBench.Result(12, 5.3)));
    cleaning.put(Contender.KAFKA_DEFAULT, List.of(new CompactionBench.Result(10, 6.4)));
    String compaction = TransactionBench.renderCleaning(cleaning, 64, 1000, 2, "4.00, 5.00, 6.00", "bench/run-transactions.sh");
    assertThat(compaction).startsWith("\n### Compaction\n")
        .contains("| Tidemark | 64 | 3.0 | 24.0 | 2.00× |")
        .contains("| Kafka, default (no fsync) | 64 | failed in 1 of 2 | | |")
        .contains("load average at the end of the run 4.00, 5.00, 6.00");
  }
}
