#!/usr/bin/env bash
# Runs one benchmark main class from bench/target (building it first when a source is newer).
#   bench/run-java.sh MAIN_CLASS [args...]      JVM options: TIDEMARK_BENCH_JAVA_OPTS (default -Xmx4g)
set -euo pipefail
TIDEMARK_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$TIDEMARK_HOME"
JAVA_HOME="$(bin/tidemark java)"
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
jar="bench/target/tidemark-bench.jar"
if [[ ! -f "$jar" || -n "$(find . -path ./.git -prune -o \( -name '*.java' -o -name 'pom.xml' \) -newer "$jar" -print -quit)" ]]; then
  echo "bench: building (mvn package -DskipTests -pl bench -am)..." >&2
  mvn -B -q -DskipTests package -pl bench -am >&2
fi
main="$1"
shift
exec java ${TIDEMARK_BENCH_JAVA_OPTS:--Xmx4g} -cp "$jar:bench/target/lib/*" "$main" "$@"
