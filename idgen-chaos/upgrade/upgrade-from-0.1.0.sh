#!/usr/bin/env bash
# Recorded run (issue 45): the documented upgrade from 0.1.0 to HEAD on one Cassandra keyspace, under load.
#
# 0.1.0 was never tagged. It is commit 9e6246f (2026-11-22 16:56, "RELIABILITY.md: second 10-minute run"), the
# last commit of the first round: the next one, f81dd2e (2026-11-23), adds dc_pools.appended, the first column
# the CHANGELOG lists under 0.2.0; the POM says 0.1.0-SNAPSHOT up to 12803ca.
#
# Steps, as docs/upgrading.md#from-010 says: two 0.1.0 servers (dc1, dc2) on the launcher's two-dc cluster,
# create-schema = true (0.1.0's schema); raw Allocate callers record every range; an advance (floor 1);
# stop EVERY 0.1.0 server (the upgrade is not rolling); the operator's schema steps, the files
# deploy/cassandra/upgrade-from-0.1.0.cql then schema.cql (run by UpgradeLoad's cql mode: the launcher has no
# cqlsh); HEAD servers with create-schema = false, one by one, each ready before the next (a HEAD server refuses
# to serve while a column or table is missing, so this also checks that the files are complete); another advance (floor 2); the callers keep going on HEAD; then the check.
# Verdict line "upgrade verdict: OK|FAIL ..."; exit 1 on failure.
#
# Run from the repository root:  flock /tmp/idgen-cassandra.lock idgen-chaos/upgrade/upgrade-from-0.1.0.sh
set -euo pipefail
readonly OLD_COMMIT=9e6246f1d4cc695472363cf1ac44dc7c6c2f9a83
ROOT=$(git rev-parse --show-toplevel)
OUT=${OUT:-$ROOT/target/upgrade-from-0.1.0}
OLD_TREE=${OLD_TREE:-/tmp/idgen-0.1.0}
LOAD_SECONDS=${LOAD_SECONDS:-30}
SEQ=upgrade
rm -rf "$OUT"; mkdir -p "$OUT"
PIDS=()
cleanup() {
  touch "$OUT/stop"
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  "$ROOT/idgen-testing/cassandra/cassandra.sh" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

# 1. The jars. 0.1.0 from its commit in a worktree outside the repository's tree; HEAD from this checkout.
if [ ! -d "$OLD_TREE" ]; then git -C "$ROOT" worktree add --detach "$OLD_TREE" "$OLD_COMMIT"; fi
OLD_JAR=$OLD_TREE/idgen-server/target/idgen-server-0.1.0-SNAPSHOT-all.jar
NEW_JAR=$ROOT/idgen-server/target/idgen-server-0.2.0-SNAPSHOT-all.jar
[ -f "$OLD_JAR" ] || (cd "$OLD_TREE" && ./mvnw -o -q -B -ntp -DskipTests package -pl idgen-server -am)
[ -f "$NEW_JAR" ] || (cd "$ROOT" && ./mvnw -o -q -B -ntp -DskipTests package -pl idgen-server -am)

# 2. Cassandra: dc1 = 127.0.0.1, dc2 = 127.0.0.2, one node each (the caller holds the launcher's lock).
"$ROOT/idgen-testing/cassandra/cassandra.sh" start --topology two-dc

start_server() { # jar name dc contact grpc-port metrics-port [extra HOCON lines]
  local jar=$1 name=$2 dc=$3 cp=$4 port=$5 mport=$6; shift 6
  { echo "idgen.store = cassandra"
    echo "idgen.grpc { host = \"127.0.0.1\", port = $port }"
    echo "idgen.metrics.port = $mport"
    echo "idgen.cassandra { contact-points = [\"$cp:9042\"], local-datacenter = $dc, keyspace = idgen }"
    echo "idgen.cassandra { create-schema = ${CREATE_SCHEMA:-true}, replication { dc1 = 1, dc2 = 1 } }"
    for line in "$@"; do echo "$line"; done; } >"$OUT/$name.conf"
  java -jar "$jar" --config "$OUT/$name.conf" >"$OUT/$name.log" 2>&1 &
  PIDS+=($!); echo $! >"$OUT/$name.pid"
  for _ in $(seq 1 120); do # bounded: 120 s
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "upgrade: $name serving on $port"; return 0; fi
    kill -0 "$(cat "$OUT/$name.pid")" 2>/dev/null || { cat "$OUT/$name.log"; return 1; }
    sleep 1
  done
  echo "upgrade: $name did not listen in 120 s"; return 1
}
ready() { # HEAD: the store answers (its log says SERVING); bounded: 120 s
  for _ in $(seq 1 120); do
    if grep -q "is SERVING" "$OUT/$1.log"; then echo "upgrade: $1 ready"; return 0; fi
    sleep 1
  done
  echo "upgrade: $1 not ready in 120 s:"; tail -5 "$OUT/$1.log"; return 1
}
stop_server() { # SIGTERM: the graceful stop; wait until the process has gone (bounded: 60 s)
  local pid; pid=$(cat "$OUT/$1.pid"); kill -TERM "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || { echo "upgrade: $1 stopped"; return 0; }; sleep 1; done
  echo "upgrade: $1 did not stop in 60 s"; return 1
}
tool() { java -cp "$NEW_JAR" "$ROOT/idgen-chaos/upgrade/UpgradeLoad.java" "$@"; }
retry() { # a call to a server that is still connecting to Cassandra: bounded, 20 tries
  for _ in $(seq 1 20); do "$@" && return 0; sleep 3; done; echo "upgrade: failed 20 times: $*"; return 1
}

# 3. 0.1.0 servers under load.
start_server "$OLD_JAR" old-dc1 dc1 127.0.0.1 17071 19091
start_server "$OLD_JAR" old-dc2 dc2 127.0.0.2 17072 19092
retry tool create 127.0.0.1:17071 "$SEQ"
printf '127.0.0.1:17071\n127.0.0.1:17072\n' >"$OUT/targets"
for c in 1 2 3; do tool load "$OUT/targets" "$SEQ" "$OUT/client$c.ids" "$OUT/stop" >"$OUT/client$c.log" 2>&1 & PIDS+=($!); done
sleep "$LOAD_SECONDS"
retry tool advance 127.0.0.1:17071 "$SEQ" 1000000000 "$OUT/floors"
sleep 5

# 4. The upgrade, as documented: stop every 0.1.0 server, the schema steps, HEAD servers one by one.
: >"$OUT/targets"
stop_server old-dc1
stop_server old-dc2
tool cql 127.0.0.1:9042 dc1 "$ROOT/deploy/cassandra/upgrade-from-0.1.0.cql" "$ROOT/deploy/cassandra/schema.cql"
export CREATE_SCHEMA=false
start_server "$NEW_JAR" new-dc1 dc1 127.0.0.1 17081 19093 "idgen.server-name = new-dc1" "idgen.http.port = 0"
ready new-dc1
printf '127.0.0.1:17081\n' >"$OUT/targets"
start_server "$NEW_JAR" new-dc2 dc2 127.0.0.2 17082 19094 "idgen.server-name = new-dc2" "idgen.http.port = 0"
ready new-dc2
printf '127.0.0.1:17081\n127.0.0.1:17082\n' >"$OUT/targets"
sleep "$LOAD_SECONDS"
retry tool advance 127.0.0.1:17082 "$SEQ" 2000000000 "$OUT/floors"
sleep "$LOAD_SECONDS"
touch "$OUT/stop"; sleep 3
cat "$OUT"/client*.log

# 5. The check.
tool check "$OUT" "$OUT/floors"
