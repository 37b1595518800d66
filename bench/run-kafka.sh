#!/usr/bin/env bash
# Kafka comparison (issue 4): Tidemark against Apache Kafka of the same version as the kafka-clients
# jars, measured with Kafka's own ProducerPerformance, ConsumerPerformance and EndToEndLatency
# (1 KiB records, acks=all, 1 and 16 partitions). Kafka runs twice: default (no fsync) and with
# log.flush.interval.messages=1. Writes the "Kafka comparison" section of docs/benchmarks.md.
#   bench/run-kafka.sh                     full mode (up to about 40 minutes on two busy cores), writes docs/benchmarks.md
#   bench/run-kafka.sh --quick             smoke run (a few minutes), prints only
#   options: --repetitions N  --output FILE  --no-output  --node-jvm-options 'OPTS' (default -Xmx2g, both brokers)
#            --work-dir DIR (parent of the scratch directory, default the system temp dir)  --tool-timeout-seconds S
# Kafka (broker + kafka-tools) is fetched from Maven Central into bench/target/kafka-lib by
# bench/kafka/pom.xml, which is not part of the normal build. Every broker and tool log is kept in
# bench/target/kafka-bench-logs. Exits non-zero when anything failed; stops every process it started.
set -euo pipefail
bench_name=run-kafka
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"

run_bench -Xmx512m io.tidemark.bench.KafkaBench --kafka-version "$kafka_version" "$@"
