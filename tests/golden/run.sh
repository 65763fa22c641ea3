#!/bin/sh
# run.sh: the golden suites. valid/NAME.zsp must compile to valid/NAME.ir.json (exit 0, stderr
# empty or equal to NAME.warn); invalid/NAME.zsp must fail `zspc --check` with stderr NAME.err.
# Usage: run.sh [--bless]. NAME.args holds extra zspc arguments, NAME.rc an exit code other than 1.

bless=false
case ${1-} in
--bless) bless=true ;;
'') ;;
*) echo "usage: $0 [--bless]" >&2; exit 64 ;;
esac

zsp_suite=golden zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
golden=$top_srcdir/tests/golden

passed=0
failed=0

# fail NAME WHY [EXPECTED ACTUAL]: one line per failing case, then a diff when there is one.
fail() {
	failed=$((failed + 1))
	echo "FAIL $1: $2"
	if [ $# -ge 4 ]; then
		diff -u "$3" "$4"
	fi
}

# args_of DIR NAME: the case's extra arguments (word-split on purpose).
args_of() {
	if [ -f "$1/$2.args" ]; then
		cat "$1/$2.args"
	fi
}

run_valid() {
	dir=$golden/valid
	for src in "$dir"/*.zsp; do
		[ -f "$src" ] || continue
		name=$(basename "$src" .zsp)
		args=$(args_of "$dir" "$name")
		# shellcheck disable=SC2086
		(cd "$dir" && exec "$ZSPC" --emit ir $args "$name.zsp") >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if $bless; then
			if [ $rc -ne 0 ]; then
				echo "BLESS $name: exit $rc, not blessed"
				cat "$tmp/err"
				failed=$((failed + 1))
				continue
			fi
			cp "$tmp/out" "$dir/$name.ir.json"
			if [ -s "$tmp/err" ]; then
				cp "$tmp/err" "$dir/$name.warn"
			else
				rm -f "$dir/$name.warn"
			fi
			passed=$((passed + 1))
			continue
		fi
		if [ -f "$dir/$name.warn" ]; then
			cp "$dir/$name.warn" "$tmp/warn"
		else
			: >"$tmp/warn"
		fi
		if [ $rc -ne 0 ]; then
			fail "$name" "exit $rc, expected 0" "$tmp/warn" "$tmp/err"
		elif [ ! -f "$dir/$name.ir.json" ]; then
			fail "$name" "no $name.ir.json"
		elif ! cmp -s "$dir/$name.ir.json" "$tmp/out"; then
			fail "$name" "IR differs" "$dir/$name.ir.json" "$tmp/out"
		elif ! cmp -s "$tmp/warn" "$tmp/err"; then
			fail "$name" "stderr differs" "$tmp/warn" "$tmp/err"
		else
			passed=$((passed + 1))
		fi
	done
}

run_invalid() {
	dir=$golden/invalid
	for src in "$dir"/*.zsp; do
		[ -f "$src" ] || continue
		name=$(basename "$src" .zsp)
		args=$(args_of "$dir" "$name")
		# shellcheck disable=SC2086
		(cd "$dir" && exec "$ZSPC" --check $args "$name.zsp") >"$tmp/out" 2>"$tmp/err"
		rc=$?
		want_rc=1
		if [ -f "$dir/$name.rc" ]; then
			want_rc=$(cat "$dir/$name.rc")
		fi
		if $bless; then
			if [ $rc -eq 0 ]; then
				echo "BLESS $name: exit 0, not blessed"
				failed=$((failed + 1))
				continue
			fi
			cp "$tmp/err" "$dir/$name.err"
			if [ $rc -ne 1 ]; then
				echo $rc >"$dir/$name.rc"
			else
				rm -f "$dir/$name.rc"
			fi
			passed=$((passed + 1))
			continue
		fi
		if [ ! -f "$dir/$name.err" ]; then
			fail "$name" "no $name.err"
		elif [ "$rc" != "$want_rc" ]; then
			fail "$name" "exit $rc, expected $want_rc" "$dir/$name.err" "$tmp/err"
		elif [ -s "$tmp/out" ]; then
			fail "$name" "output on stdout" /dev/null "$tmp/out"
		elif ! cmp -s "$dir/$name.err" "$tmp/err"; then
			fail "$name" "stderr differs" "$dir/$name.err" "$tmp/err"
		else
			passed=$((passed + 1))
		fi
	done
}

run_valid
run_invalid

if $bless; then
	echo "golden: $passed blessed, $failed failed"
else
	echo "golden: $passed passed, $failed failed"
fi
[ $failed -eq 0 ]
