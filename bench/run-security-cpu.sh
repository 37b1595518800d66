#!/usr/bin/env bash
# Security (issue 13): where the CPU of TLS goes. Starts one broker at a time (Tidemark, then Apache Kafka
# without fsync) with a PLAINTEXT and a SASL_SSL (TLS + SCRAM-SHA-512) listener, warms both up, then per
# repetition runs Kafka's ProducerPerformance (1 KiB records, acks=all, 4 partitions, as fast as it goes)
# on each listener and prints, per run: records/s, p99, the broker's CPU time split by thread group (read
# from /proc: "net" is Tidemark's kafka-network-thread-* or Kafka's network threads and request handlers,
# which together do what Tidemark's network threads do; jit, gc, other) and the producer's CPU time
# (user+sys, its JVM start and TLS handshake and SCRAM login included), each also per record in µs.
# The CPU times do not depend on how loaded the machine is, unlike records/s.
#   bench/run-security-cpu.sh [REPETITIONS [RECORDS [tidemark|kafka|both [JFR]]]]   (defaults 3 30000 both)
# JFR=1 also records each run with JDK Flight Recorder CPU-time sampling (jdk.CPUTimeSample) into the
# work directory (printed at the end), for `jfr print --events jdk.CPUTimeSample FILE`.
# Needs the JDK's keytool and jcmd. Stops every process it started and deletes the brokers' data.
set -euo pipefail
bench_name=run-security-cpu
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
REPS=${1:-3}; N=${2:-30000}; WHICH=${3:-both}; JFR=${4:-0}
KL="$TIDEMARK_HOME/$kafka_lib/*"
W="$(mktemp -d /tmp/tidemark-security-cpu-XXXXXX)"
H=127.0.0.1; PW=bench-secret
BPID=""
stop_broker() { if [[ -n "$BPID" ]]; then kill "$BPID" 2>/dev/null || true; wait "$BPID" 2>/dev/null || true; BPID=""; fi; }
# on exit: stop the broker, delete the brokers' data (GBs), keep their logs and the JFR files
cleanup() { stop_broker; rm -rf "$W"/tidemark/data "$W"/kafka/logs; }
trap cleanup EXIT
free_port() { # a loopback port nothing listens on (random, probed)
  local p
  for p in $(shuf -i 20000-60000 -n 100); do
    if ! (exec 3<>"/dev/tcp/$H/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  echo "$bench_name: no free port found" >&2; exit 1
}
keytool -genkeypair -alias broker -keyalg EC -groupname secp256r1 -validity 30 -dname CN=localhost \
  -ext SAN=dns:localhost,ip:127.0.0.1 -storetype PKCS12 -keystore "$W/broker.p12" -storepass $PW -keypass $PW 2>/dev/null
keytool -exportcert -rfc -alias broker -keystore "$W/broker.p12" -storepass $PW -file "$W/broker.pem" 2>/dev/null
keytool -importcert -noprompt -alias broker -file "$W/broker.pem" -storetype PKCS12 -keystore "$W/trust.p12" \
  -storepass $PW >/dev/null 2>&1
cat > "$W/client.properties" <<EOF
security.protocol=SASL_SSL
ssl.truststore.location=$W/trust.p12
ssl.truststore.type=PKCS12
ssl.truststore.password=$PW
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="bench" password="bench-pw";
EOF
TLS="ssl.keystore.location=$W/broker.p12
ssl.keystore.type=PKCS12
ssl.keystore.password=$PW
sasl.enabled.mechanisms=SCRAM-SHA-512"

# thread id -> group (net, jit, gc, other), from the broker's thread dump
thread_groups() {
  jcmd "$BPID" Thread.print 2>/dev/null | awk '/^"/ { n=$0; sub(/^"/,"",n); sub(/".*/,"",n);
    if (match($0,/nid=(0x[0-9a-f]+|[0-9]+)/)) { id=substr($0,RSTART+4,RLENGTH-4);
      g="other"; if (n ~ /^kafka-network-thread|^data-plane-kafka-(network-thread|request-handler)/) g="net";
      else if (n ~ /CompilerThread/) g="jit"; else if (n ~ /^(GC Thread|G1 )/) g="gc"; print id, g } }' |
    while read -r id g; do echo "$((id)) $g"; done > "$W/groups"
}
# the broker's CPU ticks (1/100 s) per group: "net jit gc other"
broker_ticks() {
  local f line rest tid
  for f in /proc/$BPID/task/*/stat; do
    read -r line < "$f" 2>/dev/null || continue
    tid=${f#/proc/$BPID/task/}; tid=${tid%/stat}; rest=${line##*) }
    set -- $rest; echo "$tid ${12} ${13}"
  done | awk -v gf="$W/groups" 'BEGIN { while ((getline l < gf) > 0) { split(l,a," "); g[a[1]]=a[2] } }
    { k=($1 in g) ? g[$1] : "other"; t[k]+=$2+$3 } END { print t["net"]+0, t["jit"]+0, t["gc"]+0, t["other"]+0 }'
}
topics() { java -Xmx256m -cp "$KL" org.apache.kafka.tools.TopicCommand --bootstrap-server $H:$P "$@"; }
produce() { # listener topic records -> ProducerPerformance summary line + "client=<user+sys s>"
  local cfg=() port=$P
  if [[ $1 == SASL_SSL ]]; then cfg=(--command-config "$W/client.properties"); port=$S; fi
  topics --create --topic "$2" --partitions 4 >/dev/null 2>&1
  /usr/bin/time -f "client=%U %S" java -Xmx512m -cp "$KL" org.apache.kafka.tools.ProducerPerformance \
    --bootstrap-server $H:$port --topic "$2" --num-records "$3" --record-size 1024 --throughput -1 \
    --producer-props acks=all "${cfg[@]}" 2>&1 | grep -E 'records sent,.*99th|^client=' | tr '\n' ' '
}
start_broker() { # tidemark|kafka
  local d="$W/$1"; mkdir -p "$d"
  P=$(free_port); S=$(free_port)
  if [[ $1 == tidemark ]]; then
    cat > "$d/node.properties" <<EOF
process.roles=controller,broker
data.dir=$d/data
kafka.listener.host=$H
kafka.advertised.host=$H
kafka.listener.port=$P
admin.host=$H
admin.port=$(free_port)
registry.host=$H
registry.port=$(free_port)
table.rest.host=$H
table.rest.port=$(free_port)
controller.node.id=1
controller.voters=1@$H:$(free_port)
listeners=PLAINTEXT://$H:$P,SASL_SSL://$H:$S
advertised.listeners=PLAINTEXT://$H:$P,SASL_SSL://$H:$S
inter.broker.listener.name=PLAINTEXT
sasl.scram.bootstrap.credentials=SCRAM-SHA-512=[name=bench,password=bench-pw]
$TLS
EOF
    java -Xmx2g -cp "$TIDEMARK_HOME/$server_jar:$TIDEMARK_HOME/server/target/lib/*" io.tidemark.server.Main start \
      --config "$d/node.properties" > "$d/broker.log" 2>&1 &
  else
    local cp; cp=$(free_port)
    cat > "$d/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$H:$cp
listeners=PLAINTEXT://$H:$P,SASL_SSL://$H:$S,CONTROLLER://$H:$cp
advertised.listeners=PLAINTEXT://$H:$P,SASL_SSL://$H:$S
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT
log.dirs=$d/logs
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
$TLS
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
EOF
    java -Xmx512m -cp "$KL" kafka.tools.StorageTool format -t "$(java -cp "$KL" org.apache.kafka.tools.StorageTool \
      random-uuid 2>/dev/null)" -c "$d/server.properties" --add-scram 'SCRAM-SHA-512=[name=bench,password=bench-pw]' \
      > "$d/format.log" 2>&1
    java -Xmx2g -cp "$KL" kafka.Kafka "$d/server.properties" > "$d/broker.log" 2>&1 &
  fi
  BPID=$!
  for _ in $(seq 1 300); do
    topics --create --topic ready --partitions 1 >/dev/null 2>&1 && return 0
    kill -0 "$BPID" 2>/dev/null || break
    sleep 1
  done
  echo "$bench_name: $1 did not start; see $d/broker.log" >&2; exit 1
}
# JFR's profile settings with CPU-time sampling (jdk.CPUTimeSample, off by default) on, every 2 ms of a thread's CPU
sed '/<event name="jdk.CPUTimeSample">/,/<\/event>/{s/>false</>true</;s/>10ms</>2ms</}' "$JAVA_HOME/lib/jfr/profile.jfc" \
  > "$W/cpu.jfc"
echo "# $(date -u +%FT%TZ) $REPS repetition(s) of $N records; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# contender listener rep: records/s p99-ms | broker CPU s (net jit gc other) | producer CPU s | per record µs: broker net, broker total, producer"
for c in tidemark kafka; do
  [[ $WHICH == both || $WHICH == "$c" ]] || continue
  start_broker $c
  for l in PLAINTEXT SASL_SSL; do produce $l warm-$l 20000 >/dev/null; done
  thread_groups
  for r in $(seq 1 "$REPS"); do
    for l in PLAINTEXT SASL_SSL; do
      [[ $JFR == 1 ]] && jcmd "$BPID" JFR.start name=run "settings=$W/cpu.jfc" "filename=$W/$c-$l-r$r.jfr" >/dev/null
      read -r n0 j0 g0 o0 < <(broker_ticks)
      out=$(produce $l "t-$l-r$r" "$N")
      read -r n1 j1 g1 o1 < <(broker_ticks)
      [[ $JFR == 1 ]] && jcmd "$BPID" JFR.stop name=run >/dev/null
      rps=$(sed -n 's/.* \([0-9.]*\) records\/sec.*/\1/p' <<<"$out")
      p99=$(sed -n 's/.* \([0-9.]*\) ms 99th.*/\1/p' <<<"$out")
      read -r cu cs < <(sed -n 's/.*client=\([0-9.]*\) \([0-9.]*\).*/\1 \2/p' <<<"$out")
      awk -v c=$c -v l=$l -v r=$r -v rps="$rps" -v p99="$p99" -v n=$((n1-n0)) -v j=$((j1-j0)) -v g=$((g1-g0)) \
        -v o=$((o1-o0)) -v cu="$cu" -v cs="$cs" -v N="$N" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
        t=(n+j+g+o)/100; cl=cu+cs
        printf "%s %s r%d: %.0f records/s p99 %s ms | broker %.2f s (net %.2f jit %.2f gc %.2f other %.2f) | producer %.2f s | per record µs: net %.1f broker %.1f producer %.1f | load %s\n",
          c, l, r, rps, p99, t, n/100, j/100, g/100, o/100, cl, n/100/N*1e6, t/N*1e6, cl/N*1e6, load }'
    done
  done
  stop_broker
done
echo "# $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg); work directory $W"
