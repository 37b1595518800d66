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
TIDEMARK_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$TIDEMARK_HOME"
JAVA_HOME="$(bin/tidemark java)"
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"

pom_kafka_version() { sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$1" | head -n 1; }
kafka_version="$(pom_kafka_version pom.xml)"
if [[ "$kafka_version" != "$(pom_kafka_version bench/kafka/pom.xml)" ]]; then
  echo "run-kafka: bench/kafka/pom.xml asks for Kafka $(pom_kafka_version bench/kafka/pom.xml) but Tidemark is built" \
       "with kafka-clients $kafka_version; make the kafka.version properties agree." >&2
  exit 2
fi

server_jar="server/target/tidemark-server.jar"
bench_jar="bench/target/tidemark-bench.jar"
stale() { # jar, then folders whose sources it is built from
  local jar="$1"; shift
  [[ ! -f "$jar" || -n "$(find "$@" -path ./.git -prune -o \( -name '*.java' -o -name 'pom.xml' -o -path '*/src/main/resources/*' \) -newer "$jar" -print -quit)" ]]
}
if stale "$server_jar" pom.xml stream metadata broker registry table server || stale "$bench_jar" .; then
  echo "run-kafka: building Tidemark (bin/tidemark build)..." >&2
  bin/tidemark build -q >&2
fi

kafka_lib="bench/target/kafka-lib"
if [[ ! -f "$kafka_lib/kafka_2.13-$kafka_version.jar" || ! -f "$kafka_lib/kafka-tools-$kafka_version.jar" ]]; then
  echo "run-kafka: fetching Apache Kafka $kafka_version from Maven Central into $kafka_lib..." >&2
  rm -rf "$kafka_lib"
  mvn -B -q -f bench/kafka/pom.xml dependency:copy-dependencies >&2
fi

bench_pid=""
stop_bench() {
  if [[ -n "$bench_pid" ]] && kill -0 "$bench_pid" 2>/dev/null; then
    kill -TERM "$bench_pid" 2>/dev/null || true  # its shutdown hook stops the brokers and tools it started
    wait "$bench_pid" 2>/dev/null || true
  fi
}
trap stop_bench EXIT
trap 'exit 130' INT TERM

java ${TIDEMARK_BENCH_JAVA_OPTS:--Xmx512m} -Dorg.slf4j.simpleLogger.log.org.apache.kafka=error -cp "$bench_jar:bench/target/lib/*" io.tidemark.bench.KafkaBench \
  --kafka-classpath "$TIDEMARK_HOME/$kafka_lib/*" \
  --tidemark-classpath "$TIDEMARK_HOME/$server_jar:$TIDEMARK_HOME/server/target/lib/*" \
  --kafka-version "$kafka_version" "$@" &
bench_pid=$!
rc=0
wait "$bench_pid" || rc=$?
bench_pid=""
exit "$rc"
