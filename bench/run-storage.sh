#!/usr/bin/env bash
# Storage-engine benchmark (issue 2): raw O_DIRECT baseline, WAL appends, upload to and cold reads
# from S3Proxy, in one run on one filesystem. Writes the "Storage engine" section of
# docs/benchmarks.md (full mode) and prints the table.
#   bench/run-storage.sh                    full mode (a few minutes), writes docs/benchmarks.md
#   bench/run-storage.sh --mode quick       seconds, prints only
#   options: --dir DIR (default data/bench) --output FILE --no-output --repetitions N
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/run-java.sh" io.tidemark.bench.StorageBench "$@"
