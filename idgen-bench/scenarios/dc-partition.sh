#!/usr/bin/env bash
#
# dc-partition.sh - issue 12's two-datacenter scenario: the project's launcher starts dc1 (127.0.0.1) and
# dc2 (127.0.0.2), one idgen server per datacenter with DEFAULT settings, each loaded at RATE calls/s of 1 ID
# (h2load, paced). After WARMUP seconds it prints each datacenter's pool runway gauge
# (idgen_runway_seconds{tier="dc"}), then cuts dc1 from dc2 for PARTITION seconds with nftables (every
# packet to or from Cassandra's internode port 7000 on loopback is dropped: the two nodes' only link), heals
# the cut, runs AFTER seconds more, and prints the failed calls of each server during the cut and after.
#
#   dc-partition.sh [PARTITION_S] [RATE]        default: 600 s, 200 calls/s per datacenter
#
# Environment (optional): WARMUP=240 AFTER=30, IDGEN_SERVER_JAR, IDGEN_CLI_JAR, OUT_DIR, LOCK_WAIT=3600.
# Needs root (nft), nftables, h2load (nghttp2-client), curl, python3, java 17. Only loopback is touched;
# the nftables table it adds (inet idgen_partition) is deleted on exit, whatever happens.
#
# h2load counts gRPC errors as successes (HTTP 200 with grpc-status in the trailers), so calls are counted
# from each server's idgen_allocate_calls_total{sequence,status}.

set -euo pipefail

SCENARIO=dc-partition
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
PARTITION="${1:-600}"
RATE="${2:-200}"
WARMUP="${WARMUP:-240}"
AFTER="${AFTER:-30}"
SEQ=partition
TABLE=idgen_partition

[[ "$PARTITION" =~ ^[0-9]+$ && "$RATE" =~ ^[0-9]+$ && "$WARMUP" =~ ^[0-9]+$ && "$AFTER" =~ ^[0-9]+$ ]] \
  || fail "usage: dc-partition.sh [PARTITION_S] [RATE] (whole numbers)"
(( RATE >= 1 && RATE <= 5000 && PARTITION >= 20 )) || fail "RATE must be 1 to 5000 calls/s, PARTITION >= 20 s"
for tool in nft h2load curl python3 java flock timeout; do
  command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install -y nftables nghttp2-client)"
done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
CLI_JAR="${IDGEN_CLI_JAR:-$(first_jar "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-dc-partition.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"
declare -A SERVER_PID GRPC METRICS LOAD_PID

heal() { nft delete table inet "$TABLE" 2>/dev/null || true; }
cleanup() {
  local rc=$?
  set +e
  heal
  for dc in "${!LOAD_PID[@]}"; do kill "${LOAD_PID[$dc]}" 2>/dev/null; done
  for dc in "${!SERVER_PID[@]}"; do kill "${SERVER_PID[$dc]}" 2>/dev/null; done
  sleep 2
  for dc in "${!SERVER_PID[@]}"; do kill -9 "${SERVER_PID[$dc]}" 2>/dev/null; done
  [[ -d "$CBASE" ]] && "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
  say "logs and metrics in $OUT"
  exit "$rc"
}
traps_and_lock cleanup

metrics() { curl -sf --max-time 5 "http://127.0.0.1:${METRICS[$1]}/metrics"; }
failed_calls() { # $1 dc: calls of the load's sequence that did not end OK, so far
  local m; m="$(metrics "$1")"
  echo $(( $(msum "idgen_allocate_calls_total{sequence=\"$SEQ\"," <<<"$m") \
    - $(msum "idgen_allocate_calls_total{sequence=\"$SEQ\",status=\"OK\"}" <<<"$m") ))
}

"$CASSANDRA_SH" fetch 9>&- >&2
say "starting the two-datacenter Cassandra in $CBASE"
"$CASSANDRA_SH" start --topology two-dc --base-dir "$CBASE" 9>&- >"$OUT/cassandra.log" 2>&1 \
  || { tail -20 "$OUT/cassandra.log" >&2; fail "Cassandra did not start"; }
for dc in dc1 dc2; do
  GRPC[$dc]="$(port)"; METRICS[$dc]="$(port)"
  addr=127.0.0.1; [[ $dc == dc2 ]] && addr=127.0.0.2
  start_cassandra_server "$OUT/server-$dc.log" "$addr:9042" "$dc" "${GRPC[$dc]}" "${METRICS[$dc]}" \
    -Didgen.cassandra.replication.dc1=1 -Didgen.cassandra.replication.dc2=1 -Didgen.server-name="partition-$dc"
  SERVER_PID[$dc]=$STARTED_PID
  say "server $dc: gRPC ${GRPC[$dc]}, metrics ${METRICS[$dc]}"
done
create_sequence "${GRPC[dc1]}" "$SEQ"
allocate_body "$SEQ" 1 "$OUT/allocate.bin"

total=$((WARMUP + PARTITION + AFTER))
for dc in dc1 dc2; do
  # 10 connections, each paced; a 5 s deadline per call, so a stall cannot hold every stream.
  timeout $((total + 60)) h2load -c 10 -m 100 --rps $(( (RATE + 9) / 10 )) -D "$total" \
    -H 'content-type: application/grpc' -H 'te: trailers' -H 'grpc-timeout: 5S' -d "$OUT/allocate.bin" \
    "http://127.0.0.1:${GRPC[$dc]}/idgen.v1.IdGen/Allocate" >"$OUT/h2load-$dc.out" 2>&1 9>&- &
  LOAD_PID[$dc]=$!
done
say "load: $RATE calls/s of 1 ID on each datacenter's server for ${total}s; warm-up ${WARMUP}s"
sleep "$WARMUP"

declare -A FAILED_BEFORE
for dc in dc1 dc2; do
  m="$(metrics "$dc")"
  runway="$(msample "idgen_runway_seconds{sequence=\"$SEQ\",tier=\"dc\"}" <<<"$m")"
  FAILED_BEFORE[$dc]="$(failed_calls "$dc")"
  echo "$dc before the cut: dc pool runway ${runway:-?} s ($(awk -v s="${runway:-0}" 'BEGIN {printf "%.1f", s / 3600}') h)," \
    "dc pool $(msample "idgen_reserve_ids{sequence=\"$SEQ\",tier=\"dc\"}" <<<"$m") IDs," \
    "guaranteed node runway $(msample "idgen_runway_guaranteed_seconds{sequence=\"$SEQ\",tier=\"node\"}" <<<"$m") s," \
    "failed calls so far ${FAILED_BEFORE[$dc]}"
done

say "cutting dc1 from dc2 (nftables: drop loopback tcp port 7000) for ${PARTITION}s"
nft add table inet "$TABLE"
nft add chain inet "$TABLE" out '{ type filter hook output priority 0; policy accept; }'
nft add rule inet "$TABLE" out oifname lo tcp dport 7000 drop
nft add rule inet "$TABLE" out oifname lo tcp sport 7000 drop
cut_at=$(date +%s)
sleep 20
"$CASSANDRA_SH" nodetool dc1 --base-dir "$CBASE" status 9>&- >"$OUT/status-during-cut.txt" 2>&1 || true
say "dc1's view during the cut: $(grep -cE '^DN' "$OUT/status-during-cut.txt" || true) node(s) down (see status-during-cut.txt)"
sleep $((PARTITION - 20))
declare -A FAILED_CUT
for dc in dc1 dc2; do FAILED_CUT[$dc]=$(( $(failed_calls "$dc") - FAILED_BEFORE[$dc] )); done
heal
say "healed after $(( $(date +%s) - cut_at ))s"
wait "${LOAD_PID[dc1]}" "${LOAD_PID[dc2]}" || true
for dc in dc1 dc2; do
  m="$(metrics "$dc")"
  echo "$dc: failed calls during the ${PARTITION}s cut: ${FAILED_CUT[$dc]}; after it: $(( $(failed_calls "$dc") - FAILED_BEFORE[$dc] - FAILED_CUT[$dc] ));" \
    "calls in all $(msum "idgen_allocate_calls_total{sequence=\"$SEQ\"," <<<"$m");" \
    "dc pool runway now $(msample "idgen_runway_seconds{sequence=\"$SEQ\",tier=\"dc\"}" <<<"$m") s;" \
    "IDs lost (counted) $(msum idgen_ids_lost_total <<<"$m")"
  grep -E '^(requests|finished in)' "$OUT/h2load-$dc.out" | sed "s/^/$dc h2load: /"
done
