#!/usr/bin/env bash
#
# without.sh COMMAND[,COMMAND...] PROGRAM [ARGS...] - runs PROGRAM as on a machine where COMMANDs are not
# installed: with a PATH of links to every other command of the current PATH (first of each name wins), in a
# temporary directory removed at the end. Exits with PROGRAM's status.
#
# Test infrastructure: .ci/run and NetnsScriptIT run the network-namespace checks with nftables hidden
# (`without.sh nft ...`), as a fresh Debian has none, so that the path a newcomer takes is tested even where
# nftables is installed.

set -euo pipefail

[[ $# -ge 2 ]] || { echo "usage: $(basename "$0") COMMAND[,COMMAND...] PROGRAM [ARGS...]" >&2; exit 2; }
IFS=, read -r -a hidden <<<"$1"
shift

bin="$(mktemp -d "${TMPDIR:-/tmp}/idgen-without.XXXXXX")"
# Readable by everyone: a program under it may drop its rights (the tests run netns.sh as nobody).
chmod 755 "$bin"
trap 'rm -rf "$bin"' EXIT

declare -A seen=()
for name in "${hidden[@]}"; do seen[$name]=hidden; done
links=()
IFS=: read -r -a dirs <<<"${PATH:-/usr/bin:/bin}"
for dir in "${dirs[@]}"; do
  [[ -n "$dir" && -d "$dir" ]] || continue
  for f in "$dir"/*; do
    name="${f##*/}"
    [[ -z "${seen[$name]:-}" && -x "$f" && ! -d "$f" ]] || continue
    seen[$name]=linked
    links+=("$f")
  done
done
# One ln for all of them: thousands of commands, one process.
((${#links[@]} == 0)) || ln -s -t "$bin" "${links[@]}"
for name in "${hidden[@]}"; do
  [[ ! -e "$bin/$name" ]] || { echo "without.sh: $name is still on the PATH" >&2; exit 2; }
done

status=0
PATH="$bin" "$@" || status=$?
exit "$status"
