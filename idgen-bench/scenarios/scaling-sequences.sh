#!/usr/bin/env bash
#
# scaling-sequences.sh - the "sequences loaded" curve of SCALING.md: one idgen server (default settings) on a
# single local Cassandra node, with N sequences loaded, for each N given. One CSV row per N:
#   create_s        the time to create the N sequences (CreateSequence, 32 at once; cumulative over the Ns)
#   first_load_s    the time to load them the first time (one Allocate of 1 ID each, 64 at once; cumulative):
#                   fresh sequences, whose pools are empty
#   start_s         the server's start (JVM start to its metrics answering), restarted for each N so that it has
#                   exactly those N loaded
#   load_s          the time to load the N into the restarted server (one Allocate each, 64 at once)
#   then, with no traffic for IDLE s: the CPU of the server and of Cassandra (/proc/PID/stat), the server's RSS
#   and its heap in use after a full GC; then, after an 11 s run not measured (the JIT), Allocate throughput (the
#   load generator: 10 callers, 1 ID per call, 5 s warm-up + 15 s) with the calls spread over the N sequences
#   uniformly and by a Zipf law (s = 1), with the server's CPU per call and the pool CAS made in the window;
#   stop_s          the time the server takes to stop on SIGTERM (it gives every reserve back; SIGKILL after 180 s)
#
#   scaling-sequences.sh [N ...]      default: 1 10 100 1000 10000
#
# Each run holds the Cassandra launcher's lock for at most BUDGET seconds (default 840) of work: a run that
# cannot create and load the largest N in that time stops (exit 3) and the next run with the same
# CASSANDRA_DIR goes on where it stopped (its data and the progress file in it are kept); points already
# measured in that directory are not measured again.
#
# Environment (optional): CSV (default docs/scaling/sequences.csv), CASSANDRA_DIR (default: a new directory),
# BUDGET (840), IDLE (30), SETTLE (20), SERVER_HEAP (2g), CASSANDRA_HEAP (256M, the launcher's default),
# CREATE_CONCURRENCY (32), TOUCH_CONCURRENCY (64), LOADGEN_HEAP (2g: the load generator parses the server's
# metrics page, which grows with the sequences loaded), IDGEN_SERVER_JAR, IDGEN_LOADGEN_JAR, OUT_DIR, LOCK_WAIT=3600.
# Needs curl, python3, jq, jcmd, java 17. Everything runs on 127.0.0.1 and is stopped on exit.

set -euo pipefail

SCENARIO=scaling-sequences
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
COUNTS=("$@")
(( ${#COUNTS[@]} )) || COUNTS=(1 10 100 1000 10000)
for n in "${COUNTS[@]}"; do [[ "$n" =~ ^[1-9][0-9]*$ ]] || fail "usage: scaling-sequences.sh [N ...] (N >= 1)"; done
mapfile -t COUNTS < <(printf '%s\n' "${COUNTS[@]}" | sort -n -u)
for tool in curl python3 jq jcmd java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
LOADGEN_JAR="${IDGEN_LOADGEN_JAR:-$(first_jar "$REPO_ROOT/idgen-bench/target/idgen-bench-*-loadgen.jar")}"
CSV="${CSV:-$REPO_ROOT/docs/scaling/sequences.csv}"
BUDGET="${BUDGET:-840}"
IDLE="${IDLE:-30}"
SETTLE="${SETTLE:-20}"
SERVER_HEAP="${SERVER_HEAP:-2g}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-scaling-sequences.XXXXXX)}"
mkdir -p "$OUT"
CBASE="${CASSANDRA_DIR:-$OUT/cassandra}"
STATE="$CBASE/scaling-sequences.progress"
PREFIX=scale
SERVER_PID=""
CASSANDRA_PID=""
HEADER="date,commit,load1_before,load1_after,sequences,create_s,first_load_s,start_s,load_s,rss_mb,heap_used_mb,server_idle_cores,cassandra_idle_cores,cassandra_idle_base_cores,uniform_calls_s,uniform_p99_ms,zipf_calls_s,zipf_p99_ms,stop_s,server_heap,uniform_server_us_per_call,zipf_server_us_per_call,uniform_pool_cas,zipf_pool_cas"

cleanup() {
  local rc=$?
  set +e
  stop_process "$SERVER_PID" 30
  # The launcher kills its nodes (SIGKILL) and runs them with unsynced system tables: flush everything first,
  # so that the next run finds the schema and the sequences of this one.
  [[ -n "${CASSANDRA_DIR:-}" && -n "${CASSANDRA_PID:-}" ]] \
    && timeout 120 "$CASSANDRA_SH" nodetool dc1 --base-dir "$CBASE" flush >/dev/null 2>&1 9>&-
  [[ -d "$CBASE" ]] && "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
  say "logs in $OUT"
  exit "$rc"
}
traps_and_lock cleanup
DEADLINE=$(( $(date +%s) + BUDGET ))
left() { echo $(( DEADLINE - $(date +%s) )); }

# Progress kept beside the data: sequences created and loaded once, and the cumulative times per N.
created=0; touched=0; create_total=0; touch_total=0; measured=" "
declare -A CREATE_AT=() TOUCH_AT=()
if [[ -f "$STATE" ]]; then
  # shellcheck disable=SC1090
  source "$STATE"
  say "going on from $STATE: $created created, $touched loaded once, measured:$measured"
fi
save_state() {
  {
    echo "created=$created; touched=$touched; create_total=$create_total; touch_total=$touch_total; measured='$measured'"
    for k in "${!CREATE_AT[@]}"; do echo "CREATE_AT[$k]=${CREATE_AT[$k]}"; done
    for k in "${!TOUCH_AT[@]}"; do echo "TOUCH_AT[$k]=${TOUCH_AT[$k]}"; done
  } >"$STATE"
}
add() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a + b }'; }

GRPC="$(port)"; METRICS="$(port)"
start_server() { # $1: log name; sets SERVER_PID and START_S
  local t0
  t0="$(now_ms)"
  start_cassandra_server "$OUT/$1.log" 127.0.0.1:9042 dc1 "$GRPC" "$METRICS" -Didgen.cassandra.replication.dc1=1 \
    -Xms256m -Xmx"$SERVER_HEAP"
  SERVER_PID=$STARTED_PID
  START_S="$(awk -v ms=$(($(now_ms) - t0)) 'BEGIN { printf "%.1f", ms / 1000 }')"
}
# create|touch FROM TO: the sequences PREFIX-FROM .. PREFIX-(TO-1), within the budget. Sets DONE_UPTO (all below
# it done) and SECONDS_TOOK.
bulk() {
  local verb="$1" from="$2" to="$3" line rc=0 budget
  budget=$(( $(left) - 60 ))
  (( budget > 10 )) || { DONE_UPTO=$from; SECONDS_TOOK=0; return; }
  say "$verb $PREFIX-$from .. $PREFIX-$((to - 1)) (at most $budget s)"
  local conc="${CREATE_CONCURRENCY:-32}"
  [[ "$verb" == touch ]] && conc="${TOUCH_CONCURRENCY:-64}"
  line="$(scaling_tool "$verb" --target "127.0.0.1:$GRPC" --prefix "$PREFIX" --from "$from" --count $((to - from)) \
    --concurrency "$conc" --timeout "${budget}s")" || rc=$?
  say "$verb: $line"
  [[ "$(kv failed <<<"$line")" == 0 ]] || fail "$verb: the tool failed or some calls did ($OUT)"
  DONE_UPTO=$(( from + $(kv done <<<"$line") + $(kv existed <<<"$line") ))
  SECONDS_TOOK="$(kv seconds <<<"$line")"
  (( rc == 0 || DONE_UPTO < to )) || fail "$verb failed ($rc)"
}
loadgen() { # $1: N, $2: distribution; prints "calls/s p99_ms server-CPU-µs-per-call pool-CAS-in-the-window"
  timeout 180 java -Xmx"${LOADGEN_HEAP:-2g}" -jar "$LOADGEN_JAR" --target "127.0.0.1:$GRPC" --sequence "$PREFIX" --sequences "$1" \
    --distribution "$2" --concurrency 10 --ids-per-call 1 --warmup 5s --duration 15s --json \
    --metrics-url "http://127.0.0.1:$METRICS/metrics" --server-pid "$SERVER_PID" \
    >"$OUT/loadgen-$1-$2.json" 2>"$OUT/loadgen-$1-$2.err" 9>&- \
    || { cat "$OUT/loadgen-$1-$2.err" >&2; echo "- - - -"; return; }
  jq -r '"\(.callsPerSecond) \(.latency.p99 / 1000 * 1000 | round / 1000) \(.serverCpuSeconds * 1e6 / (.calls + 1) | round) \(if (.cas | type) == "object" then (.cas.dc.applied // 0) + (.cas.dc.conflict // 0) else "-" end)"' \
    "$OUT/loadgen-$1-$2.json"
}

keep=()
[[ -f "$STATE" ]] && keep=(--keep-data)
start_single_node --heap "${CASSANDRA_HEAP:-256M}" "${keep[@]}"
save_state
sleep "$SETTLE"
read -r CASSANDRA_BASE <<<"$(cores_over "$IDLE" "$CASSANDRA_PID")"
say "Cassandra alone: $CASSANDRA_BASE cores"
start_server server-prepare

# 1. Create and load once every N, cumulatively, within the budget.
for n in "${COUNTS[@]}"; do
  if (( created < n )); then
    bulk create "$created" "$n"
    created=$DONE_UPTO; create_total="$(add "$create_total" "$SECONDS_TOOK")"; save_state
  fi
  if (( created >= n && touched < n )); then
    bulk touch "$touched" "$n"
    touched=$DONE_UPTO; touch_total="$(add "$touch_total" "$SECONDS_TOOK")"; save_state
  fi
  if (( touched < n )); then
    say "$created created and $touched loaded of $n within the budget: run again with CASSANDRA_DIR=$CBASE to go on"
    exit 3
  fi
  [[ -n "${CREATE_AT[$n]:-}" ]] || CREATE_AT[$n]=$create_total
  [[ -n "${TOUCH_AT[$n]:-}" ]] || TOUCH_AT[$n]=$touch_total
  save_state
done

# 2. Measure each N not measured yet in this directory.
for n in "${COUNTS[@]}"; do
  [[ "$measured" == *" $n "* ]] && { say "N=$n measured already"; continue; }
  (( $(left) > 120 )) || { say "out of budget before N=$n: run again with CASSANDRA_DIR=$CBASE"; exit 3; }
  stop_process "$SERVER_PID" 60
  start_server "server-$n"
  say "server started in $START_S s"
  bulk touch 0 "$n"
  (( DONE_UPTO == n )) || { say "loading $n did not finish within the budget: run again with CASSANDRA_DIR=$CBASE"; exit 3; }
  load_s=$SECONDS_TOOK
  say "idle for $((SETTLE + IDLE)) s"
  sleep "$SETTLE"
  l0="$(load1)"
  read -r server_cores cassandra_cores <<<"$(cores_over "$IDLE" "$SERVER_PID" "$CASSANDRA_PID")"
  rss="$(rss_mb "$SERVER_PID")"
  heap="$(heap_used_mb "$SERVER_PID")"
  say "idle: server $server_cores cores, Cassandra $cassandra_cores; RSS $rss MiB, heap after GC $heap MiB"
  # Not measured: the JIT of the restarted server warms up (the first run after a restart read up to a quarter lower).
  timeout 120 java -Xmx"${LOADGEN_HEAP:-2g}" -jar "$LOADGEN_JAR" --target "127.0.0.1:$GRPC" --sequence "$PREFIX" --sequences "$n" \
    --concurrency 10 --warmup 10s --duration 1s >/dev/null 2>&1 9>&- || true
  read -r u_rate u_p99 u_cpu u_cas <<<"$(loadgen "$n" uniform)"
  read -r z_rate z_p99 z_cpu z_cas <<<"$(loadgen "$n" zipf)"
  l1="$(load1)"
  t0="$(now_ms)"
  stop_process "$SERVER_PID" 180
  SERVER_PID=""
  stop_s="$(awk -v ms=$(($(now_ms) - t0)) 'BEGIN { printf "%.1f", ms / 1000 }')"
  csv_append "$CSV" "$HEADER" "$(date -u +%FT%TZ),$(source_commit),$l0,$l1,$n,${CREATE_AT[$n]},${TOUCH_AT[$n]},$START_S,$load_s,$rss,$heap,$server_cores,$cassandra_cores,$CASSANDRA_BASE,$u_rate,$u_p99,$z_rate,$z_p99,$stop_s,$SERVER_HEAP,$u_cpu,$z_cpu,$u_cas,$z_cas"
  measured="$measured$n "
  save_state
done
