# Sourced by the benchmark scripts that run Apache Kafka beside Tidemark (run-kafka.sh, run-move.sh, run-security.sh,
# run-transactions.sh):
# goes to the checkout, picks the JDK, checks that bench/kafka/pom.xml asks for the Kafka version
# Tidemark is built with, builds Tidemark when a source is newer than its jars, and fetches Kafka's
# jars into bench/target/kafka-lib. Sets TIDEMARK_HOME, kafka_version, server_jar, bench_jar, kafka_lib.
# The caller sets bench_name (used in messages) first.
TIDEMARK_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$TIDEMARK_HOME"
JAVA_HOME="$(bin/tidemark java)"
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"

pom_kafka_version() { sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$1" | head -n 1; }
kafka_version="$(pom_kafka_version pom.xml)"
if [[ "$kafka_version" != "$(pom_kafka_version bench/kafka/pom.xml)" ]]; then
  echo "$bench_name: bench/kafka/pom.xml asks for Kafka $(pom_kafka_version bench/kafka/pom.xml) but Tidemark is built" \
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
  echo "$bench_name: building Tidemark (bin/tidemark build)..." >&2
  bin/tidemark build -q >&2
fi

kafka_lib="bench/target/kafka-lib"
if [[ ! -f "$kafka_lib/kafka_2.13-$kafka_version.jar" || ! -f "$kafka_lib/kafka-tools-$kafka_version.jar" ]]; then
  echo "$bench_name: fetching Apache Kafka $kafka_version from Maven Central into $kafka_lib..." >&2
  rm -rf "$kafka_lib"
  mvn -B -q -f bench/kafka/pom.xml dependency:copy-dependencies >&2
fi


# run_bench HEAP MAIN_CLASS [ARGS...]: runs a benchmark's main class with the Kafka and Tidemark class
# paths, stops it (its shutdown hook stops the brokers and tools it started) when this script exits or
# is interrupted, and exits with its status.
bench_pid=""
stop_bench() {
  if [[ -n "$bench_pid" ]] && kill -0 "$bench_pid" 2>/dev/null; then
    kill -TERM "$bench_pid" 2>/dev/null || true
    wait "$bench_pid" 2>/dev/null || true
  fi
}
run_bench() {
  local heap="$1" main="$2"; shift 2
  trap stop_bench EXIT
  trap 'exit 130' INT TERM
  java ${TIDEMARK_BENCH_JAVA_OPTS:-$heap} -Dorg.slf4j.simpleLogger.log.org.apache.kafka=error \
    -cp "$bench_jar:bench/target/lib/*" "$main" \
    --kafka-classpath "$TIDEMARK_HOME/$kafka_lib/*" \
    --tidemark-classpath "$TIDEMARK_HOME/$server_jar:$TIDEMARK_HOME/server/target/lib/*" "$@" &
  bench_pid=$!
  local rc=0
  wait "$bench_pid" || rc=$?
  bench_pid=""
  exit "$rc"
}
