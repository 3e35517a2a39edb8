#!/usr/bin/env bash
#
# scaling-cas.sh - the compare-and-set limits of SCALING.md's capacity: on a single local Cassandra node, T threads
# each looping on a lightweight transaction on one of P rows (LOCAL_SERIAL, committed at LOCAL_QUORUM, as idgen
# writes its pools; a loser retries at once), for T in THREADS and P in PARTITIONS, 15 s each
# (dev.idgen.bench.scaling.CasLimit). One CSV row per (T, P): successful and attempted CAS/s, the share lost,
# p50/p99 of the time to win, with the load average.
#
#   scaling-cas.sh
#
# Environment (optional): CSV (default docs/scaling/cas-limit.csv), THREADS (1,10,20), PARTITIONS (1,5,20),
# SECONDS_EACH (15), IDGEN_LOADGEN_JAR, OUT_DIR, LOCK_WAIT=3600. Everything runs on 127.0.0.1 and is stopped on exit.

set -euo pipefail

SCENARIO=scaling-cas
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
for tool in java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
LOADGEN_JAR="${IDGEN_LOADGEN_JAR:-$(first_jar "$REPO_ROOT/idgen-bench/target/idgen-bench-*-loadgen.jar")}"
CSV="${CSV:-$REPO_ROOT/docs/scaling/cas-limit.csv}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-scaling-cas.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"
HEADER="date,commit,load1_before,load1_after,threads,partitions,seconds,successful_per_s,attempts_per_s,lost_share,win_p50_ms,win_p99_ms,errors"

cleanup() {
  local rc=$?
  set +e
  [[ -d "$CBASE" ]] && "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
  say "logs in $OUT"
  exit "$rc"
}
traps_and_lock cleanup

start_single_node
IFS=, read -r -a threads <<<"${THREADS:-1,10,20}"
IFS=, read -r -a partitions <<<"${PARTITIONS:-1,5,20}"
for t in "${threads[@]}"; do
  for p in "${partitions[@]}"; do
    (( p <= t )) || continue
    l0="$(load1)"
    line="$(timeout 300 java -Xmx512m -cp "$LOADGEN_JAR" dev.idgen.bench.scaling.ScalingTool cas-limit \
      --threads "$t" --partitions "$p" --seconds "${SECONDS_EACH:-15}" 2>"$OUT/cas-$t-$p.err" 9>&- | tail -n 1)" \
      || { cat "$OUT/cas-$t-$p.err" >&2; fail "cas-limit $t $p failed"; }
    csv_append "$CSV" "$HEADER" "$(date -u +%FT%TZ),$(source_commit),$l0,$(load1),$line"
  done
done
