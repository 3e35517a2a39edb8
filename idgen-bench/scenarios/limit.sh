#!/usr/bin/env bash
#
# limit.sh - idgen against its limit: the same generated IdGen service on the same transport answering every
# Allocate from a counter and nothing else (dev.idgen.bench.limit.BareServer), beside one idgen server on its
# embedded store with default settings, both loaded by h2load (10 connections) in the same session, in
# interleaved rounds (which server goes first alternates). Four shapes: 1 and 100 IDs per call, 1 and 8 calls in
# flight per connection. Per round and shape: calls/s from h2load and server CPU per call from /proc/PID/stat
# (user + system, over the measured window only: a warm-up run of 3 s precedes it), and idgen's ratio to the
# bare server; then the medians over the rounds.
#
#   limit.sh [SECONDS] [ROUNDS]      default: 10 s windows, 3 rounds
#
# Environment (optional): IDGEN_SERVER_JAR, IDGEN_CLI_JAR, IDGEN_LOADGEN_JAR, OUT_DIR, WARMUP (seconds per server
# and body before the rounds, default 15), IDGEN_BASE_JAR: a second idgen server jar (the build before a change, say)
# measured in the same rounds beside the other two, so that a change's effect is read within each round rather than
# across sessions, whose ratios move by up to 0.13 on shared cores (BENCHMARKS.md).
# Needs h2load (nghttp2-client), curl, python3, java 17; no Cassandra. Everything runs on 127.0.0.1 and is
# stopped on exit. h2load counts gRPC errors as successes, so idgen's failed calls are read from its metrics and a
# round with any says so.

set -euo pipefail

SCENARIO=limit
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
WINDOW="${1:-10}"
ROUNDS="${2:-3}"

[[ "$WINDOW" =~ ^[0-9]+$ && "$ROUNDS" =~ ^[0-9]+$ ]] || fail "usage: limit.sh [SECONDS] [ROUNDS]"
for tool in h2load curl python3 java timeout getconf; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
CLI_JAR="${IDGEN_CLI_JAR:-$(first_jar "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")}"
LOADGEN_JAR="${IDGEN_LOADGEN_JAR:-$(first_jar "$REPO_ROOT/idgen-bench/target/idgen-bench-*-loadgen.jar")}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-limit.XXXXXX)}"
mkdir -p "$OUT"
HZ="$(getconf CLK_TCK)"
IDGEN_PID=""
BARE_PID=""
BASE_PID=""
BASE_JAR="${IDGEN_BASE_JAR:-}"
[[ -z "$BASE_JAR" || -f "$BASE_JAR" ]] || fail "IDGEN_BASE_JAR: no such file: $BASE_JAR"

cleanup() {
  local rc=$?
  set +e
  stop_process "$IDGEN_PID" 10
  stop_process "$BARE_PID" 10
  stop_process "$BASE_PID" 10
  say "logs in $OUT"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

wait_port() { # $1 port, $2 pid, $3 log
  local i
  for ((i = 0; i < 600; i++)); do
    kill -0 "$2" 2>/dev/null || { tail -20 "$3" >&2; fail "a server exited during start ($3)"; }
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.2
  done
  fail "nothing listens on port $1 after 120 s ($3)"
}

# An idgen server on its embedded store, its defaults otherwise; the same heap settings as the bare server's.
start_idgen() { # $1 jar, $2 gRPC port, $3 metrics port, $4 name (data directory and log); sets STARTED_PID
  java -Xms512m -Xmx512m -Didgen.grpc.host=127.0.0.1 -Didgen.grpc.port="$2" -Didgen.metrics.host=127.0.0.1 \
    -Didgen.metrics.port="$3" -Didgen.embedded.dir="$OUT/$4-data" -jar "$1" >"$OUT/$4.log" 2>&1 &
  STARTED_PID=$!
}

GRPC="$(port)"; METRICS="$(port)"; BARE="$(port)"
start_idgen "$SERVER_JAR" "$GRPC" "$METRICS" idgen
IDGEN_PID=$STARTED_PID
java -Xms512m -Xmx512m -cp "$LOADGEN_JAR" dev.idgen.bench.limit.BareServer "$BARE" >"$OUT/bare.log" 2>&1 &
BARE_PID=$!
SERVERS="bare idgen"
if [[ -n "$BASE_JAR" ]]; then
  BASE="$(port)"; BASE_METRICS="$(port)"
  start_idgen "$BASE_JAR" "$BASE" "$BASE_METRICS" base
  BASE_PID=$STARTED_PID
  SERVERS="bare idgen base"
fi
wait_port "$GRPC" "$IDGEN_PID" "$OUT/idgen.log"
wait_port "$BARE" "$BARE_PID" "$OUT/bare.log"
create_sequence "$GRPC" limit
if [[ -n "$BASE_JAR" ]]; then
  wait_port "$BASE" "$BASE_PID" "$OUT/base.log"
  create_sequence "$BASE" limit
fi
allocate_body limit 1 "$OUT/one.bin"
allocate_body limit 100 "$OUT/hundred.bin"

h2() { # $1 body, $2 in flight, $3 seconds, $4 port, $5 output
  timeout $(($3 + 60)) h2load -c 10 -m "$2" -D "$3" -H 'content-type: application/grpc' -H 'te: trailers' \
    -d "$1" "http://127.0.0.1:$4/idgen.v1.IdGen/Allocate" >"$5" 2>&1
}
failed_calls() { curl -sf --max-time 5 "http://127.0.0.1:$1/metrics" | awk '
  index($1, "idgen_allocate_calls_total{") == 1 && $1 !~ /status="OK"/ { s += $2 } END { printf "%.0f\n", s + 0 }'; }

# The JIT first: both servers, every body, until C2 has compiled their paths (the 3 s before each window is not enough
# for idgen's, which runs more code).
say "warming the servers up (${WARMUP:-15} s per server and body)"
for p in "$BARE" "$GRPC" ${BASE_JAR:+"$BASE"}; do
  for body in one hundred; do h2 "$OUT/$body.bin" 8 "${WARMUP:-15}" "$p" "$OUT/warm.out"; done
done
say "CPU: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round,ids,in_flight,server,calls_per_s,cpu_us_per_call,failed"  >"$OUT/limit.csv"
for ((round = 1; round <= ROUNDS; round++)); do
  for shape in "one 1" "one 8" "hundred 1" "hundred 8"; do
    read -r body m <<<"$shape"
    ids=$([[ "$body" == one ]] && echo 1 || echo 100)
    # Which server goes first rotates with the round.
    read -r -a order <<<"$SERVERS"
    n=${#order[@]}
    for ((k = 0; k < n; k++)); do
      server="${order[$(((k + round) % n))]}"
      case "$server" in
        bare) p="$BARE"; pid="$BARE_PID"; mp="" ;;
        idgen) p="$GRPC"; pid="$IDGEN_PID"; mp="$METRICS" ;;
        base) p="$BASE"; pid="$BASE_PID"; mp="$BASE_METRICS" ;;
      esac
      h2 "$OUT/$body.bin" "$m" 3 "$p" "$OUT/warm.out"
      f0=0; f1=0
      [[ -n "$mp" ]] && f0="$(failed_calls "$mp")"
      t0="$(cpu_ticks "$pid")"
      h2 "$OUT/$body.bin" "$m" "$WINDOW" "$p" "$OUT/h2-$round-$body-$m-$server.out"
      t1="$(cpu_ticks "$pid")"
      [[ -n "$mp" ]] && f1="$(failed_calls "$mp")"
      done_n="$(sed -nE 's/^requests: [0-9]+ total, [0-9]+ started, ([0-9]+) done.*/\1/p' "$OUT/h2-$round-$body-$m-$server.out")"
      rps="$(sed -nE 's/^finished in .*, ([0-9.]+) req\/s.*/\1/p' "$OUT/h2-$round-$body-$m-$server.out")"
      failed=$((f1 - f0))
      awk -v r="$round" -v ids="$ids" -v m="$m" -v s="$server" -v rps="${rps:-0}" -v n="${done_n:-0}" \
        -v ticks=$((t1 - t0)) -v hz="$HZ" -v failed="$failed" \
        'BEGIN { printf "%d,%d,%d,%s,%.0f,%.1f,%d\n", r, ids, m, s, rps, (n > 0 ? ticks / hz * 1e6 / n : 0), failed }' \
        >>"$OUT/limit.csv"
    done
  done
done

python3 - "$OUT/limit.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| IDs per call | in flight per connection | bare calls/s | idgen calls/s | **calls/s ratio** | bare CPU µs/call | idgen CPU µs/call | **CPU ratio** | idgen failed calls |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for ids, m in [("1", "1"), ("1", "8"), ("100", "1"), ("100", "8")]:
    def med(server, col):
        return statistics.median(float(r[col]) for r in rows if r["ids"] == ids and r["in_flight"] == m and r["server"] == server)
    b, i = med("bare", "calls_per_s"), med("idgen", "calls_per_s")
    bc, ic = med("bare", "cpu_us_per_call"), med("idgen", "cpu_us_per_call")
    failed = sum(int(r["failed"]) for r in rows if r["ids"] == ids and r["in_flight"] == m and r["server"] == "idgen")
    print(f"| {ids} | {m} | {b:,.0f} | {i:,.0f} | **{i / b:.2f}** | {bc:.1f} | {ic:.1f} | **{ic / bc:.2f}** | {failed} |")
rounds = len({r["round"] for r in rows})
print(f"(medians of {rounds} rounds; every round in {sys.argv[1]})")
# Within each round: the ratio to the bare server of that round, then the median over the rounds (steadier than the
# ratio of the medians when the machine drifts between rounds); with a base jar, also how often idgen beat it.
by = {}
for r in rows:
    by.setdefault((r["ids"], r["in_flight"], r["round"]), {})[r["server"]] = r
servers = [s for s in ("idgen", "base") if any(r["server"] == s for r in rows)]
print()
print("| IDs per call | in flight per connection | " + " | ".join(
    f"{s} CPU ratio per round | **median** | calls/s ratio, median" for s in servers)
      + (" | rounds idgen used less CPU per call than base |" if "base" in servers else " |"))
print("| ---: | ---: | " + " | ".join("--- | ---: | ---: " for _ in servers) + ("| ---: |" if "base" in servers else "|"))
for ids, m in [("1", "1"), ("1", "8"), ("100", "1"), ("100", "8")]:
    rs = [v for (i, f, _), v in sorted(by.items(), key=lambda kv: int(kv[0][2])) if i == ids and f == m]
    cells = []
    for s in servers:
        cpu = [float(v[s]["cpu_us_per_call"]) / float(v["bare"]["cpu_us_per_call"]) for v in rs]
        rate = [float(v[s]["calls_per_s"]) / float(v["bare"]["calls_per_s"]) for v in rs]
        cells.append(f"{', '.join(f'{x:.2f}' for x in cpu)} | **{statistics.median(cpu):.2f}** | {statistics.median(rate):.2f}")
    line = f"| {ids} | {m} | " + " | ".join(cells) + " |"
    if "base" in servers:
        wins = sum(float(v["idgen"]["cpu_us_per_call"]) < float(v["base"]["cpu_us_per_call"]) for v in rs)
        line += f" {wins} of {len(rs)} |"
    print(line)
PY
