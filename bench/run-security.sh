#!/usr/bin/env bash
# Security (issue 13): produce throughput and p99 over SASL_SSL (TLS + SCRAM-SHA-512) next to PLAINTEXT,
# on Tidemark and on Apache Kafka of the kafka-clients version (durable: log.flush.interval.messages=1,
# and default), every broker with both listeners, measured one at a time in the same run with Kafka's
# ProducerPerformance (1 KiB records, acks=all). Writes the "Security (issue 13)" section of
# docs/benchmarks.md, with each contender's TLS cost (SASL_SSL / PLAINTEXT).
#   bench/run-security.sh                  full mode (3 repetitions of 100,000 records per cell), writes docs/benchmarks.md
#   bench/run-security.sh --quick          smoke run, prints only
#   options: --repetitions N  --records N  --rate N (fixed-rate run, records/s)  --output FILE  --no-output
#            --tidemark-ssl-provider auto|openssl|jdk (Tidemark's ssl.provider; default auto: OpenSSL where it loads)
# The fixed-rate run also reports the p99 of its records after the first 3 s (--warmup-records), which
# leaves out the client's start (its connections' TLS handshakes and SASL logins).
# Certificates are made with the JDK's keytool in a scratch directory. Broker and tool logs are kept
# in bench/target/security-bench-logs. Stops every process it started.
set -euo pipefail
bench_name=run-security
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"

run_bench -Xmx512m io.tidemark.bench.kafka.SecurityBench --kafka-version "$kafka_version" "$@"
