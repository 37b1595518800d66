#!/usr/bin/env bash
# Partition move benchmark (issue 11): one partition of 10 MiB, 1 GiB and 5 GiB moved back and forth
# between two brokers 20 times under produce load, Tidemark (three nodes, local object storage) against
# Apache Kafka (two brokers, it copies the data); time from the reassignment request to the target
# acknowledging produce, p50/p99. Writes the "Partition moves" section of docs/benchmarks.md.
#   bench/run-move.sh                                  everything (long: Kafka copies 5 GiB 20 times)
#   bench/run-move.sh --sizes-mib 10 --moves 3 --no-output     a smoke run, prints only
#   options: --sizes-mib LIST --moves N --load-records-per-second N --only tidemark|kafka
#            --node-jvm-options 'OPTS' (default -Xmx2g) --output FILE --no-output --work-dir DIR
# Kafka's jars come from Maven Central into bench/target/kafka-lib (bench/kafka/pom.xml), as for
# bench/run-kafka.sh. Node logs stay in bench/target/move-bench-logs. Stops every process it started.
set -euo pipefail
bench_name=run-move
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"

run_bench -Xmx512m io.tidemark.bench.MoveBench "$@"
