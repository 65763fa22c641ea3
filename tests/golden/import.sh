#!/bin/sh
# import.sh: the `zspc --import zed` golden suite. In tests/golden/import/, NAME.json must
# import to NAME.zsp (exit 0, stderr empty), and that output must pass `zspc --check`; or fail
# with stderr NAME.err (exit 1, stdout empty). Usage: import.sh [--bless].

bless=false
case ${1-} in
--bless) bless=true ;;
'') ;;
*) echo "usage: $0 [--bless]" >&2; exit 64 ;;
esac

zsp_suite=import zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
dir=$top_srcdir/tests/golden/import

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

# check_output NAME FILE: the imported policy must compile (warnings such as -Wunknown-tool
# are fine: Zed settings may name a host's own tools).
check_output() {
	cp "$2" "$tmp/$1.zsp"
	if ! (cd "$tmp" && exec "$ZSPC" --check "$1.zsp") >"$tmp/check.out" 2>"$tmp/check.err"; then
		fail "$1" "the imported policy does not pass zspc --check"
		cat "$tmp/check.err"
		return 1
	fi
	return 0
}

for src in "$dir"/*.json; do
	[ -f "$src" ] || continue
	name=$(basename "$src" .json)
	(cd "$dir" && exec "$ZSPC" --import zed "$name.json") >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if $bless; then
		if [ $rc -eq 0 ] && [ ! -s "$tmp/err" ]; then
			check_output "$name" "$tmp/out" || continue
			cp "$tmp/out" "$dir/$name.zsp"
			rm -f "$dir/$name.err"
		elif [ $rc -eq 1 ] && [ ! -s "$tmp/out" ]; then
			cp "$tmp/err" "$dir/$name.err"
			rm -f "$dir/$name.zsp"
		else
			echo "BLESS $name: exit $rc, not blessed"
			cat "$tmp/err"
			failed=$((failed + 1))
			continue
		fi
		passed=$((passed + 1))
		continue
	fi
	if [ -f "$dir/$name.zsp" ]; then
		if [ $rc -ne 0 ]; then
			fail "$name" "exit $rc, expected 0" /dev/null "$tmp/err"
		elif [ -s "$tmp/err" ]; then
			fail "$name" "output on stderr" /dev/null "$tmp/err"
		elif ! cmp -s "$dir/$name.zsp" "$tmp/out"; then
			fail "$name" "output differs" "$dir/$name.zsp" "$tmp/out"
		elif check_output "$name" "$tmp/out"; then
			passed=$((passed + 1))
		fi
	elif [ -f "$dir/$name.err" ]; then
		if [ $rc -ne 1 ]; then
			fail "$name" "exit $rc, expected 1" "$dir/$name.err" "$tmp/err"
		elif [ -s "$tmp/out" ]; then
			fail "$name" "output on stdout" /dev/null "$tmp/out"
		elif ! cmp -s "$dir/$name.err" "$tmp/err"; then
			fail "$name" "stderr differs" "$dir/$name.err" "$tmp/err"
		else
			passed=$((passed + 1))
		fi
	else
		fail "$name" "neither $name.zsp nor $name.err"
	fi
done

if $bless; then
	echo "import: $passed blessed, $failed failed"
else
	echo "import: $passed passed, $failed failed"
fi
[ $failed -eq 0 ]
