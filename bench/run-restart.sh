#!/usr/bin/env bash
# Restart benchmark (issue 11): kill -9 of a node with 100 partitions (10 topics x 10), then time from
# the new JVM's spawn to the Kafka port listening and to the first acknowledged produce (acks=all),
# median and p99 over 10 restarts, with the node's own start-up phases. Writes the "Restart" section
# of docs/benchmarks.md and prints it.
#   bench/run-restart.sh                    10 restarts (a few minutes), writes docs/benchmarks.md
#   bench/run-restart.sh --restarts 3 --no-output     a smoke run, prints only
#   options: --topics N --partitions-per-topic N --records-per-partition N --node-jvm-options 'OPTS' (default -Xmx2g)
#            --output FILE --work-dir DIR (parent of the scratch data directory, default the system temp dir)
# Node logs stay in bench/target/restart-bench-logs. Every node it started is killed when it exits.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/run-java.sh" io.tidemark.bench.RestartBench "$@"
