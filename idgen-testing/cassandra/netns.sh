#!/usr/bin/env bash
#
# netns.sh - network namespaces for idgen's fault-injection runs: one namespace per Cassandra node and per
# idgen server, each with a veth pair to one bridge in the root namespace, so that faults are made with
# the network (nftables rules inside the namespaces, dropping by address) and not only with signals.
#
# Test infrastructure, not deployment. cassandra.sh uses it for `start --topology netns-3x3`; the chaos
# harness (idgen-chaos) uses it for its servers' namespaces and for the faults.
#
#   bridge           idgen-br0 in the root namespace, 10.77.0.1/24 (addresses 10.77.0.2-254 for namespaces)
#   namespace NAME   idgen-NAME: eth0 (peer of the veth idgv-NAME on the bridge) with the address given to
#                    `add`, lo up (a node's local JMX binds 127.0.0.1 of its own namespace), and the nftables
#                    table `inet idgen` with chains `input` and `output` (policy accept) for fault rules
#
# Everything it creates carries the prefix idgen- (namespaces, bridge) or idgv- (veths), and every rule
# lives inside a namespace, so `down` finds exactly what it made, and nothing is left in the root
# namespace's nftables. Traffic stays on 10.77.0.0/24 between the namespaces and the root namespace.
#
# Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), iproute2 and nftables. `check` says whether this
# machine can, and why not.

set -euo pipefail

# The names and the subnet can be changed (IDGEN_NETNS_PREFIX, IDGEN_NETNS_VETH_PREFIX, IDGEN_NETNS_NET) only
# so that the script's own tests work beside a running cluster without touching it.
readonly NS_PREFIX="${IDGEN_NETNS_PREFIX:-idgen-}"
readonly VETH_PREFIX="${IDGEN_NETNS_VETH_PREFIX:-idgv-}"
readonly NET="${IDGEN_NETNS_NET:-10.77.0}"
readonly BRIDGE="${NS_PREFIX}br0"
readonly BRIDGE_ADDRESS="$NET.1"
readonly SUBNET="$NET.0/24"
readonly PREFIX_LEN=24
readonly TABLE=idgen

log() { printf '[netns.sh] %s\n' "$*" >&2; }
die() { printf '[netns.sh] ERROR: %s\n' "$*" >&2; exit 1; }

ns_of() { echo "$NS_PREFIX$1"; }

# A namespace's short name: letters, digits and dashes, at most 10 characters (the veth idgv-NAME must fit
# the kernel's 15-character interface names).
check_name() {
  [[ "$1" =~ ^[a-z0-9][a-z0-9-]{0,9}$ ]] || die "bad namespace name '$1' (expected [a-z0-9-], at most 10 characters)"
}

# An address of the subnet: $NET.2 to $NET.254 (a namespace's), or with $2 = bridge also $NET.1 (the root
# namespace's, on the bridge).
check_address() {
  local lowest=2
  [[ "${2:-}" == bridge ]] && lowest=1
  [[ "$1" == "$NET".* && "${1##*.}" =~ ^[0-9]{1,3}$ ]] && ((${1##*.} >= lowest && ${1##*.} <= 254)) \
    || die "bad address '$1' (expected $NET.$lowest to $NET.254, in $SUBNET)"
}

# --- check ---------------------------------------------------------------------------------------

# Why this machine cannot make the namespaces, or nothing. Tries for real: a probe namespace with an
# nftables table in it, removed at once.
# Every reason that needs no trying comes first, all of them, so that a machine missing two things says so
# at once: the rights (not root), then each missing tool.
why_not() {
  local reasons=() tool package
  if [[ "$(id -u)" != 0 ]]; then
    local caps
    caps="$(awk '/^CapEff:/ {print $2}' /proc/self/status 2>/dev/null || echo 0)"
    # CAP_NET_ADMIN is bit 12, CAP_SYS_ADMIN (ip netns add mounts the namespace) bit 21.
    if (( (0x$caps >> 12 & 1) == 0 || (0x$caps >> 21 & 1) == 0 )); then
      reasons+=("not root (uid $(id -u)) and without CAP_NET_ADMIN and CAP_SYS_ADMIN: network namespaces, veths and nftables rules need them")
    fi
  fi
  for tool in ip nft; do
    package=nftables
    [[ "$tool" == ip ]] && package=iproute2
    command -v "$tool" >/dev/null 2>&1 || reasons+=("$tool is not installed (apt-get install $package)")
  done
  if ((${#reasons[@]} > 0)); then
    local joined
    joined="$(printf '%s; ' "${reasons[@]}")"
    echo "${joined%; }"
    return 0
  fi
  local probe="${NS_PREFIX}probe-$$" out
  if ! out="$(ip netns add "$probe" 2>&1)"; then
    echo "ip netns add failed: $out"
    return 0
  fi
  if ! out="$(ip netns exec "$probe" nft add table inet "$TABLE" 2>&1)"; then
    ip netns del "$probe" 2>/dev/null || true
    echo "nftables does not work inside a network namespace: $out"
    return 0
  fi
  if ! out="$(ip link add "${VETH_PREFIX}p$(( $$ % 100000 ))" type veth peer name eth0 netns "$probe" 2>&1)"; then
    ip netns del "$probe" 2>/dev/null || true
    echo "veth pairs cannot be made: $out"
    return 0
  fi
  ip link del "${VETH_PREFIX}p$(( $$ % 100000 ))" 2>/dev/null || true
  ip netns del "$probe" 2>/dev/null || true
  return 0
}

cmd_check() {
  local reason
  reason="$(why_not)"
  if [[ -n "$reason" ]]; then
    echo "network namespaces unavailable: $reason"
    return 1
  fi
  echo "network namespaces available"
}

require() {
  local reason
  reason="$(why_not)"
  [[ -z "$reason" ]] || die "network namespaces unavailable: $reason"
}

# --- leftovers and tear-down ---------------------------------------------------------------------

our_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep "^$NS_PREFIX" || true; }
our_veths() { ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^$VETH_PREFIX" || true; }
bridge_exists() { ip link show "$BRIDGE" >/dev/null 2>&1; }

# What `down` would remove, one item a line ("namespace idgen-dc1a (2 processes)", "bridge idgen-br0", ...).
leftovers() {
  local ns pids
  for ns in $(our_namespaces); do
    pids="$(ip netns pids "$ns" 2>/dev/null | wc -l)"
    echo "namespace $ns ($pids processes)"
  done
  for v in $(our_veths); do echo "veth $v"; done
  if bridge_exists; then echo "bridge $BRIDGE"; fi
}

cmd_leftovers() {
  local items
  items="$(leftovers)"
  [[ -z "$items" ]] && return 0
  echo "$items"
  return 1
}

# Kills every process still in namespace $1 (SIGCONT first: a node may be paused), waits until they are gone.
kill_ns_processes() {
  local ns="$1" pid deadline
  local pids=()
  mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null || true)
  ((${#pids[@]} > 0)) || return 0
  for pid in "${pids[@]}"; do
    kill -CONT "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
  done
  log "killed ${#pids[@]} processes left in $ns: ${pids[*]}"
  deadline=$((SECONDS + 20))
  for pid in "${pids[@]}"; do
    while [[ -d "/proc/$pid" ]] && [[ "$(ps -o stat= -p "$pid" 2>/dev/null | tr -d ' ')" != Z* ]]; do
      ((SECONDS < deadline)) || { log "WARNING: pid $pid still there 20 s after SIGKILL"; break; }
      sleep 0.1
    done
  done
}

# Removes namespace $1 (short name or full), its processes and its veth.
remove_ns() {
  local ns="$1"
  [[ "$ns" == "$NS_PREFIX"* ]] || ns="$(ns_of "$ns")"
  kill_ns_processes "$ns"
  ip netns del "$ns" 2>/dev/null || true
  ip link del "$VETH_PREFIX${ns#"$NS_PREFIX"}" 2>/dev/null || true
}

# Removes everything with our prefixes. $1: what to call it in the log ("leftovers of an earlier run").
tear_down() {
  local what="$1" items ns v
  items="$(leftovers)"
  [[ -n "$items" ]] || return 0
  log "removing $what: $(echo "$items" | paste -sd, - | sed 's/,/, /g')"
  for ns in $(our_namespaces); do remove_ns "$ns"; done
  # veths whose namespace is gone (deleting one end deletes its peer), then the bridge.
  for v in $(our_veths); do ip link del "$v" 2>/dev/null || true; done
  if bridge_exists; then ip link del "$BRIDGE" 2>/dev/null || true; fi
  items="$(leftovers)"
  [[ -z "$items" ]] || die "could not remove: $items"
}

cmd_down() {
  [[ $# -eq 0 ]] || die "down takes no arguments"
  tear_down "the namespaces"
  log "no idgen namespaces, veths or bridge left"
}

# --- set-up --------------------------------------------------------------------------------------

cmd_up() {
  [[ $# -eq 0 ]] || die "up takes no arguments"
  require
  tear_down "leftovers of an earlier run"
  ip link add "$BRIDGE" type bridge
  ip addr add "$BRIDGE_ADDRESS/$PREFIX_LEN" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  log "bridge $BRIDGE up at $BRIDGE_ADDRESS/$PREFIX_LEN"
}

cmd_add() {
  [[ $# -eq 2 ]] || die "usage: add NAME ADDRESS"
  local name="$1" address="$2" ns veth
  check_name "$name"
  check_address "$address"
  bridge_exists || die "no bridge $BRIDGE: run '$0 up' first"
  ns="$(ns_of "$name")"
  veth="$VETH_PREFIX$name"
  if ip netns list | awk '{print $1}' | grep -qx "$ns"; then
    log "namespace $ns exists: replacing it"
    remove_ns "$ns"
  fi
  ip netns add "$ns"
  ip link add "$veth" type veth peer name eth0 netns "$ns"
  ip link set "$veth" master "$BRIDGE" up
  ip -n "$ns" addr add "$address/$PREFIX_LEN" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip netns exec "$ns" nft -f - <<EOF
table inet $TABLE {
  chain input { type filter hook input priority 0; policy accept; }
  chain output { type filter hook output priority 0; policy accept; }
}
EOF
  log "namespace $ns at $address"
}

cmd_del() {
  [[ $# -ge 1 ]] || die "usage: del NAME..."
  local name
  for name in "$@"; do check_name "$name"; remove_ns "$name"; done
}

cmd_exec() {
  [[ $# -ge 2 ]] || die "usage: exec NAME COMMAND..."
  local name="$1"
  shift
  check_name "$name"
  exec ip netns exec "$(ns_of "$name")" "$@"
}

# --- fault rules ---------------------------------------------------------------------------------

# drop NAME[,NAME...] in|out|both ADDRESS[,ADDRESS...]|all TAG
#   in:   packets arriving from those addresses are dropped;  out: packets sent to them;  both: either.
#   all:  every packet on eth0 (the namespace is cut off from everything but its own loopback).
cmd_drop() {
  [[ $# -eq 4 ]] || die "usage: drop NAME[,NAME...] in|out|both ADDRESS[,ADDRESS...]|all TAG"
  local names="$1" direction="$2" addresses="$3" tag="$4" name ns in_match out_match script
  [[ "$direction" =~ ^(in|out|both)$ ]] || die "direction '$direction' (expected in, out or both)"
  [[ "$tag" =~ ^[a-zA-Z0-9_:.-]{1,60}$ ]] || die "bad tag '$tag'"
  if [[ "$addresses" == all ]]; then
    in_match='iifname "eth0"'
    out_match='oifname "eth0"'
  else
    local a set=()
    IFS=, read -r -a list <<<"$addresses"
    for a in "${list[@]}"; do check_address "$a" bridge; set+=("$a"); done
    local joined
    joined="$(IFS=,; echo "${set[*]}")"
    in_match="ip saddr { $joined }"
    out_match="ip daddr { $joined }"
  fi
  IFS=, read -r -a namelist <<<"$names"
  for name in "${namelist[@]}"; do
    check_name "$name"
    ns="$(ns_of "$name")"
    script=""
    [[ "$direction" == out ]] || script+="add rule inet $TABLE input $in_match drop comment \"$tag\""$'\n'
    [[ "$direction" == in ]] || script+="add rule inet $TABLE output $out_match drop comment \"$tag\""$'\n'
    ip netns exec "$ns" nft -f - <<<"$script" || die "could not add the rules in $ns"
  done
}

# heal NAME[,NAME...] [TAG]: deletes the fault rules with comment TAG (all fault rules without TAG).
cmd_heal() {
  [[ $# -ge 1 && $# -le 2 ]] || die "usage: heal NAME[,NAME...] [TAG]"
  local names="$1" tag="${2:-}" name ns chain handle
  IFS=, read -r -a namelist <<<"$names"
  for name in "${namelist[@]}"; do
    check_name "$name"
    ns="$(ns_of "$name")"
    if [[ -z "$tag" ]]; then
      ip netns exec "$ns" nft flush table inet "$TABLE" || die "could not flush the rules in $ns"
      continue
    fi
    for chain in input output; do
      # "ip saddr { ... } drop comment "TAG" # handle 7"
      for handle in $(ip netns exec "$ns" nft -a list chain inet "$TABLE" "$chain" \
          | awk -v t="comment \"$tag\"" 'index($0, t) { print $NF }'); do
        ip netns exec "$ns" nft delete rule inet "$TABLE" "$chain" handle "$handle"
      done
    done
  done
}

cmd_rules() {
  [[ $# -eq 1 ]] || die "usage: rules NAME"
  check_name "$1"
  ip netns exec "$(ns_of "$1")" nft list table inet "$TABLE"
}

# reach NAME ADDRESS PORT: exit 0 if a TCP connection from namespace NAME (or "root") to ADDRESS:PORT is
# accepted within 2 s.
cmd_reach() {
  [[ $# -eq 3 ]] || die "usage: reach NAME|root ADDRESS PORT"
  local prefix=()
  if [[ "$1" != root ]]; then check_name "$1"; prefix=(ip netns exec "$(ns_of "$1")"); fi
  check_address "$2" bridge
  [[ "$3" =~ ^[0-9]+$ ]] || die "bad port '$3'"
  "${prefix[@]}" timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$2" "$3" 2>/dev/null
}

usage() {
  cat <<EOF
Usage: $(basename "$0") COMMAND [ARGS]

Network namespaces for idgen's fault-injection runs (bridge $BRIDGE at $BRIDGE_ADDRESS/$PREFIX_LEN, namespaces
$NS_PREFIX<name>, veths $VETH_PREFIX<name>; fault rules in each namespace's nftables table inet $TABLE).

  check                         exit 0 if this machine can make them; else prints why, exit 1
  up                            remove leftovers of an earlier run (saying so), then create the bridge
  add NAME ADDRESS              namespace $NS_PREFIX<NAME> with ADDRESS ($NET.2-254) on eth0, veth to the bridge
  del NAME...                   kill the processes in those namespaces, remove them and their veths
  down                          kill every process in $NS_PREFIX* namespaces, remove them, the veths and the bridge
  leftovers                     list what down would remove (exit 1 if anything)
  exec NAME COMMAND...          run COMMAND inside namespace $NS_PREFIX<NAME>
  drop NAMES in|out|both ADDRS|all TAG
                                drop packets from (in) / to (out) ADDRS (comma-separated) in each of NAMES
                                (comma-separated); "all": every packet on eth0. Rules carry comment TAG
  heal NAMES [TAG]              delete the rules with comment TAG (every rule without TAG)
  rules NAME                    print the namespace's rules
  reach NAME|root ADDRESS PORT  exit 0 if a TCP connection from NAME to ADDRESS:PORT succeeds within 2 s
EOF
}

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    check) cmd_check "$@" ;;
    up) cmd_up "$@" ;;
    add) cmd_add "$@" ;;
    del) cmd_del "$@" ;;
    down) cmd_down "$@" ;;
    leftovers) cmd_leftovers "$@" ;;
    exec) cmd_exec "$@" ;;
    drop) cmd_drop "$@" ;;
    heal) cmd_heal "$@" ;;
    rules) cmd_rules "$@" ;;
    reach) cmd_reach "$@" ;;
    help|--help|-h) usage ;;
    "") usage >&2; exit 2 ;;
    *) printf 'unknown command: %s\n\n' "$cmd" >&2; usage >&2; exit 2 ;;
  esac
}

main "$@"
