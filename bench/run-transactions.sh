#!/usr/bin/env bash
# Transactions and compaction (issue 12): one transactional Java producer writes transactions of 100
# and of 1,000 records of 1 KiB (acks=all) into Tidemark and into Apache Kafka of the kafka-clients
# version (durable: log.flush.interval.messages=1, and default), all started by this run and measured
# one at a time; then each broker cleans a compacted partition (MiB/s of log cleaned). Writes the
# "Transactions and compaction (issue 12)" section of docs/benchmarks.md.
#   bench/run-transactions.sh              full mode (2 repetitions of 20,000 records per cell, 64 MiB cleaned)
#   bench/run-transactions.sh --quick      smoke run, prints only
#   options: --repetitions N  --records N  --compaction-mib N  --compaction-keys N  --output FILE  --no-output
# Broker and tool logs are kept in bench/target/txn-bench-logs. Stops every process it started.
set -euo pipefail
bench_name=run-transactions
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"

run_bench -Xmx1g io.tidemark.bench.kafka.TransactionBench --kafka-version "$kafka_version" "$@"
