#!/bin/sh
# check-bench.sh: times `zspc --check` on generated policies of growing size and prints a table.
# Usage: bench/check-bench.sh [N...]   (env: ZSPC, GEN_POLICY, RUNS; run from the build dir)
set -eu

ZSPC=${ZSPC:-./zspc}
GEN_POLICY=${GEN_POLICY:-./bench/gen-policy}
RUNS=${RUNS:-7}
[ $# -gt 0 ] || set -- 10 100 1000 10000 100000

die() { echo "check-bench: $*" >&2; exit 1; }
[ -x "$GEN_POLICY" ] || die "$GEN_POLICY not found: run \`make bench/gen-policy\` or set GEN_POLICY"
[ -x "$ZSPC" ] || die "$ZSPC not found: build zspc or set ZSPC"


tmp=$(mktemp -d "${TMPDIR:-/tmp}/zsp-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

now_ns() { date +%s%N; }

# Prints the median wall time of $RUNS runs of `zspc --check FILE`, in milliseconds.
median_ms() {
	# -N (no shell) needs hyperfine 1.13; an older one falls through to the loop.
	if command -v hyperfine >/dev/null 2>&1 &&
		hyperfine -N --style none --warmup 1 --runs "$RUNS" -i \
			--export-csv "$tmp/h.csv" "$ZSPC --check $1" >/dev/null 2>&1; then
		awk -F, 'NR == 2 { printf "%.2f\n", $4 * 1000 }' "$tmp/h.csv"
		return
	fi
	"$ZSPC" --check "$1" 2>/dev/null || true
	i=0
	: >"$tmp/times"
	while [ "$i" -lt "$RUNS" ]; do
		t0=$(now_ns)
		"$ZSPC" --check "$1" 2>/dev/null || true
		t1=$(now_ns)
		echo $(((t1 - t0) / 1000)) >>"$tmp/times"
		i=$((i + 1))
	done
	sort -n "$tmp/times" | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f\n", m / 1000 }'
}

# Two variants per N: as generated, and without the `protect` line. Each protect name is
# expanded under every writable root, so the first variant's IR holds several times N rules
# (column "IR rules"); the second measures the per-rule cost of everything else.
: >"$tmp/results"
for n in "$@"; do
	"$GEN_POLICY" "$n" >"$tmp/p$n.zsp"
	sed '/^[[:space:]]*protect /d' "$tmp/p$n.zsp" >"$tmp/p$n-noprotect.zsp"
	for variant in "" -noprotect; do
		f="$tmp/p$n$variant.zsp"
		# The policy must be clean, or we would be timing the diagnostics.
		if ! "$ZSPC" --check "$f" 2>"$tmp/diag" || [ -s "$tmp/diag" ]; then
			echo "check-bench: warning: the N=$n$variant policy is not clean:" >&2
			head -n 5 "$tmp/diag" >&2
		fi
		rules=$("$ZSPC" --emit ir "$f" 2>/dev/null | grep -c '"access": ')
		echo "${variant:-protect} $n $(wc -c <"$f") $rules $(median_ms "$f")" >>"$tmp/results"
	done
done

echo "zspc --check, median of $RUNS runs, $(uname -m), $(date -u +%Y-%m-%d)"
for variant in protect -noprotect; do
	echo
	[ "$variant" = protect ] && echo "as generated (protect names expanded under every writable root):" ||
		echo "without the protect line:"
	awk -v variant="$variant" '
		$1 != variant { next }
		{ k++; n[k] = $2; bytes[k] = $3; rules[k] = $4; ms[k] = $5; if ($2 == 10000) ref = $5 }
		END {
			printf "%8s %10s %9s %11s %11s %9s\n", "N", "bytes", "IR rules", "median ms", "ms/1k rules", "vs 10k"
			for (i = 1; i <= k; i++)
				printf "%8d %10d %9d %11.2f %11.3f %9s\n", n[i], bytes[i], rules[i], ms[i],
					ms[i] * 1000 / n[i], ref ? sprintf("%.2fx", ms[i] / ref) : "-"
			if (ref) {
				printf "target: N=10000 under 50 ms: %s (%.2f ms)\n", ref < 50 ? "met" : "MISSED", ref
				for (i = 1; i <= k; i++)
					if (n[i] == 100000)
						printf "target: N=100000 at most 12x N=10000: %s (%.2fx)\n",
							ms[i] <= 12 * ref ? "met" : "MISSED", ms[i] / ref
			}
		}' "$tmp/results"
done
