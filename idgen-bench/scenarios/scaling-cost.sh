#!/usr/bin/env bash
#
# scaling-cost.sh - the cost curve of SCALING.md: lightweight transactions (compare-and-sets) per million IDs
# against the rate. One idgen server per rate (default settings), each with a sequence of its own created at the
# start, on a single local Cassandra node, all loaded at once by h2load at a fixed rate: up to 1,000 IDs/s with
# one ID per call, above that 1,000 calls/s of rate/1,000 IDs each. Per rate, one CSV row from that server's
# idgen_store_cas_attempts_total (both tiers) and idgen_ids_allocated_total:
#   cold_cas_per_million   from before the sequence was created to the end (the cold start included)
#   cas_per_million        over the last WINDOW seconds, after WARMUP seconds (steady state)
#   model_per_million      one CAS per refill step of a reserve sized by time: a step is a quarter of 5 minutes
#                          of the rate (75 s), capped at a quarter of node_block_size / 1.25 (20 M IDs)
#
#   scaling-cost.sh [IDS_PER_SECOND ...]      default: 100 1000 10000 100000 1000000
#
# Environment (optional): CSV (default docs/scaling/cost.csv), WARMUP (120), WINDOW (300), SERVER_HEAP (256m),
# IDGEN_SERVER_JAR, IDGEN_LOADGEN_JAR, OUT_DIR, LOCK_WAIT=3600.
# Needs h2load (nghttp2-client), curl, python3, java 17. Everything runs on 127.0.0.1 and is stopped on exit.

set -euo pipefail

SCENARIO=scaling-cost
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
RATES=("$@")
(( ${#RATES[@]} )) || RATES=(100 1000 10000 100000 1000000)
for r in "${RATES[@]}"; do
  [[ "$r" =~ ^[1-9][0-9]*$ ]] && (( r <= 1000 || r % 1000 == 0 )) \
    || fail "usage: scaling-cost.sh [IDS_PER_SECOND ...] (up to 1000, or a multiple of 1000)"
done
for tool in h2load curl python3 java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
LOADGEN_JAR="${IDGEN_LOADGEN_JAR:-$(first_jar "$REPO_ROOT/idgen-bench/target/idgen-bench-*-loadgen.jar")}"
CSV="${CSV:-$REPO_ROOT/docs/scaling/cost.csv}"
WARMUP="${WARMUP:-120}"
WINDOW="${WINDOW:-300}"
SERVER_HEAP="${SERVER_HEAP:-256m}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-scaling-cost.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"
PIDS=()
LOAD_PIDS=()
HEADER="date,commit,load1_before,load1_after,rate_ids_s,ids_per_call,calls_s,warmup_s,seconds,ids,cas_dc,cas_global,cas_per_million,cold_ids,cold_cas,cold_cas_per_million,model_per_million,calls_failed"

cleanup() {
  local rc=$?
  set +e
  stop_scenario
  exit "$rc"
}
traps_and_lock cleanup

start_single_node

GRPCS=(); METRICS_PORTS=()
for i in "${!RATES[@]}"; do
  GRPCS+=("$(port)"); METRICS_PORTS+=("$(port)")
  start_cassandra_server "$OUT/server-${RATES[i]}.log" 127.0.0.1:9042 dc1 "${GRPCS[i]}" "${METRICS_PORTS[i]}" \
    -Didgen.cassandra.replication.dc1=1 -Didgen.server-name="cost$i" -Xms64m -Xmx"$SERVER_HEAP"
  PIDS+=("$STARTED_PID")
done

l0="$(load1)"
for i in "${!RATES[@]}"; do
  r="${RATES[i]}"
  scrape_to "${METRICS_PORTS[i]}" "$OUT/zero-$r.prom"
  scaling_tool create --target "127.0.0.1:${GRPCS[i]}" --prefix "cost-$r" --count 1 >/dev/null \
    || fail "could not create cost-$r-0"
  if (( r <= 1000 )); then per_call=1; calls=$r; else per_call=$((r / 1000)); calls=1000; fi
  allocate_body "cost-$r-0" "$per_call" "$OUT/body-$r.bin"
  timeout $((WARMUP + WINDOW + 60)) h2load -c 1 -m 4 --rps "$calls" -D $((WARMUP + WINDOW)) \
    -H 'content-type: application/grpc' -H 'te: trailers' -d "$OUT/body-$r.bin" \
    "http://127.0.0.1:${GRPCS[i]}/idgen.v1.IdGen/Allocate" >"$OUT/h2load-$r.out" 2>&1 9>&- &
  LOAD_PIDS+=($!)
done
say "loading ${RATES[*]} IDs/s: $WARMUP s warm-up, then $WINDOW s measured"
sleep "$WARMUP"
for i in "${!RATES[@]}"; do scrape_to "${METRICS_PORTS[i]}" "$OUT/mid-${RATES[i]}.prom"; done
t0="$(now_ms)"
for p in "${LOAD_PIDS[@]}"; do wait "$p" || true; done
LOAD_PIDS=()
seconds="$(awk -v ms=$(($(now_ms) - t0)) 'BEGIN { printf "%.1f", ms / 1000 }')"
l1="$(load1)"
for i in "${!RATES[@]}"; do
  r="${RATES[i]}"
  scrape_to "${METRICS_PORTS[i]}" "$OUT/after-$r.prom"
  steady="$(SEQ_PREFIX="cost-$r-0" metrics_delta "$OUT/mid-$r.prom" "$OUT/after-$r.prom")"
  cold="$(SEQ_PREFIX="cost-$r-0" metrics_delta "$OUT/zero-$r.prom" "$OUT/after-$r.prom")"
  if (( r <= 1000 )); then per_call=1; calls=$r; else per_call=$((r / 1000)); calls=1000; fi
  ids="$(kv ids <<<"$steady")"; cas=$(( $(kv cas_dc <<<"$steady") + $(kv cas_global <<<"$steady") ))
  cold_ids="$(kv ids <<<"$cold")"; cold_cas=$(( $(kv cas_dc <<<"$cold") + $(kv cas_global <<<"$cold") ))
  per_million="$(awk -v c="$cas" -v n="$ids" 'BEGIN { printf "%.3f", (n > 0 ? c * 1e6 / n : 0) }')"
  cold_per_million="$(awk -v c="$cold_cas" -v n="$cold_ids" 'BEGIN { printf "%.3f", (n > 0 ? c * 1e6 / n : 0) }')"
  model="$(awk -v r="$r" 'BEGIN { l = 300 * r; if (l > 1e8 / 1.25) l = 1e8 / 1.25; printf "%.3f", 1e6 / (0.25 * l) }')"
  say "$r IDs/s: steady $steady; cold $cold"
  csv_append "$CSV" "$HEADER" "$(date -u +%FT%TZ),$(source_commit),$l0,$l1,$r,$per_call,$calls,$WARMUP,$seconds,$ids,$(kv cas_dc <<<"$steady"),$(kv cas_global <<<"$steady"),$per_million,$cold_ids,$cold_cas,$cold_per_million,$model,$(kv calls_failed <<<"$cold")"
done
