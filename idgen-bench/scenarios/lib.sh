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
    -Didgen.metrics.port="$metrics" "$@" -jar "$SERVER_JAR" >"$log" 2>&1 9>&- &
  STARTED_PID=$!
  for ((i = 0; i < 600; i++)); do
    kill -0 "$STARTED_PID" 2>/dev/null || { tail -20 "$log" >&2; fail "the server ($dc) exited during start"; }
    curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$metrics/metrics" && return 0
    sleep 0.2
  done
  tail -20 "$log" >&2
  fail "the server ($dc) did not start within 120 s"
}

# One Cassandra node in $CBASE (the launcher's single topology) and one server with default settings on it,
# logs in $OUT. Sets GRPC and METRICS (its ports) and SERVER_PID.
start_single_node_and_server() {
  GRPC="$(port)"; METRICS="$(port)"
  "$CASSANDRA_SH" fetch 9>&- >&2
  say "starting a single Cassandra node in $CBASE"
  "$CASSANDRA_SH" start --topology single --base-dir "$CBASE" 9>&- >"$OUT/cassandra.log" 2>&1 \
    || { tail -20 "$OUT/cassandra.log" >&2; fail "Cassandra did not start"; }
  start_cassandra_server "$OUT/server.log" 127.0.0.1:9042 dc1 "$GRPC" "$METRICS" -Didgen.cassandra.replication.dc1=1
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
