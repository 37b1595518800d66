#!/usr/bin/env bash
# Failover benchmark (issue 11): three nodes as child JVMs (FailoverTest's cluster), an idempotent
# acks=all producer over 6 partitions, then N times: kill -9 of the broker leading the most partitions,
# time from the kill until every partition it led acknowledged a record sent after the kill (detection
# included), restart it, wait until it serves. Prints every time, p50, p99 and max, and checks that
# every acknowledged record is read back exactly once with dense offsets.
#   bench/run-failover.sh            20 kills (about 25 minutes on the shared 2-core machine)
#   bench/run-failover.sh 5          5 kills
# The nodes' logs stay in server/target/failover-logs.
set -euo pipefail
TIDEMARK_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$TIDEMARK_HOME"
JAVA_HOME="$(bin/tidemark java)"
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
kills="${1:-20}"
mvn -B -pl server -am -Dtest='FailoverTest#aKilledBrokerFailsOverWhileItStaysDead' -Dsurefire.failIfNoSpecifiedTests=false \
  -Dtidemark.failover.kills="$kills" -Dtidemark.cluster.session.timeout.ms=3000 test | grep -E 'FailoverTest:|Tests run:|FAIL'
