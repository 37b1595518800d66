#!/usr/bin/env bash
# Table-topic freshness (issue 6): time from produce to visible in a fresh Iceberg table scan,
# p50/p99, with commit intervals of 1 s and 10 s, against an in-process Tidemark server on the
# embedded defaults. Prints a Markdown table.
#   bench/run-table-freshness.sh                        60 s of producing per interval, 500 records/s
#   options: --seconds N --rate RECORDS_PER_SECOND --warmup-seconds N (default 15) --dir DIR (default data/bench-table)
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/run-java.sh" io.tidemark.bench.TableFreshnessBench "$@"
