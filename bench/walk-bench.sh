#!/bin/sh
# walk-bench.sh: the launch curve. zsp-run -- /bin/true under the built-in policy (or POLICY) in
# generated workspaces of about 0 (small), 10,000, 100,000 and, with BIG=1, 1,000,000 files
# (100 empty files per directory, and an empty .env in one directory of ten), measured in one run with
# hyperfine, warm (the walk's index of the run before present) and cold (removed first), each
# as a ratio to the small workspace measured the same way (the issue's targets: 100k <= 1.3x,
# 1M <= 2x). Everything, the check after the run included, is in the time.
# Usage: bench/walk-bench.sh [POLICY]   (env: ZSP_RUN, RUNS, BIG; run from the build dir)
set -eu
ZSP_RUN=${ZSP_RUN:-./zsp-run}
RUNS=${RUNS:-20}
policy=${1:-$(dirname "$0")/../examples/workspace.zsp}
die() { echo "walk-bench: $*" >&2; exit 1; }
command -v hyperfine >/dev/null 2>&1 || die "needs hyperfine (apt-get install hyperfine)"
[ -x "$ZSP_RUN" ] || die "build zsp-run first (or set ZSP_RUN)"
ZSP_RUN=$(cd "$(dirname "$ZSP_RUN")" && pwd)/$(basename "$ZSP_RUN")
policy=$(cd "$(dirname "$policy")" && pwd)/$(basename "$policy")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zsp-walk.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/home" "$tmp/tmp"
export TMPDIR="$tmp/tmp" XDG_STATE_HOME="$tmp/state"

# tree DIR FILES: a workspace of FILES empty files, 100 a directory, 10 directories a level
# (made by a few xargs runs, not a process per directory)
tree() {
	mkdir -p "$1"
	awk -v top="$1" -v n="$(($2 / 100))" 'BEGIN {
		for (i = 0; i < n; i++) printf "%s/a%d/b%d/c%d\n", top, i / 100, i / 10 % 10, i }' |
		xargs -r mkdir -p
	awk -v top="$1" -v n="$(($2 / 100))" 'BEGIN {
		for (i = 0; i < n; i++) {
			d = sprintf("%s/a%d/b%d/c%d", top, i / 100, i / 10 % 10, i)
			for (f = 1; f <= 100; f++) printf "%s/f%d\n", d, f
			if (i % 10 == 0) printf "%s/.env\n", d
		} }' | xargs -r touch
}
sizes="0 10000 100000"
[ "${BIG:-0}" = 0 ] || sizes="$sizes 1000000"
for n in $sizes; do
	tree "$tmp/ws$n" "$n"
done
# the trees older than the index's racy window (2 s), as a workspace between two runs is
sleep 3
# each size twice: warm (the index of the run before present) and cold (removed first)
set --
for n in $sizes; do
	run="cd $tmp/ws$n && $ZSP_RUN -Wno-unenforced -D HOME=$tmp/home -p $policy -- /bin/true"
	(cd "$tmp/ws$n" && "$ZSP_RUN" -Wno-unenforced -D HOME="$tmp/home" -p "$policy" -- /bin/true) ||
		die "zsp-run cannot run /bin/true in a workspace of $n files: run it by hand to see why"
	set -- "$@" --prepare true "$run" --prepare "rm -rf $XDG_STATE_HOME/zsp/walk" "$run"
done
hyperfine --style basic --warmup 2 --runs "$RUNS" --export-json "$tmp/h.json" "$@" >/dev/null 2>&1 ||
	die "hyperfine failed: run it by hand to see why: hyperfine '$run'"
awk -v sizes="$sizes" '
	/"median":/ { gsub(/[",]/, "", $2); m[++n] = $2 * 1000 }
	END {
		split(sizes, sz, " ")
		printf "%9s  %12s %7s  %12s %7s\n", "files", "warm median", "ratio", "cold median", "ratio"
		for (i = 1; 2 * i <= n; i++)
			printf "%9d  %9.2f ms %6.2fx  %9.2f ms %6.2fx\n", sz[i], m[2 * i - 1],
				m[2 * i - 1] / m[1], m[2 * i], m[2 * i] / m[2]
		print "ratios: to the small workspace measured the same way in this run (warm to warm, cold to cold)"
	}' "$tmp/h.json"
