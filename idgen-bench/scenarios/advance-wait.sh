#!/usr/bin/env bash
#
# advance-wait.sh - how long AdvanceSequence takes on one embedded server with 10 s client leases (the default),
# through the CLI (each time includes its JVM start): 12 s after the sequence's only Allocate, 30 s after one,
# with nothing allocated since the previous advance, and right after an Allocate. One line per advance, and one
# for the CLI's own start with a call that does not wait (list), to subtract.
#
#   ./mvnw -B -q -DskipTests -pl idgen-server,idgen-cli -am package && advance-wait.sh
#
# Environment (optional): IDGEN_SERVER_JAR, IDGEN_CLI_JAR, OUT_DIR. Everything runs on 127.0.0.1 and is stopped
# on exit.

set -euo pipefail

SCENARIO=advance-wait
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
for tool in java timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
CLI_JAR="${IDGEN_CLI_JAR:-$(first_jar "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-advance-wait.XXXXXX)}"
mkdir -p "$OUT"
GRPC_PORT="$(port)"
METRICS_PORT="$(port)"

java -Didgen.grpc.port="$GRPC_PORT" -Didgen.metrics.port="$METRICS_PORT" -Didgen.embedded.dir="$OUT/data" \
  -jar "$SERVER_JAR" >"$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true' EXIT

cli() { timeout 60 java -jar "$CLI_JAR" --plaintext --target "127.0.0.1:$GRPC_PORT" "$@"; }
timed() {
  local what="$1"; shift
  local start end
  start=$(date +%s%N)
  cli "$@" >/dev/null
  end=$(date +%s%N)
  printf '%s: %d ms\n' "$what" $(((end - start) / 1000000))
}

for _ in $(seq 1 60); do cli list >/dev/null 2>&1 && break; sleep 1; done
cli list >/dev/null || fail "the server did not start: $OUT/server.log"
cli create orders --start 42000 >/dev/null
sleep 15 # past what an earlier process under this server's name may have leased (a fresh process counts it)
say "load average before: $(cut -d' ' -f1 /proc/loadavg)"
timed "the CLI's own start and one call (list), for comparison" list
cli allocate orders --count 10 >/dev/null
sleep 12
timed "12 s after the only Allocate" advance orders --floor 50000
cli allocate orders --count 10 >/dev/null
sleep 30
timed "30 s after an Allocate" advance orders --floor 60000
timed "nothing allocated since the previous advance" advance orders --floor 70000
cli allocate orders --count 10 >/dev/null
timed "right after an Allocate" advance orders --floor 80000
say "load average after: $(cut -d' ' -f1 /proc/loadavg)"
