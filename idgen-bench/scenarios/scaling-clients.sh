#!/usr/bin/env bash
#
# scaling-clients.sh - the "clients" curve of SCALING.md: one idgen server (default settings) on a single local
# Cassandra node, loaded by h2load (one ID per Allocate) with more and more connections and concurrent calls:
#   paced    C connections, RATE calls/s in all, each connection with at most 4 calls in flight (C = 1, 10, 100,
#            1000; the "concurrent" column is C): what holding connections costs at a fixed rate
#   closed   C connections x M streams each, as fast as they go (1x1, 10x1, 10x10, 100x10, 100x100, 1000x10: up to
#            10,000 concurrent calls; the server allows 100 streams per connection)
# Per point, one CSV row over a WINDOW-second window after a 5 s warm-up: calls/s (h2load), Allocate latency
# (p50, p99, p99.9, max from h2load's per-request log), failed calls (from the server's metrics: h2load counts a
# gRPC error as a success), and the server's largest RSS and thread count, sampled every second.
#
#   scaling-clients.sh [paced|closed ...]      default: paced closed
#
# Environment (optional): CSV (default docs/scaling/clients.csv), RATE (5000), WINDOW (20), SERVER_HEAP (1g),
# IDGEN_SERVER_JAR, IDGEN_LOADGEN_JAR, OUT_DIR, LOCK_WAIT=3600.
# Needs h2load (nghttp2-client), curl, python3, java 17. Everything runs on 127.0.0.1 and is stopped on exit.

set -euo pipefail

SCENARIO=scaling-clients
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
KINDS=("$@")
(( ${#KINDS[@]} )) || KINDS=(paced closed)
for k in "${KINDS[@]}"; do [[ "$k" == paced || "$k" == closed ]] || fail "usage: scaling-clients.sh [paced|closed ...]"; done
for tool in h2load curl python3 java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
(( $(ulimit -n) >= 4096 )) || ulimit -n 4096 || fail "1,000 connections need more open files (ulimit -n)"
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
LOADGEN_JAR="${IDGEN_LOADGEN_JAR:-$(first_jar "$REPO_ROOT/idgen-bench/target/idgen-bench-*-loadgen.jar")}"
CSV="${CSV:-$REPO_ROOT/docs/scaling/clients.csv}"
RATE="${RATE:-5000}"
WINDOW="${WINDOW:-20}"
SERVER_HEAP="${SERVER_HEAP:-1g}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-scaling-clients.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"
SERVER_PID=""
LOAD_PID=""
SAMPLER_PID=""
HEADER="date,commit,load1_before,load1_after,kind,connections,streams,concurrent,rate_calls_s,calls_s,calls_ok,calls_failed,p50_ms,p99_ms,p999_ms,max_ms,rss_mb,threads,rss_idle_mb,server_heap"

cleanup() {
  local rc=$?
  set +e
  [[ -n "$LOAD_PID" ]] && kill "$LOAD_PID" 2>/dev/null
  [[ -n "$SAMPLER_PID" ]] && kill "$SAMPLER_PID" 2>/dev/null
  stop_process "$SERVER_PID" 30
  [[ -d "$CBASE" ]] && "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
  say "logs in $OUT"
  exit "$rc"
}
traps_and_lock cleanup

start_single_node
GRPC="$(port)"; METRICS="$(port)"
start_cassandra_server "$OUT/server.log" 127.0.0.1:9042 dc1 "$GRPC" "$METRICS" -Didgen.cassandra.replication.dc1=1 \
  -Xms256m -Xmx"$SERVER_HEAP"
SERVER_PID=$STARTED_PID
SEQ=clients-0
scaling_tool create --target "127.0.0.1:$GRPC" --prefix clients --count 1 >/dev/null || fail "could not create $SEQ"
allocate_body "$SEQ" 1 "$OUT/body.bin"
# A first run, not measured: the JIT and the sequence's reserve warm up.
timeout 60 h2load -c 10 -m 1 -D 10 -H 'content-type: application/grpc' -H 'te: trailers' -d "$OUT/body.bin" \
  "http://127.0.0.1:$GRPC/idgen.v1.IdGen/Allocate" >"$OUT/h2load-warmup.out" 2>&1 9>&- || true
RSS_IDLE="$(rss_mb "$SERVER_PID")"

# point KIND CONNECTIONS STREAMS
point() {
  local kind="$1" c="$2" m="$3" name rate_args=() rate="" l0 calls_s m_delta lat peak concurrent=$(($2 * $3))
  name="$kind-${c}x$m"
  if [[ "$kind" == paced ]]; then
    rate="$RATE"
    concurrent="$c"
    rate_args=(--rps "$(awk -v r="$RATE" -v c="$c" 'BEGIN { printf "%.3f", r / c }')")
  fi
  l0="$(load1)"
  scrape_to "$METRICS" "$OUT/before-$name.prom"
  sample_peaks $((WINDOW + 5)) "$OUT/peak-$name.txt" "$SERVER_PID"
  timeout $((WINDOW + 120)) h2load -c "$c" -m "$m" "${rate_args[@]}" --warm-up-time=5 -D "$WINDOW" \
    --log-file "$OUT/h2load-$name.log" -H 'content-type: application/grpc' -H 'te: trailers' -d "$OUT/body.bin" \
    "http://127.0.0.1:$GRPC/idgen.v1.IdGen/Allocate" >"$OUT/h2load-$name.out" 2>&1 9>&- &
  LOAD_PID=$!
  wait "$LOAD_PID" || say "h2load $name exited with $? (see $OUT/h2load-$name.out)"
  LOAD_PID=""
  kill "$SAMPLER_PID" 2>/dev/null || true
  wait "$SAMPLER_PID" 2>/dev/null || true
  SAMPLER_PID=""
  scrape_to "$METRICS" "$OUT/after-$name.prom"
  calls_s="$(sed -nE 's/^finished in .*, ([0-9.]+) req\/s.*/\1/p' "$OUT/h2load-$name.out")"
  m_delta="$(SEQ_PREFIX="$SEQ" metrics_delta "$OUT/before-$name.prom" "$OUT/after-$name.prom")"
  lat="$(scaling_tool percentiles "$OUT/h2load-$name.log")"
  read -r peak_rss peak_threads <"$OUT/peak-$name.txt"
  say "$name: ${calls_s:-?} calls/s; $lat; RSS $peak_rss MiB, $peak_threads threads; $m_delta"
  csv_append "$CSV" "$HEADER" "$(date -u +%FT%TZ),$(source_commit),$l0,$(load1),$kind,$c,$m,$concurrent,$rate,${calls_s:-},$(kv calls_ok <<<"$m_delta"),$(kv calls_failed <<<"$m_delta"),$(kv p50_ms <<<"$lat"),$(kv p99_ms <<<"$lat"),$(kv p999_ms <<<"$lat"),$(kv max_ms <<<"$lat"),$peak_rss,$peak_threads,$RSS_IDLE,$SERVER_HEAP"
  sleep 3
}

for kind in "${KINDS[@]}"; do
  if [[ "$kind" == paced ]]; then
    for c in 1 10 100 1000; do point paced "$c" 4; done
  else
    for cm in 1x1 10x1 10x10 100x10 100x100 1000x10; do point closed "${cm%x*}" "${cm#*x}"; done
  fi
done
