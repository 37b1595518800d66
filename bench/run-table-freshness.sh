#!/usr/bin/env bash
# Table topics (issues 6 and 14): time from produce to visible in a fresh Iceberg table scan, p50/p99,
# for append, upsert and CDC tables at commit intervals of 1 s and 10 s, and the object-store requests
# and bytes per GiB of the table path and of the log, against an in-process Tidemark server on S3Proxy.
# Writes its section of docs/benchmarks.md.
#   bench/run-table-freshness.sh       60 s of producing per run, 1000 records/s of ~1 KiB, 2000 ids
#   options: --seconds N --rate RECORDS_PER_SECOND --record-bytes N --ids N --kinds append,upsert,cdc
#            --intervals 1,10 --warmup-seconds N (default 15) --maintenance-interval-seconds N (default 30)
#            --delete-files-trigger N (default 32, the server default; 0: maintenance only at the interval)
#            --storage s3proxy|local --dir DIR (default data/bench-table) --no-docs
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/run-java.sh" io.tidemark.bench.TableFreshnessBench "$@"
