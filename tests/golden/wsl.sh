#!/bin/sh
# wsl.sh: golden text of the Windows backend. Each wsl/NAME.args holds the arguments of one
# `zspc --emit wsl` run, one per line, taken exactly (no shell quoting: backslashes and spaces as
# Windows writes them); @SRC@ stands for the source tree, @T@ for a fixture directory. The run's
# standard output, then its stderr and exit status when there are any, must equal wsl/NAME.out.
# Every examples/*.zsp needs a case example-NAME. Runs in the source tree, so relative paths work.
# Usage: wsl.sh [--bless].

bless=false
case ${1-} in
--bless) bless=true ;;
'') ;;
*) echo "usage: $0 [--bless]" >&2; exit 64 ;;
esac

zsp_suite=golden-wsl zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
golden=$top_srcdir/tests/golden/wsl
# zspc makes relative paths absolute with getcwd: compare with the physical path of the tree
src=$(cd "$top_srcdir" && pwd -P)

# A policy whose path has spaces (and a directory to include from).
T=$tmp/t
mkdir -p "$T/my policies/lib"
cp "$top_srcdir/examples/workspace.zsp" "$T/my policies/work space.zsp"
cp "$top_srcdir/examples/credentials.zsp" "$T/my policies/"   # what it includes

passed=0
failed=0

for example in "$top_srcdir"/examples/*.zsp; do
	name=example-$(basename "$example" .zsp)
	if [ ! -f "$golden/$name.args" ]; then
		failed=$((failed + 1))
		echo "FAIL $name: no $golden/$name.args (every example has a case)"
	fi
done

# run ARGS-FILE: zspc with the file's lines as arguments
run() {
	file=$1
	set --
	while IFS= read -r line || [ -n "$line" ]; do
		line=$(printf '%s\n' "$line" | sed "s|@SRC@|$src|g; s|@T@|$T|g")
		set -- "$@" "$line"
	done <"$file"
	(cd "$src" && env -i PATH=/usr/bin:/bin LANG=C.UTF-8 LC_ALL=C.UTF-8 \
		ZSP_DATADIR="$ZSP_DATADIR" "$ZSPC" --emit wsl "$@")
}

for args in "$golden"/*.args; do
	name=$(basename "$args" .args)
	run "$args" >"$tmp/out" 2>"$tmp/err"
	status=$?
	if [ -s "$tmp/err" ] || [ "$status" -ne 0 ]; then
		{ echo "[stderr]"; cat "$tmp/err"; echo "[exit $status]"; } >>"$tmp/out"
	fi
	sed -i "s|$T|@T@|g; s|$src|@SRC@|g" "$tmp/out"
	if $bless; then
		cp "$tmp/out" "$golden/$name.out"
	elif [ -f "$golden/$name.out" ] && cmp -s "$golden/$name.out" "$tmp/out"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $name"
		if [ -f "$golden/$name.out" ]; then diff -u "$golden/$name.out" "$tmp/out"; else echo "  no $golden/$name.out"; fi
	fi
done

$bless && { echo "blessed"; exit 0; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
