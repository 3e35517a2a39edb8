#!/usr/bin/env bash
#
# throughput.sh - scenario 2 measured with a C load generator: 100 IDs per Allocate, 10 callers (h2load: 10
# connections, one call at a time each), against one idgen server with DEFAULT settings on a single local
# Cassandra node, for a sequence of 1 stripe and one of 5. Three runs per sequence, the first right after the
# sequence was created (a cold reserve). Prints per run: calls/s and IDs/s from h2load, and the compare-and-sets
# per million IDs the run cost (from the server's idgen_store_cas_attempts_total, per tier).
#
#   throughput.sh [SECONDS] [RUNS]      default: 15 s windows after a 5 s warm-up, 3 runs
#
# Environment (optional): IDGEN_SERVER_JAR, IDGEN_CLI_JAR, OUT_DIR, LOCK_WAIT=3600.
# Needs h2load (nghttp2-client), curl, python3, java 17. Everything runs on 127.0.0.1 and is stopped on exit.
# h2load counts gRPC errors as successes, so the IDs handed out are also read from the server's
# idgen_ids_allocated_total, and a run with failed calls says so.

set -euo pipefail

SCRIPT_DIR="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
CASSANDRA_SH="$REPO_ROOT/idgen-testing/cassandra/cassandra.sh"
WINDOW="${1:-15}"
RUNS="${2:-3}"

say() { printf '[throughput %s] %s\n' "$(date +%T)" "$*" >&2; }
fail() { say "ERROR: $*"; exit 1; }
[[ "$WINDOW" =~ ^[0-9]+$ && "$RUNS" =~ ^[0-9]+$ ]] || fail "usage: throughput.sh [SECONDS] [RUNS]"
for tool in h2load curl python3 java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
first_jar() { local j; for j in $1; do [[ -f "$j" ]] && { readlink -f "$j"; return; }; done; fail "no jar: $1"; }
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
CLI_JAR="${IDGEN_CLI_JAR:-$(first_jar "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-throughput.XXXXXX)}"
CBASE="$OUT/cassandra"
SERVER_PID=""

cleanup() {
  local rc=$?
  set +e
  [[ -n "$SERVER_PID" ]] && { kill "$SERVER_PID"; sleep 2; kill -9 "$SERVER_PID"; } 2>/dev/null
  [[ -d "$CBASE" ]] && "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
  say "logs in $OUT"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

exec 9>/tmp/idgen-cassandra.lock
flock -w "${LOCK_WAIT:-3600}" 9 || fail "the Cassandra launcher is busy (/tmp/idgen-cassandra.lock)"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
GRPC="$(port)"; METRICS="$(port)"
scrape() { curl -sf --max-time 5 "http://127.0.0.1:$METRICS/metrics"; }
msum() { awk -v p="$1" 'index($1, p) == 1 && $2 != "NaN" {s += $2} END {printf "%.0f\n", s + 0}'; }

"$CASSANDRA_SH" fetch 9>&- >&2
say "starting a single Cassandra node in $CBASE"
"$CASSANDRA_SH" start --topology single --base-dir "$CBASE" 9>&- >"$OUT/cassandra.log" 2>&1 \
  || { tail -20 "$OUT/cassandra.log" >&2; fail "Cassandra did not start"; }
java -Xms256m -Xmx1g -Didgen.store=cassandra -Didgen.cassandra.contact-points=127.0.0.1:9042 \
  -Didgen.cassandra.local-datacenter=dc1 -Didgen.cassandra.replication.dc1=1 -Didgen.cassandra.create-schema=true \
  -Didgen.grpc.host=127.0.0.1 -Didgen.grpc.port="$GRPC" -Didgen.metrics.host=127.0.0.1 \
  -Didgen.metrics.port="$METRICS" -jar "$SERVER_JAR" >"$OUT/server.log" 2>&1 9>&- &
SERVER_PID=$!
for ((i = 0; i < 600; i++)); do
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$OUT/server.log" >&2; fail "the server exited"; }
  scrape >/dev/null 2>&1 && break
  sleep 0.2
done

cli() { timeout 60 java -Xmx256m -jar "$CLI_JAR" --plaintext --target "127.0.0.1:$GRPC" "$@" 9>&-; }
echo "| sequence | run | calls/s (h2load) | IDs/s | failed calls | pool CAS per million IDs | global CAS per million IDs |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for stripes in 1 5; do
  seq="tp-s$stripes"
  for ((i = 0; i < 20; i++)); do
    rc=0; cli create "$seq" --stripes "$stripes" >"$OUT/create-$seq.txt" 2>&1 || rc=$?
    (( rc == 0 )) && break
    sleep 3
  done
  (( rc == 0 )) || { cat "$OUT/create-$seq.txt" >&2; fail "could not create $seq"; }
  python3 - "$seq" "$OUT/$seq.bin" <<'EOF'
import sys
seq = sys.argv[1].encode()
msg = b'\x0a' + bytes([len(seq)]) + seq + b'\x10\x64'  # count = 100
open(sys.argv[2], 'wb').write(b'\x00' + len(msg).to_bytes(4, 'big') + msg)
EOF
  for ((run = 1; run <= RUNS; run++)); do
    before="$(scrape)"
    timeout $((WINDOW + 60)) h2load -c 10 -m 1 --warm-up-time=5 -D "$WINDOW" \
      -H 'content-type: application/grpc' -H 'te: trailers' -d "$OUT/$seq.bin" \
      "http://127.0.0.1:$GRPC/idgen.v1.IdGen/Allocate" >"$OUT/h2load-$seq-$run.out" 2>&1 9>&-
    after="$(scrape)"
    rps="$(grep -E '^finished in' "$OUT/h2load-$seq-$run.out" | sed -E 's/.* ([0-9.]+) req\/s.*/\1/')"
    ids=$(( $(msum "idgen_ids_allocated_total{sequence=\"$seq\"}" <<<"$after") - $(msum "idgen_ids_allocated_total{sequence=\"$seq\"}" <<<"$before") ))
    failed=$(( ($(msum "idgen_allocate_calls_total{sequence=\"$seq\"," <<<"$after") - $(msum "idgen_allocate_calls_total{sequence=\"$seq\"," <<<"$before")) \
      - ($(msum "idgen_allocate_calls_total{sequence=\"$seq\",status=\"OK\"}" <<<"$after") - $(msum "idgen_allocate_calls_total{sequence=\"$seq\",status=\"OK\"}" <<<"$before")) ))
    pool=$(( $(msum 'idgen_store_cas_attempts_total{tier="dc"}' <<<"$after") - $(msum 'idgen_store_cas_attempts_total{tier="dc"}' <<<"$before") ))
    global=$(( $(msum 'idgen_store_cas_attempts_total{tier="global"}' <<<"$after") - $(msum 'idgen_store_cas_attempts_total{tier="global"}' <<<"$before") ))
    python3 - "$seq" "$run" "$rps" "$ids" "$failed" "$pool" "$global" <<'EOF'
import sys
seq, run, rps, ids, failed, pool, glob = sys.argv[1], sys.argv[2], float(sys.argv[3] or 0), *map(int, sys.argv[4:])
per = lambda n: f"{n * 1e6 / ids:.2f} ({n})" if ids else "-"
print(f"| {seq} | {run} | {rps:,.0f} | {rps * 100 / 1e6:.2f}M | {failed} | {per(pool)} | {per(glob)} |")
EOF
  done
done
