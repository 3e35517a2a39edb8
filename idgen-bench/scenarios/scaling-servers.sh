#!/usr/bin/env bash
#
# scaling-servers.sh - the "servers sharing one datacenter pool" curve of SCALING.md: S idgen servers (small heaps,
# -Xmx192m) in one datacenter on a single local Cassandra node, all allocating from the same sequence at a fixed
# total rate (RATE calls/s of IDS_PER_CALL IDs, split equally; one h2load per server, 2 connections of up to 8
# calls each, paced), for each S given and each sequence setting of CONFIGS (stripes:node_block_size, "default"
# for the server's default sizing by time). Per (S, setting), one CSV row over a WINDOW-second window after a
# WARMUP-second warm-up, from every server's metrics: compare-and-sets on the datacenter's pools and on the global
# cursors and how many lost a race (conflicts), store reservations and their latency (idgen_refill_seconds: mean
# and p99), Allocate latency (p50, p99, p99.9, max from h2load's per-request logs), failed calls, the servers'
# RSS; and once per S the CPU of Cassandra and of the servers with no traffic (IDLE s).
#
#   scaling-servers.sh [S ...]      default: 1 2 4 8 16
#
# Environment (optional): CSV (default docs/scaling/servers.csv), RATE (2000), IDS_PER_CALL (10), CONFIGS
# ("1:1000 4:1000 1:default 4:default"), WARMUP (10), WINDOW (30), IDLE (20), SERVER_HEAP (192m),
# IDGEN_SERVER_JAR, IDGEN_LOADGEN_JAR, OUT_DIR, LOCK_WAIT=3600.
# Needs h2load (nghttp2-client), curl, python3, java 17. Everything runs on 127.0.0.1 and is stopped on exit.

set -euo pipefail

SCENARIO=scaling-servers
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
COUNTS=("$@")
(( ${#COUNTS[@]} )) || COUNTS=(1 2 4 8 16)
for n in "${COUNTS[@]}"; do [[ "$n" =~ ^[1-9][0-9]?$ ]] || fail "usage: scaling-servers.sh [S ...] (1 <= S <= 99)"; done
for tool in h2load curl python3 java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
LOADGEN_JAR="${IDGEN_LOADGEN_JAR:-$(first_jar "$REPO_ROOT/idgen-bench/target/idgen-bench-*-loadgen.jar")}"
CSV="${CSV:-$REPO_ROOT/docs/scaling/servers.csv}"
RATE="${RATE:-2000}"
IDS_PER_CALL="${IDS_PER_CALL:-10}"
read -r -a CONFIGS <<<"${CONFIGS:-1:1000 4:1000 1:default 4:default}"
WARMUP="${WARMUP:-10}"
WINDOW="${WINDOW:-30}"
IDLE="${IDLE:-20}"
SERVER_HEAP="${SERVER_HEAP:-192m}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-scaling-servers.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"
PIDS=()
LOAD_PIDS=()
HEADER="date,commit,load1_before,load1_after,servers,stripes,node_block_size,rate_calls_s,ids_per_call,seconds,calls_ok,calls_failed,cas_dc,dc_conflict,cas_global,global_conflict,dc_conflicts_per_s,dc_cas_per_s,refills,refill_mean_ms,refill_p99_ms,p50_ms,p99_ms,p999_ms,max_ms,servers_rss_mb,cassandra_idle_cores,servers_idle_cores,cassandra_cores,servers_cores,server_heap"

stop_servers() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do stop_process "$p" 60; done
  PIDS=()
}
cleanup() {
  local rc=$? p
  set +e
  for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  stop_servers
  [[ -d "$CBASE" ]] && "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
  say "logs in $OUT"
  exit "$rc"
}
traps_and_lock cleanup

start_single_node

# Starts S servers at once (ports in GRPCS and METRICS_PORTS) and waits until each one's metrics answer.
start_servers() {
  local s="$1" i j
  GRPCS=(); METRICS_PORTS=()
  for ((i = 0; i < s; i++)); do
    GRPCS+=("$(port)"); METRICS_PORTS+=("$(port)")
    java -Xms64m -Xmx"$SERVER_HEAP" -Didgen.store=cassandra -Didgen.cassandra.contact-points=127.0.0.1:9042 \
      -Didgen.cassandra.local-datacenter=dc1 -Didgen.cassandra.create-schema=true -Didgen.cassandra.replication.dc1=1 \
      -Didgen.server-name="srv$i" -Didgen.grpc.host=127.0.0.1 -Didgen.grpc.port="${GRPCS[i]}" -Didgen.http.port=0 \
      -Didgen.metrics.host=127.0.0.1 -Didgen.metrics.port="${METRICS_PORTS[i]}" \
      -jar "$SERVER_JAR" >"$OUT/server-$s-$i.log" 2>&1 9>&- &
    PIDS+=($!)
    # The first one creates the schema alone.
    if ((i == 0)); then wait_metrics 0 "$s"; fi
  done
  for ((i = 1; i < s; i++)); do wait_metrics "$i" "$s"; done
}
wait_metrics() {
  local i="$1" s="$2" j
  for ((j = 0; j < 900; j++)); do
    kill -0 "${PIDS[i]}" 2>/dev/null || { tail -20 "$OUT/server-$s-$i.log" >&2; fail "server $i exited during start"; }
    curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:${METRICS_PORTS[i]}/metrics" && return 0
    sleep 0.2
  done
  fail "server $i did not start within 180 s"
}

for s in "${COUNTS[@]}"; do
  say "starting $s servers"
  start_servers "$s"
  sleep 10
  read -r -a idle <<<"$(cores_over "$IDLE" "$CASSANDRA_PID" "${PIDS[@]}")"
  cassandra_idle="${idle[0]}"
  servers_idle="$(printf '%s\n' "${idle[@]:1}" | awk '{ s += $1 } END { printf "%.3f", s }')"
  say "$s servers idle: Cassandra $cassandra_idle cores, servers $servers_idle cores"
  for config in "${CONFIGS[@]}"; do
    stripes="${config%%:*}"; nbs="${config##*:}"
    prefix="srv$s-s$stripes-$nbs"
    seq="$prefix-0"
    create_args=(--stripes "$stripes")
    [[ "$nbs" == default ]] || create_args+=(--node-block-size "$nbs")
    scaling_tool create --target "127.0.0.1:${GRPCS[0]}" --prefix "$prefix" --count 1 "${create_args[@]}" >/dev/null \
      || fail "could not create $seq"
    allocate_body "$seq" "$IDS_PER_CALL" "$OUT/$seq.bin"
    per_client="$(awk -v r="$RATE" -v s="$s" 'BEGIN { printf "%.3f", r / s / 2 }')"
    LOAD_PIDS=()
    for ((i = 0; i < s; i++)); do
      timeout $((WARMUP + WINDOW + 60)) h2load -c 2 -m 8 --rps "$per_client" --warm-up-time="$WARMUP" -D "$WINDOW" \
        --log-file "$OUT/h2load-$seq-$i.log" -H 'content-type: application/grpc' -H 'te: trailers' -d "$OUT/$seq.bin" \
        "http://127.0.0.1:${GRPCS[i]}/idgen.v1.IdGen/Allocate" >"$OUT/h2load-$seq-$i.out" 2>&1 9>&- &
      LOAD_PIDS+=($!)
    done
    sleep "$WARMUP"
    l0="$(load1)"
    pairs=()
    for ((i = 0; i < s; i++)); do scrape_to "${METRICS_PORTS[i]}" "$OUT/before-$seq-$i.prom"; done
    t0="$(now_ms)"
    read -r -a busy <<<"$(cores_over "$((WINDOW - 2))" "$CASSANDRA_PID" "${PIDS[@]}")"
    for p in "${LOAD_PIDS[@]}"; do wait "$p" || true; done
    LOAD_PIDS=()
    seconds="$(awk -v ms=$(($(now_ms) - t0)) 'BEGIN { printf "%.1f", ms / 1000 }')"
    for ((i = 0; i < s; i++)); do
      scrape_to "${METRICS_PORTS[i]}" "$OUT/after-$seq-$i.prom"
      pairs+=("$OUT/before-$seq-$i.prom" "$OUT/after-$seq-$i.prom")
    done
    m="$(SEQ_PREFIX="$seq" metrics_delta "${pairs[@]}")"
    lat="$(scaling_tool percentiles "$OUT"/h2load-"$seq"-*.log)"
    rss=0
    for p in "${PIDS[@]}"; do rss=$((rss + $(rss_mb "$p"))); done
    servers_busy="$(printf '%s\n' "${busy[@]:1}" | awk '{ s += $1 } END { printf "%.3f", s }')"
    say "$s servers, $config: $m; $lat"
    csv_append "$CSV" "$HEADER" "$(date -u +%FT%TZ),$(source_commit),$l0,$(load1),$s,$stripes,$nbs,$RATE,$IDS_PER_CALL,$seconds,$(kv calls_ok <<<"$m"),$(kv calls_failed <<<"$m"),$(kv cas_dc <<<"$m"),$(kv dc_conflict <<<"$m"),$(kv cas_global <<<"$m"),$(kv global_conflict <<<"$m"),$(awk -v c="$(kv dc_conflict <<<"$m")" -v s="$seconds" 'BEGIN { printf "%.2f", c / s }'),$(awk -v c="$(kv cas_dc <<<"$m")" -v s="$seconds" 'BEGIN { printf "%.1f", c / s }'),$(kv refills <<<"$m"),$(kv refill_mean_ms <<<"$m"),$(kv refill_p99_ms <<<"$m"),$(kv p50_ms <<<"$lat"),$(kv p99_ms <<<"$lat"),$(kv p999_ms <<<"$lat"),$(kv max_ms <<<"$lat"),$rss,$cassandra_idle,$servers_idle,${busy[0]},$servers_busy,$SERVER_HEAP"
  done
  stop_servers
done
