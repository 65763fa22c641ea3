#!/bin/sh
# strict-bench.sh: the cost of zsp-run --strict per judged call: the same shell loop opens a
# file N times (a redirection each) in a sandbox of the built-in policy without and with
# --strict, in one run; whole-process times, the ratio and the cost per open.
# usage: ZSP_RUN=... strict-bench.sh [N]
set -eu
n=${1:-20000}
: "${ZSP_RUN:?}"
case $ZSP_RUN in /*) ;; *) ZSP_RUN=$(pwd)/$ZSP_RUN ;; esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/zsp-strict-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
echo x >"$dir/f"
loop="i=0; while [ \$i -lt $n ]; do : <f; i=\$((i + 1)); done"
now() { date +%s%N; }
cd "$dir"
"$ZSP_RUN" -Wno-unenforced -D WORKSPACE="$dir" -- sh -c "$loop" 2>/dev/null  # warm up
t0=$(now); "$ZSP_RUN" -Wno-unenforced -D WORKSPACE="$dir" -- sh -c "$loop" 2>/dev/null; t1=$(now)
"$ZSP_RUN" --strict -D WORKSPACE="$dir" -- sh -c "$loop" 2>/dev/null; t2=$(now)
"$ZSP_RUN" -Wno-unenforced -D WORKSPACE="$dir" -- true 2>/dev/null; t3=$(now)
"$ZSP_RUN" --strict -D WORKSPACE="$dir" -- true 2>/dev/null; t4=$(now)
awk -v n="$n" -v a=$((t1 - t0)) -v b=$((t2 - t1)) -v c=$((t3 - t2)) -v d=$((t4 - t3)) 'BEGIN {
	printf "%d opens in a shell loop, whole process:\n", n
	printf "  zsp-run:           %8.1f ms\n", a / 1e6
	printf "  zsp-run --strict:  %8.1f ms\n", b / 1e6
	printf "  ratio: %.2fx, cost: %.1f us per judged open\n", b / a, (b - a) / n / 1000
	printf "launch of `true`: %.1f ms, with --strict %.1f ms (%.2fx)\n", c / 1e6, d / 1e6, d / c
}'
