#!/usr/bin/env bash
#
# http.sh - HTTP/JSON one-ID calls: wrk (2 threads, 10 connections) against one idgen server's
# POST /v1/sequences/{sequence}:allocate on its embedded store, default settings, and optionally against a peer's
# HTTP endpoint that you started yourself (PEER_URL, a GET URL that returns one ID, and PEER_PID, its process),
# in interleaved rounds (which goes first alternates). Per round: requests/s and p50/p99 from wrk, and the
# server's CPU per request from /proc/PID/stat (user + system over the measured window; a 3 s warm-up run precedes
# each window). Then the medians and idgen's ratio to the peer.
#
#   http.sh [SECONDS] [ROUNDS]      default: 15 s windows, 3 rounds
#
# Environment (optional): IDGEN_SERVER_JAR, IDGEN_CLI_JAR, OUT_DIR, WARMUP (seconds per server before the
# rounds, default 20), PEER_URL and PEER_PID (both or neither), PEER_NAME (default "peer").
# Needs wrk, curl, python3, java 17; no Cassandra. idgen runs on 127.0.0.1 and is stopped on exit; the peer is
# yours to start and stop (this script builds and starts no peer).

set -euo pipefail

SCENARIO=http
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
WINDOW="${1:-15}"
ROUNDS="${2:-3}"

[[ "$WINDOW" =~ ^[0-9]+$ && "$ROUNDS" =~ ^[0-9]+$ ]] || fail "usage: http.sh [SECONDS] [ROUNDS]"
for tool in wrk curl python3 java timeout getconf; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
CLI_JAR="${IDGEN_CLI_JAR:-$(first_jar "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-http.XXXXXX)}"
mkdir -p "$OUT"
HZ="$(getconf CLK_TCK)"
PEER_URL="${PEER_URL:-}"
PEER_PID="${PEER_PID:-}"
PEER_NAME="${PEER_NAME:-peer}"
[[ -z "$PEER_URL" && -z "$PEER_PID" ]] || [[ -n "$PEER_URL" && -n "$PEER_PID" ]] \
  || fail "set both PEER_URL and PEER_PID, or neither"
[[ -z "$PEER_PID" ]] || kill -0 "$PEER_PID" 2>/dev/null || fail "PEER_PID $PEER_PID is not running"
IDGEN_PID=""

cleanup() {
  local rc=$?
  set +e
  stop_process "$IDGEN_PID" 10
  say "logs in $OUT"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

GRPC="$(port)"; HTTP="$(port)"; METRICS="$(port)"
java -Xms512m -Xmx512m -Didgen.grpc.host=127.0.0.1 -Didgen.grpc.port="$GRPC" -Didgen.http.host=127.0.0.1 \
  -Didgen.http.port="$HTTP" -Didgen.metrics.host=127.0.0.1 -Didgen.metrics.port="$METRICS" \
  -Didgen.embedded.dir="$OUT/idgen-data" -jar "$SERVER_JAR" >"$OUT/idgen.log" 2>&1 &
IDGEN_PID=$!
for ((i = 0; i < 600; i++)); do
  kill -0 "$IDGEN_PID" 2>/dev/null || { tail -20 "$OUT/idgen.log" >&2; fail "idgen exited during start"; }
  (exec 3<>"/dev/tcp/127.0.0.1/$HTTP") 2>/dev/null && break
  sleep 0.2
done
create_sequence "$GRPC" http
IDGEN_URL="http://127.0.0.1:$HTTP/v1/sequences/http:allocate"
cat >"$OUT/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"count": 1}'
wrk.headers["Content-Type"] = "application/json"
LUA
answer="$(curl -sS --max-time 10 -X POST "$IDGEN_URL" -d '{"count": 1}')"
[[ "$answer" == *'"first"'* ]] || fail "idgen's HTTP allocate answered: $answer"
if [[ -n "$PEER_URL" ]]; then
  answer="$(curl -sS --max-time 10 "$PEER_URL")"
  [[ "$answer" =~ ^[0-9]+$ ]] || fail "$PEER_NAME ($PEER_URL) answered: $answer (not an ID)"
fi

load() { # $1 server, $2 seconds, $3 output
  case "$1" in
    idgen) timeout $(($2 + 30)) wrk -t2 -c10 -d"$2"s --latency -s "$OUT/post.lua" "$IDGEN_URL" >"$3" 2>&1 ;;
    peer) timeout $(($2 + 30)) wrk -t2 -c10 -d"$2"s --latency "$PEER_URL" >"$3" 2>&1 ;;
  esac
}
SERVERS="idgen${PEER_URL:+ peer}"
say "warming the servers up (${WARMUP:-20} s each)"
for s in $SERVERS; do load "$s" "${WARMUP:-20}" "$OUT/warm.out"; done
say "CPU: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round,server,requests_per_s,p50_ms,p99_ms,cpu_us_per_request,non_2xx" >"$OUT/http.csv"
ms() { # wrk's latency ("1.23ms", "850.00us", "1.01s") in ms
  awk -v v="$1" 'BEGIN { if (v ~ /us$/) printf "%.2f", v / 1000; else if (v ~ /ms$/) printf "%.2f", v + 0;
    else if (v ~ /s$/) printf "%.2f", v * 1000; else print "n/a" }'; }
for ((round = 1; round <= ROUNDS; round++)); do
  read -r -a order <<<"$SERVERS"
  n=${#order[@]}
  for ((k = 0; k < n; k++)); do
    server="${order[$(((k + round) % n))]}"
    pid=$([[ "$server" == idgen ]] && echo "$IDGEN_PID" || echo "$PEER_PID")
    load "$server" 3 "$OUT/warm.out"
    t0="$(cpu_ticks "$pid")"
    load "$server" "$WINDOW" "$OUT/wrk-$round-$server.out"
    t1="$(cpu_ticks "$pid")"
    f="$OUT/wrk-$round-$server.out"
    reqs="$(awk '/requests in/ {print $1}' "$f")"
    rps="$(awk '/^Requests\/sec/ {print $2}' "$f")"
    p50="$(ms "$(awk '$1 == "50%" {print $2}' "$f")")"
    p99="$(ms "$(awk '$1 == "99%" {print $2}' "$f")")"
    bad="$(awk '/Non-2xx/ {print $NF}' "$f")"
    awk -v r="$round" -v s="$([[ "$server" == idgen ]] && echo idgen || echo "$PEER_NAME")" -v rps="${rps:-0}" \
      -v n="${reqs:-0}" -v ticks=$((t1 - t0)) -v hz="$HZ" -v p50="$p50" -v p99="$p99" -v bad="${bad:-0}" \
      'BEGIN { printf "%d,%s,%.0f,%s,%s,%.1f,%d\n", r, s, rps, p50, p99, (n > 0 ? ticks / hz * 1e6 / n : 0), bad }' \
      >>"$OUT/http.csv"
  done
  say "round $round done; load $(cut -d' ' -f1-3 /proc/loadavg)"
done
say "load $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$OUT/http.csv"
python3 - "$OUT/http.csv" "$PEER_NAME" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = {}
for s in sorted({r["server"] for r in rows}):
    rs = [r for r in rows if r["server"] == s]
    med[s] = {k: statistics.median(float(r[k]) for r in rs) for k in ("requests_per_s", "cpu_us_per_request")}
    print(f"median {s}: {med[s]['requests_per_s']:.0f} requests/s, {med[s]['cpu_us_per_request']:.1f} us CPU per request"
          f" (runs: {', '.join(r['requests_per_s'] for r in rs)})")
peer = sys.argv[2]
if peer in med and "idgen" in med:
    print(f"idgen / {peer}: {med['idgen']['requests_per_s'] / med[peer]['requests_per_s']:.2f}x requests/s, "
          f"{med['idgen']['cpu_us_per_request'] / med[peer]['cpu_us_per_request']:.2f}x CPU per request")
PY
