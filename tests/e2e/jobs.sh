#!/bin/sh
# jobs.sh: everyday work under the built-in policy, as root and as uid 65534 (lib.sh): git
# (init, config, remote add, commit from a subdirectory, stash, checkout -b, worktrees,
# submodules), make and cc, bash -lc, a program on a pty, a tree past 200,000 entries, a
# tracked .env. Each job is checked from the host afterwards with the host's own git; what the
# sandbox must not pass to the host (a config key that runs a program) is checked there too.

zsp_suite=e2e-jobs zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# job WHAT DIR CMD...: CMD in DIR as $who (zsp-run -Wno-unenforced gets -D HOME); its output
# in $tmp/out and $tmp/err, its status in $rc.
job() {
	what=$1 dir=$2
	shift 2
	(cd "$dir" && as "$who" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}
# expect WANT: $rc of the last job is WANT.
expect() {
	if [ "$rc" -eq "$1" ]; then
		ok
	else
		bad "$what: exit $rc, expected $1"
		sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -8
	fi
}
check() { if eval "$2"; then ok; else bad "$what: $1"; sed 's/^/  | /' "$tmp/err" | head -4; fi; }
# host CMD...: the host's own command as $who, with no global or system git config.
host() {
	as "$who" env GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 "$@"
}
own() { if [ "$who" = nobody ]; then chown -R 65534:65534 "$@"; fi; }
gitc() { git -c user.name=t -c user.email=t@t -c init.defaultBranch=main -c safe.directory='*' "$@"; }
Z="$ZSP_RUN -Wno-unenforced"

for who in $(identities); do
	fresh "$who"
	Z="$ZSP_RUN -Wno-unenforced"
	export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
	M=$world/marker

	# -- git init in a fresh directory, and nothing of ours in the tree --
	p=$world/fresh
	mkdir -p "$p" && own "$p"
	job "git init + first commit" "$p" $Z -- sh -c 'git init -q -b main . && echo a >a && git add a &&
		git -c user.name=t -c user.email=t@t commit -q -m first && ls -A'
	expect 0
	check "the host sees the commit" '[ "$(host git -C "$p" log --format=%s)" = first ]'
	check "ls -A inside shows only what the job made" '[ "$(tr "\n" " " <"$tmp/out")" = ".git a " ]'
	check "the tree holds only what the job made" '[ "$(ls -A "$p" | tr "\n" " ")" = ".git a " ]'

	# -- an existing repository: config, remote add, checkout -b, stash, commit from a subdirectory --
	r=$world/repo
	mkdir -p "$r/src/deep" && (cd "$r" && gitc init -q && echo one >src/deep/f && gitc add . && gitc commit -q -m one) &&
		own "$r"
	job "git config + remote add" "$r" $Z -- sh -c 'git config user.name "Sand Box" &&
		git config user.email sb@example.com && git remote add origin https://example.com/r.git &&
		git config branch.main.remote origin && git config --get user.name'
	expect 0
	check "the sandbox reads back what it set" '[ "$(cat "$tmp/out")" = "Sand Box" ]'
	check "the host's config has the name" '[ "$(host git -C "$r" config user.name)" = "Sand Box" ]'
	check "the host's config has the remote" '[ "$(host git -C "$r" remote get-url origin)" = https://example.com/r.git ]'
	check "nothing said about the config" '! grep -q "not applied" "$tmp/err"'
	job "git checkout -b" "$r" $Z -- git checkout -q -b feature
	expect 0
	check "the host is on the new branch" '[ "$(host git -C "$r" branch --show-current)" = feature ]'
	echo two >"$r/src/deep/f" && own "$r"
	job "git stash" "$r" $Z -- sh -c 'git stash -q && test "$(cat src/deep/f)" = one && git stash pop -q'
	expect 0
	check "the change is back after stash pop" '[ "$(cat "$r/src/deep/f")" = two ]'
	job "git commit from a subdirectory" "$r/src/deep" $Z -- sh -c 'git commit -q -am two'
	expect 0
	check "the host sees the commit" '[ "$(host git -C "$r" log -1 --format=%s)" = two ]'
	check "the host's git status is clean" '[ -z "$(host git -C "$r" status --porcelain)" ]'

	# -- what must not reach the host: a key that runs a program, said on stderr --
	job "git config core.fsmonitor" "$r" $Z -- sh -c "git config core.fsmonitor 'touch $M' &&
		git config core.pager 'touch $M' && git config user.name Other"
	expect 0
	host git -C "$r" status >/dev/null 2>&1
	host git -C "$r" -p log -1 >/dev/null 2>&1
	check "the host's git did not run the sandbox's fsmonitor or pager" '[ ! -e "$M" ]'
	check "the fsmonitor is not in the host's config" '! host git -C "$r" config core.fsmonitor >/dev/null'
	check "the safe change beside it is applied" '[ "$(host git -C "$r" config user.name)" = Other ]'
	check "stderr names the key and the protection" 'grep -q "not applied to the host: .*config: core.fsmonitor" "$tmp/err"'

	# the host's git during the run: its config change is kept (the sandbox's is said, not
	# applied); for the index the sandbox's, the later writer, wins and that is said
	rm -f "$world/go" "$r/started"
	(cd "$r" && as "$who" $Z -- sh -c 'git config user.name InSandbox && echo x >x && git add x &&
		touch started && i=0 && while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done' sh "$world/go") \
		>"$tmp/out" 2>"$tmp/err" </dev/null &
	bgp=$!
	i=0
	while [ ! -e "$r/started" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	echo y >"$r/y" && own "$r/y"
	host git -C "$r" config user.email host@example.com && host git -C "$r" add y
	touch "$world/go"
	wait $bgp
	rc=$? what="the host's git during the run"
	expect 0
	check "the host's config change is kept" '[ "$(host git -C "$r" config user.email)" = host@example.com ]'
	check "the sandbox's config change is not applied over it" '[ "$(host git -C "$r" config user.name)" != InSandbox ]'
	check "and that is said" 'grep -q "not applied to the host: .*config: the host.s changed during the run" "$tmp/err"'
	check "the sandbox's index wins" '[ "$(host git -C "$r" diff --cached --name-only)" = x ]'
	check "and that is said" 'grep -q "index: the host.s changed during the run as well: the sandbox.s replaces it" "$tmp/err"'
	(cd "$r" && host git reset -q && rm -f x y started)

	# links in git's directory: the host's git would write through them
	job "links planted in .git" "$r" $Z -- sh -c 'rm .git/ORIG_HEAD 2>/dev/null; ln -s ../../victim .git/ORIG_HEAD &&
		mkdir .git/rebase-merge && ln -s ../../victim .git/rebase-merge/head-name && echo x >.git/rebase-merge/done'
	expect 0
	check "no link reached the host's .git" '[ -z "$(find "$r/.git" -maxdepth 2 -type l)" ]'
	check "the new directory reached the host, without the link" '[ -f "$r/.git/rebase-merge/done" ]'
	check "stderr says so" 'grep -q "not applied to the host: .*ORIG_HEAD: a symbolic link" "$tmp/err" &&
		grep -q "rebase-merge: its symbolic links" "$tmp/err"'
	rm -rf "$r/.git/rebase-merge"

	# -- a worktree inside the workspace, then a commit in it from its own directory --
	job "git worktree add" "$r" $Z -- git worktree add -q wt2 -b wt2
	expect 0
	job "git commit in the worktree" "$r/wt2" $Z -- sh -c 'echo w >w && git add w && git commit -q -m in-wt'
	expect 0
	check "the host sees the worktree's commit" '[ "$(host git -C "$r" log -1 --format=%s refs/heads/wt2)" = in-wt ]'
	# a worktree outside: its commit lands in the main repository, nothing else of it is writable
	(cd "$r" && host git worktree add -q "$world/outwt" -b outwt) >/dev/null 2>&1 && own "$world/outwt" "$r"
	job "git commit in a worktree outside the repository" "$world/outwt" $Z -- sh -c 'echo o >o && git add o &&
		git commit -q -m out-wt && ! touch ../repo/.git/x 2>/dev/null && ! git config user.name X 2>/dev/null'
	expect 0
	check "the host sees it" '[ "$(host git -C "$r" log -1 --format=%s refs/heads/outwt)" = out-wt ]'

	# -- a submodule: a commit in it from its directory --
	s=$world/super
	mkdir -p "$s" && own "$s" && (cd "$s" && host git init -q && host git -c protocol.file.allow=always \
		submodule add -q "$r" sm && host git -c user.name=t -c user.email=t@t commit -q -m sub) >/dev/null 2>&1
	job "git commit in a submodule" "$s/sm" $Z -- sh -c 'echo s >s && git add s && git -c user.name=t -c user.email=t@t commit -q -m in-sm'
	expect 0
	check "the host sees the submodule's commit" '[ "$(host git -C "$s/sm" log -1 --format=%s)" = in-sm ]'

	# -- make and cc --
	b=$world/build
	mkdir -p "$b" && printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$b/hello.c" &&
		printf 'hello: hello.c\n\tcc -o hello hello.c\n' >"$b/Makefile" && own "$b"
	job "make and cc" "$b" $Z -- sh -c 'make -s && ./hello'
	expect 0
	check "the program ran" '[ "$(cat "$tmp/out")" = hello ]'

	# -- bash -lc, and a program on a pty --
	job "bash -lc" "$ws" $Z -- bash -lc 'echo login-ok'
	expect 0
	check "bash -lc ran" 'grep -qx login-ok "$tmp/out"'
	job "a program on a pty (script)" "$ws" $Z -- script -qec 'tty; test -t 0' /dev/null
	expect 0
	check "it had a terminal" 'grep -q "^/dev/pts/" "$tmp/out"'

	# -- a tracked .env: git status works, the secret stays hidden --
	t=$world/tracked
	mkdir -p "$t" && (cd "$t" && gitc init -q && echo SECRET=hunter2 >.env && gitc add .env && gitc commit -q -m env) &&
		own "$t"
	job "git status with a tracked .env" "$t" $Z -- sh -c 'git status --porcelain >/dev/null && { cat .env 2>&1; true; }'
	expect 0
	check "the secret is not shown" '! grep -q hunter2 "$tmp/out"'
	check "the host's .env is intact" 'grep -q hunter2 "$t/.env"'

	# -- a tree of 210,000 entries starts (the old walk stopped at 200,000) --
	if [ "$who" = self ]; then
		big=$tmp/big
		mkdir -p "$big" && (cd "$big" && git init -q) &&
			python3 -c '
import os, sys
for d in range(420):
    p = os.path.join(sys.argv[1], "d%03d" % d)
    os.mkdir(p)
    for f in range(499):
        open(os.path.join(p, "f%d" % f), "w").close()
' "$big"
		echo SECRET=deep >"$big/d419/.env"
	fi
	own "$big"
	job "a tree of 210,000 entries" "$big" $Z -- sh -c 'ls d419 | wc -l; cat d419/.env 2>&1; true'
	expect 0
	check "the deep .env is hidden" '! grep -q SECRET "$tmp/out"'
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
