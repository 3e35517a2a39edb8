#!/usr/bin/env bash
#
# store-outage.sh - issue 12's "store outage" scenario: one idgen server on a single Cassandra node,
# paced callers (h2load over h2c), the Cassandra node's JVM paused with SIGSTOP, then resumed.
#
#   store-outage.sh [freeze] FREEZE_S CALLS_PER_S IDS_PER_CALL
#       e.g. store-outage.sh 300 200 1        (300 s freeze at 200 calls/s of 1 ID)
#            store-outage.sh 60 500 100       (60 s freeze at 50,000 IDs/s)
#     Starts Cassandra and the server, creates the sequences, runs h2load for WARMUP + FREEZE + AFTER s,
#     SIGSTOPs the node after WARMUP s, SIGCONTs it FREEZE s later, and prints: the failed calls during
#     the freeze (from the server's metrics), the calls in all, the IDs/s, how long the server kept
#     serving after SIGSTOP, and the seconds from SIGCONT until a store reservation succeeds again (a
#     probe Allocate of PROBE_COUNT IDs on a second sequence, larger than any in-memory reserve, so it
#     needs the store) and until the load's calls stop failing.
#
#   store-outage.sh kill9 [IDS_PER_S] [WARMUP_S]
#       e.g. store-outage.sh kill9 200 30
#     Loads the server with IDS_PER_S calls/s of 1 ID for WARMUP_S s, reads one ID (L) right after the
#     load, kill -9s the server, restarts it on the same ports and name, reads one ID (F) at once, and
#     prints IDs skipped = F - L - 1 - (IDs handed out between L and the kill; from the metrics, 0 when
#     nothing else called). Then 10 s of the same load show the restarted server serving.
#
# Environment (all optional):
#   IDGEN_SERVER_JAR   the server jar (default: <repo>/idgen-server/target/idgen-server-*-all.jar)
#   IDGEN_CLI_JAR      the CLI jar, to create the sequences (default: <repo>/idgen-cli/target/idgen-cli-*-all.jar)
#   WARMUP=30 AFTER=30 seconds of load before the freeze and after SIGCONT (freeze mode)
#   CALL_DEADLINE=10   each load call's deadline in seconds (grpc-timeout; the CLI's default deadline), so a
#                      call the server holds fails by then as a client's would; 0: no deadline (calls may
#                      then wait through the whole freeze, and the rate offered falls once every open call
#                      slot is taken)
#   PROBE_COUNT=100000 IDs per recovery probe; PROBE_LIMIT=180 s of probing at most after SIGCONT
#   SERVER_JAVA_OPTS   JVM options and -D overrides for the server (default "-Xms256m -Xmx1g"); allocator
#                      settings are left at their defaults unless given here
#   CASSANDRA_HEAP=512M  heap of the Cassandra node
#   OUT_DIR            where logs, metrics and the timeline go (default: a new /tmp/idgen-store-outage.*)
#   LOCK_WAIT=3600     seconds to wait for /tmp/idgen-cassandra.lock (other users of the launcher)
#
# Needs: bash, curl, python3, h2load (Debian: nghttp2-client), java 17, the project's Cassandra launcher
# (idgen-testing/cassandra/cassandra.sh, whose jars must be fetched once). Everything runs on 127.0.0.1.
# The Cassandra lock is held for the whole scenario; everything started is stopped on exit.
#
# h2load counts gRPC errors as successes (HTTP 200 with grpc-status in the trailers): calls are counted
# from the server's idgen_allocate_calls_total{sequence,status} instead.

set -euo pipefail

SCRIPT_DIR="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
SCENARIO=store-outage
# shellcheck source=lib.sh
source "$SCRIPT_DIR/lib.sh" # allocate_body (its other helpers are this script's own below)
LOCK_FILE=/tmp/idgen-cassandra.lock
SEQ=outage
PROBE_SEQ=outage-probe
WARMUP="${WARMUP:-30}"
AFTER="${AFTER:-30}"
PROBE_COUNT="${PROBE_COUNT:-100000}"
PROBE_LIMIT="${PROBE_LIMIT:-180}"
CASSANDRA_HEAP="${CASSANDRA_HEAP:-512M}"
CALL_DEADLINE="${CALL_DEADLINE:-10}"
LOCK_WAIT="${LOCK_WAIT:-3600}"
read -r -a SERVER_OPTS <<<"${SERVER_JAVA_OPTS:--Xms256m -Xmx1g}"

log() { printf '[store-outage %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now_ms() { date +%s%3N; }
usage() { sed -n '3,43p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }

# --- arguments --------------------------------------------------------------------------------------

MODE=freeze
case "${1:-}" in
  -h|--help|"") usage ;;
  kill9) MODE=kill9; shift ;;
  freeze) shift ;;
esac
if [[ $MODE == freeze ]]; then
  [[ $# -eq 3 ]] || usage
  FREEZE="$1"; RATE="$2"; IDS_PER_CALL="$3"
else
  [[ $# -le 2 ]] || usage
  RATE="${1:-200}"; WARMUP="${2:-$WARMUP}"; IDS_PER_CALL=1; FREEZE=0
fi
for v in FREEZE RATE IDS_PER_CALL WARMUP AFTER PROBE_COUNT PROBE_LIMIT LOCK_WAIT CALL_DEADLINE; do
  is_uint "${!v}" || die "$v must be a whole number (got '${!v}')"
done
(( RATE >= 1 && IDS_PER_CALL >= 1 )) || die "calls/s and IDs per call must be >= 1"
(( RATE <= 20000 )) || die "calls/s above 20000: h2load on 2 cores will not pace that"

jar_or_default() { # $1 = given path or empty, $2 = glob
  local j="$1"
  if [[ -z "$j" ]]; then
    # shellcheck disable=SC2206
    local c=($2)
    j="${c[0]}"
  fi
  [[ -f "$j" ]] || die "jar not found: ${j:-$2} (build it, or set the environment variable)"
  readlink -f "$j"
}
SERVER_JAR="$(jar_or_default "${IDGEN_SERVER_JAR:-}" "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")"
CLI_JAR="$(jar_or_default "${IDGEN_CLI_JAR:-}" "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")"
for tool in curl python3 h2load java flock timeout; do
  command -v "$tool" >/dev/null || die "$tool is missing (h2load: apt-get install -y nghttp2-client)"
done
[[ -x "$CASSANDRA_SH" ]] || die "launcher not found: $CASSANDRA_SH"

OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-store-outage.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"

# --- cleanup: everything this script started, whatever happens ---------------------------------------

CPID="" SERVER_PID="" H2LOAD_PID="" SAMPLER_PID=""
cleanup() {
  local rc=$?
  set +e
  [[ -n "$CPID" ]] && kill -CONT "$CPID" 2>/dev/null
  for p in "$H2LOAD_PID" "$SAMPLER_PID"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null; done
  stop_server
  if [[ -d "$CBASE" ]]; then
    "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
    rm -rf "$CBASE"/*/data
  fi
  log "logs, metrics and timeline in $OUT"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

stop_server() { # SIGTERM, then SIGKILL after 15 s
  [[ -n "$SERVER_PID" ]] || return 0
  kill "$SERVER_PID" 2>/dev/null || true
  local i
  for ((i = 0; i < 150; i++)); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# --- the Cassandra lock, held until exit (fd 9; closed for every process started below) -------------

exec 9>"$LOCK_FILE"
log "waiting for $LOCK_FILE (at most ${LOCK_WAIT}s)"
flock -w "$LOCK_WAIT" 9 || die "could not get $LOCK_FILE within ${LOCK_WAIT}s"

# --- helpers ----------------------------------------------------------------------------------------

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# One Allocate over h2c with curl. Prints "<grpc-status or curl-RC> <first ID or -> <seconds>".
grpc_allocate() { # $1 body file, $2 max seconds
  local hdr="$OUT/probe.hdr" body="$OUT/probe.resp" rc=0 took status first
  rm -f "$hdr" "$body"
  took="$(curl -s --http2-prior-knowledge --max-time "$2" -H 'content-type: application/grpc' -H 'te: trailers' \
    --data-binary @"$1" -D "$hdr" -o "$body" -w '%{time_total}' \
    "http://127.0.0.1:$GRPC_PORT/idgen.v1.IdGen/Allocate")" || rc=$?
  if ((rc != 0)); then echo "curl-$rc - ${took:-0}"; return 0; fi
  status="$(tr -d '\r' <"$hdr" | awk -F': *' 'tolower($1) == "grpc-status" {s = $2} END {print (s == "" ? "none" : s)}')"
  first="$(python3 - "$body" <<'EOF'
import sys
d = open(sys.argv[1], 'rb').read()
def varint(b, j):
    v = s = 0
    while True:
        x = b[j]; j += 1; v |= (x & 0x7f) << s; s += 7
        if x < 0x80:
            return v, j
if len(d) < 5:
    print('-'); sys.exit()
m = d[5:5 + int.from_bytes(d[1:5], 'big')]
j, first = 0, '-'
while j < len(m):
    key, j = varint(m, j)
    if key & 7 == 0:
        v, j = varint(m, j)
        if key >> 3 == 1:
            first = v
    elif key & 7 == 2:
        n, j = varint(m, j); j += n
    else:
        break
print(first)
EOF
)"
  echo "$status $first $took"
}

scrape() { # $1 file
  curl -sf --max-time 5 "http://127.0.0.1:$METRICS_PORT/metrics" -o "$1" || { : >"$1"; return 1; }
}
# Sum of the samples whose name{labels} starts with $2, in metrics file $1.
msum() {
  awk -v p="$2" 'substr($0, 1, 1) != "#" && index($1, p) == 1 && $2 != "NaN" {s += $2} END {printf "%.0f\n", s + 0}' "$1"
}
calls_all() { msum "$1" "idgen_allocate_calls_total{sequence=\"$SEQ\","; }
calls_ok() { msum "$1" "idgen_allocate_calls_total{sequence=\"$SEQ\",status=\"OK\"}"; }
ids_out() { msum "$1" "idgen_ids_allocated_total{sequence=\"$SEQ\"}"; }
reservations() { msum "$1" "idgen_store_reservations_total"; }
res_failures() { msum "$1" "idgen_store_reservation_failures_total"; }
calls_by_status() { # $1 before, $2 after: "STATUS=n ..." for the load's sequence
  python3 - "$1" "$2" "$SEQ" <<'EOF'
import re, sys
def read(f):
    r = {}
    for line in open(f):
        m = re.match(r'idgen_allocate_calls_total\{sequence="([^"]*)",status="([^"]*)"\} (\S+)', line)
        if m and m.group(1) == sys.argv[3]:
            r[m.group(2)] = float(m.group(3))
    return r
a, b = read(sys.argv[1]), read(sys.argv[2])
print(' '.join(f'{k}={int(b[k] - a.get(k, 0))}' for k in sorted(b) if b[k] - a.get(k, 0) > 0) or 'none')
EOF
}

start_cassandra() {
  "$CASSANDRA_SH" fetch 9>&- >&2
  log "starting Cassandra (single node, 127.0.0.1) in $CBASE"
  "$CASSANDRA_SH" start --topology single --base-dir "$CBASE" --heap "$CASSANDRA_HEAP" 9>&- >"$OUT/cassandra-start.log" 2>&1 \
    || { cat "$OUT/cassandra-start.log" >&2; die "Cassandra did not start"; }
  CPID="$("$CASSANDRA_SH" pid dc1 --base-dir "$CBASE" 9>&-)"
  log "Cassandra up, pid $CPID"
}

start_server() { # $1 log file
  java "${SERVER_OPTS[@]}" \
    -Didgen.store=cassandra -Didgen.cassandra.contact-points=127.0.0.1:9042 \
    -Didgen.cassandra.local-datacenter=dc1 -Didgen.cassandra.replication.dc1=1 \
    -Didgen.cassandra.create-schema=true \
    -Didgen.grpc.host=127.0.0.1 -Didgen.grpc.port="$GRPC_PORT" \
    -Didgen.metrics.host=127.0.0.1 -Didgen.metrics.port="$METRICS_PORT" \
    -Didgen.server-name=store-outage \
    -jar "$SERVER_JAR" >"$1" 2>&1 9>&- &
  SERVER_PID=$!
  local t0 i
  t0=$(now_ms)
  for ((i = 0; i < 600; i++)); do   # 120 s at most
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -30 "$1" >&2; die "the server exited during start"; }
    if curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$METRICS_PORT/metrics" \
       && timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$GRPC_PORT" 2>/dev/null; then
      log "server up (pid $SERVER_PID, gRPC $GRPC_PORT, metrics $METRICS_PORT) after $(( $(now_ms) - t0 )) ms"
      return 0
    fi
    sleep 0.2
  done
  tail -30 "$1" >&2; die "the server did not start within 120 s"
}

cli() { timeout 60 java -Xmx256m -jar "$CLI_JAR" --plaintext --target "127.0.0.1:$GRPC_PORT" "$@" 9>&-; }
create_sequence() { # retried for up to ~60 s: the first calls may race the server's store start-up
  local i rc
  for ((i = 0; i < 20; i++)); do
    rc=0; cli create "$1" >"$OUT/create-$1.txt" 2>&1 || rc=$?
    if ((rc == 0 || rc == 16)); then log "sequence $1 created (server defaults)"; return 0; fi
    sleep 3
  done
  cat "$OUT/create-$1.txt" >&2; die "could not create sequence $1"
}

# h2load at RATE calls/s for $1 seconds, in the background; its per-request log in $2.
# The server lets a connection have 100 calls open (idgen.limits.max-concurrent-calls-per-connection), and
# h2load sends a paced call only when its connection has a free slot: open enough connections that the
# calls held during a stall (up to the deadline, or the whole freeze without one) never take every slot,
# so the rate offered stays RATE. h2load paces each connection at a whole number of calls/s.
start_load() {
  local dur="$1" clients per stall need headers=(-H 'content-type: application/grpc' -H 'te: trailers')
  if (( CALL_DEADLINE > 0 )); then stall=$(( CALL_DEADLINE + 2 )); headers+=(-H "grpc-timeout: ${CALL_DEADLINE}S")
  else stall=$(( FREEZE + 15 )); fi
  need=$(( (RATE * stall + 89) / 90 ))               # 90 of the 100 slots per connection
  clients=$(( (RATE + 49) / 50 )); (( clients < need )) && clients=$need
  (( clients > 2000 )) && clients=2000
  while (( clients < RATE && RATE % clients != 0 )); do clients=$((clients + 1)); done
  (( clients > RATE )) && clients=$RATE
  per=$(( RATE / clients ))
  (( clients * 90 >= RATE * stall )) \
    || log "WARNING: $clients connections hold $((clients * 100)) open calls, fewer than ${stall}s of calls: the rate offered will fall in a stall"
  rm -f "$2"
  local cmd=(h2load -c "$clients" -m 100 --rps "$per" -D "$dur" "${headers[@]}" -d "$BODY" --log-file="$2"
    "http://127.0.0.1:$GRPC_PORT/idgen.v1.IdGen/Allocate")
  printf '%q ' "${cmd[@]}" >"$OUT/h2load.cmd"
  timeout $((dur + 60)) "${cmd[@]}" >"$OUT/h2load.out" 2>&1 9>&- &
  H2LOAD_PID=$!
  log "h2load: $clients connections x $per calls/s, $IDS_PER_CALL ID(s) per call, deadline $( ((CALL_DEADLINE > 0)) && echo "${CALL_DEADLINE}s" || echo none), ${dur}s"
}

# Every second until $1 (epoch ms): ms, calls all, calls OK, IDs, reservations, reservation failures.
sampler() {
  exec 9>&-
  local f="$OUT/sample.prom" n=0
  echo -e "ms\tcalls\tok\tids\treservations\tres_failures" >"$OUT/timeline.tsv"
  while (( $(now_ms) < $1 && n < 100000 )); do
    n=$((n + 1))
    if scrape "$f"; then
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(now_ms)" "$(calls_all "$f")" "$(calls_ok "$f")" "$(ids_out "$f")" \
        "$(reservations "$f")" "$(res_failures "$f")" >>"$OUT/timeline.tsv"
    fi
    sleep 1
  done
}

# --- common start --------------------------------------------------------------------------------------

GRPC_PORT="$(free_port)"
METRICS_PORT="$(free_port)"
while [[ "$METRICS_PORT" == "$GRPC_PORT" ]]; do METRICS_PORT="$(free_port)"; done
start_cassandra
start_server "$OUT/server.log"
create_sequence "$SEQ"
BODY="$OUT/allocate-$IDS_PER_CALL.bin"
allocate_body "$SEQ" "$IDS_PER_CALL" "$BODY"
ONE="$OUT/allocate-1.bin"
allocate_body "$SEQ" 1 "$ONE"

# --- kill9 mode ----------------------------------------------------------------------------------------

if [[ $MODE == kill9 ]]; then
  scrape "$OUT/m-start.prom"
  start_load "$WARMUP" "$OUT/h2load-before.log"
  wait "$H2LOAD_PID" || true; H2LOAD_PID=""
  grep -E '^(finished|requests)' "$OUT/h2load.out" | sed 's/^/  h2load: /' >&2
  scrape "$OUT/m-before-probe.prom"
  read -r st_l last took_l < <(grpc_allocate "$ONE" 10)
  scrape "$OUT/m-before-kill.prom"
  kill -9 "$SERVER_PID"; t_kill=$(now_ms)
  [[ "$st_l" == 0 && "$last" =~ ^[0-9]+$ ]] || die "the probe before the kill failed: status $st_l"
  wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
  between=$(( $(ids_out "$OUT/m-before-kill.prom") - $(ids_out "$OUT/m-before-probe.prom") - 1 ))
  log "last ID before the kill: $last; server killed with SIGKILL"
  start_server "$OUT/server-restart.log"
  read -r st_f first took_f < <(grpc_allocate "$ONE" 15)
  t_first=$(now_ms)
  [[ "$st_f" == 0 && "$first" =~ ^[0-9]+$ ]] || die "the first call after the restart failed: status $st_f"
  scrape "$OUT/m-restart.prom"
  start_load 10 "$OUT/h2load-after.log"
  wait "$H2LOAD_PID" || true; H2LOAD_PID=""
  scrape "$OUT/m-end.prom"
  m0="$OUT/m-start.prom" mk="$OUT/m-before-kill.prom"
  cat <<EOF

=== idgen kill -9 + restart at $RATE IDs/s ($RATE calls/s of 1 ID, ${WARMUP}s of load before the kill) ===
server jar                  : $SERVER_JAR
calls before the kill       : $(( $(calls_all "$mk") - $(calls_all "$m0") )) (by status: $(calls_by_status "$m0" "$mk")), IDs $(( $(ids_out "$mk") - $(ids_out "$m0") ))
node reserve at the kill    : $(msum "$mk" "idgen_reserve_ids{sequence=\"$SEQ\",tier=\"node\"}") IDs (gauge, refreshed every idgen.metrics.refresh-interval)
last ID before the kill (L) : $last
IDs handed out after L      : $between (metrics: IDs allocated after the probe minus before it, minus the probe's)
first ID after restart (F)  : $first  ($(( t_first - t_kill )) ms after the kill, JVM start included)
IDs skipped                 : $(( first - last - 1 - between ))   (F - L - 1 - IDs handed out after L)
after restart, 10 s of load : calls $(( $(calls_all "$OUT/m-end.prom") - $(calls_all "$OUT/m-restart.prom") )) (by status: $(calls_by_status "$OUT/m-restart.prom" "$OUT/m-end.prom"))
EOF
  exit 0
fi

# --- freeze mode -------------------------------------------------------------------------------------

PROBE="$OUT/probe-$PROBE_COUNT.bin"
create_sequence "$PROBE_SEQ"
allocate_body "$PROBE_SEQ" "$PROBE_COUNT" "$PROBE"
read -r st first took < <(grpc_allocate "$PROBE" 15)
[[ "$st" == 0 ]] || die "the probe ($PROBE_COUNT IDs of $PROBE_SEQ) fails before any freeze: status $st"
log "probe of $PROBE_COUNT IDs before the freeze: OK in ${took}s"

DURATION=$(( WARMUP + FREEZE + AFTER ))
scrape "$OUT/m-start.prom"
t_start=$(now_ms)
sampler $(( t_start + (DURATION + PROBE_LIMIT + 30) * 1000 )) &
SAMPLER_PID=$!
start_load "$DURATION" "$OUT/h2load.log"

sleep "$WARMUP"
kill -0 "$H2LOAD_PID" 2>/dev/null || die "h2load ended early: $(tail -5 "$OUT/h2load.out")"
scrape "$OUT/m-stop.prom"
kill -STOP "$CPID"; t_stop=$(now_ms)
log "Cassandra (pid $CPID) SIGSTOPped for ${FREEZE}s"
sleep "$FREEZE"
scrape "$OUT/m-cont.prom"
kill -CONT "$CPID"; t_cont=$(now_ms)
log "Cassandra SIGCONTed; probing the store with Allocate($PROBE_SEQ, $PROBE_COUNT)"

: >"$OUT/probes.tsv"
t_recovered="" probes=0
while (( $(now_ms) - t_cont < PROBE_LIMIT * 1000 )); do
  t_p=$(now_ms)
  read -r st first took < <(grpc_allocate "$PROBE" 10)
  probes=$((probes + 1))
  printf '%s\t%s\t%s\t%s\n' "$(( t_p - t_cont ))" "$st" "$first" "$took" >>"$OUT/probes.tsv"
  if [[ "$st" == 0 ]]; then t_recovered=$(now_ms); break; fi
  sleep 0.2
done
[[ -n "$t_recovered" ]] && log "store reservation OK again $(( t_recovered - t_cont )) ms after SIGCONT ($probes probes)"

wait "$H2LOAD_PID" || true; H2LOAD_PID=""
t_end=$(now_ms)
scrape "$OUT/m-end.prom"
sleep 1; kill "$SAMPLER_PID" 2>/dev/null || true; wait "$SAMPLER_PID" 2>/dev/null || true; SAMPLER_PID=""

m0="$OUT/m-start.prom" ms="$OUT/m-stop.prom" mc="$OUT/m-cont.prom" me="$OUT/m-end.prom"
fail() { echo $(( $(calls_all "$1") - $(calls_ok "$1") )); }
# From the 1 s timeline: when failed calls first appeared after SIGSTOP, and the last second in which
# the number of failed calls grew (relative to SIGCONT).
read -r first_fail last_fail < <(python3 - "$OUT/timeline.tsv" "$t_stop" "$t_cont" <<'EOF'
import sys
rows = [list(map(int, l.split('\t'))) for l in list(open(sys.argv[1]))[1:] if l.strip()]
stop, cont = int(sys.argv[2]), int(sys.argv[3])
first = last = None
for prev, cur in zip(rows, rows[1:]):
    if cur[1] - cur[2] > prev[1] - prev[2]:          # failed calls grew in (prev, cur]
        if cur[0] >= stop and first is None:
            first = (prev[0] - stop) / 1000
        last = (cur[0] - cont) / 1000
print('none' if first is None else f'{max(first, 0):.1f}', 'none' if last is None else f'{last:+.1f}')
EOF
)
calls_total=$(( $(calls_all "$me") - $(calls_all "$m0") ))
ids_total=$(( $(ids_out "$me") - $(ids_out "$m0") ))
cat <<EOF

=== idgen store outage: Cassandra node SIGSTOPped ${FREEZE}s under $RATE calls/s x $IDS_PER_CALL ID(s), call deadline $( ((CALL_DEADLINE > 0)) && echo "${CALL_DEADLINE}s" || echo none) ===
server jar                       : $SERVER_JAR
load                             : $(cat "$OUT/h2load.cmd")
h2load                           : $(grep -E '^requests' "$OUT/h2load.out" | head -1) (gRPC errors count as succeeded here)
calls in all                     : $calls_total (by status: $(calls_by_status "$m0" "$me"))
IDs handed out                   : $ids_total, $(( ids_total / DURATION )) IDs/s over the load's ${DURATION}s (target $(( RATE * IDS_PER_CALL )))
before the freeze                : (${WARMUP}s) calls $(( $(calls_all "$ms") - $(calls_all "$m0") )), failed $(( $(fail "$ms") - $(fail "$m0") )) (by status: $(calls_by_status "$m0" "$ms"))
during the freeze                : (${FREEZE}s) calls ended $(( $(calls_all "$mc") - $(calls_all "$ms") )), FAILED $(( $(fail "$mc") - $(fail "$ms") )) (by status: $(calls_by_status "$ms" "$mc"))
after SIGCONT                    : (${AFTER}s of load) calls ended $(( $(calls_all "$me") - $(calls_all "$mc") )), failed $(( $(fail "$me") - $(fail "$mc") )) (by status: $(calls_by_status "$mc" "$me"))
store reservations               : during the freeze $(( $(reservations "$mc") - $(reservations "$ms") )) (failed $(( $(res_failures "$mc") - $(res_failures "$ms") ))), after SIGCONT $(( $(reservations "$me") - $(reservations "$mc") )) (failed $(( $(res_failures "$me") - $(res_failures "$mc") )))
served from memory after SIGSTOP : $( [[ "$first_fail" == none ]] && echo "the whole freeze (no failed call)" || echo "${first_fail}s until the first failed calls (1 s resolution)")
last failed calls                : $( [[ "$last_fail" == none ]] && echo "none" || echo "${last_fail}s relative to SIGCONT (1 s resolution)")
store OK again after SIGCONT     : $( [[ -n "$t_recovered" ]] && echo "$(( t_recovered - t_cont )) ms (first OK probe of $PROBE_COUNT IDs, $probes probes)" || echo "NOT within ${PROBE_LIMIT}s ($probes probes)")
EOF
