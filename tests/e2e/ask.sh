#!/bin/sh
# ask.sh: zsp-run -c: the oracle's answer before the run (allow runs, deny exits 122 with the
# reason), `ask` without a terminal (exit 123 and the `zspc grant add` command that approves it
# once), the prompt on a terminal (script(1) gives one: once, thread, project, deny, end of input,
# Ctrl-C), a grant store that cannot be opened (fail closed), the audit trail of it all, and
# --shell. Each case runs as the current user and, under root, again as uid 65534.

zsp_suite=e2e-ask zsp_up=../.. zsp_need_tmpfs=1
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

if ! command -v script >/dev/null 2>&1 || ! command -v setsid >/dev/null 2>&1; then
	echo "$zsp_suite: SKIP: script(1) and setsid(1) (util-linux) are needed" >&2
	exit 77
fi

DENIED=122
APPROVAL=123

# gate ARG...: zsp-run -c with the test's policy and a private store, as $who in $ws, with no
# controlling terminal (setsid) and nothing on stdin: an `ask` cannot be answered here.
gate() {
	(cd "$ws" && as "$who" setsid -w "$ZSP_RUN" -D HOME="$home" -p "$policy" --state-dir "$st" \
		--runtime-dir "$rt" "$@") \
		</dev/null >"$tmp/out" 2>"$tmp/err"
}

# expect WANT WHAT ARG...: gate ARG... exits WANT.
expect() {
	want=$1 what=$2
	shift 2
	gate "$@"
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, expected $want"; sed 's/^/  | /' "$tmp/err" | head -5; fi
}

# prompt INPUT ARG...: zsp-run -c on a terminal of its own (script's pty) with INPUT (printf
# format) typed into it; the terminal's output lands in $tmp/out. Sets $got. script runs the
# line with $SHELL -c (dash when SHELL is unset, as under CI): `exec` makes zsp-run the terminal's
# foreground process itself, or a Ctrl-C would also kill the waiting shell (exit 130) and hide
# zsp-run's own status.
prompt() {
	input=$1
	shift
	line="exec '$ZSP_RUN' -D HOME='$home' -p '$policy' --state-dir '$st' --runtime-dir '$rt'"
	for a in "$@"; do
		line="$line '$a'"
	done
	(cd "$ws" && printf "$input" | as "$who" script -qec "$line" /dev/null) >"$tmp/out" 2>&1
	got=$?
}

# zspc ARG...: the zspc the printed `zspc grant add` command runs, as $who.
zspc() {
	(cd "$ws" && as "$who" "$ZSPC" "$@")
}

# approve_once WHAT WANT COMMAND FILE: the `zspc grant add` line zsp-run printed (in $tmp/err)
# begins with WANT; run as printed, it lets COMMAND run once (it makes FILE), and no more.
approve_once() {
	grant=$(sed -n 's/^  \(zspc grant add .*\)$/\1/p' "$tmp/err")
	case $grant in
	"$2"*) ok ;;
	*) bad "$1: unexpected grant command: $grant" ;;
	esac
	eval "$grant" >/dev/null 2>"$tmp/zerr" && ok || bad "$1: the printed grant command failed: $(cat "$tmp/zerr")"
	expect 0 "$1: the once grant allows the next run" -c "$3"
	[ -e "$4" ] && ok || bad "$1: the granted command did not run"
	expect $APPROVAL "$1: the once grant is used up" -c "$3"
}

for who in $(identities); do
	fresh "$who"
	policy=$top_srcdir/tests/e2e/policies/ask.zsp   # for nobody a copy (lib.sh)
	st=$world/state
	rt=$shm/$who.run   # on a tmpfs: thread grants are kept nowhere else
	mkdir -m 700 "$rt"
	if [ "$who" = nobody ]; then chown 65534:65534 "$rt"; fi

	# the oracle decides alone
	expect 0 "allow: runs" -c 'ls src'
	grep -qx main.rs "$tmp/out" && ok || bad "allow: ls src printed: $(cat "$tmp/out")"
	expect 2 "allow: the command's status" -c 'ls missing'
	expect $DENIED "deny" -c 'git push origin main'
	grep -qF 'zsp-run: denied: rule (' "$tmp/err" && grep -qF 'git\s+push' "$tmp/err" && ok ||
		bad "deny: no reason and rule: $(cat "$tmp/err")"
	expect $DENIED "a substitution is denied" -c 'ls $(touch subst)'
	[ ! -e "$ws/subst" ] && ok || bad "a denied command ran"

	# ask without a terminal: 123 and the grant that would approve it, which works exactly once
	expect $APPROVAL "ask without a terminal" -c "touch 'once file'"
	[ ! -e "$ws/once file" ] && ok || bad "an unanswered ask ran"
	grep -q "approval needed: tool-default" "$tmp/err" && ok || bad "ask: no reason: $(cat "$tmp/err")"
	approve_once "ask" "zspc grant add --tool terminal --exact 'touch '\''once file'\''' --allow --once" \
		"touch 'once file'" "$ws/once file"
	expect $APPROVAL "a once grant is for that exact command" -c "touch 'once file' "

	# a command with control characters: the approval printed without them (stderr is often a
	# terminal it could redraw), and read back exactly by --exact-escaped
	ctl=$(printf 'touch c1 # \033[2K\rls\342\200\256')
	expect $APPROVAL "ask with control characters" -c "$ctl"
	if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$tmp/err" ||
		grep -q "$(printf '\342\200\256')" "$tmp/err"; then
		bad "control characters reached stderr: $(od -c "$tmp/err" | head -5)"
	else
		ok
	fi
	approve_once "control characters" \
		"zspc grant add --tool terminal --exact-escaped 'touch c1 # \x1b[2K\rls\u{202e}' --allow --once" \
		"$ctl" "$ws/c1"

	# the prompt on a terminal
	prompt 'o\n' -c 'touch o1'
	[ "$got" -eq 0 ] && [ -e "$ws/o1" ] && ok || bad "prompt o: exit $got, ran: $(ls "$ws")"
	grep -qF '[o]nce / [t]his thread / [p]roject (always in ' "$tmp/out" && ok || bad "prompt: no menu: $(cat "$tmp/out")"
	grep -qF 'touch o1' "$tmp/out" && grep -qF 'because: tool-default' "$tmp/out" && ok ||
		bad "prompt: the command or the reason is not shown: $(cat "$tmp/out")"
	expect $APPROVAL "prompt o: once only" -c 'touch o1'

	prompt 'p\n' -c 'touch p1'
	[ "$got" -eq 0 ] && [ -e "$ws/p1" ] && ok || bad "prompt p: exit $got"
	rm -f "$ws/p1"
	expect 0 "prompt p: always in this project" -c 'touch p1'
	[ -e "$ws/p1" ] && ok || bad "prompt p: the second run did not run"
	mkdir -p "$ws/sub"
	chown -R --reference="$ws" "$ws/sub"
	expect $APPROVAL "prompt p: not in another project" --project "$ws/sub" -c 'touch p1'

	prompt 't\nd\n' -c 'touch t1'
	[ "$got" -eq $DENIED ] && grep -q 'started without --thread' "$tmp/out" && ok ||
		bad "prompt t without --thread: exit $got: $(cat "$tmp/out")"
	prompt 't\n' --thread T1 -c 'touch t1'
	[ "$got" -eq 0 ] && [ -e "$ws/t1" ] && ok || bad "prompt t: exit $got: $(cat "$tmp/out")"
	expect 0 "prompt t: the same thread again" --thread T1 -c 'touch t1'
	expect $APPROVAL "prompt t: not another thread" --thread T2 -c 'touch t1'
	expect $APPROVAL "prompt t: not without a thread" -c 'touch t1'

	prompt 'd\n' -c 'touch d1'
	[ "$got" -eq $DENIED ] && ok || bad "prompt d: exit $got"
	grep -q 'denied at the prompt (deny)' "$tmp/out" && ok || bad "prompt d: no message: $(cat "$tmp/out")"
	prompt 'maybe\n' -c 'touch d1'
	[ "$got" -eq $DENIED ] && grep -q 'please answer o, t, p or d' "$tmp/out" && ok ||
		bad "an unknown answer: exit $got: $(cat "$tmp/out")"
	prompt '' -c 'touch d1'
	[ "$got" -eq $DENIED ] && grep -q 'end of input' "$tmp/out" && ok || bad "prompt EOF: exit $got: $(cat "$tmp/out")"

	# Ctrl-C once the question is on the screen (typed earlier, it would stop zsp-run before it asks)
	rm -f "$tmp/in"
	mkfifo "$tmp/in"
	line="exec '$ZSP_RUN' -D HOME='$home' -p '$policy' --state-dir '$st' --runtime-dir '$rt' -c 'touch d1'"
	(cd "$ws" && as "$who" script -qec "$line" /dev/null) <"$tmp/in" >"$tmp/out" 2>&1 &
	bg=$!
	exec 3>"$tmp/in"
	i=0
	while ! grep -qF '[d]eny ?' "$tmp/out" && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	printf '\003' >&3
	exec 3>&-
	wait $bg
	got=$?
	[ "$got" -eq $DENIED ] && grep -q 'denied at the prompt (interrupted)' "$tmp/out" && ok ||
		bad "prompt Ctrl-C: exit $got: $(cat "$tmp/out")"
	[ ! -e "$ws/d1" ] && ok || bad "a denied command ran"

	# what a command shows on the prompt cannot redraw it: control characters are escaped
	esc=$(printf 'touch x\033[2K\rfine')
	prompt 'd\n' -c "$esc"
	grep -qF 'touch x\x1b[2K\rfine' "$tmp/out" && ok || bad "control characters reached the terminal: $(od -c "$tmp/out" | head)"

	# the audit trail has every decision, the prompt's answers and the grants that allowed
	if zspc audit --state-dir "$st" >"$tmp/audit" 2>"$tmp/zerr"; then
		for want in 'allow terminal "ls src"' 'deny terminal "git push origin main"' \
			'ask terminal "touch o1"' 'reason=grant' 'reason=prompt rule="deny"' \
			'reason=prompt rule="interrupted"' 'reason=prompt rule="end of input"'; do
			grep -qF "$want" "$tmp/audit" && ok || bad "the audit trail lacks: $want"
		done
		n=$(grep -c 'terminal "touch o1"' "$tmp/audit")
		[ "$n" -eq 3 ] && ok || bad "touch o1: $n audit records, expected 3 (ask, allow by grant, ask)"
	else
		bad "zspc audit failed: $(cat "$tmp/zerr")"
	fi

	# a store that cannot be opened is an audit trail that cannot be written: nothing runs
	# (fail closed, doc/store.md), not even what the policy allows; --no-audit decides without
	# grants and records nothing, and is never allowed more because of it
	chmod 777 "$st"
	rm -f "$ws/unaudited"
	expect 125 "an unusable store: nothing runs" -c 'touch unaudited'
	[ ! -e "$ws/unaudited" ] && ok || bad "an unusable store: the command ran without an audit record"
	grep -q "no audit trail, so nothing runs" "$tmp/err" && ok || bad "an unusable store is not explained: $(cat "$tmp/err")"
	expect 0 "an unusable store, --no-audit: allow still runs" --no-audit -c 'ls src'
	grep -q "deciding without grants" "$tmp/err" && ok || bad "--no-audit is not reported: $(cat "$tmp/err")"
	expect $APPROVAL "an unusable store, --no-audit: ask stays ask" --no-audit -c 'touch p1'
	chmod 700 "$st"
	expect 64 "--no-audit without -c" --no-audit -- true

	# --shell: the command runs with that shell, and the oracle judges it as that shell runs it
	policy=$top_srcdir/tests/e2e/policies/shells.zsp
	expect 1 "--shell /bin/bash: pipefail" --shell /bin/bash -c 'set -o pipefail; false | true'
	printf 'greet() { echo "hello from $1"; }\n' >"$ws/lib.sh"
	expect 0 "--shell /bin/bash: source" --shell /bin/bash -c 'source ./lib.sh; greet bash'
	grep -qx "hello from bash" "$tmp/out" && ok || bad "source: $(cat "$tmp/out" "$tmp/err")"
	# known by the file the path resolves to: a link named mysh to bash is bash, one named
	# bash to env is not a shell the oracle models, nor is a bash the sandbox may write
	mkdir -p "$world/bin" "$ws/tools"
	ln -s /bin/bash "$world/bin/mysh"
	ln -s /usr/bin/env "$world/bin/bash"
	cp /bin/bash "$ws/tools/bash"
	expect 1 "--shell: a link to bash is bash" --shell "$world/bin/mysh" -c 'set -o pipefail; false | true'
	for sh in "$world/bin/bash" "$ws/tools/bash" /nonexistent/zsh; do
		expect $APPROVAL "--shell $sh: an allow becomes ask" --shell "$sh" -c 'echo ran'
		grep -q "approval needed: unsupported" "$tmp/err" && ok || bad "--shell $sh: $(cat "$tmp/err")"
		[ ! -s "$tmp/out" ] && ok || bad "--shell $sh: the command ran"
		expect $DENIED "--shell $sh: a deny stands" --shell "$sh" -c 'rm -rf src'
		[ -d "$ws/src" ] && ok || bad "--shell $sh: a denied command ran"
	done
	rm -rf "$ws/tools" "$ws/lib.sh"
	expect 64 "--shell needs an absolute path" --shell bash -c 'true'
	expect 64 "--shell goes with -c" --shell /bin/bash -- true
	policy=$top_srcdir/tests/e2e/policies/ask.zsp

	# usage
	expect 64 "--thread without -c" --thread T1 -- true
	expect 64 "-c and a command" -c 'ls' -- ls
	expect 64 "--project that does not exist" --project "$world/none" -c 'ls'
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
