#!/usr/bin/env bash
#
# pileup.sh - a pile-up of waiting calls: one idgen server with DEFAULT settings on a single local Cassandra
# node; the node is frozen (SIGSTOP) and h2load opens STREAMS concurrent Allocate calls (100 connections of
# STREAMS/100 streams each) on a sequence the server has not loaded yet, so every call needs the store and
# must wait. Samples the server's threads and RSS every 0.5 s before, during and after, then thaws the node
# and checks that the server serves again. Prints a Markdown table and the calls by status (from the
# server's idgen_allocate_calls_total); the samples are in OUT_DIR/samples.csv.
#
#   pileup.sh [STREAMS] [SECONDS]      default: 10000 streams for 30 s
#
# Environment (optional): IDGEN_SERVER_JAR, IDGEN_CLI_JAR, OUT_DIR, LOCK_WAIT=3600, CALL_DEADLINE=10 (the
# grpc-timeout every call carries, seconds).
# Needs h2load (nghttp2-client), curl, python3, java 17. Everything runs on 127.0.0.1 and is stopped on exit.

set -euo pipefail

SCENARIO=pileup
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
STREAMS="${1:-10000}"
SECONDS_UNDER="${2:-30}"
CALL_DEADLINE="${CALL_DEADLINE:-10}"

[[ "$STREAMS" =~ ^[0-9]+$ && "$SECONDS_UNDER" =~ ^[0-9]+$ && "$CALL_DEADLINE" =~ ^[0-9]+$ ]] \
  || fail "usage: pileup.sh [STREAMS] [SECONDS]"
(( STREAMS >= 100 && STREAMS % 100 == 0 )) || fail "STREAMS must be a multiple of 100 (100 connections)"
for tool in h2load curl python3 java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
CLI_JAR="${IDGEN_CLI_JAR:-$(first_jar "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-pileup.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"
SERVER_PID="" CPID="" SAMPLER_PID=""

cleanup() {
  local rc=$?
  set +e
  [[ -n "$CPID" ]] && kill -CONT "$CPID" 2>/dev/null
  [[ -n "$SAMPLER_PID" ]] && kill "$SAMPLER_PID" 2>/dev/null
  stop_server_and_cassandra 5
  exit "$rc"
}
traps_and_lock cleanup

scrape() { curl -sf --max-time 5 "http://127.0.0.1:$METRICS/metrics"; }
threads() { awk '/^Threads:/ {print $2}' "/proc/$SERVER_PID/status"; }
rss_mb() { awk '/^VmRSS:/ {printf "%.0f", $2 / 1024}' "/proc/$SERVER_PID/status"; }

start_single_node_and_server
CPID="$(cat "$CBASE/dc1/pid")"
create_sequence "$GRPC" pile
allocate_body pile 1 "$OUT/pile.bin"
sleep 5

echo "phase,seconds,threads,rss_mb" >"$OUT/samples.csv"
T0="$(date +%s%3N)"
sampler() {
  local phase
  for ((i = 0; i < 4 * (SECONDS_UNDER + 120); i++)); do
    phase="$(cat "$OUT/phase" 2>/dev/null || echo before)"
    kill -0 "$SERVER_PID" 2>/dev/null || return 0
    printf '%s,%.1f,%s,%s\n' "$phase" "$(( $(date +%s%3N) - T0 ))e-3" "$(threads)" "$(rss_mb)" >>"$OUT/samples.csv"
    sleep 0.5
  done
}
echo before >"$OUT/phase"
sampler 9>&- &
SAMPLER_PID=$!
sleep 5
base_threads="$(threads)"; base_rss="$(rss_mb)"
before="$(scrape)"
echo "$before" >"$OUT/metrics-before.txt"

say "freezing Cassandra (SIGSTOP $CPID); $STREAMS streams for ${SECONDS_UNDER}s on a sequence not loaded yet"
kill -STOP "$CPID"
echo during >"$OUT/phase"
timeout $((SECONDS_UNDER + 60)) h2load -c 100 -m $((STREAMS / 100)) -D "$SECONDS_UNDER" \
  -H 'content-type: application/grpc' -H 'te: trailers' -H "grpc-timeout: ${CALL_DEADLINE}S" \
  -d "$OUT/pile.bin" "http://127.0.0.1:$GRPC/idgen.v1.IdGen/Allocate" >"$OUT/h2load.out" 2>&1 9>&- || true
during="$(scrape)" || fail "the server's metrics did not answer after the pile-up"
echo "$during" >"$OUT/metrics-during.txt"
kill -CONT "$CPID"
echo after >"$OUT/phase"
say "thawed Cassandra"
ok=""
for ((i = 0; i < 60; i++)); do
  code="$(curl -s --http2-prior-knowledge --max-time 10 -H 'content-type: application/grpc' -H 'te: trailers' \
    --data-binary @"$OUT/pile.bin" -D - -o /dev/null "http://127.0.0.1:$GRPC/idgen.v1.IdGen/Allocate" \
    | tr -d '\r' | awk -F': *' 'tolower($1) == "grpc-status" {print $2}')" || true
  [[ "$code" == 0 ]] && { ok="$i"; break; }
  sleep 1
done
sleep 10
after_threads="$(threads)"; after_rss="$(rss_mb)"
kill "$SAMPLER_PID" 2>/dev/null; SAMPLER_PID=""

peak() { awk -F, -v p=during -v c="$1" '$1 == p && $c + 0 > m {m = $c + 0} END {print m + 0}' "$OUT/samples.csv"; }
# Calls by status, whatever the sequence label (a sequence the server has not loaded is counted as "_other").
calls() { awk -v st="$1" '$1 ~ /^idgen_allocate_calls_total\{/ && (st == "" || index($1, "status=\"" st "\"")) \
  {s += $2} END {printf "%.0f\n", s + 0}'; }
status_delta() { echo $(( $(calls "$1" <<<"$during") - $(calls "$1" <<<"$before") )); }
echo "| streams | phase | server threads | server RSS (MB) |"
echo "| --- | --- | --- | --- |"
echo "| $STREAMS | before (idle, store up) | $base_threads | $base_rss |"
echo "| $STREAMS | during (store frozen), peak | $(peak 3) | $(peak 4) |"
echo "| $STREAMS | 10 s after the thaw | $after_threads | $after_rss |"
echo
echo "h2load: $(grep -E '^requests:' "$OUT/h2load.out" || echo 'no summary')"
echo "calls during the freeze by status (server metrics): OK $(status_delta OK)," \
  "UNAVAILABLE $(status_delta UNAVAILABLE), DEADLINE_EXCEEDED $(status_delta DEADLINE_EXCEEDED)," \
  "CANCELLED $(status_delta CANCELLED), all $(status_delta '')"
refused=$(( $(msum 'idgen_calls_refused_total{reason="busy"}' <<<"$during") \
  - $(msum 'idgen_calls_refused_total{reason="busy"}' <<<"$before") ))
echo "of them refused at once (idgen_calls_refused_total, the waiting bound reached): $refused;" \
  "waited for the store: $(( $(status_delta '') - refused ))"
echo "first OK Allocate after the thaw: ${ok:-none within 60 tries} s"
