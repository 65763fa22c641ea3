#!/bin/sh
# pty.sh: the terminals a Seatbelt profile of zspc's lets the command use (doc/sbpl.md), asked of
# the SBPL evaluator (doc/sbpl-eval.md): a pty it opens itself (/dev/ptmx, then the replica, which
# carries the com.apple.sandbox.pty extension Seatbelt issues at that open) and the modes of the
# terminal it was started on; never another session's /dev/ttysN. For every example policy.

zsp_suite=sbpl-pty zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
: "${SBPL_EVAL:=$top_builddir/tests/sbpl/sbpl-eval}"

if [ ! -x "$SBPL_EVAL" ]; then
	echo "$zsp_suite: no sbpl-eval at $SBPL_EVAL" >&2
	exit 99
fi

passed=0
failed=0
# expect WANT [--extension CLASS] OPERATION TARGET: the evaluator's answer on $tmp/profile.sb
expect() {
	want=$1
	shift
	ext=
	if [ "$1" = --extension ]; then
		ext="--extension $2"
		shift 2
	fi
	got=$("$SBPL_EVAL" $ext "$tmp/profile.sb" "$@" 2>&1)
	if [ "$got" = "$want" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $name: ${ext:+$ext }$*: $got, expected $want"
	fi
}

for policy in "$top_srcdir"/examples/*.zsp; do
	name=${policy#"$top_srcdir"/}
	if ! "$ZSPC" --emit sbpl -D WORKSPACE=/Users/u/ws -D HOME=/Users/u -D TMPDIR=/private/tmp/u \
		-D UID=501 -D USER=u -o "$tmp/profile.sb" "$policy" >"$tmp/err" 2>&1; then
		failed=$((failed + 1))
		echo "FAIL $name: zspc --emit sbpl: $(cat "$tmp/err")"
		continue
	fi
	# another session's terminal: neither read (its keystrokes) nor written
	for op in file-read-data file-write-data; do
		expect deny "$op" /dev/ttys003
		expect deny "$op" /dev/ttys000
		# an extension of another class is not the pty's
		expect deny --extension com.apple.app-sandbox.read "$op" /dev/ttys003
	done
	# a pty of its own: the multiplexer, the new pty, its replica
	expect allow pseudo-tty
	expect allow file-read-data /dev/ptmx
	expect allow file-write-data /dev/ptmx
	expect allow file-ioctl /dev/ptmx
	expect allow --extension com.apple.sandbox.pty file-read-data /dev/ttys004
	expect allow --extension com.apple.sandbox.pty file-write-data /dev/ttys004
	# the terminal it was started on, through the descriptor it inherited: stty works
	expect allow file-ioctl /dev/ttys003
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
