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

bench_pid=""
stop_bench() {
  if [[ -n "$bench_pid" ]] && kill -0 "$bench_pid" 2>/dev/null; then
    kill -TERM "$bench_pid" 2>/dev/null || true  # its shutdown hook stops the brokers and tools it started
    wait "$bench_pid" 2>/dev/null || true
  fi
}
trap stop_bench EXIT
trap 'exit 130' INT TERM

java ${TIDEMARK_BENCH_JAVA_OPTS:--Xmx512m} -Dorg.slf4j.simpleLogger.log.org.apache.kafka=error -cp "$bench_jar:bench/target/lib/*" io.tidemark.bench.MoveBench \
  --kafka-classpath "$TIDEMARK_HOME/$kafka_lib/*" \
  --tidemark-classpath "$TIDEMARK_HOME/$server_jar:$TIDEMARK_HOME/server/target/lib/*" \
  "$@" &
bench_pid=$!
rc=0
wait "$bench_pid" || rc=$?
bench_pid=""
exit "$rc"
