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

SCENARIO=throughput
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
WINDOW="${1:-15}"
RUNS="${2:-3}"

[[ "$WINDOW" =~ ^[0-9]+$ && "$RUNS" =~ ^[0-9]+$ ]] || fail "usage: throughput.sh [SECONDS] [RUNS]"
for tool in h2load curl python3 java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
CLI_JAR="${IDGEN_CLI_JAR:-$(first_jar "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-throughput.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"
SERVER_PID=""

cleanup() {
  local rc=$?
  set +e
  stop_server_and_cassandra 2
  exit "$rc"
}
traps_and_lock cleanup

scrape() { curl -sf --max-time 5 "http://127.0.0.1:$METRICS/metrics"; }
delta() { echo $(( $(msum "$1" <<<"$after") - $(msum "$1" <<<"$before") )); }

start_single_node_and_server

echo "| sequence | run | calls/s (h2load) | IDs/s | failed calls | pool CAS per million IDs | global CAS per million IDs |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for stripes in 1 5; do
  seq="tp-s$stripes"
  create_sequence "$GRPC" "$seq" --stripes "$stripes"
  allocate_body "$seq" 100 "$OUT/$seq.bin"
  for ((run = 1; run <= RUNS; run++)); do
    before="$(scrape)"
    timeout $((WINDOW + 60)) h2load -c 10 -m 1 --warm-up-time=5 -D "$WINDOW" \
      -H 'content-type: application/grpc' -H 'te: trailers' -d "$OUT/$seq.bin" \
      "http://127.0.0.1:$GRPC/idgen.v1.IdGen/Allocate" >"$OUT/h2load-$seq-$run.out" 2>&1 9>&-
    after="$(scrape)"
    rps="$(grep -E '^finished in' "$OUT/h2load-$seq-$run.out" | sed -E 's/.* ([0-9.]+) req\/s.*/\1/')"
    ids="$(delta "idgen_ids_allocated_total{sequence=\"$seq\"}")"
    failed=$(( $(delta "idgen_allocate_calls_total{sequence=\"$seq\",") \
      - $(delta "idgen_allocate_calls_total{sequence=\"$seq\",status=\"OK\"}") ))
    awk -v seq="$seq" -v run="$run" -v rps="${rps:-0}" -v ids="$ids" -v failed="$failed" \
      -v pool="$(delta 'idgen_store_cas_attempts_total{tier="dc"}')" \
      -v glob="$(delta 'idgen_store_cas_attempts_total{tier="global"}')" 'BEGIN {
        per_pool = ids > 0 ? sprintf("%.2f (%d)", pool * 1e6 / ids, pool) : "-"
        per_glob = ids > 0 ? sprintf("%.2f (%d)", glob * 1e6 / ids, glob) : "-"
        printf "| %s | %d | %.0f | %.2fM | %d | %s | %s |\n", seq, run, rps, rps * 100 / 1e6, failed, per_pool, per_glob
      }'
  done
done
