# Shared by the scenario scripts (sourced, not run): jars, free ports, the launcher's lock, metrics sums,
# gRPC request bodies. The script sets SCENARIO (its name, for messages) and REPO_ROOT before sourcing.
# shellcheck shell=bash

CASSANDRA_SH="$REPO_ROOT/idgen-testing/cassandra/cassandra.sh"

say() { printf '[%s %s] %s\n' "$SCENARIO" "$(date +%T)" "$*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

# The first file matching the glob $1 (a jar built by ./mvnw package), as an absolute path.
first_jar() { local j; for j in $1; do [[ -f "$j" ]] && { readlink -f "$j"; return; }; done; fail "no jar: $1"; }

# A free TCP port on 127.0.0.1.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Takes the launcher's lock (/tmp/idgen-cassandra.lock, shared with the integration tests) on fd 9 until exit;
# every process the script starts afterwards must close fd 9 (9>&-).
take_cassandra_lock() {
  exec 9>/tmp/idgen-cassandra.lock
  flock -w "${LOCK_WAIT:-3600}" 9 || fail "the Cassandra launcher is busy (/tmp/idgen-cassandra.lock)"
}

# Sum of the samples of the Prometheus text on stdin whose name{labels} starts with $1.
msum() { awk -v p="$1" 'index($1, p) == 1 && $2 != "NaN" {s += $2} END {printf "%.0f\n", s + 0}'; }

# The value of the one sample named exactly $1 (name{labels}) in the Prometheus text on stdin; empty if none.
msample() { awk -v n="$1" '$1 == n {print $2; exit}'; }

# Writes to $3 the body of an Allocate call: the 5-byte gRPC prefix + AllocateRequest{sequence=$1, count=$2}.
allocate_body() {
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
def varint(n):
    out = b''
    while True:
        b, n = n & 0x7f, n >> 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])
seq, count = sys.argv[1].encode(), int(sys.argv[2])
msg = b'\x0a' + varint(len(seq)) + seq + b'\x10' + varint(count)
open(sys.argv[3], 'wb').write(b'\x00' + len(msg).to_bytes(4, 'big') + msg)
EOF
}

# Starts an idgen server on the Cassandra store in the background: $1 log file, $2 contact point, $3 local
# datacenter, $4 gRPC port, $5 metrics port, then -D settings. Sets STARTED_PID; waits (120 s at most) until
# its metrics answer.
start_cassandra_server() {
  local log="$1" contact="$2" dc="$3" grpc="$4" metrics="$5" i
  shift 5
  java -Xms256m -Xmx1g -Didgen.store=cassandra -Didgen.cassandra.contact-points="$contact" \
    -Didgen.cassandra.local-datacenter="$dc" -Didgen.cassandra.create-schema=true \
    -Didgen.grpc.host=127.0.0.1 -Didgen.grpc.port="$grpc" -Didgen.metrics.host=127.0.0.1 \
    -Didgen.metrics.port="$metrics" -Didgen.http.port="${IDGEN_BENCH_HTTP_PORT:-0}" "$@" -jar "$SERVER_JAR" >"$log" 2>&1 9>&- &
  STARTED_PID=$!
  for ((i = 0; i < 600; i++)); do
    kill -0 "$STARTED_PID" 2>/dev/null || { tail -20 "$log" >&2; fail "the server ($dc) exited during start"; }
    curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$metrics/metrics" && return 0
    sleep 0.2
  done
  tail -20 "$log" >&2
  fail "the server ($dc) did not start within 120 s"
}

# The traps of a scenario (EXIT runs the function $1; INT and TERM exit with 130 and 143, so EXIT runs), then the
# launcher's lock.
traps_and_lock() {
  trap "$1" EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  take_cassandra_lock
}

# One Cassandra node in $CBASE (the launcher's single topology; launcher options after, e.g. --keep-data), its
# output in $OUT/cassandra.log. Sets CASSANDRA_PID.
start_single_node() {
  "$CASSANDRA_SH" fetch 9>&- >&2
  say "starting a single Cassandra node in $CBASE $*"
  "$CASSANDRA_SH" start --topology single --base-dir "$CBASE" "$@" 9>&- >"$OUT/cassandra.log" 2>&1 \
    || { tail -20 "$OUT/cassandra.log" >&2; fail "Cassandra did not start"; }
  CASSANDRA_PID="$(<"$CBASE/dc1/pid")"
}

# One Cassandra node in $CBASE (the launcher's single topology) and one server with default settings on it (plus
# the -D settings given, if any), logs in $OUT. Sets GRPC and METRICS (its ports), SERVER_PID and CASSANDRA_PID.
start_single_node_and_server() {
  GRPC="$(port)"; METRICS="$(port)"
  start_single_node
  start_cassandra_server "$OUT/server.log" 127.0.0.1:9042 dc1 "$GRPC" "$METRICS" -Didgen.cassandra.replication.dc1=1 \
    "$@"
  SERVER_PID=$STARTED_PID
}

# For an EXIT trap: stops the server ($SERVER_PID: SIGTERM, SIGKILL after $1 seconds, default 2) and the
# Cassandra of $CBASE, and says where the logs are.
stop_server_and_cassandra() {
  [[ -n "${SERVER_PID:-}" ]] && { kill "$SERVER_PID"; sleep "${1:-2}"; kill -9 "$SERVER_PID"; } 2>/dev/null
  [[ -d "${CBASE:-}" ]] && "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
  say "logs in $OUT"
}

# Creates sequence $2 through the server at 127.0.0.1:$1 with the CLI, extra CLI arguments after; retried for
# about a minute (the first calls may race the server's store start-up). Exit 16 (exists) counts as done.
create_sequence() {
  local grpc="$1" seq="$2" i rc=0
  shift 2
  for ((i = 0; i < 20; i++)); do
    rc=0
    timeout 60 java -Xmx256m -jar "$CLI_JAR" --plaintext --target "127.0.0.1:$grpc" create "$seq" "$@" \
      >"$OUT/create-$seq.txt" 2>&1 9>&- || rc=$?
    (( rc == 0 || rc == 16 )) && return 0
    sleep 3
  done
  cat "$OUT/create-$seq.txt" >&2
  fail "could not create sequence $seq"
}

# --- helpers of the scaling curves (scaling-*.sh) -------------------------------------------------------

# The 1-minute load average.
load1() { cut -d' ' -f1 /proc/loadavg; }

# The checkout the jars were built from: $SOURCE_COMMIT if set, else the short commit ("-dirty" with changes).
source_commit() { [[ -n "${SOURCE_COMMIT:-}" ]] && { echo "$SOURCE_COMMIT"; return; }; git -C "$REPO_ROOT" describe --always --dirty --abbrev=7 2>/dev/null || echo unknown; }

# CPU time (user + system) of process $1 in clock ticks, from /proc/PID/stat (utime and stime are the 12th and
# 13th fields after "pid (comm) ").
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

# The cores each of the processes $2... used over the next $1 seconds (CPU time / wall time), space-separated.
cores_over() {
  local secs="$1" p t0 t1 hz i=0
  shift
  local before=()
  hz="$(getconf CLK_TCK)"
  t0="$(date +%s%N)"
  for p; do before+=("$(cpu_ticks "$p")"); done
  sleep "$secs"
  t1="$(date +%s%N)"
  local cores=()
  for p; do
    cores+=("$(awk -v a="${before[i]}" -v b="$(cpu_ticks "$p")" -v hz="$hz" -v ns=$((t1 - t0)) \
      'BEGIN { printf "%.3f", (b - a) / hz / (ns / 1e9) }')")
    i=$((i + 1))
  done
  echo "${cores[*]}"
}

# VmRSS of process $1 in MiB.
rss_mb() { awk '/^VmRSS:/ { printf "%.0f\n", $2 / 1024 }' "/proc/$1/status"; }

# Threads of process $1.
threads_of() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }

# The heap in use of JVM $1 right after a full GC (jcmd GC.run), in MiB.
heap_used_mb() {
  timeout 60 jcmd "$1" GC.run >/dev/null 2>&1 9>&- || true
  timeout 60 jcmd "$1" GC.heap_info 2>/dev/null 9>&- \
    | sed -nE 's/.*(garbage-first|def new generation|PSYoungGen|heap) .*used ([0-9]+)K.*/\2/p' \
    | awk '{ s += $1 } END { printf "%.0f\n", s / 1024 }'
}

# Milliseconds since the epoch.
now_ms() { date +%s%3N; }

# Appends the row $3 to the CSV file $1 whose header is $2: writes the header into a new (or empty) file, and
# refuses a file whose header differs (a changed script must not mix its rows with older ones).
csv_append() {
  local file="$1" header="$2" row="$3"
  mkdir -p "$(dirname "$file")"
  if [[ ! -s "$file" ]]; then
    echo "$header" >"$file"
  elif [[ "$(head -n 1 "$file")" != "$header" ]]; then
    fail "$file has another header; move it away (expected: $header)"
  fi
  echo "$row" >>"$file"
  say "row: $row"
}

# Stops process $1 with SIGTERM, then SIGKILL after $2 seconds (default 30).
stop_process() {
  local pid="$1" secs="${2:-30}" i
  [[ -n "$pid" ]] || return 0
  kill "$pid" 2>/dev/null || return 0
  for ((i = 0; i < secs * 5; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -9 "$pid" 2>/dev/null || true
}

# The idgen-scaling helper (dev.idgen.bench.scaling.ScalingTool in the load generator's jar).
scaling_tool() { java -Xmx512m -cp "$LOADGEN_JAR" dev.idgen.bench.scaling.ScalingTool "$@" 9>&-; }

# The value of key $1 in a line of key=value pairs on stdin (the scaling tool's output).
kv() { tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2; exit }'; }

# Scrapes the metrics endpoint on 127.0.0.1:$1 into the file $2.
scrape_to() { curl -sf --max-time 10 "http://127.0.0.1:$1/metrics" >"$2" || : >"$2"; }

# What changed between Prometheus scrapes, summed over pairs of files BEFORE AFTER [BEFORE AFTER ...] (one pair
# per server), as key=value pairs: compare-and-sets sent (cas_dc, cas_global) and lost (dc_conflict,
# global_conflict), store reservations (refills) with their mean and p99 (refill_mean_ms, refill_p99_ms, from
# idgen_refill_seconds' buckets, interpolated), Allocate calls OK and not (calls_ok, calls_failed) and IDs
# handed out (ids), both over the sequences whose name starts with $SEQ_PREFIX (every one if unset).
metrics_delta() {
  SEQ_PREFIX="${SEQ_PREFIX:-}" python3 - "$@" <<'PY'
import os, re, sys
prefix = os.environ["SEQ_PREFIX"]
line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
label_re = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
def parse(path):
    out = {}
    for line in open(path):
        m = line_re.match(line)
        if not m or line.startswith('#'):
            continue
        v = float(m.group(4))
        if v != v:
            continue
        out[(m.group(1), tuple(sorted(label_re.findall(m.group(3) or ''))))] = v
    return out
total = {}
buckets = {}
def add(key, v):
    total[key] = total.get(key, 0.0) + v
files = sys.argv[1:]
for before_path, after_path in zip(files[0::2], files[1::2]):
    before, after = parse(before_path), parse(after_path)
    for (name, labels), v in after.items():
        d = v - before.get((name, labels), 0.0)
        lab = dict(labels)
        if name == 'idgen_store_cas_attempts_total':
            add('cas_' + lab.get('tier', ''), d)
        elif name == 'idgen_store_cas_total' and lab.get('outcome') == 'conflict':
            add(lab.get('tier', '') + '_conflict', d)
        elif name == 'idgen_refill_seconds_count':
            add('refills', d)
        elif name == 'idgen_refill_seconds_sum':
            add('refill_sum', d)
        elif name == 'idgen_refill_seconds_bucket':
            le = float('inf') if lab['le'] == '+Inf' else float(lab['le'])
            buckets[le] = buckets.get(le, 0.0) + d
        elif name == 'idgen_allocate_calls_total' and lab.get('sequence', '').startswith(prefix):
            add('calls_ok' if lab.get('status') == 'OK' else 'calls_failed', d)
        elif name == 'idgen_ids_allocated_total' and lab.get('sequence', '').startswith(prefix):
            add('ids', d)
n = total.get('refills', 0.0)
p99 = 0.0
if n > 0:
    want, prev_le, prev_c = 0.99 * n, 0.0, 0.0
    for le in sorted(buckets):
        c = buckets[le]
        if c >= want:
            p99 = prev_le if le == float('inf') else prev_le + (le - prev_le) * (want - prev_c) / max(c - prev_c, 1e-9)
            break
        prev_le, prev_c = le, c
res = {k: round(total.get(k, 0.0)) for k in ('cas_dc', 'cas_global', 'dc_conflict', 'global_conflict', 'refills',
                                             'calls_ok', 'calls_failed', 'ids')}
res['refill_mean_ms'] = '%.2f' % (total.get('refill_sum', 0.0) / n * 1000 if n else 0.0)
res['refill_p99_ms'] = '%.2f' % (p99 * 1000)
print(' '.join('%s=%s' % kv for kv in res.items()))
PY
}

# Samples the largest VmRSS (MiB) and thread count of the processes $3... every second for $1 seconds into the file
# $2 ("rss_mb threads", summed over the processes at each sample; the largest sums), in the background: sets
# SAMPLER_PID.
sample_peaks() {
  local secs="$1" file="$2"
  shift 2
  (
    peak_rss=0; peak_threads=0
    for ((t = 0; t < secs; t++)); do
      rss=0; th=0
      for p; do
        rss=$((rss + $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)))
        th=$((th + $(awk '/^Threads:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)))
      done
      ((rss > peak_rss)) && peak_rss=$rss
      ((th > peak_threads)) && peak_threads=$th
      echo "$((peak_rss / 1024)) $peak_threads" >"$file"
      sleep 1
    done
  ) 9>&- &
  SAMPLER_PID=$!
}

# Stops what a scenario started: its load generators (LOAD_PIDS), its servers (PIDS) and its Cassandra (CBASE).
# For the scenario's cleanup trap, which runs with set +e.
stop_scenario() {
  local p
  for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do stop_process "$p" 30; done
  [[ -d "$CBASE" ]] && "$CASSANDRA_SH" stop --base-dir "$CBASE" >/dev/null 2>&1 9>&-
  say "logs in $OUT"
}
