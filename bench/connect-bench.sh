#!/bin/sh
# connect-bench.sh: the per-connect cost of zsp-run's connect supervisor: the same client
# connects N times to a unix socket unsandboxed and under zsp-run with `allow unix` on it (each
# connect taken by seccomp user notification and performed by the supervisor), in one run.
# usage: ZSP_RUN=... CONNECT_BENCH=... connect-bench.sh [N]
set -eu
n=${1:-20000}
: "${ZSP_RUN:?}" "${CONNECT_BENCH:?}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/zsp-connect-bench.XXXXXX")
bench=$(cd "$(dirname "$CONNECT_BENCH")" && pwd)/$(basename "$CONNECT_BENCH")
trap 'kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT INT TERM
cat >"$dir/bench.zsp" <<EOP
zsp 1;
policy "connect-bench" {
  fs { read "/"; }
  net { mode none; allow unix "$dir/s.sock"; }
}
EOP
"$bench" serve "$dir/s.sock" &
server=$!
i=0
while [ ! -S "$dir/s.sock" ] && [ "$i" -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
"$bench" "$dir/s.sock" 1000 >/dev/null   # warm up
plain=$("$bench" "$dir/s.sock" "$n")
mediated=$("$ZSP_RUN" -p "$dir/bench.zsp" -- "$bench" "$dir/s.sock" "$n")
echo "connect() to a unix socket, $n times:"
echo "  unsandboxed:             $plain ns per connect"
echo "  zsp-run, mediated:       $mediated ns per connect"
awk -v a="$plain" -v b="$mediated" 'BEGIN { printf "  ratio: %.1fx, supervisor cost: %.1f us per connect\n", b / a, (b - a) / 1000 }'
