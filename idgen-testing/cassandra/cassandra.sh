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
#   single    : dc1 = 127.0.0.1 (datacenter dc1, rack rack1)
#   two-dc    : dc1 = 127.0.0.1 (dc1) + dc2 = 127.0.0.2 (dc2), GossipingPropertyFileSnitch, both seeds
#   netns-3x3 : dc1a dc1b dc1c = 10.77.0.11-13 (dc1) + dc2a dc2b dc2c = 10.77.0.21-23 (dc2), each node in its
#               own network namespace (netns.sh beside this file: veth pairs to a bridge); all seeds.
#               Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN); for fault injection with the network
#   netns-3x1 : dc1a dc1b dc1c (dc1) + dc2a (dc2), the same with less memory
#
# Every node listens on its own address with the standard ports (CQL 9042, storage 7000). On loopback only
# the JMX port differs, because Cassandra's local-only JMX always binds 127.0.0.1; in a namespace every
# node has a loopback of its own, so JMX is 127.0.0.1:7199 there (nodetool runs inside the namespace).
#
# The data is test data: nodes start with an empty data directory (unless --keep-data), run with
# "unsafe" fast-start settings and are stopped with SIGKILL.
#
# Only bash, coreutils, procps, util-linux (flock, setsid), java and mvn are used.

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
# start --for-build writes the build that owns the cluster here (process_token of its pid).
readonly BUILD_FILE="build"
# The fixed nodes of the topologies, then the spares of a netns cluster: nodes that `join` adds to a running
# cluster (bootstrapped into dc1 or dc2, a replacement for a dead node, or the nodes of a third datacenter).
readonly ALL_NODES=(dc1 dc2 dc1a dc1b dc1c dc2a dc2b dc2c dc1d dc1e dc2d dc2e dc3a dc3b dc3c)
readonly SPARE_NODES=(dc1d dc1e dc2d dc2e dc3a dc3b dc3c)
readonly NETNS_SH="$SCRIPT_DIR/netns.sh"

readonly CQL_PORT=9042
readonly STORAGE_PORT=7000
readonly CLUSTER_NAME="idgen-test"

# --- node table: a node is named after its datacenter (dc1, dc2), plus a letter in a netns topology ---

is_node() { [[ " ${ALL_NODES[*]} " == *" $1 "* ]]; }
is_netns_node() { [[ "$1" =~ ^dc[12][a-e]$ || "$1" =~ ^dc3[abc]$ ]]; }
is_spare() { [[ " ${SPARE_NODES[*]} " == *" $1 "* ]]; }
node_address() {
  case "$1" in
    dc1) echo 127.0.0.1 ;; dc2) echo 127.0.0.2 ;;
    dc1a) echo 10.77.0.11 ;; dc1b) echo 10.77.0.12 ;; dc1c) echo 10.77.0.13 ;;
    dc2a) echo 10.77.0.21 ;; dc2b) echo 10.77.0.22 ;; dc2c) echo 10.77.0.23 ;;
    dc1d) echo 10.77.0.14 ;; dc1e) echo 10.77.0.15 ;; dc2d) echo 10.77.0.24 ;; dc2e) echo 10.77.0.25 ;;
    dc3a) echo 10.77.0.31 ;; dc3b) echo 10.77.0.32 ;; dc3c) echo 10.77.0.33 ;;
    *) die "unknown node '$1' (expected one of ${ALL_NODES[*]})" ;;
  esac
}
node_dc() { is_node "$1" || die "unknown node '$1'"; echo "${1:0:3}"; }
# The network namespace of a node (netns.sh's idgen-NAME), or nothing for a node on loopback.
node_ns() { if is_netns_node "$1"; then echo "idgen-$1"; fi; }
# Local JMX (used by nodetool) binds 127.0.0.1 whatever listen_address is, so each node on loopback needs
# its own port; a node in a namespace has its own loopback.
node_jmx_port() { case "$1" in dc1) echo 7199 ;; dc2) echo 7299 ;; *) is_node "$1" || die "unknown node '$1'"; echo 7199 ;; esac; }
# num_tokens: 1 with an explicit, distinct token per node: no token allocation work at startup and a
# deterministic ring. (With 3 replicas per datacenter and 3 nodes each, every node holds every row.)
node_token() {
  case "$1" in
    dc1) echo -9223372036854775808 ;; dc2) echo 0 ;;
    dc1a) echo -9223372036854775808 ;; dc1b) echo -3074457345618258603 ;; dc1c) echo 3074457345618258602 ;;
    dc2a) echo -9223372036854775708 ;; dc2b) echo -3074457345618258503 ;; dc2c) echo 3074457345618258702 ;;
    # Spares: a joining node of dc1 or dc2 takes a token between its datacenter's (a share of their ranges
    # streams to it); dc3's tokens are dc1's shifted by 200, as dc2's are by 100.
    dc1d) echo 6148914691236517204 ;; dc1e) echo -6148914691236517206 ;;
    dc2d) echo 6148914691236517304 ;; dc2e) echo -6148914691236517106 ;;
    dc3a) echo -9223372036854775608 ;; dc3b) echo -3074457345618258403 ;; dc3c) echo 3074457345618258802 ;;
    *) die "unknown node '$1'" ;;
  esac
}

# Sets the array NODES to the nodes of topology $1. (Not a $(...) function: die must end the script.)
set_topology_nodes() {
  case "$1" in
    single) NODES=(dc1) ;;
    two-dc) NODES=(dc1 dc2) ;;
    netns-3x3) NODES=(dc1a dc1b dc1c dc2a dc2b dc2c) ;;
    netns-3x1) NODES=(dc1a dc1b dc1c dc2a) ;;
    *) die "unknown topology '$1' (expected single, two-dc, netns-3x3 or netns-3x1)" ;;
  esac
}
is_netns_topology() { [[ "$1" == netns-* ]]; }

# Sets the array NODES to the members of the cluster in base dir $1: the nodes `start` started, plus those
# `join` added, minus those decommissioned or replaced by another (the file members); without that file (a
# run of an older launcher), the nodes of the topology last started there.
set_member_nodes() {
  local base="$1" f="$1/members" node
  if [[ -f "$f" ]]; then
    NODES=()
    while read -r node; do
      if [[ -n "$node" ]] && is_node "$node"; then NODES+=("$node"); fi
    done <"$f"
    return 0
  fi
  set_topology_nodes "$(read_topology "$base")"
}
is_member() {
  local base="$1" node="$2"
  set_member_nodes "$base"
  [[ " ${NODES[*]} " == *" $node "* ]]
}
# Adds node $2 to the members of base $1 (last; where it was if it is one), or with $3 = remove takes it out.
update_members() {
  local base="$1" node="$2" what="${3:-add}" kept=() n
  set_member_nodes "$base"
  for n in "${NODES[@]}"; do [[ "$n" == "$node" && "$what" == remove ]] || kept+=("$n"); done
  if [[ "$what" == add && " ${NODES[*]} " != *" $node "* ]]; then kept+=("$node"); fi
  printf '%s\n' "${kept[@]}" >"$base/members.tmp"
  mv "$base/members.tmp" "$base/members"
}
# The seeds of topology $1: every node. A node outside its own seed list gives up ("Unable to gossip with
# any peers") when no seed answers within the ring delay, which the fast start shortens to 1 s; a seed goes
# on. So every node can start first, and they find each other without a start order.
topology_seeds() {
  local node seeds=()
  set_topology_nodes "$1"
  for node in "${NODES[@]}"; do seeds+=("$(node_address "$node")"); done
  echo "${seeds[*]}"
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
  case "$topology" in single|two-dc|netns-3x3|netns-3x1) echo "$topology" ;; *) echo "" ;; esac
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

# $4, how the node enters the ring: fixed (default: a node of the topology's layout, which all start
# together), bootstrap (a spare that joins a running datacenter and streams its share of the data), no-bootstrap
# (a spare of a new datacenter: nothing to stream until the keyspaces replicate there, then `nodetool rebuild`),
# replace (a fresh node that takes a dead node's tokens and streams its data: no token of its own).
write_node_config() {
  local base="$1" node="$2" topology="$3" mode="${4:-fixed}" dir addr seeds="" seed
  dir="$base/$node"
  local ring
  case "$mode" in
    fixed) ring="# One token per node, chosen explicitly: no token allocation at startup, a deterministic ring.
num_tokens: 1
initial_token: '$(node_token "$node")'
# Every node is a fresh (or its own old) ring member; nothing to stream from anyone.
auto_bootstrap: false" ;;
    bootstrap) ring="# A spare joining a running datacenter: its own token, and it streams its share of the data.
num_tokens: 1
initial_token: '$(node_token "$node")'
auto_bootstrap: true" ;;
    no-bootstrap) ring="# A spare of a new datacenter: no keyspace replicates there yet (nodetool rebuild streams later).
num_tokens: 1
initial_token: '$(node_token "$node")'
auto_bootstrap: false" ;;
    replace) ring="# A replacement (-Dcassandra.replace_address_first_boot): it takes the dead node's tokens and streams.
num_tokens: 1
auto_bootstrap: true" ;;
    *) die "write_node_config: mode '$mode'" ;;
  esac
  addr="$(node_address "$node")"
  for seed in $(topology_seeds "$topology"); do
    # A node that joins later is not its own seed: a seed never bootstraps (nor replaces a node).
    if [[ "$mode" != fixed && "$seed" == "$addr" ]]; then continue; fi
    seeds+="${seeds:+,}$seed:$STORAGE_PORT"
  done
  # Nodes in namespaces are killed with SIGKILL by the fault tests. In periodic mode a node acknowledges writes
  # before its commit log is synced, and its replay after a crash stops at the last sync marker (CASSANDRA-13987):
  # a killed node forgets up to commitlog_sync_period of acknowledged writes. With a datacenter of one replica
  # (netns-3x1's dc2) that forgets acknowledged compare-and-sets on the pools, and the same block is handed
  # out twice; the long chaos run found exactly that. So these nodes acknowledge only synced writes (batch);
  # the loopback nodes are never killed and keep the faster periodic mode.
  local commitlog_sync="commitlog_sync: periodic
commitlog_sync_period: 10000ms"
  if is_netns_node "$node"; then commitlog_sync="commitlog_sync: batch"; fi
  # IDGEN_CASSANDRA_COMMITLOG_SYNC=periodic|batch overrides both (the durability check runs each mode).
  case "${IDGEN_CASSANDRA_COMMITLOG_SYNC:-}" in
    "") ;;
    periodic) commitlog_sync="commitlog_sync: periodic
commitlog_sync_period: 10000ms" ;;
    batch) commitlog_sync="commitlog_sync: batch" ;;
    *) die "IDGEN_CASSANDRA_COMMITLOG_SYNC: '$IDGEN_CASSANDRA_COMMITLOG_SYNC' (expected: periodic or batch)" ;;
  esac

  # Only keys that Cassandra 5.0 knows: it refuses to start on any unknown key.
  cat >"$dir/conf/cassandra.yaml" <<EOF
# Generated by idgen-testing/cassandra/cassandra.sh for node $node ($topology). Test data only.
cluster_name: '$CLUSTER_NAME'
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
$ring

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

$commitlog_sync
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
dc=$(node_dc "$node")
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
  local base="$1" node="$2" heap="$3" dir jamm pid ns
  dir="$base/$node"
  ns="$(node_ns "$node")"
  # In a namespace, `ip netns exec` execs java: the pid below is the JVM's, as on loopback.
  local prefix=()
  if [[ -n "$ns" ]]; then prefix=(ip netns exec "$ns"); fi
  # A faked wall clock (the chaos harness's clock faults): with IDGEN_CASSANDRA_FAKETIME_DIR set and a file
  # named after the node in it, the node runs with IDGEN_WALLCLOCK_LIB (idgen's wall-clock shim, which the
  # harness builds) preloaded, which adds that file's offset ("+600", "-0.5"), re-read every second, to the
  # real-time clock only: the monotonic clock, sleeps and timed waits stay the kernel's.
  local ftfile="${IDGEN_CASSANDRA_FAKETIME_DIR:-/nonexistent}/$node"
  if [[ -f "$ftfile" ]]; then
    if [[ ! -r "${IDGEN_WALLCLOCK_LIB:-}" ]]; then
      die "$ftfile asks for a fake wall clock, but IDGEN_WALLCLOCK_LIB ('${IDGEN_WALLCLOCK_LIB:-}') is not a readable library"
    fi
    prefix+=(env "LD_PRELOAD=$IDGEN_WALLCLOCK_LIB" "IDGEN_WALLCLOCK_FILE=$ftfile")
  fi
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
    # 30 s, create the default superuser at once.
    -Dcassandra.skip_wait_for_gossip_to_settle=0
    -Dcassandra.ring_delay_ms=1000
    -Dcassandra.superuser_setup_delay_ms=0
    # With a 1 s ring delay, gossip would also drop a peer that has not announced its tokens yet after
    # only 1 s (fat-client timeout = quarantine delay / 2 = ring delay): when both nodes start together,
    # dc2 then evicts dc1 (and empties its seed list) before dc1 reaches NORMAL. Restore a sane timeout.
    -Dcassandra.gossip_quarantine_delay_ms=60000
  )
  # No flush of the system keyspaces on schema changes (unsafesystem): faster, but a node killed with
  # kill -9 then comes back without the tables created since its start, and its commit log replay skips
  # their rows ("Skipped mutations from unknown CF"): a loss no real node has. Nodes of a netns topology
  # are killed on purpose (the chaos harness's cassandra-kill), so they keep the safe default.
  if [[ -z "$ns" ]]; then opts+=(-Dcassandra.unsafesystem=true); fi
  # Extra JVM options for every node (words, e.g. "-XX:ActiveProcessorCount=1").
  if [[ -n "${IDGEN_CASSANDRA_JVM_OPTS:-}" ]]; then
    local extra
    read -r -a extra <<<"$IDGEN_CASSANDRA_JVM_OPTS"
    opts+=("${extra[@]}")
  fi
  # Started from a subshell that exits right away, so the node is re-parented and reaped by init when it
  # dies (no zombie that still looks alive). nohup + no terminal streams: the node survives the caller's
  # exit, and a caller reading our stdout/stderr through pipes is not kept waiting for EOF. Nor does it keep
  # fd 9, the lock of start --for-build.
  (
    cd "$dir"
    nohup "${prefix[@]}" "$(java_bin)" "${opts[@]}" -cp "$dir/conf:$LIB_DIR/*" org.apache.cassandra.service.CassandraDaemon \
      </dev/null >"$dir/logs/stdout.log" 2>&1 9>&- &
    echo $! >"$dir/pid"
  )
  pid="$(<"$dir/pid")"
  log "launched $node (pid $pid) on $(node_address "$node")${ns:+ in namespace $ns}, datacenter $(node_dc "$node"), logs in $dir/logs$([[ -f "$ftfile" ]] && echo ", wall clock faked by $ftfile")"
}

nodetool_raw() {
  local base="$1" node="$2"
  shift 2
  [[ -f "$base/tools/logback.xml" ]] || write_tool_logback "$base"
  local ns prefix=()
  ns="$(node_ns "$node")"
  if [[ -n "$ns" ]]; then prefix=(ip netns exec "$ns"); fi
  # A short-lived client JVM: small heap, C1 only, so it starts fast and stays out of the nodes' way.
  "${prefix[@]}" "$(java_bin)" -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "${JPMS_OPTS[@]}" \
    -Dlogback.configurationFile="$base/tools/logback.xml" -cp "$LIB_DIR/*" \
    org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$(node_jmx_port "$node")" "$@"
}

# True when a `nodetool status` output (file $1) lists every address $2... as UN (Up, Normal).
sees_all_up() {
  local file="$1" addr
  shift
  for addr in "$@"; do
    grep -qE "^UN +${addr//./\\.} " "$file" || return 1
  done
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

# Kills nodes $2... (default: every node) of base dir $1, and waits until they are gone.
stop_nodes() {
  local base="$1" node pid pids deadline
  shift
  local targets=("$@")
  ((${#targets[@]} > 0)) || targets=("${ALL_NODES[@]}")
  for node in "${targets[@]}"; do
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
                            (and, with more than one node, see each other UP).
      --topology T          single (default): dc1 = 127.0.0.1 in datacenter dc1
                            two-dc: dc1 = 127.0.0.1 in dc1 and dc2 = 127.0.0.2 in dc2
                            netns-3x3: dc1a dc1b dc1c = 10.77.0.11-13 in dc1, dc2a dc2b dc2c = 10.77.0.21-23
                              in dc2, each in its own network namespace idgen-NODE (netns.sh; needs root).
                              Leftovers of an earlier run (namespaces, veths, bridge) are removed first
                            netns-3x1: dc1a dc1b dc1c in dc1, dc2a in dc2 (less memory)
      --base-dir DIR        run directory (default $DEFAULT_BASE_DIR)
      --heap SIZE           heap of each node (default 512M)
      --timeout SECONDS     give up waiting after this long (default 120; 300 for netns-*), printing the
                            node logs
      --keep-data           keep the previous data directories (default: start empty)
      --for-build PID       share the cluster with the rest of a build, PID (its Maven JVM): reuse it when
                            that build started it already (the integration tests of each module do this),
                            stop one left by a build that has ended, and stop it when PID ends
                            (single, two-dc)
  stop [--base-dir DIR]     Kill the nodes (SIGCONT, then SIGKILL) and remove their pid files; for a netns
                            topology also every idgen namespace, veth and the bridge. Idempotent.
  kill NODE [--base-dir DIR]
                            SIGKILL one node (kill -9: its commit log is replayed when it starts again).
  start-node NODE [--base-dir DIR] [--timeout SECONDS]
                            Start one node of the running topology again on its data (after kill), and
                            wait until it serves CQL (default timeout 180 s).
  status [--base-dir DIR]   Print each node, its pid, address, datacenter and state.
                            Exit status 0 when every node of the topology runs, 3 otherwise.
  pid NODE [--base-dir DIR] Print the pid of a node (exit status 1 when it does not run).
  env [--base-dir DIR]      Print shell-sourceable lines for the clients:
                            IDGEN_CASSANDRA_CONTACT_POINTS, IDGEN_CASSANDRA_CONTACT_POINTS_DC1,
                            IDGEN_CASSANDRA_CONTACT_POINTS_DC2, IDGEN_CASSANDRA_LOCAL_DATACENTER,
                            IDGEN_CASSANDRA_TOPOLOGY, IDGEN_CASSANDRA_BASE_DIR
                            (e.g.  set -a; source <($(basename "$0") env); set +a)
  nodetool NODE [--base-dir DIR] [ARGS...]
                            Run nodetool against a node (default ARGS: status); inside its namespace
                            for a netns topology.
  join NODE [--base-dir DIR] [--timeout SECONDS] [--no-bootstrap] [--replace DEAD] [--heap SIZE]
                            netns topologies: start a spare node (dc1d dc1e in dc1, dc2d dc2e in dc2, dc3a
                            dc3b dc3c in a third datacenter dc3) in a namespace of its own and add it to the
                            running cluster; wait until it serves CQL and a peer sees it UN (default timeout
                            600 s). By default it bootstraps (auto_bootstrap: true, its own token: it streams
                            its share of the data). --no-bootstrap: for a node of a new datacenter (no keyspace
                            replicates there yet; after ALTER KEYSPACE, 'nodetool NODE rebuild -- dc1').
                            --replace DEAD: a fresh node takes the place of the dead (killed) member DEAD
                            (-Dcassandra.replace_address_first_boot, DEAD's tokens, its data streamed from the
                            other replicas); 'join DEAD --replace DEAD' replaces it at its own address.
  decommission NODE [--base-dir DIR] [--timeout SECONDS]
                            netns topologies: nodetool decommission (the node streams its ranges away and
                            leaves the ring; default timeout 600 s), then stop it and remove its namespace.
  help, --help, -h          This text.

Nodes: dc1, dc2 (single, two-dc); dc1a dc1b dc1c dc2a dc2b dc2c (netns-*); spares for join: dc1d (10.77.0.14),
dc1e (.15), dc2d (.24), dc2e (.25), dc3a dc3b dc3c (.31-.33). 'status' lists the members: the topology's
nodes plus those joined, minus those decommissioned or replaced. Repair and cleanup: 'nodetool NODE repair
-full KEYSPACE', 'nodetool NODE cleanup'.

Environment:
  IDGEN_CASSANDRA_HOME      cache root (default \$HOME/.cache/idgen-cassandra): jars in
                            <root>/$CASSANDRA_VERSION/lib, default run directory <root>/run
  MVN                       Maven command for fetch (default: ./mvnw at the repository root, else mvn)
  JAVA_HOME                 Java 11 or 17 to run Cassandra with (default: java on the PATH)
  IDGEN_CASSANDRA_FAKETIME_DIR
                            a node with a file of its name here runs on a fake wall clock (IDGEN_WALLCLOCK_LIB)
                            with that file's wall-clock offset, e.g. +600 or -0.5 (the clock fault tests)

Ports: CQL $CQL_PORT and storage $STORAGE_PORT on each node's address; JMX 7199 (dc1) and 7299 (dc2) on
127.0.0.1, and 7199 on 127.0.0.1 inside each namespace of a netns topology.
EOF
}

# Waits until every launched node serves CQL and, with more than one node in the topology, until the
# checking nodes (every node; for a netns topology the first of each datacenter) see every node UN.
# $1 base, $2 topology, $3 deadline (ms), $4 start (ms), then node=pid for each launched node.
# Returns 0 when up, 1 on timeout, 2 if a node died.
wait_for_nodes() {
  local base="$1" topology="$2" deadline="$3" t0="$4"
  shift 4
  local -A pids=()
  local kv node
  for kv in "$@"; do pids[${kv%%=*}]="${kv#*=}"; done
  local nodes=("${!pids[@]}")
  set_topology_nodes "$topology"
  local all_nodes=("${NODES[@]}")
  local checkers=() addrs=()
  for node in "${all_nodes[@]}"; do addrs+=("$(node_address "$node")"); done
  if is_netns_topology "$topology"; then
    # nodetool is a JVM start: on 2 cores, one per datacenter is what a poll can afford.
    checkers=(dc1a dc2a)
  else
    checkers=("${all_nodes[@]}")
  fi
  local -A cql_seen=()
  local all_cql all_up
  while true; do
    for node in "${nodes[@]}"; do
      if ! pid_alive "${pids[$node]}"; then
        log "node $node died during start (pid ${pids[$node]})"
        return 2
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
      if ((${#all_nodes[@]} == 1)); then return 0; fi
      # Only checked once CQL is up, because each nodetool run is a JVM start that competes with the
      # nodes for the cores; the runs go in parallel.
      all_up=true
      for node in "${checkers[@]}"; do
        nodetool_raw "$base" "$node" status >"$base/tools/status-$node.out" 2>/dev/null &
      done
      wait
      for node in "${checkers[@]}"; do
        sees_all_up "$base/tools/status-$node.out" "${addrs[@]}" || all_up=false
      done
      if [[ "$all_up" == true ]]; then return 0; fi
    fi
    if (($(now_ms) >= deadline)); then
      return 1
    fi
    sleep 0.5
  done
}

# Removes what the cluster of base $1 (topology $2) runs on: its nodes, and for netns its namespaces.
take_down() {
  local base="$1" topology="$2"
  stop_nodes "$base"
  if is_netns_topology "$topology"; then bash "$NETNS_SH" down; fi
}

cmd_start() {
  local topology=single base="$DEFAULT_BASE_DIR" heap=512M timeout="" keep_data=false build_pid="" build=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --topology) topology="${2:?--topology needs a value}"; shift 2 ;;
      --base-dir) base="${2:?--base-dir needs a value}"; shift 2 ;;
      --heap) heap="${2:?--heap needs a value}"; shift 2 ;;
      --timeout) timeout="${2:?--timeout needs a value}"; shift 2 ;;
      --keep-data) keep_data=true; shift ;;
      --for-build) build_pid="${2:?--for-build needs the pid of the build}"; shift 2 ;;
      *) die "start: unknown option '$1' (see --help)" ;;
    esac
  done
  local nodes node pid
  set_topology_nodes "$topology"
  nodes=("${NODES[@]}")
  if [[ -z "$timeout" ]]; then
    if is_netns_topology "$topology"; then timeout=300; else timeout=120; fi
  fi
  [[ "$heap" =~ ^[0-9]+[kKmMgG]$ ]] || die "--heap must look like 256M or 1G"
  [[ "$timeout" =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"
  mkdir -p "$base"
  base="$(cd "$base" && pwd -P)"

  if [[ -n "$build_pid" ]]; then
    ! is_netns_topology "$topology" || die "--for-build: only for single and two-dc"
    build="$(process_token "$build_pid")" || die "--for-build $build_pid: no such process"
  fi
  if [[ -n "$build" || -f "$base/$BUILD_FILE" ]]; then
    # One start at a time per base dir, and never beside a watcher's stop (fd 9 is closed for the watcher
    # and the nodes). Also without --for-build: the cluster of a build that has just ended may still be
    # running for a second, until its watcher stops it.
    exec 9>"$base/.build.lock"
    flock -w 900 9 || die "another start or stop in $base has held its lock for 15 minutes"
    if reuse_for_build "$base" "$topology" "$build"; then
      return 0
    fi
  fi

  if is_netns_topology "$topology"; then
    # Fails with the reason (not root, ...) before anything is made; otherwise removes an earlier run's
    # leftovers and says so: namespaces, veths, the bridge, and the processes still in the namespaces (the
    # nodes and servers of a run that was killed before it could stop them).
    bash "$NETNS_SH" up || die "cannot start topology $topology (see above)"
  fi
  for node in "${ALL_NODES[@]}"; do
    if pid="$(running_pid "$base" "$node")"; then
      die "node $node is already running (pid $pid) in $base: run '$0 stop --base-dir $base' first"
    fi
  done
  if ! is_netns_topology "$topology"; then
    # Refuse to start when someone else holds our ports: waiting for "port 9042 open" would otherwise
    # succeed against the wrong server. (Fresh namespaces hold nothing.)
    for node in "${nodes[@]}"; do
      local addr port
      addr="$(node_address "$node")"
      for port in "$CQL_PORT" "$STORAGE_PORT"; do
        ! port_open "$addr" "$port" || die "$addr:$port is already in use (another Cassandra running? see '$0 status' or pgrep -af CassandraDaemon)"
      done
      ! port_open 127.0.0.1 "$(node_jmx_port "$node")" || die "JMX port 127.0.0.1:$(node_jmx_port "$node") is already in use"
    done
  fi

  if ! lib_complete; then
    (cmd_fetch) || { take_down "$base" "$topology"; die "fetch failed"; }
  fi

  for node in "${ALL_NODES[@]}"; do rm -f "$(pid_file "$base" "$node")"; done
  echo "$topology" >"$base/topology"
  printf '%s\n' "${nodes[@]}" >"$base/members"
  write_tool_logback "$base"
  # If we are interrupted from here on, do not leave half-started nodes (or namespaces) behind.
  trap 'log "interrupted: stopping the nodes"; take_down "$base" "$topology"; exit 130' INT TERM
  for node in "${nodes[@]}"; do
    local dir="$base/$node"
    if [[ "$keep_data" != true ]]; then rm -rf "$dir/data"; fi
    rm -rf "$dir/logs"   # fresh logs: looking for "listening for CQL clients" must not find the last run
    mkdir -p "$dir/conf" "$dir/data" "$dir/logs" "$dir/triggers"
    write_node_config "$base" "$node" "$topology"
    echo "$heap" >"$dir/heap"   # for start-node
    if is_netns_topology "$topology"; then
      bash "$NETNS_SH" add "$node" "$(node_address "$node")" || { take_down "$base" "$topology"; die "could not make the namespace of $node"; }
    fi
  done

  local t0 rc=0
  t0="$(now_ms)"
  local launched=()
  for node in "${nodes[@]}"; do
    launch_node "$base" "$node" "$heap"
    launched+=("$node=$(<"$(pid_file "$base" "$node")")")
  done

  wait_for_nodes "$base" "$topology" $((t0 + timeout * 1000)) "$t0" "${launched[@]}" || rc=$?
  if ((rc != 0)); then
    if ((rc == 1)); then log "timed out after ${timeout} s waiting for the nodes"; fi
    print_log_tails "$base" "${nodes[@]}"
    take_down "$base" "$topology"
    trap - INT TERM
    if ((rc == 1)); then die "start failed: timeout"; else die "start failed: a node died"; fi
  fi
  trap - INT TERM

  if [[ -n "$build" ]]; then
    echo "$build" >"$base/$BUILD_FILE"
    # The watcher outlives this script and the test JVM that ran it: its own session, no inherited output
    # (a caller waits for its output to close), and not the lock (fd 9), which the next module's start takes.
    # It also outlives the build's PATH, which may start with a temporary directory (without.sh): the
    # system's directories come first, so that it never runs a command from there.
    PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH" \
      setsid bash "$SCRIPT_DIR/cassandra.sh" stop-after-build "$build" --base-dir "$base" \
      </dev/null >"$base/build-watcher.log" 2>&1 9>&- &
    log "the cluster serves the rest of this build (pid $build_pid) and stops when it ends"
  fi

  local elapsed=$(( $(now_ms) - t0 ))
  log "Cassandra $CASSANDRA_VERSION ($topology) is up in $((elapsed / 1000)).$(printf '%03d' $((elapsed % 1000))) s; base dir $base"
  cmd_env --base-dir "$base" >&2
}

# "pid:start time" of a live process (the start time in clock ticks since boot, /proc/PID/stat field 22): a
# pid that the kernel reuses later names another process. Fails for a zombie (it has ended).
process_token() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"   # the fields after the command name, which may hold spaces: state, ppid, ...
  [[ "${stat:0:1}" != Z ]] || return 1
  echo "$1:$(echo "$stat" | awk '{print $20}')"
}

build_alive() { [[ "$(process_token "${1%%:*}" 2>/dev/null)" == "$1" ]]; }

# start: with --for-build (build = its token), reuse the cluster this build started (every node running:
# resumed if a test JVM that paused one ended without resuming it, and serving CQL); with or without it, stop
# one left by a build that has ended. Returns 0 when reused, 1 when the caller must start the cluster; dies if
# a build still running owns it.
reuse_for_build() {
  local base="$1" topology="$2" build="$3" owner="" node pid
  [[ -f "$base/$BUILD_FILE" ]] && owner="$(<"$base/$BUILD_FILE")"
  [[ -n "$owner" || -n "$build" ]] || return 1
  if [[ -n "$owner" && "$owner" == "$build" && "$(read_topology "$base")" == "$topology" ]]; then
    set_member_nodes "$base"
    local ok=true
    for node in "${NODES[@]}"; do
      pid="$(running_pid "$base" "$node")" || { ok=false; break; }
      kill -CONT "$pid" 2>/dev/null || true
      port_open "$(node_address "$node")" "$CQL_PORT" || { ok=false; break; }
    done
    if [[ "$ok" == true ]]; then
      log "Cassandra $CASSANDRA_VERSION ($topology) is up: started earlier in this build, reused; base dir $base"
      cmd_env --base-dir "$base" >&2
      return 0
    fi
    log "the cluster this build started no longer serves: starting it again"
  elif [[ -n "$owner" && "$owner" != "$build" ]] && build_alive "$owner"; then
    die "the cluster in $base serves another build still running (pid ${owner%%:*}): wait for it, or stop it ('$0 stop')"
  elif [[ -n "$owner" ]]; then
    log "stopping the cluster left in $base by a build that has ended"
  else
    return 1 # no build's cluster here: the usual checks of start apply
  fi
  take_down "$base" "$(read_topology "$base")"
  rm -f "$base/$BUILD_FILE"
  return 1
}

# stop-after-build TOKEN: waits until the build (process_token) ends, then stops the cluster if that build
# still owns it. Started by start --for-build; bounded by a day.
cmd_stop_after_build() {
  local build="${1:?stop-after-build needs the build}" base="$DEFAULT_BASE_DIR"
  shift
  if [[ "${1:-}" == --base-dir ]]; then base="${2:?--base-dir needs a value}"; fi
  local deadline=$(( $(date +%s) + 86400 ))
  while build_alive "$build" && (( $(date +%s) < deadline )); do sleep 1; done
  exec 9>"$base/.build.lock"
  flock -w 900 9 || die "stop-after-build: the lock of $base stayed held"
  if [[ -f "$base/$BUILD_FILE" && "$(<"$base/$BUILD_FILE")" == "$build" ]]; then
    take_down "$base" "$(read_topology "$base")"
    rm -f "$base/$BUILD_FILE"
    log "stopped the cluster of build $build, which has ended (base dir $base)"
  fi
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
  take_down "$base" "$(read_topology "$base")"
  rm -f "$base/$BUILD_FILE"
  log "stopped (base dir $base)"
}

# Parses "NODE [--base-dir DIR] [--timeout S]" into NODE_ARG, BASE_ARG and TIMEOUT_ARG (pid, kill, start-node).
parse_node_args() {
  local what="$1"
  shift
  NODE_ARG="" BASE_ARG="$DEFAULT_BASE_DIR" TIMEOUT_ARG=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --base-dir) BASE_ARG="${2:?--base-dir needs a value}"; shift 2 ;;
      --timeout) TIMEOUT_ARG="${2:?--timeout needs a value}"; shift 2 ;;
      *) is_node "$1" || die "$what: expected a NODE (${ALL_NODES[*]}), got '$1'"; NODE_ARG="$1"; shift ;;
    esac
  done
  [[ -n "$NODE_ARG" ]] || die "$what: which node? (${ALL_NODES[*]})"
  if [[ -d "$BASE_ARG" ]]; then BASE_ARG="$(cd "$BASE_ARG" && pwd -P)"; fi
}

cmd_kill() {
  parse_node_args kill "$@"
  running_pid "$BASE_ARG" "$NODE_ARG" >/dev/null || die "node $NODE_ARG is not running (base dir $BASE_ARG)"
  stop_nodes "$BASE_ARG" "$NODE_ARG"
}

cmd_start_node() {
  parse_node_args start-node "$@"
  local node="$NODE_ARG" base="$BASE_ARG" timeout="${TIMEOUT_ARG:-180}" topology pid heap ns
  [[ "$timeout" =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"
  topology="$(read_topology "$base")"
  [[ -n "$topology" ]] || die "no cluster started in $base"
  is_member "$base" "$node" || die "node $node is not a member of the cluster (topology $topology: ${NODES[*]})"
  if pid="$(running_pid "$base" "$node")"; then die "node $node is already running (pid $pid)"; fi
  [[ -f "$(node_yaml "$base" "$node")" ]] || die "node $node was never started in $base"
  ns="$(node_ns "$node")"
  if [[ -n "$ns" ]] && ! ip netns list | awk '{print $1}' | grep -qx "$ns"; then
    die "namespace $ns is gone: start the topology again"
  fi
  heap="$(cat "$base/$node/heap" 2>/dev/null || echo 512M)"
  local t0
  t0="$(now_ms)"
  launch_node "$base" "$node" "$heap"
  pid="$(<"$(pid_file "$base" "$node")")"
  local deadline=$((t0 + timeout * 1000))
  until port_open "$(node_address "$node")" "$CQL_PORT"; do
    pid_alive "$pid" || { print_log_tails "$base" "$node"; die "node $node died during its start"; }
    if (($(now_ms) >= deadline)); then
      print_log_tails "$base" "$node"
      stop_nodes "$base" "$node"
      die "node $node did not serve CQL within $timeout s"
    fi
    sleep 0.3
  done
  log "$node (pid $pid) accepts CQL again after $(( $(now_ms) - t0 )) ms, on its old data (commit log replayed)"
}

# --- membership changes (netns topologies) -------------------------------------------------------

# Runs "$@" (a function or a command) in the background and waits for it at most $1 seconds; kills it (and
# its children: a nodetool JVM) after that. Exit status: the command's, or 124 on the timeout.
bounded() {
  local secs="$1" pid deadline
  shift
  "$@" &
  pid=$!
  deadline=$((SECONDS + secs))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      pkill -KILL -P "$pid" 2>/dev/null || true
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      return 124
    fi
    sleep 0.5
  done
  wait "$pid"
}

# The first running member of base $1 other than $2 and $3: the node that reports how the others see a change.
running_peer() {
  local base="$1" n
  set_member_nodes "$base"
  for n in "${NODES[@]}"; do
    [[ "$n" == "${2:-}" || "$n" == "${3:-}" ]] && continue
    if running_pid "$base" "$n" >/dev/null; then echo "$n"; return 0; fi
  done
  return 1
}

# Polls `nodetool status` on $2 until it lists address $3 as UN; by deadline $4 (ms). 1 on timeout.
await_seen_up() {
  local base="$1" peer="$2" addr="$3" deadline="$4" out="$1/tools/status-join-$2.out"
  while true; do
    if bounded 60 nodetool_raw "$base" "$peer" status >"$out" 2>/dev/null && sees_all_up "$out" "$addr"; then
      return 0
    fi
    (($(now_ms) < deadline)) || return 1
    sleep 1
  done
}

cmd_join() {
  local node="" base="$DEFAULT_BASE_DIR" timeout=600 dead="" bootstrap=true heap=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --base-dir) base="${2:?--base-dir needs a value}"; shift 2 ;;
      --timeout) timeout="${2:?--timeout needs a value}"; shift 2 ;;
      --replace) dead="${2:?--replace needs the dead node}"; shift 2 ;;
      --no-bootstrap) bootstrap=false; shift ;;
      --heap) heap="${2:?--heap needs a value}"; shift 2 ;;
      *) is_node "$1" || die "join: expected a NODE (${SPARE_NODES[*]}), got '$1'"; node="$1"; shift ;;
    esac
  done
  [[ -n "$node" ]] || die "join: which node? (spares: ${SPARE_NODES[*]})"
  [[ "$timeout" =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"
  [[ -z "$heap" || "$heap" =~ ^[0-9]+[kKmMgG]$ ]] || die "--heap must look like 256M or 1G"
  [[ -d "$base" ]] || die "no cluster started in $base"
  base="$(cd "$base" && pwd -P)"
  local topology
  topology="$(read_topology "$base")"
  is_netns_topology "$topology" || die "join needs a running netns topology (found '${topology:-none}' in $base):" \
    "the loopback topologies have no spare addresses"
  lib_complete || die "Cassandra jars not fetched yet: run '$0 fetch'"
  local mode=bootstrap
  if [[ -n "$dead" ]]; then
    is_member "$base" "$dead" || die "--replace $dead: not a member of the cluster (${NODES[*]})"
    ! running_pid "$base" "$dead" >/dev/null || die "--replace $dead: it runs; a replacement takes the place of a dead node (kill it first)"
    [[ "$(node_dc "$node")" == "$(node_dc "$dead")" ]] || die "--replace: $node is in $(node_dc "$node"), $dead in $(node_dc "$dead")"
    [[ "$bootstrap" == true ]] || die "--replace streams the dead node's data: --no-bootstrap does not apply"
    if [[ "$node" != "$dead" ]]; then
      is_spare "$node" || die "join: $node is not a spare (${SPARE_NODES[*]}); '$dead --replace $dead' replaces it at its own address"
      ! is_member "$base" "$node" || die "join: $node is a member already"
    fi
    mode=replace
  else
    is_spare "$node" || die "join: $node is not a spare (${SPARE_NODES[*]}); a killed member comes back with start-node"
    ! is_member "$base" "$node" || die "join: $node is a member already"
    if [[ "$bootstrap" != true ]]; then mode=no-bootstrap; fi
  fi
  local pid
  if pid="$(running_pid "$base" "$node")"; then die "node $node is already running (pid $pid)"; fi
  local peer
  peer="$(running_peer "$base" "$node" "$dead")" || die "join: no running member to join"
  if [[ -z "$heap" ]]; then heap="$(cat "$base/$peer/heap" 2>/dev/null || echo 512M)"; fi

  local dir="$base/$node" addr
  addr="$(node_address "$node")"
  rm -rf "$dir/data" "$dir/logs"
  mkdir -p "$dir/conf" "$dir/data" "$dir/logs" "$dir/triggers"
  write_node_config "$base" "$node" "$topology" "$mode"
  echo "$heap" >"$dir/heap"
  # In-place replacement: the dead node's namespace is made again (netns.sh add replaces it).
  bash "$NETNS_SH" add "$node" "$addr" || die "could not make the namespace of $node"
  local t0 extra
  t0="$(now_ms)"
  # A joining node waits one ring delay for the ring's state before it checks that it has heard from a seed, and
  # sleeps it again for the pending ranges: the fast start's 1 s is too short for the first (measured: "Unable to
  # contact any seeds" after 2 s). A later -D wins, so this overrides launch_node's.
  # It also waits for the schema of every version its peers announce, 30 s by default: on 2 cores saturated by a
  # chaos run (the joining JVM paused 10 s at a time) that ran out twice in a row ("Could not achieve schema
  # readiness in PT30S"), and the node died before it joined. 180 s: a wait, never a skip of the check.
  extra="-Dcassandra.ring_delay_ms=5000 -Dcassandra.schema_delay_ms=180000"
  if [[ "$mode" == replace ]]; then extra+=" -Dcassandra.replace_address_first_boot=$(node_address "$dead")"; fi
  IDGEN_CASSANDRA_JVM_OPTS="${IDGEN_CASSANDRA_JVM_OPTS:-} $extra" launch_node "$base" "$node" "$heap"
  pid="$(<"$(pid_file "$base" "$node")")"
  local deadline=$((t0 + timeout * 1000)) failed=""
  # A joining node serves CQL once it has streamed its data and is NORMAL; then its peer must see it UN.
  until port_open "$addr" "$CQL_PORT"; do
    if ! pid_alive "$pid"; then failed="it died during its start"; break; fi
    if (($(now_ms) >= deadline)); then failed="it did not serve CQL within $timeout s"; break; fi
    sleep 0.5
  done
  if [[ -z "$failed" ]] && ! await_seen_up "$base" "$peer" "$addr" "$deadline"; then
    failed="$peer did not see it UN within $timeout s"
  fi
  if [[ -n "$failed" ]]; then
    print_log_tails "$base" "$node"
    stop_nodes "$base" "$node"
    if [[ "$node" != "$dead" ]]; then bash "$NETNS_SH" del "$node"; fi
    die "join of $node ($mode) failed: $failed"
  fi
  update_members "$base" "$node"
  if [[ -n "$dead" && "$dead" != "$node" ]]; then
    update_members "$base" "$dead" remove
    bash "$NETNS_SH" del "$dead"
  fi
  log "$node (pid $pid) joined $(node_dc "$node") at $addr (${mode}${dead:+ of $dead}) in $(( $(now_ms) - t0 )) ms; $peer sees it UN"
}

cmd_decommission() {
  parse_node_args decommission "$@"
  local node="$NODE_ARG" base="$BASE_ARG" timeout="${TIMEOUT_ARG:-600}" topology rc=0
  [[ "$timeout" =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"
  topology="$(read_topology "$base")"
  is_netns_topology "$topology" || die "decommission needs a running netns topology (found '${topology:-none}' in $base)"
  is_member "$base" "$node" || die "decommission: $node is not a member of the cluster (${NODES[*]})"
  running_pid "$base" "$node" >/dev/null || die "decommission: $node does not run (a dead node is replaced: join --replace)"
  local t0
  t0="$(now_ms)"
  # Blocks until the node has streamed its ranges to their new replicas and left the ring. Cassandra refuses
  # (and says why) when a datacenter would keep fewer nodes than a keyspace's replication factor there.
  bounded "$timeout" nodetool_raw "$base" "$node" decommission || rc=$?
  if ((rc != 0)); then
    if ((rc == 124)); then die "decommission of $node did not finish within $timeout s (it may still be streaming)"; fi
    die "nodetool decommission of $node failed (exit status $rc; see above)"
  fi
  # A decommissioned node's process stays up, out of the ring: stop it and remove its namespace.
  stop_nodes "$base" "$node"
  update_members "$base" "$node" remove
  bash "$NETNS_SH" del "$node"
  log "$node decommissioned in $(( $(now_ms) - t0 )) ms (left the ring, stopped, namespace removed)"
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
  set_member_nodes "$base"
  nodes=("${NODES[@]}")
  echo "topology: $topology   base dir: $base"
  printf '%-5s %-8s %-11s %-11s %s\n' NODE PID ADDRESS DATACENTER STATE
  for node in "${nodes[@]}"; do
    if pid="$(running_pid "$base" "$node")"; then
      state=running
      [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" == T* ]] && state="running (paused: SIGSTOPped)"
    else
      pid=-; state=stopped; rc=3
    fi
    printf '%-5s %-8s %-11s %-11s %s\n' "$node" "$pid" "$(node_address "$node")" "$(node_dc "$node")" "$state"
  done
  return "$rc"
}

cmd_pid() {
  parse_node_args pid "$@"
  local pid
  pid="$(running_pid "$BASE_ARG" "$NODE_ARG")" || die "node $NODE_ARG is not running (base dir $BASE_ARG)"
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
  local topology nodes node point points=() dc1=() dc2=() dc3=()
  topology="$(read_topology "$base" 2>/dev/null || true)"
  if [[ -n "$topology" ]]; then
    set_member_nodes "$base"
  else
    topology=single
    set_topology_nodes "$topology"
  fi
  nodes=("${NODES[@]}")
  for node in "${nodes[@]}"; do
    point="$(node_address "$node"):$CQL_PORT"
    points+=("$point")
    case "$(node_dc "$node")" in dc1) dc1+=("$point") ;; dc2) dc2+=("$point") ;; *) dc3+=("$point") ;; esac
  done
  local IFS=,
  echo "IDGEN_CASSANDRA_CONTACT_POINTS=${points[*]}"
  echo "IDGEN_CASSANDRA_CONTACT_POINTS_DC1=${dc1[*]-}"
  echo "IDGEN_CASSANDRA_CONTACT_POINTS_DC2=${dc2[*]-}"
  if ((${#dc3[@]} > 0)); then echo "IDGEN_CASSANDRA_CONTACT_POINTS_DC3=${dc3[*]}"; fi
  echo "IDGEN_CASSANDRA_LOCAL_DATACENTER=dc1"
  echo "IDGEN_CASSANDRA_TOPOLOGY=$topology"
  echo "IDGEN_CASSANDRA_BASE_DIR=$base"
}

cmd_nodetool() {
  local base="$DEFAULT_BASE_DIR" node="${1:-}"
  is_node "$node" || die "nodetool: expected NODE (${ALL_NODES[*]}) first"
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
    kill) cmd_kill "$@" ;;
    start-node) cmd_start_node "$@" ;;
    status) cmd_status "$@" ;;
    pid) cmd_pid "$@" ;;
    env) cmd_env "$@" ;;
    nodetool) cmd_nodetool "$@" ;;
    join) cmd_join "$@" ;;
    decommission) cmd_decommission "$@" ;;
    stop-after-build) cmd_stop_after_build "$@" ;;
    help|--help|-h) usage ;;
    "") usage >&2; exit 2 ;;
    *) printf 'unknown command: %s\n\n' "$cmd" >&2; usage >&2; exit 2 ;;
  esac
}

main "$@"
