#!/usr/bin/env bash
#
# cassandra.sh - fetch and run a real, throwaway Apache Cassandra 5.0.x for idgen's tests.
#
# Test and development infrastructure, not deployment: the integration tests start it through
# dev.idgen.testing.CassandraExtension when no Docker engine is available (idgen-testing/README.md), and
# developers run it by hand. There is no Docker daemon, no Debian package and no binary tarball on Maven
# Central here (see docs/cassandra.md), so this script fetches org.apache.cassandra:cassandra-all and its
# runtime dependencies with Maven (pom.xml beside this file) and runs CassandraDaemon as its own JVM, one
# per node:
#
#   single : dc1 = 127.0.0.1 (datacenter dc1, rack rack1)
#   two-dc : dc1 = 127.0.0.1 (dc1) + dc2 = 127.0.0.2 (dc2), GossipingPropertyFileSnitch, both seeds
#
# Every node listens on its own loopback address with the standard ports (CQL 9042, storage 7000); only
# the JMX port differs, because Cassandra's local-only JMX always binds 127.0.0.1.
#
# The data is test data: nodes start with an empty data directory (unless --keep-data), run with
# "unsafe" fast-start settings and are stopped with SIGKILL.
#
# Only bash, coreutils, procps, java and mvn are used.

set -euo pipefail

readonly CASSANDRA_VERSION=5.0.9   # keep in sync with pom.xml
# Resolve our own location (through symlinks too) so the script works from any current directory.
# It lives in <repo>/idgen-testing/cassandra/; REPO_ROOT is only used to find the Maven wrapper (a copy
# extracted elsewhere, e.g. by CassandraExtension from idgen-testing's jar, falls back to mvn).
readonly SCRIPT_DIR="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
readonly REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
readonly IDGEN_HOME="${IDGEN_CASSANDRA_HOME:-$HOME/.cache/idgen-cassandra}"
readonly LIB_DIR="$IDGEN_HOME/$CASSANDRA_VERSION/lib"
# The run directory lives outside any target/ on purpose: `mvn clean` must never delete the data
# directory of a running node (docs/cassandra.md).
readonly DEFAULT_BASE_DIR="$IDGEN_HOME/run"
readonly STAMP_FILE_NAME=".fetch-complete"
readonly ALL_NODES=(dc1 dc2)

readonly CQL_PORT=9042
readonly STORAGE_PORT=7000
readonly CLUSTER_NAME="idgen-test"

# --- node table: a node is named after its datacenter -------------------------------------------

node_address() { case "$1" in dc1) echo 127.0.0.1 ;; dc2) echo 127.0.0.2 ;; *) die "unknown node '$1' (expected dc1 or dc2)" ;; esac; }
# Local JMX (used by nodetool) binds 127.0.0.1 whatever listen_address is, so each node needs its own port.
node_jmx_port() { case "$1" in dc1) echo 7199 ;; dc2) echo 7299 ;; *) die "unknown node '$1'" ;; esac; }
# num_tokens: 1 with an explicit, distinct token per node: no token allocation work at startup and a
# deterministic ring.
node_token() { case "$1" in dc1) echo -9223372036854775808 ;; dc2) echo 0 ;; *) die "unknown node '$1'" ;; esac; }

# Sets the array NODES to the nodes of topology $1. (Not a $(...) function: die must end the script.)
set_topology_nodes() {
  case "$1" in
    single) NODES=(dc1) ;;
    two-dc) NODES=(dc1 dc2) ;;
    *) die "unknown topology '$1' (expected single or two-dc)" ;;
  esac
}

# --- small helpers -------------------------------------------------------------------------------

log() { printf '[cassandra.sh] %s\n' "$*" >&2; }
die() { printf '[cassandra.sh] ERROR: %s\n' "$*" >&2; exit 1; }
now_ms() { date +%s%3N; }

java_bin() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then echo "$JAVA_HOME/bin/java"; else echo java; fi
}

# True when something accepts TCP connections on host:port. Pure bash (/dev/tcp); `timeout` guards
# against a paused (SIGSTOPped) listener whose backlog is full.
port_open() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null
}

pid_file() { echo "$1/$2/pid"; }

# The process state letter(s) of a pid as ps shows them (R, S, T for stopped, Z for zombie...), or fails.
proc_state() {
  local state
  state="$(ps -o stat= -p "$1" 2>/dev/null)" || return 1
  state="${state//[[:space:]]/}"
  [[ -n "$state" ]] && echo "$state"
}
node_yaml() { echo "$1/$2/conf/cassandra.yaml"; }

# Prints the pid of a node if its process is alive. The pid must belong to a CassandraDaemon started with
# this node's cassandra.yaml: a stale pid file whose pid got reused by something else is ignored, and so
# is a zombie (a killed node whose parent has not reaped it yet).
running_pid() {
  local base="$1" node="$2" pid pf cmdline state
  pf="$(pid_file "$base" "$node")"
  [[ -f "$pf" ]] || return 1
  pid="$(<"$pf")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  [[ "$cmdline" == *CassandraDaemon* && "$cmdline" == *"file:$(node_yaml "$base" "$node")"* ]] || return 1
  state="$(proc_state "$pid")" || return 1
  [[ "$state" != Z* ]] || return 1
  echo "$pid"
}

# True while a process we just launched exists and is not a zombie. Used while waiting for the start:
# right after the fork its command line can still be bash's, so running_pid would wrongly say "dead".
pid_alive() {
  local state
  state="$(proc_state "$1")" || return 1
  [[ "$state" != Z* ]]
}

# True once a killed process has released everything, its sockets included. A killed JVM first shows up
# as a zombie thread-group leader while its other threads are still exiting, and the open files (the
# listening ports) are released only by the last of them: "zombie" alone is not "gone yet".
process_gone() {
  [[ -d "/proc/$1" ]] || return 0
  local tasks=("/proc/$1/task/"*)
  [[ "$(proc_state "$1" || echo Z)" == Z* && ${#tasks[@]} -le 1 ]]
}

# Extra safety net for `stop`: CassandraDaemon processes started with this node's cassandra.yaml, even
# if the pid file is gone. Only these exact processes, never other Cassandra instances on the machine.
stray_pids() {
  local yaml pid cmdline
  yaml="$(node_yaml "$1" "$2")"
  for pid in $(pgrep -f CassandraDaemon 2>/dev/null || true); do
    cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || continue
    if [[ "$cmdline" == *"-Dcassandra.config=file:$yaml "* ]]; then echo "$pid"; fi
  done
  return 0
}

# The topology last started in base dir $1, or nothing.
read_topology() {
  local f="$1/topology" topology=""
  if [[ -f "$f" ]]; then topology="$(<"$f")"; fi
  case "$topology" in single|two-dc) echo "$topology" ;; *) echo "" ;; esac
}

# The --add-exports/--add-opens set of Cassandra's conf/jvm17-server.options. Without it CassandraDaemon
# fails with "Cassandra is unable to access required classes"; nodetool needs it as well.
JPMS_OPTS=(
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
  --add-exports java.sql/java.sql=ALL-UNNAMED
  --add-exports java.base/java.lang.ref=ALL-UNNAMED
  --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
  --add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
  --add-exports jdk.attach/sun.tools.attach=ALL-UNNAMED
  --add-opens java.base/java.lang.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
  --add-opens java.base/jdk.internal.math=ALL-UNNAMED
  --add-opens java.base/jdk.internal.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
  --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens java.base/java.io=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
  --add-opens java.base/java.lang=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED
)

# --- fetch ---------------------------------------------------------------------------------------

# Sets the array MVN_CMD: $MVN if set (split into words, so MVN="mvn -o" works), else the repository's
# Maven wrapper, else mvn from the PATH.
mvn_cmd() {
  if [[ -n "${MVN:-}" ]]; then read -r -a MVN_CMD <<<"$MVN"
  elif [[ -x "$REPO_ROOT/mvnw" ]]; then MVN_CMD=("$REPO_ROOT/mvnw")
  else MVN_CMD=(mvn)
  fi
}

lib_complete() { [[ -f "$LIB_DIR/$STAMP_FILE_NAME" ]]; }

cmd_fetch() {
  [[ $# -eq 0 ]] || die "fetch takes no arguments"
  if lib_complete; then
    log "Cassandra $CASSANDRA_VERSION jars already in $LIB_DIR"
    return 0
  fi
  local tmp count t0
  mvn_cmd
  # Download into a private directory and move it into place only when complete, so an interrupted
  # fetch never leaves a half-filled lib directory that looks usable.
  tmp="$LIB_DIR.partial.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  log "fetching cassandra-all $CASSANDRA_VERSION and its runtime dependencies with ${MVN_CMD[*]} (about 100 jars, 67 MB)..."
  t0="$(now_ms)"
  if ! "${MVN_CMD[@]}" -q -B -Dstyle.color=never -f "$SCRIPT_DIR/pom.xml" dependency:copy-dependencies -DoutputDirectory="$tmp" >&2; then
    rm -rf "$tmp"
    die "maven could not fetch the Cassandra jars"
  fi
  local jars=("$tmp"/*.jar)
  count="${#jars[@]}"
  if [[ ! -f "$tmp/cassandra-all-$CASSANDRA_VERSION.jar" ]] || ! compgen -G "$tmp/jamm-*.jar" >/dev/null || ((count < 50)); then
    rm -rf "$tmp"
    die "fetch looks incomplete ($count jars)"
  fi
  echo "cassandra-all $CASSANDRA_VERSION, $count jars, fetched $(date -u +%FT%TZ)" >"$tmp/$STAMP_FILE_NAME"
  rm -rf "$LIB_DIR"
  mv "$tmp" "$LIB_DIR"
  log "fetched $count jars into $LIB_DIR in $(( ($(now_ms) - t0) / 1000 )) s"
}

# --- configuration files -------------------------------------------------------------------------

write_node_config() {
  local base="$1" node="$2" topology="$3" dir addr seeds
  dir="$base/$node"
  addr="$(node_address "$node")"
  if [[ "$topology" == two-dc ]]; then
    # Both nodes are seeds: each can start first, and they find each other without a bootstrap order.
    seeds="127.0.0.1:$STORAGE_PORT,127.0.0.2:$STORAGE_PORT"
  else
    seeds="$addr:$STORAGE_PORT"
  fi

  # Only keys that Cassandra 5.0 knows: it refuses to start on any unknown key.
  cat >"$dir/conf/cassandra.yaml" <<EOF
# Generated by idgen-testing/cassandra/cassandra.sh for node $node ($topology). Test data only.
cluster_name: '$CLUSTER_NAME'
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
# One token per node, chosen explicitly: no token allocation at startup, a deterministic ring.
num_tokens: 1
initial_token: '$(node_token "$node")'
# Every node is a fresh (or its own old) ring member; nothing to stream from anyone.
auto_bootstrap: false

endpoint_snitch: GossipingPropertyFileSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: '$seeds'
listen_address: $addr
rpc_address: $addr
storage_port: $STORAGE_PORT
native_transport_port: $CQL_PORT
start_native_transport: true

data_file_directories:
  - $dir/data/data
commitlog_directory: $dir/data/commitlog
saved_caches_directory: $dir/data/saved_caches
hints_directory: $dir/data/hints
cdc_raw_directory: $dir/data/cdc_raw

commitlog_sync: periodic
commitlog_sync_period: 10000ms
# Small memtables and commit log: tests write little, and two nodes share 2 cores and the disk.
# (max_mutation_size defaults to half a commit log segment: 4 MiB here.)
commitlog_segment_size: 8MiB
commitlog_total_space: 128MiB
memtable_heap_space: 64MiB
memtable_offheap_space: 64MiB
concurrent_compactors: 1

# Dropping or truncating a table would otherwise snapshot (hard-link) its files first: pointless here.
auto_snapshot: false
# Paxos v2 (Cassandra 4.1+): fewer round trips per lightweight transaction than v1.
paxos_variant: v2
# No Cassandra 4 nodes will ever join: use the 5.0 storage formats right away.
storage_compatibility_mode: NONE
EOF

  cat >"$dir/conf/cassandra-rackdc.properties" <<EOF
# Read by GossipingPropertyFileSnitch: this node's place in the topology.
dc=$node
rack=rack1
EOF

  # system.log gets INFO (it shows "Starting listening for CQL clients", gossip UP/DOWN events);
  # the console, redirected to logs/stdout.log, only WARN and above.
  cat >"$dir/conf/logback.xml" <<EOF
<configuration scan="false">
  <appender name="SYSTEMLOG" class="ch.qos.logback.core.FileAppender">
    <file>$dir/logs/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %logger{0} - %msg%n</pattern></encoder>
  </appender>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <filter class="ch.qos.logback.classic.filter.ThresholdFilter"><level>WARN</level></filter>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %logger{0} - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO">
    <appender-ref ref="SYSTEMLOG"/>
    <appender-ref ref="STDOUT"/>
  </root>
</configuration>
EOF
}

write_tool_logback() {
  mkdir -p "$1/tools"
  cat >"$1/tools/logback.xml" <<'EOF'
<configuration scan="false">
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %logger{0} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR"/></root>
</configuration>
EOF
}

# --- launching -----------------------------------------------------------------------------------

launch_node() {
  local base="$1" node="$2" heap="$3" dir jamm pid
  dir="$base/$node"
  jamm="$(compgen -G "$LIB_DIR/jamm-*.jar" | head -n 1)"
  local opts=(
    -Xms"$heap" -Xmx"$heap"
    -Xss256k                                    # Cassandra's own default thread stack size
    -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxGCPauseMillis=300
    -Djava.net.preferIPv4Stack=true
    -XX:+ExitOnOutOfMemoryError                 # a test node that ran out of heap should die visibly
    -Djdk.attach.allowAttachSelf=true           # lets Cassandra attach agents to itself
    # Netty: direct buffers via Unsafe and the pre-4.1.75 allocator defaults (as in jvm17-server.options).
    -Dio.netty.tryReflectionSetAccessible=true
    -Dio.netty.allocator.useCacheForAllThreads=true -Dio.netty.allocator.maxOrder=11
    "${JPMS_OPTS[@]}"
    # jamm measures object sizes for memtable accounting; Cassandra expects it as an agent.
    -javaagent:"$jamm"
    -Dcassandra.config="file:$dir/conf/cassandra.yaml"
    -Dcassandra-rackdc.properties="file:$dir/conf/cassandra-rackdc.properties"
    -Dlogback.configurationFile="$dir/conf/logback.xml"
    -Dcassandra.logdir="$dir/logs"
    -Dcassandra.storagedir="$dir/data"
    -Dcassandra.triggers_dir="$dir/triggers"    # avoids a "trigger directory doesn't exist" warning
    -Dcassandra.jmx.local.port="$(node_jmx_port "$node")"
    # Keep stdout/stderr open (the daemon would close them): fatal startup errors land in stdout.log.
    -Dcassandra-foreground=yes
    # Fast start, for test clusters only: do not wait for gossip to settle, a 1 s ring delay instead of
    # 30 s, create the default superuser at once, and no fsync of the system keyspaces.
    -Dcassandra.skip_wait_for_gossip_to_settle=0
    -Dcassandra.ring_delay_ms=1000
    -Dcassandra.superuser_setup_delay_ms=0
    -Dcassandra.unsafesystem=true
    # With a 1 s ring delay, gossip would also drop a peer that has not announced its tokens yet after
    # only 1 s (fat-client timeout = quarantine delay / 2 = ring delay): when both nodes start together,
    # dc2 then evicts dc1 (and empties its seed list) before dc1 reaches NORMAL. Restore a sane timeout.
    -Dcassandra.gossip_quarantine_delay_ms=60000
  )
  # Started from a subshell that exits right away, so the node is re-parented and reaped by init when it
  # dies (no zombie that still looks alive). nohup + no terminal streams: the node survives the caller's
  # exit, and a caller reading our stdout/stderr through pipes is not kept waiting for EOF.
  (
    cd "$dir"
    nohup "$(java_bin)" "${opts[@]}" -cp "$dir/conf:$LIB_DIR/*" org.apache.cassandra.service.CassandraDaemon \
      </dev/null >"$dir/logs/stdout.log" 2>&1 &
    echo $! >"$dir/pid"
  )
  pid="$(<"$dir/pid")"
  log "launched $node (pid $pid) on $(node_address "$node"), datacenter $node, logs in $dir/logs"
}

nodetool_raw() {
  local base="$1" node="$2"
  shift 2
  [[ -f "$base/tools/logback.xml" ]] || write_tool_logback "$base"
  # A short-lived client JVM: small heap, C1 only, so it starts fast and stays out of the nodes' way.
  "$(java_bin)" -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "${JPMS_OPTS[@]}" \
    -Dlogback.configurationFile="$base/tools/logback.xml" -cp "$LIB_DIR/*" \
    org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$(node_jmx_port "$node")" "$@"
}

# True when a `nodetool status` output (file $1) lists both 127.0.0.1 and 127.0.0.2 as UN (Up, Normal).
sees_both_up() {
  local line up1=false up2=false
  while read -r line; do
    if [[ "$line" =~ ^UN\ +127\.0\.0\.1\  ]]; then up1=true; fi
    if [[ "$line" =~ ^UN\ +127\.0\.0\.2\  ]]; then up2=true; fi
  done <"$1"
  [[ "$up1" == true && "$up2" == true ]]
}

print_log_tails() {
  local base="$1" node f
  shift
  for node in "$@"; do
    for f in "$base/$node/logs/stdout.log" "$base/$node/logs/system.log"; do
      [[ -f "$f" ]] || continue
      printf '\n===== last 40 lines of %s =====\n' "$f" >&2
      tail -n 40 "$f" >&2
    done
  done
  printf '\n' >&2
}

stop_nodes() {
  local base="$1" node pid pids deadline
  for node in "${ALL_NODES[@]}"; do
    pids=()
    if pid="$(running_pid "$base" "$node")"; then pids+=("$pid"); fi
    for pid in $(stray_pids "$base" "$node"); do [[ " ${pids[*]-} " == *" $pid "* ]] || pids+=("$pid"); done
    for pid in "${pids[@]}"; do
      # SIGCONT first: a test may have paused the node with SIGSTOP. SIGKILL is fine for test data.
      kill -CONT "$pid" 2>/dev/null || true
      kill -KILL "$pid" 2>/dev/null || true
      log "killed $node (pid $pid)"
    done
    # Wait until the processes are really gone, so that the ports are free for the next start.
    deadline=$((SECONDS + 20))
    for pid in "${pids[@]}"; do
      until process_gone "$pid"; do
        ((SECONDS < deadline)) || { log "WARNING: $node (pid $pid) still there 20 s after SIGKILL"; break; }
        sleep 0.1
      done
    done
    rm -f "$(pid_file "$base" "$node")"
  done
}

# --- commands ------------------------------------------------------------------------------------

usage() {
  cat <<EOF
Usage: $(basename "$0") COMMAND [OPTIONS]

Fetches and runs a real, throwaway Apache Cassandra $CASSANDRA_VERSION on this machine (one JVM per node).

Commands:
  fetch                     Download cassandra-all $CASSANDRA_VERSION and its dependencies with Maven into
                            $LIB_DIR
                            (skipped when already complete).
  start [OPTIONS]           Start the nodes (fetching first if needed) and wait until they serve CQL
                            (and, for two-dc, see each other UP).
      --topology T          single (default): dc1 = 127.0.0.1 in datacenter dc1
                            two-dc: dc1 = 127.0.0.1 in dc1 and dc2 = 127.0.0.2 in dc2
      --base-dir DIR        run directory (default $DEFAULT_BASE_DIR)
      --heap SIZE           heap of each node (default 256M)
      --timeout SECONDS     give up waiting after this long (default 120), printing the node logs
      --keep-data           keep the previous data directories (default: start empty)
  stop [--base-dir DIR]     Kill the nodes (SIGCONT, then SIGKILL) and remove their pid files. Idempotent.
  status [--base-dir DIR]   Print each node, its pid, address, datacenter and state.
                            Exit status 0 when every node of the topology runs, 3 otherwise.
  pid NODE [--base-dir DIR] Print the pid of node dc1 or dc2 (exit status 1 when it does not run).
  env [--base-dir DIR]      Print shell-sourceable lines for the clients:
                            IDGEN_CASSANDRA_CONTACT_POINTS, IDGEN_CASSANDRA_LOCAL_DATACENTER,
                            IDGEN_CASSANDRA_TOPOLOGY, IDGEN_CASSANDRA_BASE_DIR
                            (e.g.  set -a; source <($(basename "$0") env); set +a)
  nodetool NODE [--base-dir DIR] [ARGS...]
                            Run nodetool against node dc1 or dc2 (default ARGS: status).
  help, --help, -h          This text.

Environment:
  IDGEN_CASSANDRA_HOME      cache root (default \$HOME/.cache/idgen-cassandra): jars in
                            <root>/$CASSANDRA_VERSION/lib, default run directory <root>/run
  MVN                       Maven command for fetch (default: ./mvnw at the repository root, else mvn)
  JAVA_HOME                 Java 11 or 17 to run Cassandra with (default: java on the PATH)

Ports: CQL $CQL_PORT and storage $STORAGE_PORT on each node's address; JMX 7199 (dc1) and 7299 (dc2) on 127.0.0.1.
EOF
}

cmd_start() {
  local topology=single base="$DEFAULT_BASE_DIR" heap=256M timeout=120 keep_data=false
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --topology) topology="${2:?--topology needs a value}"; shift 2 ;;
      --base-dir) base="${2:?--base-dir needs a value}"; shift 2 ;;
      --heap) heap="${2:?--heap needs a value}"; shift 2 ;;
      --timeout) timeout="${2:?--timeout needs a value}"; shift 2 ;;
      --keep-data) keep_data=true; shift ;;
      *) die "start: unknown option '$1' (see --help)" ;;
    esac
  done
  local nodes node pid
  set_topology_nodes "$topology"
  nodes=("${NODES[@]}")
  [[ "$heap" =~ ^[0-9]+[kKmMgG]$ ]] || die "--heap must look like 256M or 1G"
  [[ "$timeout" =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"
  mkdir -p "$base"
  base="$(cd "$base" && pwd -P)"

  for node in "${ALL_NODES[@]}"; do
    if pid="$(running_pid "$base" "$node")"; then
      die "node $node is already running (pid $pid) in $base: run '$0 stop --base-dir $base' first"
    fi
  done
  # Refuse to start when someone else holds our ports: waiting for "port 9042 open" would otherwise
  # succeed against the wrong server.
  for node in "${nodes[@]}"; do
    local addr port
    addr="$(node_address "$node")"
    for port in "$CQL_PORT" "$STORAGE_PORT"; do
      ! port_open "$addr" "$port" || die "$addr:$port is already in use (another Cassandra running? see '$0 status' or pgrep -af CassandraDaemon)"
    done
    ! port_open 127.0.0.1 "$(node_jmx_port "$node")" || die "JMX port 127.0.0.1:$(node_jmx_port "$node") is already in use"
  done

  lib_complete || cmd_fetch

  for node in "${ALL_NODES[@]}"; do rm -f "$(pid_file "$base" "$node")"; done
  echo "$topology" >"$base/topology"
  write_tool_logback "$base"
  for node in "${nodes[@]}"; do
    local dir="$base/$node"
    if [[ "$keep_data" != true ]]; then rm -rf "$dir/data"; fi
    rm -rf "$dir/logs"   # fresh logs: looking for "listening for CQL clients" must not find the last run
    mkdir -p "$dir/conf" "$dir/data" "$dir/logs" "$dir/triggers"
    write_node_config "$base" "$node" "$topology"
  done

  # If we are interrupted while waiting, do not leave half-started nodes behind.
  trap 'log "interrupted: stopping the nodes"; stop_nodes "$base"; exit 130' INT TERM

  local t0
  t0="$(now_ms)"
  local -A launched=()
  for node in "${nodes[@]}"; do
    launch_node "$base" "$node" "$heap"
    launched[$node]="$(<"$(pid_file "$base" "$node")")"
  done

  local deadline=$((t0 + timeout * 1000)) all_cql all_up out
  local -A cql_seen=()
  while true; do
    for node in "${nodes[@]}"; do
      if ! pid_alive "${launched[$node]}"; then
        log "node $node died during start (pid ${launched[$node]})"
        print_log_tails "$base" "${nodes[@]}"
        stop_nodes "$base"
        trap - INT TERM
        die "start failed: node $node died"
      fi
    done

    all_cql=true
    for node in "${nodes[@]}"; do
      if [[ -z "${cql_seen[$node]:-}" ]]; then
        if port_open "$(node_address "$node")" "$CQL_PORT"; then
          cql_seen[$node]=1
          log "$node accepts CQL on $(node_address "$node"):$CQL_PORT after $(( ($(now_ms) - t0) )) ms"
        else
          all_cql=false
        fi
      fi
    done

    if [[ "$all_cql" == true ]]; then
      if [[ "$topology" == single ]]; then break; fi
      # two-dc: every node must see every node Up/Normal. Only checked once CQL is up, because each
      # nodetool run is a JVM start that competes with the nodes for the 2 cores; the two runs go in
      # parallel (one per core).
      all_up=true
      for node in "${nodes[@]}"; do
        nodetool_raw "$base" "$node" status >"$base/tools/status-$node.out" 2>/dev/null &
      done
      wait
      for node in "${nodes[@]}"; do
        sees_both_up "$base/tools/status-$node.out" || all_up=false
      done
      if [[ "$all_up" == true ]]; then break; fi
    fi

    if (($(now_ms) >= deadline)); then
      log "timed out after ${timeout} s waiting for the nodes"
      print_log_tails "$base" "${nodes[@]}"
      stop_nodes "$base"
      trap - INT TERM
      die "start failed: timeout"
    fi
    sleep 0.5
  done
  trap - INT TERM

  local elapsed=$(( $(now_ms) - t0 ))
  log "Cassandra $CASSANDRA_VERSION ($topology) is up in $((elapsed / 1000)).$(printf '%03d' $((elapsed % 1000))) s; base dir $base"
  cmd_env --base-dir "$base" >&2
}

cmd_stop() {
  local base="$DEFAULT_BASE_DIR"
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --base-dir) base="${2:?--base-dir needs a value}"; shift 2 ;;
      *) die "stop: unknown option '$1'" ;;
    esac
  done
  [[ -d "$base" ]] || { log "nothing to stop in $base"; return 0; }
  base="$(cd "$base" && pwd -P)"
  stop_nodes "$base"
  log "stopped (base dir $base)"
}

cmd_status() {
  local base="$DEFAULT_BASE_DIR"
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --base-dir) base="${2:?--base-dir needs a value}"; shift 2 ;;
      *) die "status: unknown option '$1'" ;;
    esac
  done
  [[ -d "$base" ]] && base="$(cd "$base" && pwd -P)"
  local topology nodes node pid state rc=0
  topology="$(read_topology "$base" 2>/dev/null || true)"
  if [[ -z "$topology" ]]; then
    echo "no cluster started in $base"
    return 3
  fi
  set_topology_nodes "$topology"
  nodes=("${NODES[@]}")
  echo "topology: $topology   base dir: $base"
  printf '%-5s %-8s %-10s %-11s %s\n' NODE PID ADDRESS DATACENTER STATE
  for node in "${nodes[@]}"; do
    if pid="$(running_pid "$base" "$node")"; then
      state=running
      [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" == T* ]] && state="running (paused: SIGSTOPped)"
    else
      pid=-; state=stopped; rc=3
    fi
    printf '%-5s %-8s %-10s %-11s %s\n' "$node" "$pid" "$(node_address "$node")" "$node" "$state"
  done
  return "$rc"
}

cmd_pid() {
  local base="$DEFAULT_BASE_DIR" node=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --base-dir) base="${2:?--base-dir needs a value}"; shift 2 ;;
      dc1|dc2) node="$1"; shift ;;
      *) die "pid: expected NODE dc1 or dc2, got '$1'" ;;
    esac
  done
  [[ -n "$node" ]] || die "pid: which node? (dc1 or dc2)"
  [[ -d "$base" ]] && base="$(cd "$base" && pwd -P)"
  local pid
  pid="$(running_pid "$base" "$node")" || die "node $node is not running (base dir $base)"
  echo "$pid"
}

cmd_env() {
  local base="$DEFAULT_BASE_DIR"
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --base-dir) base="${2:?--base-dir needs a value}"; shift 2 ;;
      *) die "env: unknown option '$1'" ;;
    esac
  done
  [[ -d "$base" ]] && base="$(cd "$base" && pwd -P)"
  local topology nodes node points=()
  topology="$(read_topology "$base" 2>/dev/null || true)"
  topology="${topology:-single}"
  set_topology_nodes "$topology"
  nodes=("${NODES[@]}")
  for node in "${nodes[@]}"; do points+=("$(node_address "$node"):$CQL_PORT"); done
  local IFS=,
  echo "IDGEN_CASSANDRA_CONTACT_POINTS=${points[*]}"
  echo "IDGEN_CASSANDRA_LOCAL_DATACENTER=dc1"
  echo "IDGEN_CASSANDRA_TOPOLOGY=$topology"
  echo "IDGEN_CASSANDRA_BASE_DIR=$base"
}

cmd_nodetool() {
  local base="$DEFAULT_BASE_DIR" node="${1:-}"
  [[ "$node" == dc1 || "$node" == dc2 ]] || die "nodetool: expected NODE dc1 or dc2 first"
  shift
  if [[ "${1:-}" == --base-dir ]]; then base="${2:?--base-dir needs a value}"; shift 2; fi
  lib_complete || die "Cassandra jars not fetched yet: run '$0 fetch'"
  mkdir -p "$base"
  base="$(cd "$base" && pwd -P)"
  if [[ $# -eq 0 ]]; then set -- status; fi
  nodetool_raw "$base" "$node" "$@"
}

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    fetch) cmd_fetch "$@" ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    status) cmd_status "$@" ;;
    pid) cmd_pid "$@" ;;
    env) cmd_env "$@" ;;
    nodetool) cmd_nodetool "$@" ;;
    help|--help|-h) usage ;;
    "") usage >&2; exit 2 ;;
    *) printf 'unknown command: %s\n\n' "$cmd" >&2; usage >&2; exit 2 ;;
  esac
}

main "$@"
