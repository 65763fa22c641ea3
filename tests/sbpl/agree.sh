#!/bin/sh
# agree.sh: the Seatbelt profile of every test block in corpus/requests and examples, as
# `zspc --emit sbpl` prints it, must decide each read/write/exec/connect expectation as the
# oracle does (tests/sbpl/agree.c; doc/sbpl-eval.md). SKIP while zspc cannot emit SBPL.

zsp_suite=sbpl-agree zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
: "${SBPL_AGREE:=$top_builddir/tests/sbpl/sbpl-agree}"
export ZSPC

if [ ! -x "$SBPL_AGREE" ]; then
	echo "$zsp_suite: no sbpl-agree at $SBPL_AGREE" >&2
	exit 99
fi

passed=0
failed=0
for policy in "$top_srcdir"/corpus/requests/*.zsp "$top_srcdir"/examples/*.zsp; do
	name=${policy#"$top_srcdir"/}
	"$SBPL_AGREE" "$policy" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq 77 ]; then
		cat "$tmp/out"
		echo "SKIP: zspc --emit sbpl is not implemented yet"
		exit 77
	fi
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		tail -1 "$tmp/out" | sed "s|$top_srcdir/||"
	else
		failed=$((failed + 1))
		echo "FAIL $name (exit $rc)"
		sed "s|$top_srcdir/||" "$tmp/out"
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
