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
# Environment (optional): WARMUP=150 AFTER=30, IDGEN_SERVER_JAR, IDGEN_CLI_JAR, OUT_DIR, LOCK_WAIT=3600.
# Needs root (nft), nftables, h2load (nghttp2-client), curl, python3, java 17. Only loopback is touched;
# the nftables table it adds (inet idgen_partition) is deleted on exit, whatever happens.
#
# h2load counts gRPC errors as successes (HTTP 200 with grpc-status in the trailers), so calls are counted
# from each server's idgen_allocate_calls_total{sequence,status}.

set -euo pipefail

SCRIPT_DIR="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
CASSANDRA_SH="$REPO_ROOT/idgen-testing/cassandra/cassandra.sh"
PARTITION="${1:-600}"
RATE="${2:-200}"
WARMUP="${WARMUP:-150}"
AFTER="${AFTER:-30}"
SEQ=partition
TABLE=idgen_partition

say() { printf '[dc-partition %s] %s\n' "$(date +%T)" "$*" >&2; }
fail() { say "ERROR: $*"; exit 1; }
[[ "$PARTITION" =~ ^[0-9]+$ && "$RATE" =~ ^[0-9]+$ && "$WARMUP" =~ ^[0-9]+$ && "$AFTER" =~ ^[0-9]+$ ]] \
  || fail "usage: dc-partition.sh [PARTITION_S] [RATE] (whole numbers)"
(( RATE >= 1 && RATE <= 5000 )) || fail "RATE must be 1 to 5000 calls/s"
for tool in nft h2load curl python3 java flock timeout; do
  command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install -y nftables nghttp2-client)"
done
first_jar() { local j; for j in $1; do [[ -f "$j" ]] && { readlink -f "$j"; return; }; done; fail "no jar: $1"; }
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
CLI_JAR="${IDGEN_CLI_JAR:-$(first_jar "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-dc-partition.XXXXXX)}"
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
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

exec 9>/tmp/idgen-cassandra.lock
flock -w "${LOCK_WAIT:-3600}" 9 || fail "the Cassandra launcher is busy (/tmp/idgen-cassandra.lock)"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
metrics() { curl -sf --max-time 5 "http://127.0.0.1:${METRICS[$1]}/metrics"; }
# Sum of the samples of metrics text on stdin whose name{labels} starts with $1.
msum() { awk -v p="$1" 'index($1, p) == 1 && $2 != "NaN" {s += $2} END {printf "%.0f\n", s + 0}'; }
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
  java -Xms256m -Xmx1g -Didgen.store=cassandra -Didgen.cassandra.contact-points="$addr:9042" \
    -Didgen.cassandra.local-datacenter="$dc" -Didgen.cassandra.replication.dc1=1 \
    -Didgen.cassandra.replication.dc2=1 -Didgen.cassandra.create-schema=true \
    -Didgen.grpc.host=127.0.0.1 -Didgen.grpc.port="${GRPC[$dc]}" -Didgen.metrics.host=127.0.0.1 \
    -Didgen.metrics.port="${METRICS[$dc]}" -Didgen.server-name="partition-$dc" \
    -jar "$SERVER_JAR" >"$OUT/server-$dc.log" 2>&1 9>&- &
  SERVER_PID[$dc]=$!
  for ((i = 0; i < 600; i++)); do # 120 s at most
    kill -0 "${SERVER_PID[$dc]}" 2>/dev/null || { tail -20 "$OUT/server-$dc.log" >&2; fail "server $dc exited"; }
    metrics "$dc" >/dev/null 2>&1 && break
    sleep 0.2
  done
  say "server $dc: gRPC ${GRPC[$dc]}, metrics ${METRICS[$dc]}"
done

for ((i = 0; i < 20; i++)); do
  rc=0; timeout 60 java -Xmx256m -jar "$CLI_JAR" --plaintext --target "127.0.0.1:${GRPC[dc1]}" create "$SEQ" \
    >"$OUT/create.txt" 2>&1 9>&- || rc=$?
  (( rc == 0 || rc == 16 )) && break
  sleep 3
done
(( rc == 0 || rc == 16 )) || { cat "$OUT/create.txt" >&2; fail "could not create sequence $SEQ"; }

# The request: the 5-byte gRPC prefix + AllocateRequest{sequence = SEQ, count = 1}.
python3 - "$SEQ" "$OUT/allocate.bin" <<'EOF'
import sys
seq = sys.argv[1].encode()
msg = b'\x0a' + bytes([len(seq)]) + seq + b'\x10\x01'
open(sys.argv[2], 'wb').write(b'\x00' + len(msg).to_bytes(4, 'big') + msg)
EOF
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
  runway="$(grep -E "^idgen_runway_seconds\{sequence=\"$SEQ\",tier=\"dc\"\}" <<<"$m" | awk '{print $2}')"
  reserve="$(grep -E "^idgen_reserve_ids\{sequence=\"$SEQ\",tier=\"dc\"\}" <<<"$m" | awk '{print $2}')"
  node="$(grep -E "^idgen_runway_guaranteed_seconds\{sequence=\"$SEQ\",tier=\"node\"\}" <<<"$m" | awk '{print $2}')"
  FAILED_BEFORE[$dc]="$(failed_calls "$dc")"
  echo "$dc before the cut: dc pool runway ${runway:-?} s ($(python3 -c "print(round(${runway:-0}/3600, 1))") h)," \
    "dc pool ${reserve:-?} IDs, guaranteed node runway ${node:-?} s, failed calls so far ${FAILED_BEFORE[$dc]}"
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
    "IDs lost (counted) $(msum idgen_ids_lost_total <<<"$m")"
  grep -E '^(requests|finished in)' "$OUT/h2load-$dc.out" | sed "s/^/$dc h2load: /"
done
