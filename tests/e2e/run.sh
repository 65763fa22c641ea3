#!/bin/sh
# run.sh: zsp-run's contract, for real (bwrap, seccomp, the kernel): exit statuses (127 and 126
# from the exec step), the setup failure code, no placeholder left behind, the environment and
# descriptors that reach the sandbox, the built-in default policy, --print, --strict, --doctor. Each case runs as the
# current user and, under root, again as uid 65534.

zsp_suite=e2e-run zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# wait_for_pattern PATTERN: up to 10 s for a process whose command line matches (pgrep -f)
wait_for_pattern() {
	i=0
	while ! pgrep -f -- "$1" >/dev/null 2>&1 && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# expect_rc WANT WHAT CMD...: the exit status of CMD (run in $ws as $who) is WANT.
expect_rc() {
	want=$1 what=$2
	shift 2
	(cd "$ws" && as "$who" "$@") >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, expected $want"; sed 's/^/  | /' "$tmp/err" | head -5; fi
}

for who in $(identities); do
	fresh "$who"

	expect_rc 0 "true runs" "$ZSP_RUN" -- true
	expect_rc 7 "the command's exit status" "$ZSP_RUN" -- sh -c 'exit 7'
	expect_rc 137 "128+N for a signal" "$ZSP_RUN" -- sh -c 'kill -9 $$'
	expect_rc 0 "write in the workspace" "$ZSP_RUN" -- sh -c 'echo ok > built.txt'
	[ -f "$ws/built.txt" ] && ok || bad "the workspace write did not reach the host"
	expect_rc 2 "write outside the workspace" "$ZSP_RUN" -- sh -c "echo x > $world/outside.txt"
	[ ! -e "$world/outside.txt" ] && ok || bad "a write outside the workspace reached the host"
	expect_rc 0 "--no-proc: neither a /proc nor the host's" "$ZSP_RUN" --no-proc -- sh -c 'test ! -e /proc/self/status && test ! -e /proc/1'
	expect_rc 0 "/proc inside by default" "$ZSP_RUN" -- sh -c 'test -e /proc/self/status'
	expect_rc 64 "no command" "$ZSP_RUN"
	expect_rc 64 "unknown option" "$ZSP_RUN" --bogus -- true
	expect_rc 66 "missing policy file" "$ZSP_RUN" -p "$tmp/none.zsp" -- true
	printf 'zsp 1;\npolicy "x" { fs { read "/" } }\n' >"$tmp/broken.zsp"
	expect_rc 1 "policy with errors" "$ZSP_RUN" -p "$tmp/broken.zsp" -- true

	# the exec step (zsp-exec): 127 and 126 as bash gives them, said on stderr, the name escaped
	expect_rc 127 "a command not found" "$ZSP_RUN" -- zsp-no-such-command
	grep -qx "zsp-run: zsp-no-such-command: command not found" "$tmp/err" && ok ||
		bad "no 'command not found': $(cat "$tmp/err")"
	expect_rc 127 "a path that does not exist" "$ZSP_RUN" -- ./no-such-file
	grep -qx "zsp-run: ./no-such-file: No such file or directory" "$tmp/err" && ok || bad "127: $(cat "$tmp/err")"
	expect_rc 126 "a file that is not executable" "$ZSP_RUN" -- "$ws/src/main.rs"
	grep -qx "zsp-run: $ws/src/main.rs: Permission denied" "$tmp/err" && ok || bad "126: $(cat "$tmp/err")"
	expect_rc 126 "a directory" "$ZSP_RUN" -- "$ws/src"
	grep -qx "zsp-run: $ws/src: Is a directory" "$tmp/err" && ok || bad "126 (directory): $(cat "$tmp/err")"
	printf '\177ELF\000x' >"$ws/bad"
	printf 'echo "script:$0:$1"\n' >"$ws/s"
	chmod 755 "$ws/bad" "$ws/s"
	expect_rc 126 "a file that is not a program" "$ZSP_RUN" -- ./bad
	grep -qx "zsp-run: ./bad: cannot execute binary file: Exec format error" "$tmp/err" && ok || bad "ENOEXEC: $(cat "$tmp/err")"
	expect_rc 0 "a script without #! runs with /bin/sh" "$ZSP_RUN" -- ./s x
	grep -qx "script:./s:x" "$tmp/out" && ok || bad "a script without #!: $(cat "$tmp/out" "$tmp/err")"
	rm -f "$ws/bad" "$ws/s"
	expect_rc 127 "a name with control characters" "$ZSP_RUN" -- "$(printf 'zsp\033[2Jx')"
	grep -qx 'zsp-run: zsp\\x1b\[2Jx: command not found' "$tmp/err" && ! grep -q "$(printf '\033')" "$tmp/err" && ok ||
		bad "the name was not escaped: $(od -c "$tmp/err" | head -3)"
	# a directory of $PATH the user cannot search is passed over (execvp would say EACCES: 126)
	mkdir -m 000 "$world/locked"
	expect_rc 127 "an unsearchable PATH entry" env PATH="$world/locked:/usr/bin:/bin" "$ZSP_RUN" -D HOME="$home" -- zsp-no-such-command
	expect_rc 0 "the command's argv, argv[0] included" "$ZSP_RUN" -- sh -c 'printf "%s|" "$0" "$@"' zero one 'two words'
	[ "$(cat "$tmp/out")" = "zero|one|two words|" ] && ok || bad "argv changed: $(cat "$tmp/out")"
	expect_rc 0 "the environment is the policy's, nothing added" env -i PATH=/usr/bin:/bin HOME="$home" \
		TMPDIR="$tmpdir" LANG=C.UTF-8 SECRET_TOKEN=x "$ZSP_RUN" -D HOME="$home" -- env
	# (PWD is bwrap's, for --chdir; the caches' variables are the built-in `cache` rule's, each
	# naming the sandbox's own cache in zsp's state directory)
	caches='^(GOCACHE|GOMODCACHE|PIP_CACHE_DIR|UV_CACHE_DIR|npm_config_cache)='
	[ "$(sort "$tmp/out" | grep -Ev "$caches" | tr '\n' ' ')" = "HOME=$home LANG=C.UTF-8 PATH=/usr/bin:/bin PWD=$ws TMPDIR=$tmpdir " ] && ok ||
		bad "the environment: $(sort "$tmp/out" | tr '\n' ' ')"
	[ "$(grep -Ec "$caches$home/.local/state/zsp/sandboxes/[0-9a-f]+/cache/" "$tmp/out")" -eq 5 ] && ok ||
		bad "the caches' variables do not name the sandbox's caches: $(grep -E "$caches" "$tmp/out" | tr '\n' ' ')"
	expect_rc 0 "no descriptor but stdio reaches the command" "$ZSP_RUN" -- sh -c 'ls /proc/$$/fd'
	[ "$(sort -n "$tmp/out" | tr '\n' ' ')" = "0 1 2 " ] && ok || bad "descriptors in the sandbox: $(tr '\n' ' ' <"$tmp/out")"
	expect_rc 0 "--no-proc: the exec step runs" "$ZSP_RUN" --no-proc -- sh -c 'exit 0'
	expect_rc 127 "--no-proc: 127 still" "$ZSP_RUN" --no-proc -- zsp-no-such-command
	expect_rc 0 "the sandbox cannot replace the exec step" "$ZSP_RUN" -- sh -c \
		'! { echo x > /dev/zsp-exec || rm -f /dev/zsp-exec || mv /dev/zsp-exec /dev/x || umount /dev/zsp-exec; } 2>/dev/null && test -x /dev/zsp-exec'
	expect_rc 0 "--print shows the exec step" "$ZSP_RUN" --print
	# (after the exec step, the files zsp-run masks itself: doc/linux.md "Masks")
	[ "$(grep -v '^# masked by zsp-run: ' "$tmp/out" | tail -n 3 | tr '\n' ' ')" = "--ro-bind-fd 7 /dev/zsp-exec " ] &&
		ok || bad "--print: $(tail -n 3 "$tmp/out" | tr '\n' ' ')"
	# a zsp-run without its exec step beside it is a setup error, and nothing runs
	mkdir -p "$world/lonely"
	copy_program "$ZSP_RUN" "$world/lonely/zsp-run"
	expect_rc 125 "no exec step" "$world/lonely/zsp-run" -D HOME="$home" -- sh -c "touch $world/ran-lonely"
	grep -q "exec step $world/lonely/zsp-exec cannot be used" "$tmp/err" && ok || bad "no exec step: $(cat "$tmp/err")"
	! grep -q "env clear dropped" "$tmp/err" && ok || bad "a setup failure named dropped variables: $(cat "$tmp/err")"
	[ ! -e "$world/ran-lonely" ] && ok || bad "the command ran without the exec step"
	# a mount bwrap fails after it started its child: the command never ran, so 125, not bwrap's 1
	real=$(command -v bwrap)
	cat >"$tmp/failing-bwrap.$who" <<EOS
#!/bin/sh
exec "$real" --ro-bind /nonexistent/zsp-source /zsp-target "\$@"
EOS
	chmod 755 "$tmp/failing-bwrap.$who"
	expect_rc 125 "a mount that fails inside bwrap" env ZSP_BWRAP="$tmp/failing-bwrap.$who" "$ZSP_RUN" -- sh -c "touch $world/ran-failing"
	grep -q "Can't find source path /nonexistent/zsp-source" "$tmp/err" && grep -q "could not be set up" "$tmp/err" && ok ||
		bad "a failed mount: $(cat "$tmp/err")"
	[ ! -e "$world/ran-failing" ] && ok || bad "the command ran although a mount failed"

	# setup failures: 125, a reason, and the command never runs
	marker=$world/ran
	expect_rc 125 "bwrap that fails" env ZSP_BWRAP=/bin/false "$ZSP_RUN" -- sh -c "touch $marker"
	grep -q "could not be set up" "$tmp/err" && ok || bad "no explanation for a failed setup"
	expect_rc 125 "bwrap missing" env ZSP_BWRAP=/nonexistent/bwrap "$ZSP_RUN" -- sh -c "touch $marker"
	grep -q "install bubblewrap" "$tmp/err" && ok || bad "no remedy for a missing bwrap"
	[ ! -e "$marker" ] && ok || bad "the command ran although the sandbox failed"

	# the environment failures bwrap reports (doc/facts.md §bwrap) are recognised and explained
	real=$(command -v bwrap)
	fake=$tmp/fake-bwrap.$who
	for failure in userns proc net; do
		case $failure in
		userns) msg="bwrap: setting up uid map: Permission denied" pat="--unshare-user" hint="forbids new namespaces" ;;
		proc) msg="bwrap: Can't mount proc on /newroot/proc: Operation not permitted" pat="--proc" hint="--no-proc" ;;
		net) msg="bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted" pat="--unshare-net" hint="network namespace" ;;
		esac
		cat >"$fake" <<EOS
#!/bin/sh
# a bwrap that fails the way $failure failures look, for whatever asks for $pat
args="\$*"
if [ "\$1" = --args ]; then args=\$(tr '\\000' ' ' <&5); fi
case " \$args " in *" $pat "*) echo "$msg" >&2; exit 1 ;; esac
exec "$real" "\$@"
EOS
		chmod 755 "$fake"
		expect_rc 125 "$failure failure" env ZSP_BWRAP="$fake" "$ZSP_RUN" -- sh -c "touch $marker"
		grep -q -- "$hint" "$tmp/err" && ok || { bad "$failure failure not explained (wanted: $hint)"; sed 's/^/  | /' "$tmp/err"; }
	done
	[ ! -e "$marker" ] && ok || bad "the command ran although the sandbox failed"

	# a signal to zsp-run reaches the sandbox; zsp-run still cleans up and reports 128+N
	(cd "$ws" && as "$who" "$ZSP_RUN" -- sleep 31) >/dev/null 2>&1 &
	bg=$!
	wait_for_pattern "^sleep 31" # the sandboxed command runs: zsp-run is waiting for it
	pkill -TERM -f -- "zsp-run .*-- sleep 31"
	wait "$bg"
	got=$?
	[ "$got" -eq 143 ] && ok || bad "SIGTERM: exit $got, expected 143"
	left=$(cd "$ws" && ls -A | grep -c -e '^\.codex$' -e '^\.claude$')
	[ "$left" -eq 0 ] && ok || bad "placeholders left after SIGTERM"

	# no placeholders: a missing protected name is not masked (nothing of ours shows in the tree
	# during the run), and what the command creates there is moved aside after it
	before=$(cd "$ws" && ls -A | sort | tr '\n' ' ')
	expect_rc 0 "nothing shows in the tree" "$ZSP_RUN" -- sh -c 'ls -A'
	[ "$(sort "$tmp/out" | tr '\n' ' ')" = "$before" ] && ok ||
		bad "the sandbox sees placeholders: [$(sort "$tmp/out" | tr '\n' ' ')], host [$before]"
	expect_rc 0 "a missing protected name, created" "$ZSP_RUN" -- sh -c 'mkdir -p .codex .claude/commands && echo x > .codex/config.toml && echo y > .claude/commands/evil.md'
	[ ! -e "$ws/.codex" ] && [ ! -e "$ws/.claude/commands" ] &&
		[ -e "$ws/.codex.zsp-blocked/config.toml" ] && [ -e "$ws/.claude/commands.zsp-blocked/evil.md" ] && ok ||
		bad "a protected name the command created is still there: $(cd "$ws" && find .codex .claude 2>&1 | tr '\n' ' ')"
	[ "$(grep -c "blocked for the host: .*/\.c" "$tmp/err")" -eq 2 ] && ok ||
		bad "not reported on stderr: $(cat "$tmp/err")"
	rm -rf "$ws/.codex.zsp-blocked" "$ws/.claude"
	after=$(cd "$ws" && ls -A | sort | tr '\n' ' ')
	[ "$before" = "$after" ] && ok || bad "left in the workspace: [$before] -> [$after]"
	left=$(cd "$tmpdir" && ls -A)
	[ -z "$left" ] && ok || bad "left in TMPDIR: $left"

	# environment: a secret not on the keep list stays out; bwrap runs without LD_PRELOAD
	expect_rc 0 "env" env API_TOKEN=s3cret "$ZSP_RUN" -- env
	grep -q API_TOKEN "$tmp/out" && bad "a secret variable reached the sandbox" || ok
	# env keep "LC_*" (the built-in policy's) passes the locale categories, not any LC_ name
	expect_rc 0 "env LC_*" env LC_EVIL=1 LC_X=y LC_ALL=C.UTF-8 "$ZSP_RUN" -- env
	grep -qx LC_ALL=C.UTF-8 "$tmp/out" && ! grep -q -e '^LC_EVIL=' -e '^LC_X=' "$tmp/out" && ok ||
		bad "env keep \"LC_*\" let through: $(grep '^LC_' "$tmp/out" | tr '\n' ' ')"
	expect_rc 0 "--print LC_*" env LC_EVIL=1 LC_X=y LC_ALL=C.UTF-8 "$ZSP_RUN" --print
	grep -qx LC_ALL "$tmp/out" && ! grep -q -e '^LC_EVIL$' -e '^LC_X$' "$tmp/out" && ok ||
		bad "--print: env keep \"LC_*\" let through: $(grep '^LC_' "$tmp/out" | tr '\n' ' ')"
	# the built-in keep list passes the toolchains' variables (doc/linux.md "The built-in
	# policy's environment"), never credentials
	expect_rc 0 "toolchain variables" env RUSTUP_HOME=/opt/rustup CARGO_HOME=/opt/cargo GOPATH=/opt/go \
		JAVA_HOME=/opt/jdk VIRTUAL_ENV=/opt/venv PYTHONPATH=/opt/py NODE_OPTIONS=--no-warnings "$ZSP_RUN" -- env
	n=$(grep -c -x -e RUSTUP_HOME=/opt/rustup -e CARGO_HOME=/opt/cargo -e GOPATH=/opt/go -e JAVA_HOME=/opt/jdk \
		-e VIRTUAL_ENV=/opt/venv -e PYTHONPATH=/opt/py -e NODE_OPTIONS=--no-warnings "$tmp/out")
	[ "$n" -eq 7 ] && ok || bad "toolchain variables: $n of 7 reached the sandbox: $(tr '\n' ' ' <"$tmp/out")"
	expect_rc 0 "credentials" env GITHUB_TOKEN=t1 NPM_TOKEN=t2 AWS_SECRET_ACCESS_KEY=t3 SSH_AUTH_SOCK=/t4 \
		GOPROXY=https://u:t5@proxy CARGO_REGISTRY_TOKEN=t6 "$ZSP_RUN" -- env
	grep -q -e '=t[1-6]$' -e '^SSH_AUTH_SOCK=' -e t5@ "$tmp/out" && bad "a credential reached the sandbox: $(grep -e TOKEN -e AWS -e SSH -e GOPROXY "$tmp/out")" || ok
	# a command that fails is told which variables env clear kept from it: names, never values
	# (in an environment of the test's own: the one it runs in is anyone's)
	set -- env -i PATH=/usr/bin:/bin HOME="$home" TMPDIR="$tmpdir" LANG=C.UTF-8
	hint="(zsp-run -v shows the environment handed in)"
	expect_rc 3 "a failure names what env clear dropped" "$@" FOO_HOME=zsp-value-marker XYZ=1 OLDPWD=/ \
		"$ZSP_RUN" -D HOME="$home" -- sh -c 'exit 3'
	grep -qxF "zsp-run: the policy's env clear dropped: FOO_HOME, XYZ $hint" "$tmp/err" &&
		! grep -q zsp-value-marker "$tmp/err" && ok || bad "the dropped variables after a failure: $(cat "$tmp/err")"
	expect_rc 127 "... and so is a command not found" "$@" FOO_HOME=x "$ZSP_RUN" -D HOME="$home" -- zsp-no-such-command
	grep -qxF "zsp-run: the policy's env clear dropped: FOO_HOME $hint" "$tmp/err" && ok ||
		bad "127: no dropped variables: $(cat "$tmp/err")"
	expect_rc 0 "a success is not" "$@" FOO_HOME=x "$ZSP_RUN" -D HOME="$home" -- true
	! grep -q "env clear dropped" "$tmp/err" && ok || bad "the dropped variables after a success: $(cat "$tmp/err")"
	expect_rc 1 "nothing dropped (but the shell's own), nothing said" "$@" OLDPWD=/ SHLVL=2 "$ZSP_RUN" -D HOME="$home" -- false
	! grep -q "env clear dropped" "$tmp/err" && ok || bad "a hint with nothing dropped: $(cat "$tmp/err")"
	expect_rc 1 "a short list, places first" "$@" A1=1 A2=1 A3=1 A4=1 A5=1 A6=1 A7=1 A8=1 A9=1 TOOL_ROOT=/t \
		"$ZSP_RUN" -D HOME="$home" -- false
	grep -qxF "zsp-run: the policy's env clear dropped: TOOL_ROOT, A1, A2, A3, A4, A5, A6, A7 and 2 more $hint" "$tmp/err" &&
		ok || bad "the short list: $(cat "$tmp/err")"
	expect_rc 1 "a dropped name is escaped" "$@" "$(printf 'ZSP\033[2JX')=1" "$ZSP_RUN" -D HOME="$home" -- false
	grep -qxF "zsp-run: the policy's env clear dropped: ZSP\\x1b[2JX $hint" "$tmp/err" &&
		! grep -q "$(printf '\033')" "$tmp/err" && ok || bad "a dropped name was not escaped: $(od -c "$tmp/err" | head -3)"
	# -v: the environment handed in (values: the user's own), the names dropped, the command
	expect_rc 0 "-v" "$@" FOO_HOME=zsp-value-marker "$ZSP_RUN" -D HOME="$home" -v -- sh -c 'exit 0'
	grep -qx "  LANG=C.UTF-8" "$tmp/err" && grep -qx "  PATH=/usr/bin:/bin" "$tmp/err" &&
		grep -qxF "zsp-run: the policy's env clear dropped: FOO_HOME" "$tmp/err" &&
		grep -qxF "zsp-run: the command: sh -c 'exit 0' (through /dev/zsp-exec)" "$tmp/err" &&
		! grep -q zsp-value-marker "$tmp/err" && ok || bad "-v: $(cat "$tmp/err")"
	set --
	expect_rc 0 "LD_PRELOAD" env LD_PRELOAD=/nonexistent/zsp-preload.so "$ZSP_RUN" -- true
	# the loader complains once per program that gets the variable: zsp-run only
	n=$(grep -c "zsp-preload" "$tmp/err")
	[ "$n" -eq 1 ] && ok || bad "LD_PRELOAD reached $n programs (bwrap must not get it)"

	# ~ is the account's home whatever $HOME says: without -D HOME (env keeps `as` from adding
	# it), the world's home is an ordinary directory, and zsp-run says once why
	expect_rc 0 "\$HOME does not choose ~" env "$ZSP_RUN" -- cat "$home/.ssh/id_ed25519"
	grep -qx "PRIVATE KEY" "$tmp/out" && ok || bad "\$HOME chose what ~ denies"
	[ "$(grep -c "^zsp-run: warning: \$HOME is $home, but ~ in the policy means your account's home" "$tmp/err")" -eq 1 ] &&
		ok || bad "no warning that \$HOME is not ~: $(cat "$tmp/err")"
	expect_rc 1 "-D HOME chooses ~" "$ZSP_RUN" -- cat "$home/.ssh/id_ed25519"
	! grep -q "warning: \$HOME" "$tmp/err" && ok || bad "a warning about \$HOME despite -D HOME"

	# descriptors: an fd open in zsp-run's caller does not reach the sandbox
	expect_rc 0 "descriptors" sh -c "exec 9<'$home/.ssh/id_ed25519'; '$ZSP_RUN' -- ls /proc/self/fd"
	fds=$(tr '\n' ' ' <"$tmp/out")
	case " $fds " in
	*" 9 "*) bad "fd 9 reached the sandbox: $fds" ;;
	*) ok ;;
	esac

	# bwrap's command line shows no environment values (they travel through a memfd)
	(cd "$ws" && as "$who" env PATH=/usr/bin:/bin:/zsp-marker-path "$ZSP_RUN" -- sleep 3) &
	bg=$!
	wait_for_pattern "^sleep 3"
	seen=0
	for pid in $(pgrep -x bwrap); do
		{ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q zsp-marker-path && seen=1
	done
	wait $bg
	[ "$seen" -eq 0 ] && ok || bad "bwrap's command line shows the environment"

	# the built-in default is examples/workspace.zsp (zsp's state directories are hidden by
	# zsp-run only: left out of the comparison)
	(cd "$ws" && as "$who" "$ZSP_RUN" --print) >"$tmp/builtin" 2>/dev/null
	(cd "$ws" && as "$who" "$ZSP_RUN" -p "$top_srcdir/examples/workspace.zsp" --print) >"$tmp/example" 2>/dev/null
	if [ -s "$tmp/builtin" ] && cmp -s "$tmp/builtin" "$tmp/example"; then ok; else bad "the built-in policy differs from examples/workspace.zsp"; fi
	(cd "$ws" && as "$who" "$ZSPC" -D HOME="$home" --emit bwrap "$top_srcdir/examples/workspace.zsp") >"$tmp/zspc" 2>/dev/null
	# zsp-run hides zsp's own state directories (grants, the sandboxes' caches) on top of the
	# policy's lowering, once they exist: those masks are its own, not zspc's
	awk -f "$self_srcdir/tests/state-masks.awk" "$tmp/builtin" >"$tmp/builtin.policy"
	awk -f "$self_srcdir/tests/state-masks.awk" "$tmp/zspc" >"$tmp/zspc.policy"
	grep -q '^# mask ' "$tmp/zspc.policy" && ok || bad "the comparison of zsp-run --print and zspc has no mask to compare"
	cmp -s "$tmp/builtin.policy" "$tmp/zspc.policy" && ok || bad "zsp-run --print and zspc --emit bwrap disagree"

	# what Linux cannot enforce as written is said at every run, unless silenced
	expect_rc 0 "-Wunenforced by default" "$ZSP_RUN" -- true
	grep -q "warning: .*\[-Wunenforced\]" "$tmp/err" && ok || bad "a run did not warn about an unenforced rule"
	expect_rc 0 "-Wno-unenforced" "$ZSP_RUN" -Wno-unenforced -- true
	! grep -q "unenforced" "$tmp/err" && ok || bad "-Wno-unenforced did not silence: $(cat "$tmp/err")"
	# --strict judges opens at access time, so the built-in policy's globs hold as written
	# (tests/e2e/strict.sh); a rule that still cannot be enforced refuses the run
	expect_rc 0 "--strict runs the built-in policy" "$ZSP_RUN" --strict -- true
	! grep -q "unenforced" "$tmp/err" && ok || bad "--strict still warns about the built-in policy: $(cat "$tmp/err")"
	expect_rc 1 "--strict refuses what Linux cannot enforce" "$ZSP_RUN" --strict \
		-p "$top_srcdir/tests/e2e/policies/fullhost.zsp" -- true
	grep -q "error: .*mode full cannot refuse single hosts.*\[-Werror=unenforced\]" "$tmp/err" && ok ||
		bad "--strict did not name the warning: $(cat "$tmp/err")"
	# binary to a terminal is refused (script(1) gives zspc a pty)
	if command -v script >/dev/null 2>&1; then
		expect_rc 64 "--emit bpf to a terminal" script -qec "'$ZSPC' --emit bpf '$top_srcdir/examples/workspace.zsp'" /dev/null
		grep -q "writes a binary program" "$tmp/out" && ok || bad "--emit bpf to a terminal: no explanation"
	fi
	expect_rc 0 "--doctor" "$ZSP_RUN" --doctor
	grep -q "result: a sandbox can be built here" "$tmp/out" && ok || bad "--doctor: $(tail -1 "$tmp/out")"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
