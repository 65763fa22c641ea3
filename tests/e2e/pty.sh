#!/bin/sh
# pty.sh: zsp-run on a terminal (doc/linux.md "The terminal"): the sandbox gets a pty of its own
# and never the terminal itself. On a terminal this suite owns (tests/e2e/pty.py): keystrokes
# typed for the shell while zsp-run is in its background stay the shell's; the terminal's modes
# are what they were after the sandbox changed its own (also when zsp-run is killed); `tty` and
# every descriptor inside name another terminal; ^C interrupts the command (130); the window
# size is passed, also when it changes; 1 MB of output arrives whole; ^D is end of input; a
# pipe on stdin stays the command's. Each case runs as root and, under root, as uid 65534.

zsp_suite=e2e-pty zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
	echo "$zsp_suite: python3 is missing (dev.sh installs it)" >&2
	exit 99
fi
# a copy uid 65534 can read, wherever the checkout is
cp "$top_srcdir/tests/e2e/pty.py" "$tmp/pty.py"
chmod 755 "$tmp/pty.py"

# term WHAT STEP... -- CMD...: CMD in $ws as $who on a new terminal (pty.py), zsp-run's stderr in
# $tmp/err; the transcript in $tmp/out with CRs removed, and $rc, $termios, $ttydev from pty.py.
term() {
	what=$1
	shift
	(cd "$ws" && as "$who" python3 "$tmp/pty.py" "$world/raw" "$@") >"$tmp/res" 2>&1
	rc=$(sed -n 's/^rc=//p' "$tmp/res")
	termios=$(sed -n 's/^termios=//p' "$tmp/res")
	ttydev=$(sed -n 's/^tty=//p' "$tmp/res")
	tr -d '\r' <"$world/raw" >"$tmp/out"
}
expect_rc() {
	if [ "$rc" = "$1" ]; then ok; else bad "$what: exit $rc, expected $1"; sed 's/^/  | /' "$tmp/res" "$tmp/out" | head -12; fi
}
check() { if eval "$2"; then ok; else bad "$what: $1"; sed 's/^/  | /' "$tmp/out" | head -12; fi; }

for who in $(identities); do
	fresh "$who"
	Z="$ZSP_RUN -D HOME=$home -Wno-unenforced"

	# -- the terminal inside is the sandbox's own --
	term "tty inside" -- $Z -- sh -c 'tty; test -t 0 && test -t 1 && test -t 2 && echo all-terminals
		stat -L -c "dev %t:%T" /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 /dev/tty /dev/console
		ls /proc/self/fd | tr "\n" " "; echo'
	expect_rc 0
	check "no terminal name" 'grep -qx "/dev/[a-z/]*[0-9a-z]*" "$tmp/out" && ! grep -q "not a tty" "$tmp/out"'
	check "stdio are not all terminals" 'grep -qx all-terminals "$tmp/out"'
	check "not five device numbers (stdio, /dev/tty, /dev/console)" '[ "$(grep -c "^dev " "$tmp/out")" -eq 5 ]'
	check "the person's terminal ($ttydev) reached the sandbox" '! grep -qx "dev $ttydev" "$tmp/out"'
	check "descriptors other than 0 1 2 (3 is ls's own)" 'grep -qx "0 1 2 3 " "$tmp/out"'
	# the host's node of the terminal: the sandbox's /dev/pts is a devpts of its own
	n=$(printf %d 0x"${ttydev#*:}")
	term "the host's /dev/pts/$n" -- $Z -- sh -c "test -e /dev/pts/$n && stat -c 'dev %t:%T' /dev/pts/$n; cat /dev/pts/$n; echo done"
	check "the host's /dev/pts/$n is the terminal inside" '! grep -qx "dev $ttydev" "$tmp/out" && grep -qx done "$tmp/out"'

	# -- modes: what the sandbox changes is its pty's; the terminal is restored --
	term "stty raw -echo inside" -- $Z -- stty raw -echo
	expect_rc 0
	check "the terminal's modes changed" '[ "$termios" = same ]'
	term "modes after a TERM" expect:ready kill:15 -- $Z -- sh -c 'stty raw -echo; echo ready; sleep 30'
	expect_rc 143
	check "the terminal's modes changed (TERM)" '[ "$termios" = same ]'
	term "modes around a stop" expect:ready modes kill:20 sleep:1 modes kill:18 sleep:1 modes send:'\x03' \
		-- $Z -- sh -c 'echo ready; sleep 30'
	expect_rc 130
	check "not raw while relaying, restored while stopped (TSTP), raw again after CONT" \
		'[ "$(grep ^modes= "$tmp/res" | tr "\n" " ")" = "modes=changed modes=same modes=changed " ]'
	term "modes while relaying" expect:ready send:'\x03' -- \
		sh -c "stty -g >'$world/before'; $Z -- sh -c 'echo ready; sleep 30'; stty -g >'$world/after'"
	check "stty -g differs before and after" 'grep -q : "$world/before" && cmp -s "$world/before" "$world/after"'

	# -- ^C, ^D, exit status, window size --
	term "^C" expect:ready send:'\x03' -- $Z -- sh -c 'echo ready; sleep 30; echo not-interrupted'
	expect_rc 130
	check "the command was not interrupted" '! grep -q not-interrupted "$tmp/out"'
	term "^D" expect:ready send:'typed\n' expect:'typed\ntyped' send:'\x04' -- $Z -- sh -c 'echo ready; cat; echo cat-ended'
	expect_rc 0
	check "cat did not see end of input" 'grep -qx cat-ended "$tmp/out"'
	term "exit status" -- $Z -- sh -c 'exit 7'
	expect_rc 7
	term "window size" size:37:101 expect:ready resize:50:132 -- $Z -- sh -c 'stty size; trap "stty size; exit 0" WINCH
		echo ready; i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; exit 3'
	expect_rc 0
	check "the size at the start" 'grep -qx "37 101" "$tmp/out"'
	check "the size after SIGWINCH" 'grep -qx "50 132" "$tmp/out"'

	# -- output: 1 MB, whole, right before the command exits --
	term "1 MB of output" -- $Z -- seq 1 150000
	expect_rc 0
	seq 1 150000 >"$tmp/seq"
	check "the output is not seq's" 'grep -v "^zsp-run:" "$tmp/out" | cmp -s - "$tmp/seq"'

	# -- stdin a pipe, stdout the terminal: the pipe stays the command's --
	term "a pipe on stdin" -- sh -c "echo piped | $Z -- sh -c 'test ! -t 0 && test -t 1 && cat'"
	expect_rc 0
	check "the piped line did not arrive" 'grep -qx piped "$tmp/out"'

	# -- keystrokes for the shell while zsp-run is in its background: typed ahead while the
	# shell runs `sleep 2` (so that no reader of the shell's takes them first), they wake
	# zsp-run, whose read stops it; the shell reads them after the sleep --
	rm -f "$ws/got" "$ws/started"
	term "keystrokes from the background" expect:'$ ' \
		send:"$Z -- sh -c ': >started; read x; echo \"inner:\$x\" >>got' 2>\"$world/bg.err\" &\n" \
		wait:"$ws/started" sleep:0.5 send:'sleep 2\n' sleep:0.5 \
		send:'echo shell-$((40+2))\n' expect:'shell-42' sleep:1 send:'jobs\n' expect:Stopped \
		send:'fg\n' sleep:1 send:'later\n' sleep:1 send:'exit\n' \
		-- env PS1='$ ' bash --norc --noprofile -i
	expect_rc 0
	check "zsp-run in the background was not stopped" 'grep -q "Stopped" "$tmp/out"'
	check "the sandbox read what was typed for the shell" '! grep -q shell "$ws/got" 2>/dev/null'
	check "after fg, the command did not get its input" 'grep -qx inner:later "$ws/got" 2>/dev/null' ||
		sed 's/^/  | /' "$world/bg.err"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
