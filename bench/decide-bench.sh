#!/bin/sh
# decide-bench.sh: decisions per second with the grant store consulted, against the same requests
# without a store, in one run: `zspc --batch` over REQUESTS terminal commands (the workspace
# policy asks about each, so every decision reaches the store), with GRANTS global exact grants
# in a private store (a tenth of the requests match one).
# Usage: bench/decide-bench.sh [GRANTS] [REQUESTS]   (env: ZSPC; run from the build dir)
set -eu
ZSPC=${ZSPC:-./zspc}
grants=${1:-1000}
requests=${2:-20000}
policy=$(dirname "$0")/../examples/workspace.zsp
[ -x "$ZSPC" ] || { echo "decide-bench: build zspc first (or set ZSPC)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zsp-decide.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
state=$tmp/state
i=0
while [ "$i" -lt "$grants" ]; do
	"$ZSPC" grant add --state-dir "$state" --runtime-dir "$tmp/run" --tool terminal \
		--exact "make target$i" --allow --global >/dev/null
	i=$((i + 1))
done
awk -v n="$requests" -v g="$grants" 'BEGIN {
	for (k = 0; k < n; k++)
		if (k % 10 == 0) printf "terminal \"make target%d\"\n", k % g
		else printf "terminal \"make other%d\"\n", k
}' >"$tmp/requests"
now_ns() { date +%s%N; }
run() {
	t0=$(now_ns)
	"$ZSPC" --batch "$tmp/requests" "$@" "$policy" >"$tmp/out" 2>/dev/null || true
	t1=$(now_ns)
	echo $(((t1 - t0) / 1000000))
}
plain=$(run)
store=$(run --state-dir "$state" --runtime-dir "$tmp/run")
allowed=$(grep -c '"decision":"allow"' "$tmp/out" || true)
echo "decide-bench: $requests requests, $grants grants in the store ($allowed answered allow by a grant)"
echo "without a store: $plain ms ($((requests * 1000 / (plain > 0 ? plain : 1))) decisions/s)"
echo "with the store:  $store ms ($((requests * 1000 / (store > 0 ? store : 1))) decisions/s)"
