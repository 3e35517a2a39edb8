#!/usr/bin/env bash
#
# strict.sh - issue 16: 1-ID Allocate calls on a STRICT sequence through 3 servers (the owner and 2 that forward
# to it), side by side with a sequence of the default ordering (PER_SERVER), loaded by h2load (C). One local
# Cassandra node, three idgen servers on it (datacenter dc1, default settings, distinct names and ports,
# gRPC bound to 127.0.0.1 so that the address each one advertises as owner is reachable). Server 1 serves the
# strict sequence first, so it is the owner; servers 2 and 3 forward to it.
#
# Per concurrency CxM (each h2load: C connections, M calls in flight on each) and run, a strict run and a default
# run one after the other: three h2load processes at once, one per server, each with a 5 s warm-up and a
# SECONDS window. Prints per run: calls/s summed over the three h2loads (and each one's), failed calls by status
# and IDs handed out (from the servers' idgen_allocate_calls_total / idgen_ids_allocated_total over warm-up +
# window: h2load counts gRPC errors as successes; the calls still in flight when h2load stops end CANCELLED),
# for the strict sequence the calls the forwarders sent to the owner and how many client calls each carried
# (idgen_strict_forwarded_batches_total / _calls_total), and the cores each process used over the window (from
# /proc), with the cores other processes on the machine used before the run and meanwhile ("others").
#
# Checks (the script fails if one does not hold):
#   - at every server but the owner, and for the default sequence at every server: IDs handed out == OK calls
#     (each 1-ID call that succeeded got exactly one ID); in a strict run without failed calls, the owner's IDs
#     == its own callers' calls + the client calls the forwarders sent it;
#   - a counted strict run per concurrency (h2load -n: a fixed number of calls per server, all completed): the
#     owner handed out exactly one ID per call made to any of the three servers, and each forwarder one per
#     call made to it (the owner's IDs go to its own callers and, in batches, to the forwarders' callers);
#   - before and after the load, 6 single calls (the CLI) alternating over servers 1, 2, 3: strictly increasing
#     IDs, and the sequence's owner (GetSequence) is server 1.
#
#   strict.sh [SECONDS] [RUNS] [CxM ...]     default: 15 s windows, 3 runs, concurrency 10x1 10x4
#
# Environment (optional): ORDERINGS ("strict default": which sequences to run), WARMUP (5), JIT_WARMUP (30: s of load on each sequence before the first run, not
# measured), COUNTED_CALLS (calls per server in the counted run, 60000; 0: none),
# QUIET_CORES (0.5) and QUIET_WAIT (180): before each run, wait up to QUIET_WAIT s while other processes use
# more than QUIET_CORES cores (then run anyway and say so), IDGEN_SERVER_JAR, IDGEN_CLI_JAR, OUT_DIR,
# LOCK_WAIT=3600.
# Needs h2load (nghttp2-client), curl (with HTTP/2), python3, java 17. Everything runs on 127.0.0.1 and is
# stopped on exit.

set -euo pipefail

SCENARIO=strict
REPO_ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "$REPO_ROOT/idgen-bench/scenarios/lib.sh"
WINDOW="${1:-15}"
RUNS="${2:-3}"
shift $(( $# < 2 ? $# : 2 ))
CONCURRENCY=("$@")
(( ${#CONCURRENCY[@]} )) || CONCURRENCY=(10x1 10x4)
[[ "$WINDOW" =~ ^[0-9]+$ && "$RUNS" =~ ^[0-9]+$ ]] || fail "usage: strict.sh [SECONDS] [RUNS] [CxM ...]"
for cm in "${CONCURRENCY[@]}"; do [[ "$cm" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || fail "concurrency $cm: expected CxM, e.g. 10x4"; done
WARMUP="${WARMUP:-5}"
COUNTED_CALLS="${COUNTED_CALLS:-60000}"
QUIET_CORES="${QUIET_CORES:-0.5}"
QUIET_WAIT="${QUIET_WAIT:-180}"
ORDERINGS="${ORDERINGS:-strict default}"
for o in $ORDERINGS; do [[ "$o" == strict || "$o" == default ]] || fail "ORDERINGS: strict and/or default, not $o"; done
for tool in h2load curl python3 java flock timeout; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
curl --version | grep -qw HTTP2 || fail "curl has no HTTP/2"
SERVER_JAR="${IDGEN_SERVER_JAR:-$(first_jar "$REPO_ROOT/idgen-server/target/idgen-server-*-all.jar")}"
CLI_JAR="${IDGEN_CLI_JAR:-$(first_jar "$REPO_ROOT/idgen-cli/target/idgen-cli-*-all.jar")}"
OUT="${OUT_DIR:-$(mktemp -d /tmp/idgen-strict.XXXXXX)}"
mkdir -p "$OUT"
CBASE="$OUT/cassandra"
STRICT=st-strict
DEFAULT=st-default
PIDS=()
LOAD_PIDS=()
HZ="$(getconf CLK_TCK)"

cleanup() {
  local rc=$?
  set +e
  stop_scenario
  exit "$rc"
}
traps_and_lock cleanup

# --- CPU accounting ----------------------------------------------------------------------------------------

# Busy CPU ticks of the whole machine (all cores; /proc/stat: user nice system irq softirq steal).
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
cpu_ticks_or_0() { cpu_ticks "$1" 2>/dev/null || echo 0; }

# Over the next $1 seconds: the cores each of the processes $2... used, then the cores all other processes
# used ("others"), space-separated.
cores_and_others() {
  local secs="$1" p t0 t1 b0 b1 i=0 ours=0
  shift
  local before=() out=()
  t0="$(date +%s%N)"; b0="$(busy_ticks)"
  for p; do before+=("$(cpu_ticks_or_0 "$p")"); done
  sleep "$secs"
  t1="$(date +%s%N)"; b1="$(busy_ticks)"
  for p; do
    local d=$(( $(cpu_ticks_or_0 "$p") - before[i] ))
    ours=$((ours + d))
    out+=("$(awk -v d="$d" -v hz="$HZ" -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", d / hz / (ns / 1e9) }')")
    i=$((i + 1))
  done
  out+=("$(awk -v d=$((b1 - b0 - ours)) -v hz="$HZ" -v ns=$((t1 - t0)) 'BEGIN { d = d < 0 ? 0 : d; printf "%.2f", d / hz / (ns / 1e9) }')")
  echo "${out[*]}"
}

# The process that used the most CPU over the last second: "%CPU command line" (cut).
busiest() {
  local line
  line="$(top -b -n 2 -d 1 -o %CPU | awk '/^ *PID/ { n++; next } n == 2 && NF { print $1, $9; exit }')"
  echo "${line#* }% $(ps -o args= -p "${line%% *}" 2>/dev/null | cut -c1-120)"
}

# Waits (QUIET_WAIT s at most) until processes other than this scenario's use at most QUIET_CORES cores over
# 3 s. Prints the last reading (cores used by others).
wait_quiet() {
  local waited=0 others
  while :; do
    others="$(cores_and_others 3 "${PIDS[@]}" | awk '{ print $NF }')"
    if awk -v o="$others" -v q="$QUIET_CORES" 'BEGIN { exit !(o <= q) }' || ((waited >= QUIET_WAIT)); then
      break
    fi
    ((waited == 0)) && say "other processes use $others cores; waiting (at most ${QUIET_WAIT} s); busiest: $(busiest)"
    sleep 7
    waited=$((waited + 10))
  done
  ((waited >= QUIET_WAIT)) && say "still $others cores used by other processes after ${QUIET_WAIT} s; running anyway"
  echo "$others"
}

# --- the cluster -------------------------------------------------------------------------------------------

# Another cluster of the launcher (e.g. one left running for integration tests, which need not hold the lock)
# may have 127.0.0.1:9042: wait for it (LOCK_WAIT s at most) rather than fail at once.
for ((i = 0; ; i += 10)); do
  python3 -c 'import socket, sys; s = socket.socket(); s.settimeout(1); sys.exit(s.connect_ex(("127.0.0.1", 9042)) == 0)' && break
  ((i < ${LOCK_WAIT:-3600})) || fail "127.0.0.1:9042 is still in use after ${LOCK_WAIT:-3600} s"
  ((i == 0)) && say "127.0.0.1:9042 is in use (another Cassandra); waiting"
  sleep 10
done
start_single_node
PIDS+=("$CASSANDRA_PID")
GRPC=(); METRICS=()
for i in 1 2 3; do
  GRPC[i]="$(port)"; METRICS[i]="$(port)"
  # One at a time: the first creates the schema.
  start_cassandra_server "$OUT/server-$i.log" 127.0.0.1:9042 dc1 "${GRPC[i]}" "${METRICS[i]}" \
    -Didgen.cassandra.replication.dc1=1 -Didgen.server-name="strict-bench-$i"
  PIDS+=("$STARTED_PID")
  SERVER_PID[i]=$STARTED_PID
  say "server $i: gRPC 127.0.0.1:${GRPC[i]}, metrics ${METRICS[i]}, pid $STARTED_PID"
done

cli() { timeout 60 java -Xmx256m -jar "$CLI_JAR" --plaintext --target "127.0.0.1:$1" "${@:2}" 9>&-; }

# Creates the strict sequence $2 through the server at 127.0.0.1:$1. With the CLI's --ordering if this CLI has it;
# otherwise (the CLI of main had no --ordering yet when this script was written) a CreateSequence call sent by
# curl over h2c with a hand-built CreateSequenceRequest{name = 1: $2, ordering = 7: ORDERING_STRICT (2)}.
create_strict() {
  local grpc="$1" seq="$2" i status
  if cli "$grpc" create --help 2>/dev/null | grep -q -- '--ordering'; then
    create_sequence "$grpc" "$seq" --ordering strict
    return
  fi
  python3 - "$seq" "$OUT/create-$seq.bin" <<'EOF'
import sys
name = sys.argv[1].encode()
assert len(name) < 128
msg = b'\x0a' + bytes([len(name)]) + name + b'\x38\x02'   # field 1 (string), field 7 (varint) = 2
open(sys.argv[2], 'wb').write(b'\x00' + len(msg).to_bytes(4, 'big') + msg)
EOF
  for ((i = 0; i < 20; i++)); do
    curl -s --http2-prior-knowledge --max-time 30 -H 'content-type: application/grpc' -H 'te: trailers' \
      --data-binary "@$OUT/create-$seq.bin" -o /dev/null -D "$OUT/create-$seq.headers" \
      "http://127.0.0.1:$grpc/idgen.v1.SequenceAdmin/CreateSequence" 9>&- || true
    # grpc-status comes in the trailers (or in the headers of a trailers-only answer); curl writes both.
    status="$(tr -d '\r' <"$OUT/create-$seq.headers" | awk -F': ' 'tolower($1) == "grpc-status" { print $2 }' | tail -1)"
    # 0: created; 6 (ALREADY_EXISTS): there from an earlier attempt.
    [[ "$status" == 0 || "$status" == 6 ]] && return 0
    sleep 3
  done
  cat "$OUT/create-$seq.headers" >&2
  fail "could not create the strict sequence $seq"
}

create_strict "${GRPC[1]}" "$STRICT"
create_sequence "${GRPC[1]}" "$DEFAULT"
cli "${GRPC[1]}" -o json get "$STRICT" >"$OUT/get-$STRICT-created.json"
grep -q '"ORDERING_STRICT"' "$OUT/get-$STRICT-created.json" || { cat "$OUT/get-$STRICT-created.json" >&2; fail "$STRICT is not strict"; }

# 6 single calls alternating over servers 1, 2, 3 (server 1 first: the first server that serves the sequence
# owns it); fails unless the IDs strictly increase and server 1 is the owner. $1: a label for the files.
order_check() {
  local label="$1" i s id prev=-1 ids=()
  for ((i = 0; i < 6; i++)); do
    s=$((i % 3 + 1))
    id="$(cli "${GRPC[s]}" allocate "$STRICT" 2>"$OUT/order-$label-$i.err")" \
      || { cat "$OUT/order-$label-$i.err" >&2; fail "order check ($label): the call to server $s failed"; }
    [[ "$id" =~ ^[0-9]+$ ]] || fail "order check ($label): server $s answered '$id'"
    ids+=("$s:$id")
    ((id > prev)) || fail "order check ($label): not increasing: ${ids[*]}"
    prev=$id
  done
  cli "${GRPC[2]}" -o json get "$STRICT" >"$OUT/get-$STRICT-$label.json"
  grep -q "\"owner\": \"[^\"]*:${GRPC[1]}\"" "$OUT/get-$STRICT-$label.json" \
    || { cat "$OUT/get-$STRICT-$label.json" >&2; fail "order check ($label): server 1 is not the owner"; }
  say "order check ($label): server:ID ${ids[*]}; owner server 1 (127.0.0.1:${GRPC[1]})"
}
order_check before
# Every server has loaded both sequences before the first run.
for i in 1 2 3; do cli "${GRPC[i]}" allocate "$DEFAULT" >/dev/null; done

# --- the runs ----------------------------------------------------------------------------------------------

scrape_all() { local i; for i in 1 2 3; do scrape_to "${METRICS[i]}" "$OUT/$1-$i.prom"; done; }

# The change of each server's Allocate counters of sequence $1 between the scrapes $2 and $3 (three files each):
# for server i, ok_i, failed_i (and the failed calls' statuses, fail_status_i), ids_i, the IDs the server
# counted as abandoned (calls cancelled before their IDs were sent: idgen_ids_lost_total{reason="abandoned"},
# all sequences), lost_i, and the calls it forwarded to owners of strict sequences (fc_i) in how many calls to
# them (fb_i: coalesced; idgen_strict_forwarded_calls_total / _batches_total, all sequences); as key=value pairs.
deltas() {
  python3 - "$1" "$OUT/$2" "$OUT/$3" <<'PY'
import re, sys
seq, before, after = sys.argv[1:]
line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
label_re = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
def parse(path):
    out = {}
    for line in open(path):
        m = line_re.match(line)
        if m and not line.startswith('#'):
            out[(m.group(1), tuple(sorted(label_re.findall(m.group(3) or ''))))] = float(m.group(4))
    return out
res = []
for i in (1, 2, 3):
    b, a = parse('%s-%d.prom' % (before, i)), parse('%s-%d.prom' % (after, i))
    ok = failed = ids = lost = fwd_calls = fwd_batches = 0.0
    statuses = {}
    for (name, labels), v in a.items():
        d = v - b.get((name, labels), 0.0)
        lab = dict(labels)
        if name == 'idgen_allocate_calls_total' and lab.get('sequence') == seq:
            if lab.get('status') == 'OK':
                ok += d
            elif d:
                failed += d
                statuses[lab.get('status')] = statuses.get(lab.get('status'), 0) + d
        elif name == 'idgen_ids_allocated_total' and lab.get('sequence') == seq:
            ids += d
        elif name == 'idgen_ids_lost_total' and lab.get('reason') == 'abandoned':
            lost += d
        elif name == 'idgen_strict_forwarded_calls_total':
            fwd_calls += d
        elif name == 'idgen_strict_forwarded_batches_total':
            fwd_batches += d
    res += ['ok_%d=%d' % (i, ok), 'failed_%d=%d' % (i, failed), 'ids_%d=%d' % (i, ids), 'lost_%d=%d' % (i, lost),
            'fc_%d=%d' % (i, fwd_calls), 'fb_%d=%d' % (i, fwd_batches),
            'fail_status_%d=%s' % (i, ','.join('%s:%d' % kv for kv in sorted(statuses.items())) or '-')]
print(' '.join(res))
PY
}

# h2load of 1-ID calls of sequence $1 against server $2, then its flags; output to $OUT/h2load-$3.out.
h2load_to() {
  local seq="$1" server="$2" name="$3"
  shift 3
  h2load -H 'content-type: application/grpc' -H 'te: trailers' -d "$OUT/$seq.bin" "$@" \
    "http://127.0.0.1:${GRPC[server]}/idgen.v1.IdGen/Allocate" >"$OUT/h2load-$name.out" 2>&1 9>&- &
  LOAD_PIDS+=($!)
}
rate_of() { grep -E '^finished in' "$1" | sed -E 's/.* ([0-9.]+) req\/s.*/\1/'; }

allocate_body "$STRICT" 1 "$OUT/$STRICT.bin"
allocate_body "$DEFAULT" 1 "$OUT/$DEFAULT.bin"

# One timed run: sequence $1, concurrency $2 (CxM), run number $3. Prints a table row.
timed_run() {
  local seq="$1" cm="$2" run="$3" c="${2%x*}" m="${2#*x}" name i others cores rates=() total
  others="$(wait_quiet)"
  name="$seq-$cm-$run"
  scrape_all "before-$name"
  LOAD_PIDS=()
  for i in 1 2 3; do
    h2load_to "$seq" "$i" "$name-$i" -c "$c" -m "$m" --warm-up-time="$WARMUP" -D "$WINDOW"
  done
  sleep "$((WARMUP + 1))"
  # Over the window (less 2 s of margin): the three servers, Cassandra, the three h2loads, then the others.
  cores="$(cores_and_others $((WINDOW - 2)) "${SERVER_PID[1]}" "${SERVER_PID[2]}" "${SERVER_PID[3]}" "$CASSANDRA_PID" \
    "${LOAD_PIDS[@]}")"
  for i in 0 1 2; do wait "${LOAD_PIDS[i]}" || fail "h2load $name-$((i + 1)) failed: $(tail -3 "$OUT/h2load-$name-$((i + 1)).out")"; done
  LOAD_PIDS=()
  scrape_all "after-$name"
  for i in 1 2 3; do rates+=("$(rate_of "$OUT/h2load-$name-$i.out")"); done
  eval "$(deltas "$seq" "before-$name" "after-$name")"
  # Each 1-ID call that succeeded got exactly one ID: at every server of the default sequence, at the forwarders
  # of the strict one (the owner's count holds the forwarded batches too).
  for i in 1 2 3; do
    [[ "$seq" == "$STRICT" && $i == 1 ]] && continue
    local ok_v="ok_$i" ids_v="ids_$i"
    (( ${!ok_v} == ${!ids_v} )) || fail "$name: server $i handed out ${!ids_v} IDs in ${!ok_v} OK calls"
  done
  total="$(awk -v a="${rates[0]:-0}" -v b="${rates[1]:-0}" -v c="${rates[2]:-0}" 'BEGIN { printf "%.0f", a + b + c }')"
  local failed=$((failed_1 + failed_2 + failed_3)) statuses="" batches="-" mean="-" ids clients
  for i in 1 2 3; do local fs="fail_status_$i"; [[ "${!fs}" != - ]] && statuses+=" s$i ${!fs}"; done
  if [[ "$seq" == "$STRICT" ]]; then
    # The owner's OK calls are its own callers' and the forwarders' (coalesced) calls; the IDs it handed out
    # went one to each of its own callers and one to each forwarded call.
    batches=$((fb_2 + fb_3))
    ((batches > 0)) && mean="$(awk -v f=$((fc_2 + fc_3)) -v b="$batches" 'BEGIN { printf "%.1f", f / b }')"
    local direct=$((ok_1 - batches))
    if ((failed == 0)); then
      ((ids_1 == direct + fc_2 + fc_3)) \
        || fail "$name: the owner handed out $ids_1 IDs for $direct own calls and $((fc_2 + fc_3)) forwarded ones"
      ((fc_2 == ok_2 && fc_3 == ok_3)) || fail "$name: forwarded $fc_2 and $fc_3 calls, $ok_2 and $ok_3 OK"
    fi
    ids=$ids_1
    clients=$((direct + ok_2 + ok_3))
  else
    ids=$((ids_1 + ids_2 + ids_3))
    clients=$((ok_1 + ok_2 + ok_3))
  fi
  read -r -a cc <<<"$cores"
  printf '| %s | %s | %d | %s | %.0f / %.0f / %.0f | %d%s | %s | %s | %s | %s | %s %s %s | %s | %s %s %s | %s | %s |\n' \
    "$cm" "$([[ $seq == "$STRICT" ]] && echo strict || echo default)" "$run" "$total" \
    "${rates[0]:-0}" "${rates[1]:-0}" "${rates[2]:-0}" "$failed" "${statuses:+ (${statuses# })}" "$clients" "$ids" \
    "$batches" "$mean" "${cc[0]}" "${cc[1]}" "${cc[2]}" "${cc[3]}" "${cc[4]}" "${cc[5]}" "${cc[6]}" "$others" "${cc[7]}"
}

# The counted strict run: concurrency $1, COUNTED_CALLS calls per server (h2load -n, no warm-up: every call it
# makes completes). Fails unless the owner handed out one ID per call made anywhere and each forwarder one per
# call made to it. Prints a line.
counted_run() {
  local cm="$1" c="${1%x*}" m="${1#*x}" name="counted-$1" i done_i
  scrape_all "before-$name"
  LOAD_PIDS=()
  for i in 1 2 3; do h2load_to "$STRICT" "$i" "$name-$i" -c "$c" -m "$m" -n "$COUNTED_CALLS"; done
  for i in 0 1 2; do wait "${LOAD_PIDS[i]}" || fail "h2load $name-$((i + 1)) failed"; done
  LOAD_PIDS=()
  scrape_all "after-$name"
  for i in 1 2 3; do
    done_i="$(awk '/^requests:/ { for (k = 1; k <= NF; k++) if ($(k + 1) ~ /^done/) print $k }' "$OUT/h2load-$name-$i.out")"
    [[ "$done_i" == "$COUNTED_CALLS" ]] || fail "$name: h2load $i completed $done_i of $COUNTED_CALLS calls"
  done
  eval "$(deltas "$STRICT" "before-$name" "after-$name")"
  ((failed_1 + failed_2 + failed_3 == 0)) || fail "$name: failed calls: $failed_1 $failed_2 $failed_3"
  ((ids_2 == COUNTED_CALLS && ids_3 == COUNTED_CALLS)) || fail "$name: forwarders handed out $ids_2 and $ids_3 IDs"
  ((ids_1 == 3 * COUNTED_CALLS)) || fail "$name: the owner handed out $ids_1 IDs for $((3 * COUNTED_CALLS)) calls"
  local batches=$((fb_2 + fb_3))
  ((ok_1 == COUNTED_CALLS + batches)) || fail "$name: the owner served $ok_1 calls, $COUNTED_CALLS + $batches expected"
  say "counted strict run, $cm: $((3 * COUNTED_CALLS)) calls (h2load -n $COUNTED_CALLS per server), 0 failed;" \
    "the owner handed out $ids_1 IDs in $COUNTED_CALLS own calls + $batches forwarded calls" \
    "(mean $(awk -v f=$((2 * COUNTED_CALLS)) -v b="$batches" 'BEGIN { printf "%.1f", b ? f / b : 0 }') calls each);" \
    "forwarders $ids_2 and $ids_3 IDs in $ok_2 and $ok_3 OK calls"
}

# The JIT: a forwarder's first half minute under load runs at a fraction of its later rate, so the servers get
# JIT_WARMUP s of each sequence at the first concurrency first (not measured).
JIT_WARMUP="${JIT_WARMUP:-30}"
if ((JIT_WARMUP > 0)); then
  say "warming up the servers' JIT: ${JIT_WARMUP} s of each sequence at ${CONCURRENCY[0]}"
  for o in $ORDERINGS; do
    seq="$([[ $o == strict ]] && echo "$STRICT" || echo "$DEFAULT")"
    LOAD_PIDS=()
    for i in 1 2 3; do h2load_to "$seq" "$i" "jit-$seq-$i" -c "${CONCURRENCY[0]%x*}" -m "${CONCURRENCY[0]#*x}" -D "$JIT_WARMUP"; done
    for i in 0 1 2; do wait "${LOAD_PIDS[i]}" || fail "the JIT warm-up's h2load failed"; done
    LOAD_PIDS=()
  done
fi
say "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| CxM (per h2load) | ordering | run | calls/s, sum of 3 | owner / fwd / fwd | failed calls | OK calls (clients) | IDs handed out | forwarded calls at the owner | mean batch | server cores owner fwd fwd | Cassandra cores | h2load cores | others' cores before | during |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for cm in "${CONCURRENCY[@]}"; do
  for ((run = 1; run <= RUNS; run++)); do
    for o in $ORDERINGS; do timed_run "$([[ $o == strict ]] && echo "$STRICT" || echo "$DEFAULT")" "$cm" "$run"; done
  done
  ((COUNTED_CALLS > 0)) && counted_run "$cm"
done
order_check after
say "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
