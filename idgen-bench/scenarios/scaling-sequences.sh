#!/usr/bin/env bash
#
# scaling-sequences.sh - the "sequences loaded" curve of SCALING.md: one idgen server (default settings) on a
# single local Cassandra node, with N sequences loaded (each allocated once), for each N given. Per N, one CSV
# row: the time to create the sequences (cumulative: they are created once, the first N for the first point,
# more for the next), the server's start-up time (JVM start to its metrics answering) and the time to load the
# N sequences (one Allocate of 1 ID each, 64 at once), then with no traffic for IDLE seconds the CPU of the
# server and of Cassandra (/proc/PID/stat) and the server's RSS and heap in use after a full GC, then Allocate
# throughput (load generator, 10 callers, 1 ID per call, 5 s warm-up + 15 s) with the calls spread over the N
# sequences uniformly and by a Zipf law (s = 1). The server restarts before each N, so that it has exactly those
# N loaded.
#
#   scaling-sequences.sh [N ...]      default: 1 10 100 1000 10000
#
# Environment (optional): CSV (default docs/scaling/sequences.csv), IDLE (30), SETTLE (20), SERVER_HEAP (2g),
# CASSANDRA_HEAP (256M, the launcher's default), CREATE_CONCURRENCY (32), TOUCH_CONCURRENCY (64); to go on from
# an earlier run's Cassandra data (whose sequences are not created again): KEEP_DATA=1, CASSANDRA_DIR (its
# directory), CREATED (how many it created) and CREATE_S (how long that took, added to the create_s column);
# IDGEN_SERVER_JAR, IDGEN_LOADGEN_JAR, OUT_DIR, LOCK_WAIT=3600.
# Needs curl, python3, jq, jcmd, java 17. Everything runs on 127.0.0.1 and is stopped on exit.

set -euo pipefail

SCENARIO=scaling-sequences
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
COUNTS=("$@")
(( ${#COUNTS[@]} )) || COUNTS=(1 10 100 1000 10000)
for n in "${COUNTS[@]}"; do [[ "$n" =~ ^[1-9][0-9]*$ ]] || fail "usage: scaling-sequences.sh [N ...] (N >= 1)"; done
for tool in curl python3 jq jcmd java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
LOADGEN_JAR="${IDGEN_LOADGEN_JAR:-$(first_jar "$REPO_ROOT/idgen-bench/target/idgen-bench-*-loadgen.jar")}"
CSV="${CSV:-$REPO_ROOT/docs/scaling/sequences.csv}"
IDLE="${IDLE:-30}"
SETTLE="${SETTLE:-20}"
SERVER_HEAP="${SERVER_HEAP:-2g}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-scaling-sequences.XXXXXX)}"
mkdir -p "$OUT"
CBASE="${CASSANDRA_DIR:-$OUT/cassandra}"
PREFIX=scale
SERVER_PID=""
HEADER="date,commit,load1_before,load1_after,sequences,create_s,start_s,load_s,rss_mb,heap_used_mb,server_idle_cores,cassandra_idle_cores,cassandra_idle_base_cores,uniform_calls_s,uniform_p99_ms,zipf_calls_s,zipf_p99_ms,server_heap"

cleanup() {
  local rc=$?
  set +e
  stop_process "$SERVER_PID" 30
  [[ -d "$CBASE" ]] && "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
  say "logs in $OUT"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
take_cassandra_lock

GRPC="$(port)"; METRICS="$(port)"
start_server() { # $1: log name
  local t0
  t0="$(now_ms)"
  start_cassandra_server "$OUT/$1.log" 127.0.0.1:9042 dc1 "$GRPC" "$METRICS" -Didgen.cassandra.replication.dc1=1 \
    -Xms256m -Xmx"$SERVER_HEAP"
  SERVER_PID=$STARTED_PID
  START_S="$(awk -v ms=$(($(now_ms) - t0)) 'BEGIN { printf "%.1f", ms / 1000 }')"
}
loadgen() { # $1: N, $2: distribution; prints "calls/s p99_ms"
  timeout 180 java -Xmx512m -jar "$LOADGEN_JAR" --target "127.0.0.1:$GRPC" --sequence "$PREFIX" --sequences "$1" \
    --distribution "$2" --concurrency 10 --ids-per-call 1 --warmup 5s --duration 15s --json \
    >"$OUT/loadgen-$1-$2.json" 2>"$OUT/loadgen-$1-$2.err" 9>&- || { cat "$OUT/loadgen-$1-$2.err" >&2; echo "- -"; return; }
  jq -r '"\(.callsPerSecond) \(.latency.p99 / 1000)"' "$OUT/loadgen-$1-$2.json"
}

"$CASSANDRA_SH" fetch 9>&- >&2
say "starting a single Cassandra node in $CBASE"
keep=()
[[ "${KEEP_DATA:-}" == 1 ]] && keep=(--keep-data)
"$CASSANDRA_SH" start --topology single --base-dir "$CBASE" --heap "${CASSANDRA_HEAP:-256M}" "${keep[@]}" 9>&- \
  >"$OUT/cassandra.log" 2>&1 || { tail -20 "$OUT/cassandra.log" >&2; fail "Cassandra did not start"; }
CASSANDRA_PID="$(<"$CBASE/dc1/pid")"
sleep "$SETTLE"
read -r CASSANDRA_BASE <<<"$(cores_over "$IDLE" "$CASSANDRA_PID")"
say "Cassandra alone: $CASSANDRA_BASE cores"

start_server server-create
created="${CREATED:-0}"
create_total="${CREATE_S:-0}"
for n in "${COUNTS[@]}"; do
  if (( n > created )); then
    say "creating $PREFIX-$created .. $PREFIX-$((n - 1))"
    line="$(scaling_tool create --target "127.0.0.1:$GRPC" --prefix "$PREFIX" --from "$created" \
      --count $((n - created)) --concurrency "${CREATE_CONCURRENCY:-32}" --timeout 20m)" || fail "create: $line"
    say "create: $line"
    create_total="$(awk -v a="$create_total" -v b="$(kv seconds <<<"$line")" 'BEGIN { printf "%.1f", a + b }')"
    created=$n
  fi
  stop_process "$SERVER_PID" 60
  start_server "server-$n"
  say "server started in $START_S s; loading $n sequences"
  line="$(scaling_tool touch --target "127.0.0.1:$GRPC" --prefix "$PREFIX" --count "$n" \
    --concurrency "${TOUCH_CONCURRENCY:-64}" --timeout 20m)" || fail "touch: $line"
  load_s="$(kv seconds <<<"$line")"
  say "touch: $line; idle for $((SETTLE + IDLE)) s"
  sleep "$SETTLE"
  l0="$(load1)"
  read -r server_cores cassandra_cores <<<"$(cores_over "$IDLE" "$SERVER_PID" "$CASSANDRA_PID")"
  rss="$(rss_mb "$SERVER_PID")"
  heap="$(heap_used_mb "$SERVER_PID")"
  say "idle: server $server_cores cores, Cassandra $cassandra_cores; RSS $rss MiB, heap after GC $heap MiB"
  read -r u_rate u_p99 <<<"$(loadgen "$n" uniform)"
  read -r z_rate z_p99 <<<"$(loadgen "$n" zipf)"
  csv_append "$CSV" "$HEADER" "$(date -u +%FT%TZ),$(source_commit),$l0,$(load1),$n,$create_total,$START_S,$load_s,$rss,$heap,$server_cores,$cassandra_cores,$CASSANDRA_BASE,$u_rate,$u_p99,$z_rate,$z_p99,$SERVER_HEAP"
done
