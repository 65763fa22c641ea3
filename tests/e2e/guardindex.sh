#!/bin/sh
# guardindex.sh: the check after the run (runtime/guard.c) reads again only the directories
# that changed, through its own index kept between runs (doc/host-later.md "The check after the
# run"). After two runs have written and used it (-v says how many directories it took), a run
# plants in directories the index knows unchanged: a .vscode/settings.json in an old directory,
# a .git pointer deep down to an armed git directory, a nested repository whose config has
# core.fsmonitor. Each
# is moved aside, the host's own git does not run what was planted (the marker is not made),
# and the same plants made on the host without zsp-run do make it (the control). An index made
# for another policy is not used for this one, and a corrupt one is rebuilt, never trusted.
# Runs as the current user and, under root, as uid 65534.

zsp_suite=e2e-guardindex zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

hostcfg=$tmp/host.gitconfig
printf '[user]\n\tname = host\n\temail = host@example.invalid\n[safe]\n\tdirectory = *\n' >"$hostcfg"
chmod 644 "$hostcfg"

# hgit DIR ARGS...: the host's own git in DIR, as $who, with the suite's host config only
hgit() {
	d=$1
	shift
	(cd "$d" && as "$who" env GIT_CONFIG_GLOBAL="$hostcfg" GIT_CONFIG_NOSYSTEM=1 \
		GIT_TERMINAL_PROMPT=0 timeout 30 git "$@") </dev/null >/dev/null 2>&1
}

# guard_reused: how many directories the last run's check after the run took from its index
guard_reused() {
	sed -n "s/.*the check after the run's index .*: \([0-9]*\) of [0-9]* directories unchanged.*/\1/p" \
		"$tmp/err" | sort -n | tail -n 1
}

# world: a workspace (a real repository of the host's git) with old directories, older than
# the index's racy window; the marker $M (outside every writable root); and in TMPDIR (a
# writable root) an armed git directory $evil of the host's, old: the walk leaves it alone (the
# host's own), but a .git pointer the sandbox makes to it makes git run it where it points from
world() {
	fresh "$who"
	unset XDG_STATE_HOME
	index=$home/.local/state/zsp/walk
	rm -rf "$ws/.git" "$ws/.env"
	mkdir -p "$world/mk"
	M=$world/mk/marker
	evil=$tmpdir/evil.git
	hgit "$ws" init -q . || bad "git init in $ws failed"
	hgit "$ws" add -A && hgit "$ws" commit -q -m initial
	cp -R "$ws/.git" "$evil" &&
		git config -f "$evil/config" core.fsmonitor "sh -c 'touch $M'"
	# the fixture itself, checked: a gitdir without its hook would make both the control and
	# the check below it fail for a reason that is not zsp's
	[ "$(git config -f "$evil/config" core.fsmonitor 2>/dev/null)" = "sh -c 'touch $M'" ] && ok ||
		bad "fixture: $evil/config has no core.fsmonitor: $(ls -la "$evil" 2>&1 | head -3)"
	for d in old/a/b/c/d old/e old/n fill/1 fill/2 fill/3; do
		mkdir -p "$ws/$d" && (cd "$ws/$d" && seq 1 20 | xargs touch)
	done
	mine "$world"
	# plants: what the sandbox (or, for the control, the host) writes into the old directories
	plants="mkdir old/e/.vscode && echo '{\"evil\":1}' >old/e/.vscode/settings.json &&
		echo 'gitdir: $evil' >old/a/b/c/d/.git &&
		git init -q old/n/sub && git -C old/n/sub config core.fsmonitor \"sh -c 'touch $M'\""
	sleep 3
}

for who in $(identities); do
	# -- the control: the same plants made on the host; its git runs them
	world
	(cd "$ws" && as "$who" env GIT_CONFIG_GLOBAL="$hostcfg" GIT_CONFIG_NOSYSTEM=1 sh -c "$plants") \
		>/dev/null 2>&1
	hgit "$ws/old/a/b/c/d" status
	[ -e "$M" ] && ok || bad "(control) git status below the planted .git pointer did not run its fsmonitor: $(cat "$ws/old/a/b/c/d/.git" 2>&1); $(hgit "$ws/old/a/b/c/d" config core.fsmonitor 2>&1)"
	rm -f "$M"
	hgit "$ws/old/n/sub" status
	[ -e "$M" ] && ok || bad "(control) git status in the planted nested repository did not run its fsmonitor"

	# -- the index: written by a first run, used by the second
	world
	zrun true
	[ "$rc" -eq 0 ] && ok || bad "the first run failed (exit $rc): $(grep -v '^ ' "$tmp/err" | head -3)"
	grep -q "the check after the run's index .*: 0 of [1-9][0-9]* directories unchanged" "$tmp/err" && ok ||
		bad "the first run wrote no index of the check after the run: $(grep note "$tmp/err" | head -3)"
	zrun true
	n=$(guard_reused)
	[ "${n:-0}" -gt 5 ] && ok || bad "a warm run took ${n:-no} directories from the check's index: $(grep note "$tmp/err" | head -4)"
	grep -q "blocked for the host" "$tmp/err" && bad "a run that planted nothing moved something aside: $(grep blocked "$tmp/err")" || ok

	# -- an index of another policy (other protected names) is another file, and not used
	zrun true -p "$top_srcdir/tests/e2e/policies/nodeny.zsp"
	grep -q "the check after the run's index .*: 0 of [0-9]* directories unchanged" "$tmp/err" && ok ||
		bad "another policy's check used this policy's index: $(grep note "$tmp/err" | head -4)"
	zrun true
	n=$(guard_reused)
	[ "${n:-0}" -gt 5 ] && ok || bad "this policy's index was not used after another policy's run: $(grep note "$tmp/err" | head -4)"

	# -- the plants, in directories the index knows unchanged
	zrun "$plants"
	[ "$rc" -eq 0 ] && ok || bad "the planting run failed (exit $rc): $(grep -v -e "^ " -e warning -e note "$tmp/err" | head -5)"
	n=$(guard_reused)
	[ "${n:-0}" -gt 0 ] && ok || bad "the planting run's check did not use its index: $(grep note "$tmp/err" | head -4)"
	{ [ -e "$ws/old/e/.vscode.zsp-blocked" ] || [ -e "$ws/old/e/.vscode/settings.json.zsp-blocked" ]; } &&
		[ ! -e "$ws/old/e/.vscode/settings.json" ] && ok ||
		bad "a .vscode/settings.json made in an old directory was not moved aside: $(ls -A "$ws/old/e" | tr '\n' ' ')"
	[ -e "$ws/old/a/b/c/d/.git.zsp-blocked" ] && [ ! -e "$ws/old/a/b/c/d/.git" ] && ok ||
		bad "a .git pointer made deep in old directories was not moved aside: $(ls -A "$ws/old/a/b/c/d" | grep git)"
	[ -e "$ws/old/n/sub/.git/config.zsp-blocked" ] && ok ||
		bad "a nested repository's core.fsmonitor was not moved aside: $(ls -A "$ws/old/n/sub/.git" | tr '\n' ' ')"
	hgit "$ws/old/a/b/c/d" status
	[ ! -e "$M" ] && ok || bad "git status below the planted .git pointer ran its fsmonitor"
	rm -f "$M"
	hgit "$ws/old/n/sub" status
	[ ! -e "$M" ] && ok || bad "git status in the planted nested repository ran its fsmonitor"

	# -- a corrupt index of the check is rebuilt, and never trusted: a plant is still found
	sleep 3
	zrun true
	n=$(guard_reused)
	[ "${n:-0}" -gt 0 ] && ok || bad "no index to corrupt: $(grep note "$tmp/err" | head -4)"
	files=$(sed -n "s/.*the check after the run's index \(.*\): [0-9]* of [0-9]* directories unchanged.*/\1/p" "$tmp/err")
	[ -n "$files" ] && ok || bad "-v names no index file of the check"
	for f in $files; do
		[ -f "$f" ] && ok || bad "the check's index file is not where -v says: $f"
		printf '\377\377\377\377' | dd of="$f" bs=1 seek=130 conv=notrunc 2>/dev/null
	done
	zrun "mkdir fill/2/.vscode && echo '{}' >fill/2/.vscode/tasks.json"
	grep -q "the check after the run's index .* is rebuilt" "$tmp/err" && ok ||
		bad "a corrupt index of the check: -v does not say it is rebuilt: $(grep note "$tmp/err" | head -4)"
	n=$(guard_reused)
	[ "${n:-x}" = 0 ] && ok || bad "a corrupt index of the check was used (${n:-no} directories taken)"
	{ [ -e "$ws/fill/2/.vscode.zsp-blocked" ] || [ -e "$ws/fill/2/.vscode/tasks.json.zsp-blocked" ]; } && ok ||
		bad "after a corrupt index, a planted .vscode was not moved aside: $(ls -A "$ws/fill/2" | grep vscode)"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
