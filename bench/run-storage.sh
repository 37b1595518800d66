#!/usr/bin/env bash
# Storage-engine benchmark (issue 2): raw O_DIRECT baseline, WAL appends, upload to and cold reads
# from S3Proxy, in one run on one filesystem. Writes the "Storage engine" section of
# docs/benchmarks.md (full mode) and prints the table.
#   bench/run-storage.sh                    full mode (a few minutes), writes docs/benchmarks.md
#   bench/run-storage.sh --mode quick       seconds, prints only
#   options: --dir DIR (default data/bench) --output FILE --no-output --repetitions N
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
exec java ${TIDEMARK_BENCH_JAVA_OPTS:--Xmx4g} -cp "$jar:bench/target/lib/*" io.tidemark.bench.StorageBench "$@"
