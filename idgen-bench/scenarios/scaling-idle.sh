#!/usr/bin/env bash
#
# scaling-idle.sh - what an idle idgen server costs its Cassandra node (SCALING.md, "Idle cost"): one server
# (default settings) on a single local Cassandra node, N sequences created and loaded into it (one 1-ID Allocate
# each), then no traffic at all. Per round, the CPU of Cassandra and of the server (/proc/PID/stat) over WINDOW
# seconds with the server running, then over WINDOW seconds with the server frozen (SIGSTOP: no reads, no
# announcements, no driver heartbeats; SIGCONT after). The difference in Cassandra's cores is what the server
# makes it do while idle; the frozen window is the node's own floor (compactions, gossip, its timers).
# Running and frozen windows alternate so that a drift of the machine shows in both.
#
#   scaling-idle.sh [N] [ROUNDS]     default: 2000 sequences, 3 rounds
#
# Prints one line per window (with the server's store reads per second in the running one) and a summary
# (medians); appends one CSV row per round to $CSV.
# Environment (optional): CSV (default docs/scaling/idle.csv), WINDOW (60), SETTLE (20: s after start and after
# each SIGCONT/SIGSTOP, not measured), SETTLE_FIRST (SETTLE: s after the load, before the first window; the
# monitor's first read of every loaded sequence, 50 per 15 s, takes 10 min for 2,000), SERVER_OPTS (extra -D
# settings for the server, e.g. to try a setting), IDGEN_SERVER_JAR, IDGEN_LOADGEN_JAR, OUT_DIR, LOCK_WAIT=3600.
# Needs curl, python3, java 17. Everything runs on 127.0.0.1 and is stopped on exit.

set -euo pipefail

SCENARIO=scaling-idle
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
N="${1:-2000}"
ROUNDS="${2:-3}"
[[ "$N" =~ ^[1-9][0-9]*$ && "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || fail "usage: scaling-idle.sh [N] [ROUNDS]"
for tool in curl python3 java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
LOADGEN_JAR="${IDGEN_LOADGEN_JAR:-$(first_jar "$REPO_ROOT/idgen-bench/target/idgen-bench-*-loadgen.jar")}"
CSV="${CSV:-$REPO_ROOT/docs/scaling/idle.csv}"
WINDOW="${WINDOW:-60}"
SETTLE="${SETTLE:-20}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-scaling-idle.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"
SERVER_PID=""
HEADER="date,commit,sequences,round,window_s,cassandra_running_cores,server_running_cores,cassandra_frozen_cores,cassandra_difference_cores,load1,server_opts,store_reads_per_s"

cleanup() {
  local rc=$?
  set +e
  [[ -n "$SERVER_PID" ]] && kill -CONT "$SERVER_PID" 2>/dev/null
  stop_server_and_cassandra 5
  exit "$rc"
}
traps_and_lock cleanup

# shellcheck disable=SC2086
start_single_node_and_server ${SERVER_OPTS:-}
for verb in create touch; do
  line="$(scaling_tool "$verb" --target "127.0.0.1:$GRPC" --prefix idle --from 0 --count "$N" --concurrency 32 \
    --timeout 600s)" || fail "$verb failed: $line"
  say "$verb: $line"
  [[ "$(kv failed <<<"$line")" == 0 ]] || fail "$verb: some calls failed ($OUT)"
done
sleep "${SETTLE_FIRST:-$SETTLE}"

# The server's store reads (plain and serial: the floor log, the monitor, heartbeats) per second over a window.
store_reads() { curl -sf --max-time 10 "http://127.0.0.1:$METRICS/metrics" | msum idgen_store_reads_total; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
diffs=(); running=(); frozen=(); server=(); reads=()
for ((r = 1; r <= ROUNDS; r++)); do
  reads_before="$(store_reads)"
  read -r c_run s_run <<<"$(cores_over "$WINDOW" "$CASSANDRA_PID" "$SERVER_PID")"
  rps="$(awk -v a="$reads_before" -v b="$(store_reads)" -v w="$WINDOW" 'BEGIN { printf "%.2f", (b - a) / w }')"
  say "round $r: server running: Cassandra $c_run cores, server $s_run, $rps store reads/s"
  kill -STOP "$SERVER_PID"
  sleep "$SETTLE"
  read -r c_frozen <<<"$(cores_over "$WINDOW" "$CASSANDRA_PID")"
  kill -CONT "$SERVER_PID"
  say "round $r: server frozen: Cassandra $c_frozen cores"
  d="$(awk -v a="$c_run" -v b="$c_frozen" 'BEGIN { printf "%.3f", a - b }')"
  diffs+=("$d"); running+=("$c_run"); frozen+=("$c_frozen"); server+=("$s_run"); reads+=("$rps")
  csv_append "$CSV" "$HEADER" "$(date -u +%FT%TZ),$(source_commit),$N,$r,$WINDOW,$c_run,$s_run,$c_frozen,$d,$(load1),\"${SERVER_OPTS:-}\",$rps"
  sleep "$SETTLE"
done
say "medians over $ROUNDS rounds, $N sequences loaded, no traffic: Cassandra $(printf '%s\n' "${running[@]}" | median) cores with the server running, $(printf '%s\n' "${frozen[@]}" | median) with it frozen: the server costs it $(printf '%s\n' "${diffs[@]}" | median) cores; the server itself $(printf '%s\n' "${server[@]}" | median), $(printf '%s\n' "${reads[@]}" | median) store reads/s"
