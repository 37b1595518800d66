#!/usr/bin/env bash
# Transactional produce (issue 12): one transactional Java producer writes transactions of 100 and of
# 1,000 records of 1 KiB (acks=all) into Tidemark and into Apache Kafka of the kafka-clients version
# (durable: log.flush.interval.messages=1, and default), all started by this run and measured one at
# a time. Writes the "Transactional produce" section of docs/benchmarks.md.
#   bench/run-transactions.sh              full mode (2 repetitions of 20,000 records per cell)
#   bench/run-transactions.sh --quick      smoke run, prints only
#   options: --repetitions N  --records N  --output FILE  --no-output
# Broker and tool logs are kept in bench/target/txn-bench-logs. Stops every process it started.
set -euo pipefail
bench_name=run-transactions
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"

bench_pid=""
stop_bench() {
  if [[ -n "$bench_pid" ]] && kill -0 "$bench_pid" 2>/dev/null; then
    kill -TERM "$bench_pid" 2>/dev/null || true  # its shutdown hook stops the brokers it started
    wait "$bench_pid" 2>/dev/null || true
  fi
}
trap stop_bench EXIT
trap 'exit 130' INT TERM

java ${TIDEMARK_BENCH_JAVA_OPTS:--Xmx1g} -Dorg.slf4j.simpleLogger.log.org.apache.kafka=error -cp "$bench_jar:bench/target/lib/*" \
  io.tidemark.bench.kafka.TransactionBench \
  --kafka-classpath "$TIDEMARK_HOME/$kafka_lib/*" \
  --tidemark-classpath "$TIDEMARK_HOME/$server_jar:$TIDEMARK_HOME/server/target/lib/*" \
  --kafka-version "$kafka_version" "$@" &
bench_pid=$!
rc=0
wait "$bench_pid" || rc=$?
bench_pid=""
exit "$rc"
