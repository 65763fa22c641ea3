#!/bin/sh
# hostlater.sh: every route by which the HOST later runs what a sandboxed command wrote.
# A sandboxed command may write anything its workspace allows; the host then runs its own git,
# its editor's tasks, its agent's hooks in that workspace. Each case here:
#   1. builds a fresh workspace: a real repository made with the host's git (a commit, a local
#      bare remote `origin`), plus whatever the owner set up before the run (`setup`);
#   2. plants (`plant`, cwd = the workspace) through zsp-run with the built-in policy;
#   3. does the host's own work for real: git status, diff, commit, fetch in the workspace
#      and in each directory the attack targets (`dirs`); every program the attack plants is
#      `touch $M`, $M a marker outside the workspace (and outside every writable root);
#   4. checks (`check`): mostly that $M does not exist.
# Every case has a CONTROL: the same plant run directly on the host, the same host steps, and
# the opposite verdict ($M appears, the file changes): the attack is real and the case can fail.
# Cases run as the suite's user and, under root, as uid 65534 (lib.sh); the cases about a real
# home directory (section 11) run as the unprivileged user zsptest, whose home is disposable.
#
# What zsp-run does about it (assert this, not more): files the host would run are read-only in
# the sandbox when they exist; what the command creates at such a name is renamed after the run
# to NAME.zsp-blocked (or NAME.zsp-blocked.N), with a `blocked for the host` line on stderr; a
# protected name that is a symbolic link makes zsp-run refuse to start.

zsp_suite=e2e-hostlater zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# The host's git reads this configuration only (not the tester's ~/.gitconfig, not /etc).
hostcfg=$tmp/host.gitconfig
cat >"$hostcfg" <<'EOF'
[user]
	name = host
	email = host@example.invalid
[safe]
	directory = *
EOF
chmod 644 "$hostcfg"

ncases=0
# own PATH...: give what the suite made for a case to $who, as fresh does with the world.
own() {
	if [ "$who" = nobody ]; then chown -h 65534:65534 "$@"; fi
}
# say VERDICT TEXT: one line per case and mode, so the log reads as a table.
say() { printf '%-4s [%s] %s\n' "$1" "$who" "$2"; }

# ---- the steps of a case ------------------------------------------------------------------

# template WHO: the world every case of WHO starts from (lib.sh's fresh, then a real
# repository made by the host's git in its workspace: one commit, a remote `origin`, a bare
# repository outside the world that has the commit). Made once per identity: a case copies it.
template() {
	fresh "$1"
	rm -rf "$ws/.git" "$ws/.env"
	mkdir -p "$world/mk"
	(
		cd "$ws" || exit 1
		export GIT_CONFIG_GLOBAL="$hostcfg" GIT_CONFIG_NOSYSTEM=1
		git init -q . && git add -A && git commit -q -m initial &&
			git init -q --bare "$tmp/remote.$1.git" &&
			git remote add origin "$tmp/remote.$1.git" && git push -q origin HEAD
	) >"$tmp/setup.out" 2>&1 || return 1
	rm -f "$ws/.git/hooks/"*.sample  # fewer files to copy for each case
	if [ "$1" = nobody ]; then chown -R 65534:65534 "$world" "$tmp/remote.$1.git"; fi
	rm -rf "$tmp/template.$1"
	mv "$world" "$tmp/template.$1"
}

# newws: a fresh copy of the template of $who: $world, $home, $ws, $tmpdir; the marker $M,
# $M2 and the prelude of setup and plant ($world/prelude.sh).
nworld=0
newws() {
	nworld=$((nworld + 1))
	world=$tmp/$who.$nworld
	home=$world/home ws=$world/ws tmpdir=$world/tmp
	cp -a "$tmp/template.$who" "$world" || return 1
	M=$world/mk/marker  # what every planted program creates: outside every writable root
	M2=$tmpdir/ran      # what a refused command would have created first (a writable root)
	cat >"$world/prelude.sh" <<EOF
M='$M' M2='$M2' WS='$ws' TD='$tmpdir' W='$world'
EOF
	cat >>"$world/prelude.sh" <<'EOF'
EVIL="sh -c 'touch $M'"
# fsmon FILE: a git config FILE whose core.fsmonitor (run by git status) makes the marker
fsmon() { git config -f "$1" core.fsmonitor "$EVIL"; }
# hook FILE: an executable hook that makes the marker
hook() { mkdir -p "${1%/*}" && printf '#!/bin/sh\ntouch "%s"\n' "$M" >"$1" && chmod +x "$1"; }
# benign FILE: an executable hook that does nothing (the owner's own)
benign() { mkdir -p "${1%/*}" && printf '#!/bin/sh\nexit 0\n' >"$1" && chmod +x "$1"; }
# gitdir_copy DIR: DIR becomes a working git dir (a copy of the workspace's .git)
gitdir_copy() {
	rm -rf "$TD/.gd" && cp -R "$WS/.git" "$TD/.gd" && rm -f "$TD/.gd/commondir" &&
		mkdir -p "$(dirname "$1")" && mv "$TD/.gd" "$1"
}
# arm GITDIR: GITDIR's config runs the marker (fsmonitor) and so does its pre-commit hook
arm() { fsmon "$1/config" && hook "$1/hooks/pre-commit"; }
# evil_repo DIR: `git init DIR` with a commit, then armed
evil_repo() {
	git init -q "$1" && echo a >"$1/f" && git -C "$1" add f &&
		git -C "$1" -c user.name=x -c user.email=x@x -c core.hooksPath=/dev/null commit -q -m a &&
		arm "$1/.git"
}
EOF
	chmod 644 "$world/prelude.sh"
}

# host_steps: the host's own git as $who, with the host's configuration only, in the
# workspace and in each of $dirs (relative to it, or absolute): status, diff, commit, fetch.
# Failures are fine (git refusing a tampered repository): only the marker matters, and once it
# exists the verdict is known: the steps stop there.
host_steps() {
	eval "set -- . $dirs"
	for d in "$@"; do
		case $d in /*) p=$d ;; *) p=$ws/$d ;; esac
		[ -d "$p" ] && [ ! -e "$M" ] || continue
		(cd "$p" && as "$who" env GIT_CONFIG_GLOBAL="$(hcfg)" GIT_CONFIG_NOSYSTEM=1 \
			GIT_TERMINAL_PROMPT=0 GIT_EDITOR=true timeout 30 sh -c '
			for step in status diff "commit -q --allow-empty -m x" "fetch -q origin"; do
				[ -e "$1" ] || git $step
			done' sh "$M")
	done </dev/null >"$tmp/host.out" 2>&1
}

# hcfg: the host's global git config in this world: the case's own ($W/host.gitconfig, made
# by its setup) or the suite's.
hcfg() { if [ -f "$world/host.gitconfig" ]; then echo "$world/host.gitconfig"; else echo "$hostcfg"; fi; }

# worktrees: the worktrees the host's git lists for the workspace (a tool that shows them all
# runs git in each).
worktrees() {
	(cd "$ws" && as "$who" env GIT_CONFIG_GLOBAL="$(hcfg)" GIT_CONFIG_NOSYSTEM=1 \
		git worktree list --porcelain) </dev/null 2>/dev/null | sed -n 's/^worktree //p'
}

# plant MODE: the plant script, cwd = the workspace, through zsp-run (sandbox) or directly
# (control). $out, $err, $rc: what it printed and its status.
plant_run() {
	{ cat "$world/prelude.sh"; printf '%s\n' "$plant"; } >"$world/plant.sh"
	chmod 644 "$world/plant.sh"
	if [ "$1" = sandbox ]; then
		eval "set -- $zopts"
		if [ -f "$world/host.gitconfig" ]; then
			# zsp-run reads the host's global config as the host's git will
			(cd "$ws" && as "$who" env GIT_CONFIG_GLOBAL="$world/host.gitconfig" GIT_CONFIG_NOSYSTEM=1 \
				"$ZSP_RUN" -D HOME="$home" "$@" -- sh "$world/plant.sh") </dev/null >"$tmp/out" 2>"$tmp/err"
		else
			(cd "$ws" && as "$who" $zenv "$ZSP_RUN" "$@" -- sh "$world/plant.sh") \
				</dev/null >"$tmp/out" 2>"$tmp/err"
		fi
	else
		(cd "$ws" && as "$who" $zenv sh "$world/plant.sh") </dev/null >"$tmp/out" 2>"$tmp/err"
	fi
	rc=$?
}

# blocked_near PATH: a NAME.zsp-blocked[.N] exists for PATH or for one of its directories
# below the workspace.
blocked_near() {
	p=$1
	while [ "$p" != "$ws" ] && [ "$p" != / ]; do
		for b in "$p".zsp-blocked "$p".zsp-blocked.*; do
			if [ -e "$b" ] || [ -L "$b" ]; then return 0; fi
		done
		p=$(dirname "$p")
	done
	return 1
}

# judge MODE: the verdicts of $check (words, all must hold) for MODE. Sets $why on failure.
judge() {
	why=
	for c in $check; do
		case $c.$1 in
		marker.sandbox) [ ! -e "$M" ] || why="$why; the host ran the planted program (marker exists)" ;;
		marker.control) [ -e "$M" ] || why="$why; the host did not run the planted program" ;;
		refuse.sandbox)
			[ "$rc" -ne 0 ] || why="$why; zsp-run did not refuse (exit 0)"
			[ ! -e "$M2" ] || why="$why; the command ran"
			grep -q "symbolic link" "$tmp/err" || why="$why; stderr does not mention a symbolic link"
			[ ! -e "$M" ] || why="$why; the host ran the planted program (marker exists)"
			;;
		refuse.control)
			[ -e "$M2" ] || why="$why; the command did not run"
			if [ -n "$hostexec" ] && [ ! -e "$M" ]; then why="$why; the host did not run the planted program"; fi
			;;
		same.sandbox | same.control)
			for t in $target; do
				if [ -f "$ws/$t" ] && [ ! -L "$ws/$t" ] && cmp -s "$ws/$t" "$world/orig/$t"; then
					[ "$1" = sandbox ] || why="$why; $t is unchanged"
				else
					[ "$1" = control ] || why="$why; $t changed (or was replaced)"
				fi
			done
			;;
		gone.sandbox)
			for t in $target; do
				if [ -e "$ws/$t" ] || [ -L "$ws/$t" ]; then
					why="$why; $t is still there for the host"
				elif grep -qx "planted $t" "$tmp/out"; then
					blocked_near "$ws/$t" || why="$why; $t was created, but no $t.zsp-blocked"
					grep -q "blocked for the host" "$tmp/err" || why="$why; stderr does not say what was blocked for the host"
				fi
			done
			;;
		gone.control)
			for t in $target; do [ -e "$ws/$t" ] || why="$why; the plant did not create $t"; done
			;;
		kept.sandbox)
			[ "$rc" -eq 0 ] || why="$why; zsp-run exits $rc"
			for t in $target; do [ -e "$ws/$t" ] || why="$why; $t is gone"; done
			b=$(find "$ws" -name '*.zsp-blocked*' | head -3)
			[ -z "$b" ] || why="$why; blocked: $b"
			! grep -q "blocked for the host" "$tmp/err" || why="$why; stderr says something was blocked"
			;;
		kept.control)
			for t in $target; do [ -e "$ws/$t" ] || why="$why; $t is missing"; done
			;;
		esac
	done
	why=${why#; }
	[ -z "$why" ]
}

# one MODE: one case (the variables below) in one mode, with a fresh workspace.
one() {
	# only what the host would run needs the host's steps (the files of 10 are compared)
	case " $check " in *" marker "* | *" refuse "*) hoststeps=1 ;; *) hoststeps= ;; esac
	if ! newws; then
		bad "$title: the workspace could not be made: $(tail -3 "$tmp/setup.out")"
		return
	fi
	if [ -n "$setup" ] && ! (
		cd "$ws" || exit 1
		export GIT_CONFIG_GLOBAL="$hostcfg" GIT_CONFIG_NOSYSTEM=1
		. "$world/prelude.sh"
		eval "$setup"
	) >"$tmp/setup.out" 2>&1; then
		bad "$title: the setup failed: $(tail -3 "$tmp/setup.out")"
		return
	fi
	for t in $target; do
		if [ -e "$ws/$t" ]; then
			mkdir -p "$world/orig/$(dirname "$t")"
			cp "$ws/$t" "$world/orig/$t"
		fi
	done
	if [ -n "$setup$target" ] && [ "$who" = nobody ]; then chown -R 65534:65534 "$world"; fi
	plant_run "$1"
	if [ -n "$hoststeps" ]; then host_steps; fi
	if judge "$1"; then
		ok
		say ok "$title${2:+ ($2)}"
	else
		bad "$title${2:+ ($2)}: $why"
		sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -6
	fi
}

# case: runs the case described by title, setup, plant, dirs, check, target, zopts, zenv,
# hostexec (then resets them): in the sandbox, then its control on the bare host. The control
# is about the host's git, not the sandbox: it runs for the first identity only (self: root,
# or the unprivileged user of dev.sh's last pass), which keeps the suite short.
# HOSTLATER_CASES=PATTERN (a shell pattern, e.g. '3*'): only the cases whose title matches,
# and none of the others (11c to 12), to debug one route.
controls=yes
case_() {
	case $title in
	${HOSTLATER_CASES:-*}) ;;
	*)
		title= setup= plant= dirs= check=marker target= zopts= zenv= hostexec=
		return
		;;
	esac
	ncases=$((ncases + 1))
	one sandbox
	if [ "$controls" = yes ]; then one control control; fi
	title= setup= plant= dirs= check=marker target= zopts= zenv= hostexec=
}
title= setup= plant= dirs= check=marker target= zopts= zenv= hostexec=

# ---- the cases ------------------------------------------------------------------------------

cases_git() {
	# -- 1. .git/commondir: the common dir (config, hooks) of any repository --
	title="1a .git/commondir -> ../evil (an armed git dir in the workspace)"
	plant='gitdir_copy evil && arm evil && echo ../evil >.git/commondir'
	case_
	title="1b .git/commondir -> absolute path in the workspace"
	plant='gitdir_copy evil && arm evil && echo "$WS/evil" >.git/commondir'
	case_
	title="1c .git/commondir -> a git dir in TMPDIR"
	plant='gitdir_copy "$TD/evil" && arm "$TD/evil" && echo "$TD/evil" >.git/commondir'
	case_
	title="1d .git/commondir -> a git dir inside .git (.git/x)"
	plant='gitdir_copy .git/x && arm .git/x && echo x >.git/commondir'
	case_
	title="1e .git/commondir made elsewhere and moved into .git"
	plant='gitdir_copy evil && arm evil && echo "$WS/evil" >"$TD/cd" && mv "$TD/cd" .git/commondir'
	case_

	# -- 2. worktrees: the admin dir .git/worktrees/NAME and the .git pointer --
	title="2a worktree ../wt: .git/worktrees/wt/commondir rewritten"
	setup='git worktree add -q ../wt'
	plant='gitdir_copy evil && arm evil && echo "$WS/evil" >.git/worktrees/wt/commondir'
	dirs='$world/wt'
	case_
	title="2b worktree ../wt: .git/worktrees/wt/gitdir rewritten; host: git status in each worktree git lists"
	setup='git worktree add -q ../wt'
	plant='gitdir_copy evil && arm evil && mkdir -p .cache/wt && echo "gitdir: $WS/evil" >.cache/wt/.git &&
		echo "$WS/.cache/wt/.git" >.git/worktrees/wt/gitdir'
	dirs='$world/wt $(worktrees)'
	case_
	title="2c worktree inside the workspace: its .git pointer rewritten to a planted dir"
	setup='git worktree add -q inwt'
	plant='gitdir_copy evil && arm evil && echo "gitdir: $WS/evil" >inwt/.git'
	dirs='inwt'
	case_
	title="2d worktree inside the workspace: its .git pointer to a git dir in TMPDIR"
	setup='git worktree add -q inwt'
	plant='gitdir_copy "$TD/g" && arm "$TD/g" && echo "gitdir: $TD/g" >inwt/.git'
	dirs='inwt'
	case_
	title="2e worktree inside the workspace: .git/worktrees/inwt/commondir rewritten"
	setup='git worktree add -q inwt'
	plant='gitdir_copy evil && arm evil && echo ../../../evil >.git/worktrees/inwt/commondir'
	dirs='inwt'
	case_
	title="2f a new worktree admin dir planted in .git/worktrees with its pointer"
	plant='gitdir_copy evil && arm evil && mkdir -p .git/worktrees/fake fakewt &&
		cp .git/HEAD .git/worktrees/fake/HEAD && echo "$WS/evil" >.git/worktrees/fake/commondir &&
		echo "$WS/fakewt/.git" >.git/worktrees/fake/gitdir && echo "gitdir: $WS/.git/worktrees/fake" >fakewt/.git'
	dirs='fakewt'
	case_
	title="2g worktree ../wt: its config.worktree (extensions.worktreeConfig set by the owner)"
	setup='git config core.repositoryformatversion 1 && git config extensions.worktreeConfig true &&
		git worktree add -q ../wt'
	plant='fsmon .git/worktrees/wt/config.worktree'
	dirs='$world/wt'
	case_

	# -- 3. nested repositories the host enters --
	title="3a git init sub + core.fsmonitor; host: cd sub && git status"
	plant='git init -q sub && git -C sub config core.fsmonitor "$EVIL"'
	dirs='sub'
	case_
	title="3b git init sub + hooks/pre-commit; host: git commit in sub"
	plant='git init -q sub && hook sub/.git/hooks/pre-commit'
	dirs='sub'
	case_
	title="3c a nested repository deep (a/b/c/d/sub)"
	plant='mkdir -p a/b/c/d && evil_repo a/b/c/d/sub'
	dirs='a/b/c/d/sub'
	case_
	title="3d a bare-repository-shaped dir (core.sshCommand, an ssh origin); host: git -C dir fetch"
	plant='mkdir -p bare/objects bare/refs/heads && echo "ref: refs/heads/main" >bare/HEAD &&
		git config -f bare/config core.bare true &&
		git config -f bare/config core.sshCommand "$EVIL" &&
		git config -f bare/config remote.origin.url "git@example.invalid:x.git"'
	dirs='bare'
	case_
	title="3e a nested repository with diff.external and a modified file; host: git diff"
	plant='evil_repo sub && git -C sub config diff.external "$EVIL" && echo b >sub/f'
	dirs='sub'
	case_
	title="3f a nested repository with a clean filter (.gitattributes); host: git status/diff"
	plant='evil_repo sub && git -C sub config core.fsmonitor false &&
		git -C sub config filter.x.clean "$EVIL" && echo "* filter=x" >sub/.gitattributes && echo c >sub/f'
	dirs='sub'
	case_
	title="3g sub/.git is a file: gitdir: a planted dir in TMPDIR"
	plant='evil_repo "$TD/r" && mkdir -p sub && mv "$TD/r/.git" "$TD/planted" &&
		echo "gitdir: $TD/planted" >sub/.git && echo a >sub/f'
	dirs='sub'
	case_
	title="3h a repository made in TMPDIR and moved into the workspace"
	plant='evil_repo "$TD/r" && mv "$TD/r" sub'
	dirs='sub'
	case_
	title="3i a nested repository with a hooksPath into the workspace"
	plant='git init -q sub && git -C sub config core.hooksPath ../tools && hook tools/pre-commit'
	dirs='sub'
	case_
	title="3j false positive: a harmless git init sub stays (sub/.git kept, nothing blocked)"
	plant='git init -q sub && echo planted'
	check=kept target='sub/.git'
	case_
	title="3k ordinary work: edit, git add, git commit in the sandbox; nothing blocked"
	plant='echo "fn main() { println!(); }" >src/main.rs && git add -A &&
		git -c user.name=a -c user.email=a@a -c core.hooksPath=/dev/null commit -q -m work'
	check=kept target='src/main.rs'
	case_

	# -- 4. a gitlink through the writable index: the top-level git status enters it --
	title="4a gitlink sub (update-index 160000) + sub/.git with core.fsmonitor"
	plant='evil_repo sub && git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),sub"'
	case_
	title="4b gitlink sub + sub/.git a file: gitdir: a planted dir in TMPDIR"
	plant='evil_repo "$TD/r" && mkdir -p sub && mv "$TD/r/.git" "$TD/planted" && echo a >sub/f &&
		echo "gitdir: $TD/planted" >sub/.git && git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),sub"'
	case_
	title="4c gitlink sub + sub/.git -> .git/modules/sub (the submodule git dir)"
	plant='evil_repo "$TD/r" && mkdir -p sub .git/modules && mv "$TD/r/.git" .git/modules/sub && echo a >sub/f &&
		echo "gitdir: ../.git/modules/sub" >sub/.git && git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),sub"'
	case_
	title="4d gitlink deep (x/y/sub)"
	plant='mkdir -p x/y && evil_repo x/y/sub && git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),x/y/sub"'
	case_

	# -- 5. core.hooksPath set by the owner into the workspace --
	title="5a hooksPath .husky; the sandbox writes .husky/pre-commit"
	setup='git config core.hooksPath .husky'
	plant='hook .husky/pre-commit'
	case_
	title="5b hooksPath an absolute path in the workspace (tools/hooks)"
	setup='git config core.hooksPath "$WS/tools/hooks" && mkdir -p tools/hooks'
	plant='hook tools/hooks/pre-commit'
	case_
	title="5c hooksPath .husky with an existing pre-commit, overwritten"
	setup='git config core.hooksPath .husky && benign .husky/pre-commit'
	plant='hook .husky/pre-commit || { rm -f .husky/pre-commit; hook .husky/pre-commit; } ||
		{ mv .husky .husky.old; hook .husky/pre-commit; }'
	case_
	title="5d hooksPath .husky; other hooks: post-commit, reference-transaction"
	setup='git config core.hooksPath .husky && benign .husky/pre-commit'
	plant='hook .husky/post-commit; hook .husky/reference-transaction'
	case_
	title="5e husky v9: hooksPath .husky/_ (its wrapper runs .husky/pre-commit, a plain file)"
	setup='git config core.hooksPath .husky/_ && mkdir -p .husky/_ &&
		printf "#!/bin/sh\n[ -f .husky/pre-commit ] && . ./.husky/pre-commit\nexit 0\n" >.husky/_/pre-commit &&
		chmod +x .husky/_/pre-commit'
	plant='printf "touch \"%s\"\n" "$M" >.husky/pre-commit'
	case_
	title="5f hooksPath into TMPDIR"
	setup='git config core.hooksPath "$TD/hooks"'
	plant='hook "$TD/hooks/pre-commit"'
	case_
	title="5g hooksPath .githooks in the owner's global config (every work tree's .githooks)"
	setup='cp "$GIT_CONFIG_GLOBAL" "$W/host.gitconfig" && git config --file "$W/host.gitconfig" core.hooksPath .githooks'
	plant='hook .githooks/pre-commit'
	case_
	title="5h global hooksPath .githooks; the sandbox's nested repository sub/ (its .githooks)"
	setup='cp "$GIT_CONFIG_GLOBAL" "$W/host.gitconfig" && git config --file "$W/host.gitconfig" core.hooksPath .githooks'
	plant='git init -q sub && hook sub/.githooks/pre-commit'
	dirs='sub'
	case_

	# -- 6. configuration the owner's .git/config includes --
	title="6a include.path ../shared.gitconfig (exists, empty): core.fsmonitor written into it"
	setup='git config include.path ../shared.gitconfig && : >shared.gitconfig'
	plant='fsmon shared.gitconfig'
	case_
	title="6b include.path ../shared.gitconfig (absent before the run)"
	setup='git config include.path ../shared.gitconfig'
	plant='fsmon shared.gitconfig'
	case_
	title="6c includeIf gitdir: -> a file in the workspace"
	setup='git config "includeIf.gitdir:$WS/.git.path" "$WS/conf/git.inc" && mkdir conf && : >conf/git.inc'
	plant='fsmon conf/git.inc'
	case_
	title="6d include.path into TMPDIR"
	setup='git config include.path "$TD/shared.gitconfig"'
	plant='fsmon "$TD/shared.gitconfig"'
	case_
	title="6e a second-level include (the included file includes another)"
	setup='git config include.path ../shared.gitconfig && printf "[include]\n\tpath = more.gitconfig\n" >shared.gitconfig'
	plant='fsmon more.gitconfig'
	case_
	title="6f include.path ../.config/git/config (a directory, replaced)"
	setup='git config include.path ../.config/git/config && mkdir -p .config/git && : >.config/git/config'
	plant='fsmon .config/git/config || { mv .config .config.old && mkdir -p .config/git && fsmon .config/git/config; }'
	case_

	# -- 7. config.worktree (extensions.worktreeConfig set by the owner) --
	title="7a .git/config.worktree (absent before the run)"
	setup='git config core.repositoryformatversion 1 && git config extensions.worktreeConfig true'
	plant='fsmon .git/config.worktree'
	case_
	title="7b .git/config.worktree (existing, rewritten)"
	setup='git config core.repositoryformatversion 1 && git config extensions.worktreeConfig true &&
		git config --worktree user.name owner'
	plant='fsmon .git/config.worktree || { rm -f .git/config.worktree; fsmon .git/config.worktree; }'
	case_
	title="7c worktree inside the workspace: .git/worktrees/inwt/config.worktree"
	setup='git config core.repositoryformatversion 1 && git config extensions.worktreeConfig true &&
		git worktree add -q inwt'
	plant='fsmon .git/worktrees/inwt/config.worktree'
	dirs='inwt'
	case_

	# -- 8. the protected files themselves --
	title="8a core.fsmonitor appended to .git/config"
	plant='fsmon .git/config'
	case_
	title="8b .git/hooks/pre-commit created"
	plant='hook .git/hooks/pre-commit'
	case_
	title="8c .git/hooks/pre-commit (existing) overwritten or replaced"
	setup='benign .git/hooks/pre-commit'
	plant='hook .git/hooks/pre-commit || { rm -f .git/hooks/pre-commit; hook .git/hooks/pre-commit; }'
	case_
	title="8d .git/hooks: post-commit and reference-transaction"
	plant='hook .git/hooks/post-commit; hook .git/hooks/reference-transaction'
	case_
	title="8e .git/config replaced by a rename from TMPDIR"
	plant='cp .git/config "$TD/c" && fsmon "$TD/c" && mv -f "$TD/c" .git/config'
	case_
	title="8f .git/hooks removed and made again"
	plant='rm -rf .git/hooks; mkdir -p .git/hooks; hook .git/hooks/pre-commit'
	case_
	title="8g .git/hooks/pre-commit a symlink to a workspace file (the file rewritten)"
	setup='benign tools/pc && ln -s ../../tools/pc .git/hooks/pre-commit'
	plant='hook tools/pc'
	case_

	# -- 9. protected names that are symbolic links: zsp-run refuses to start --
	title="9a .git/hooks -> ../tools/githooks"
	setup='mkdir -p tools/githooks && rm -rf .git/hooks && ln -s ../tools/githooks .git/hooks'
	plant='touch "$M2"; rm .git/hooks; mkdir .git/hooks; hook .git/hooks/pre-commit'
	check=refuse hostexec=1
	case_
	title="9b .git/hooks -> an absolute path in the workspace"
	setup='mkdir -p tools/githooks && rm -rf .git/hooks && ln -s "$WS/tools/githooks" .git/hooks'
	plant='touch "$M2"; hook tools/githooks/pre-commit'
	check=refuse hostexec=1
	case_
	title="9c .git/config -> ../tools/gitconfig"
	setup='mkdir tools && mv .git/config tools/gitconfig && ln -s ../tools/gitconfig .git/config'
	plant='touch "$M2"; fsmon tools/gitconfig'
	check=refuse hostexec=1
	case_
	title="9d .vscode -> tools/vscode"
	setup='mkdir -p tools/vscode && echo "{}" >tools/vscode/tasks.json && ln -s tools/vscode .vscode'
	plant='touch "$M2"; echo "{\"tasks\":[]}" >tools/vscode/tasks.json'
	check='refuse same' target='.vscode/tasks.json'
	case_
	title="9e .codex -> tools/codex"
	setup='mkdir -p tools/codex && echo x >tools/codex/config.toml && ln -s tools/codex .codex'
	plant='touch "$M2"; echo y >tools/codex/config.toml'
	check='refuse same' target='.codex/config.toml'
	case_
	title="9f .agents -> tools/agents"
	setup='mkdir -p tools/agents && echo x >tools/agents/a.md && ln -s tools/agents .agents'
	plant='touch "$M2"; echo y >tools/agents/a.md'
	check='refuse same' target='.agents/a.md'
	case_
	title="9g .git -> a real repository elsewhere (outside the writable roots)"
	setup='mv .git "$W/realgit" && ln -s "$W/realgit" .git'
	plant='touch "$M2"; hook .git/hooks/pre-commit'
	check=refuse hostexec=1
	case_
	title="9h .git -> a real repository inside the workspace (.repo.git)"
	setup='mv .git .repo.git && ln -s .repo.git .git'
	plant='touch "$M2"; hook .repo.git/hooks/pre-commit'
	check=refuse hostexec=1
	case_
	title="9i .claude/commands -> ../tools/cmds"
	setup='mkdir -p tools/cmds .claude && echo x >tools/cmds/c.md && ln -s ../tools/cmds .claude/commands'
	plant='touch "$M2"; echo y >tools/cmds/c.md'
	check='refuse same' target='.claude/commands/c.md'
	case_

	# -- 13. the layer of the workspace's git directory (doc/host-later.md "git's own
	# writes"): the sandbox writes its config as it likes; the host gets the safe keys only --
	title="13a git config core.fsmonitor in the sandbox"
	plant='fsmon .git/config'
	case_
	title="13b core.fsmonitor appended in place (>>)"
	plant='printf "[core]\n\tfsmonitor = %s\n" "$EVIL" >>.git/config'
	case_
	title="13c config replaced by a rename (cp, edit, mv)"
	plant='cp .git/config "$TD/c" && fsmon "$TD/c" && mv "$TD/c" .git/config'
	case_
	title="13d the key on a section header's line, safe keys after it"
	plant='printf "[core] fsmonitor = %s\n\tautocrlf = false\n[user]\n\tname = x\n" "$EVIL" >>.git/config'
	case_
	title="13e the value continued over two lines"
	plant='printf "[core]\n\tfsmonitor = touch \\\\\n%s\n" "$M" >>.git/config'
	case_
	title="13f include.path to a planted config"
	plant='fsmon "$TD/inc" && git config include.path "$TD/inc"'
	case_
	title="13g remote.origin.uploadpack (run by git fetch)"
	plant='git config remote.origin.uploadpack "$EVIL"'
	case_
	title="13h extensions.worktreeConfig and a config.worktree"
	plant='git config extensions.worktreeConfig true && fsmon .git/config.worktree'
	case_
	title="13i a hooks directory where there was none"
	setup='rm -rf .git/hooks'
	plant='hook .git/hooks/pre-commit'
	case_
}

# -- 10. agent and tool settings the host executes: existing (read-only inside) and created
# during the run (moved aside after it), at the top and in a subdirectory. One workspace holds
# them all (a verdict per file): the host's side is compared, nothing of it is run.
host_files=".claude/settings.json .claude/settings.local.json .cursor/mcp.json .envrc
.husky/pre-commit lefthook.yml .pre-commit-config.yaml .devcontainer/devcontainer.json
.vscode/tasks.json .mcp.json .npmrc .cargo/config.toml"
cases_files() {
	for at in "" sub/; do
		targets= make= attack= create=
		for f in $host_files; do
			t=$at$f d=$(dirname "$at$f")
			targets="$targets $t"
			make="$make mkdir -p '$d' && echo owner >'$t' &&"
			# every way in: write, unlink and create, rename its directory away and make it again
			attack="$attack
				echo evil >'$t' || { rm -f '$t' && echo evil >'$t'; } ||
					{ [ '$d' != . ] && mv '$d' '$d.old' && mkdir -p '$d' && echo evil >'$t'; }"
			create="$create
				mkdir -p '$d' && echo evil >'$t' && [ -f '$t' ] && echo 'planted $t'"
		done
		title="10 existing files${at:+ in $at}: overwritten, replaced, their directory renamed"
		setup="mkdir -p sub && $make :"
		plant="$attack
			true"
		check=same target=$targets
		case_
		title="10 new files${at:+ in $at}: created during the run"
		setup='mkdir -p sub && echo x >sub/file'
		plant="$create
			true"
		check=gone target=$targets
		case_
	done
	title="10 new .claude/settings.json deep (a/b/c/.claude)"
	plant='mkdir -p a/b/c/.claude && echo evil >a/b/c/.claude/settings.json && echo planted a/b/c/.claude/settings.json'
	check=gone target='a/b/c/.claude/settings.json'
	case_
	title="10 new .claude/settings.json made in TMPDIR and moved in (whole directory)"
	plant='mkdir -p "$TD/c" && echo evil >"$TD/c/settings.json" &&
		if [ -d .claude ]; then mv "$TD/c/settings.json" .claude/; else mv "$TD/c" .claude; fi &&
		[ -f .claude/settings.json ] && echo planted .claude/settings.json'
	check=gone target='.claude/settings.json'
	case_
	title="10 new .envrc a symlink to a file in TMPDIR"
	plant='echo evil >"$TD/envrc" && ln -s "$TD/envrc" .envrc && echo planted .envrc'
	check=gone target='.envrc'
	case_
	title="10 new .mcp.json a hard link to a workspace file"
	plant='echo evil >notes.txt && ln notes.txt .mcp.json && echo planted .mcp.json'
	check=gone target='.mcp.json'
	case_
	title="10 existing .claude/settings.json behind .claude -> tools/claude"
	setup='mkdir -p tools/claude && echo owner >tools/claude/settings.json && ln -s tools/claude .claude'
	plant='echo evil >tools/claude/settings.json'
	check=same target='.claude/settings.json'
	case_
}

# -- 11. the inputs of zsp-run itself --
policy_files() {
	mkdir -p "$ws/pol"
	cat >"$ws/pol/p.zsp" <<'EOF'
zsp 1;
include "inc.zsp";
policy "p" extends "base" {
  param WORKSPACE;
  fs { write "${WORKSPACE}", "${TMPDIR}"; }
}
EOF
	cat >"$ws/pol/inc.zsp" <<'EOF'
zsp 1;
policy "base" {
  fs { read "/"; }
  net { mode none; }
  process { env clear; env keep "PATH", "HOME", "TMPDIR"; }
}
EOF
}
cases_inputs() {
	title="11a -p POLICY inside the workspace: the policy and its include rewritten"
	setup='policy_files'
	plant='for f in pol/p.zsp pol/inc.zsp; do
		printf "zsp 1; policy \"p\" { fs { read \"/\"; write \"/\"; } }\n" >"$f" ||
			{ rm -f "$f" && echo "zsp 1;" >"$f"; }; done
		[ -f pol/p.zsp ] && [ -f pol/inc.zsp ] || true'
	zopts='-p "$ws/pol/p.zsp" --policy p'
	check=same target='pol/p.zsp pol/inc.zsp'
	case_
	title="11a -p POLICY inside the workspace: its directory renamed and made again"
	setup='policy_files'
	plant='mv pol pol.old && mkdir pol && printf "zsp 1; policy \"p\" { fs { read \"/\"; write \"/\"; } }\n" >pol/p.zsp &&
		echo "zsp 1;" >pol/inc.zsp'
	zopts='-p "$ws/pol/p.zsp" --policy p'
	check=same target='pol/p.zsp pol/inc.zsp'
	case_

	if [ -n "${HOSTLATER_CASES:-}" ]; then return; fi
	# (c) environment: only the LC_* the locale uses pass
	for mode in sandbox control; do
		newws
		if [ "$mode" = sandbox ]; then
			(cd "$ws" && as "$who" env LC_EVIL=x LC_ALL=C "$ZSP_RUN" -- env) </dev/null >"$tmp/out" 2>"$tmp/err"
		else
			(cd "$ws" && as "$who" env LC_EVIL=x LC_ALL=C env) </dev/null >"$tmp/out" 2>"$tmp/err"
		fi
		evil=no all=no
		grep -q '^LC_EVIL=' "$tmp/out" && evil=yes
		grep -q '^LC_ALL=C$' "$tmp/out" && all=yes
		if [ "$mode" = sandbox ] && [ "$evil" = no ] && [ "$all" = yes ]; then
			ok; say ok "11c LC_EVIL does not pass, LC_ALL does"
		elif [ "$mode" = control ] && [ "$evil" = yes ]; then
			ok; say ok "11c LC_EVIL does not pass, LC_ALL does (control)"
		else
			bad "11c ($mode): LC_EVIL passed: $evil, LC_ALL passed: $all"
		fi
	done
	ncases=$((ncases + 1))

	# (e) TMPDIR naming a system directory or the home is refused (nothing written: root
	# would have /etc writable if it ran)
	for d in /etc / /usr HOME; do
		newws
		name=$d
		# ($home is this world's home: -D HOME says so, as `as` does for a command starting with
		# zsp-run; without it the home is the passwd entry's)
		if [ "$d" = HOME ]; then d=$home name='the home directory'; fi
		(cd "$ws" && as "$who" env TMPDIR="$d" "$ZSP_RUN" -D HOME="$home" -- echo ran) </dev/null >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$rc" -ne 0 ] && ! grep -q '^ran' "$tmp/out" && { [ "$d" != /etc ] || grep -q /etc "$tmp/err"; }; then
			ok; say ok "11e TMPDIR=$name is refused"
		else
			bad "11e TMPDIR=$name: zsp-run exits $rc$(grep -q '^ran' "$tmp/out" && echo ', the command ran')"
			sed 's/^/  | /' "$tmp/err" | head -3
		fi
		ncases=$((ncases + 1))
	done

	# (f) zsp's own state (grants, audit) is hidden from the sandbox and not writable in it
	newws
	(cd "$ws" && as "$who" "$ZSPC" grant add --tool terminal --exact true --allow --global) >"$tmp/out" 2>&1
	store=$home/.local/state/zsp
	if [ ! -f "$store/grants.db" ]; then
		bad "11f: zspc grant add made no $store/grants.db: $(head -2 "$tmp/out")"
	else
		cp "$store/grants.db" "$world/grants.orig"
		(cd "$ws" && as "$who" "$ZSP_RUN" -- sh -c 'ls -A "$1"; cat "$1/grants.db" | wc -c; printf x >>"$1/grants.db"' sh "$store") \
			</dev/null >"$tmp/out" 2>"$tmp/err"
		if ! grep -q grants.db "$tmp/out" && grep -qx ' *0' "$tmp/out" && cmp -s "$store/grants.db" "$world/grants.orig"; then
			ok; say ok "11f ~/.local/state/zsp is hidden in the sandbox"
		else
			bad "11f ~/.local/state/zsp is visible or writable in the sandbox"
			sed 's/^/  | /' "$tmp/out" | head -3
		fi
		(cd "$ws" && as "$who" sh -c 'ls -A "$1"' sh "$store") >"$tmp/out" 2>&1
		if grep -q grants.db "$tmp/out"; then ok; else bad "11f (control): the host cannot list $store"; fi
	fi
	# ... also when XDG_STATE_HOME puts it in a writable root (TMPDIR)
	newws
	st=$tmpdir/state
	(cd "$ws" && as "$who" env XDG_STATE_HOME="$st" "$ZSPC" grant add --tool terminal --exact true --allow --global) >"$tmp/out" 2>&1
	if [ ! -f "$st/zsp/grants.db" ]; then
		bad "11f: zspc grant add made no $st/zsp/grants.db: $(head -2 "$tmp/out")"
	else
		cp "$st/zsp/grants.db" "$world/grants.orig"
		(cd "$ws" && as "$who" env XDG_STATE_HOME="$st" "$ZSP_RUN" -- sh -c \
			'ls -A "$1"; printf x >>"$1/grants.db"; rm -f "$1/grants.db"' sh "$st/zsp") \
			</dev/null >"$tmp/out" 2>"$tmp/err"
		if [ -f "$st/zsp/grants.db" ] && cmp -s "$st/zsp/grants.db" "$world/grants.orig" && ! grep -q grants.db "$tmp/out"; then
			ok; say ok "11f the grant store in TMPDIR (XDG_STATE_HOME) is hidden and not writable"
		else
			bad "11f the grant store in TMPDIR (XDG_STATE_HOME) is visible or writable in the sandbox"
		fi
	fi
	ncases=$((ncases + 2))

	# (g) a symlink one run plants in TMPDIR does not widen a later run whose TMPDIR is it
	for victim in victim home; do
		newws
		mkdir -p "$world/victim"
		own "$world/victim"
		victim=$world/$victim
		(cd "$ws" && as "$who" "$ZSP_RUN" -- ln -s "$victim" "$tmpdir/x") </dev/null >"$tmp/out" 2>"$tmp/err"
		(cd "$ws" && as "$who" env TMPDIR="$tmpdir/x" "$ZSP_RUN" -- sh -c 'echo x >"$1/pwned"' sh "$victim") \
			</dev/null >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ ! -L "$tmpdir/x" ]; then
			ok; say ok "11g the first run could not plant TMPDIR/x"
		elif [ ! -e "$victim/pwned" ]; then
			ok; say ok "11g TMPDIR through a planted symlink does not make $(basename "$victim") writable (exit $rc)"
		else
			bad "11g TMPDIR=\$TMPDIR/x (a symlink the sandbox planted) made $victim writable"
		fi
		rm -f "$victim/pwned"
		ncases=$((ncases + 1))
	done
}

# (b), (d): the real home of the unprivileged user zsptest. As root the copies of lib.sh run
# as its uid; as zsptest (dev.sh's unprivileged pass) the suite's own programs.
zuser=zsptest
zhome=$(getent passwd "$zuser" 2>/dev/null | cut -d: -f6)
zuid=$(id -u "$zuser" 2>/dev/null)
zgid=$(id -g "$zuser" 2>/dev/null)
zkey_made= zssh_made=
cleanup_home() {
	if [ -n "$zkey_made" ]; then rm -f "$zhome/.ssh/id_test"; fi
	if [ -n "$zssh_made" ]; then rmdir "$zhome/.ssh" 2>/dev/null; fi
	if [ -n "$zhome" ] && [ -d "$zhome/hostlater.$$" ]; then rm -rf "$zhome/hostlater.$$"; fi
}
trap 'cleanup_home; rm -rf "$tmp" ${shm:+"$shm"}' EXIT

# as_z CMD...: CMD as zsptest (HOME = its real home unless the caller's env says otherwise)
as_z() {
	if [ "$(id -u)" -eq "$zuid" ]; then
		env HOME="$zhome" PATH=/usr/bin:/bin "$@"
	else
		setpriv --reuid="$zuid" --regid="$zgid" --clear-groups --inh-caps=-all --bounding-set=-all \
			${nobody_libs:+env LD_LIBRARY_PATH="$nobody_libs"} env HOME="$zhome" PATH=/usr/bin:/bin "$@"
	fi
}

cases_home() {
	who=$zuser
	if [ "$(id -u)" -eq "$zuid" ]; then
		zrun=$self_run
	else
		zrun=$nobody_dir/bin/zsp-run
	fi
	zws=$tmp/zsptest-ws
	mkdir -p "$zws" "$zws/elsewhere"
	chown -R "$zuid:$zgid" "$zws"
	# (b) HOME=/elsewhere: the real ~/.ssh stays hidden
	if [ ! -d "$zhome/.ssh" ]; then
		as_z mkdir -m 700 "$zhome/.ssh" && zssh_made=1
	fi
	if [ -e "$zhome/.ssh/id_test" ]; then
		bad "11b: $zhome/.ssh/id_test exists already: left as it is"
	else
		zkey_made=1
		as_z sh -c 'umask 077; echo "FAKE KEY hostlater" >"$1"' sh "$zhome/.ssh/id_test"
		for h in "$zws/elsewhere" /elsewhere "$zhome/.ssh"; do
			(cd "$zws" && as_z env HOME="$h" "$zrun" -- cat "$zhome/.ssh/id_test") </dev/null >"$tmp/out" 2>"$tmp/err"
			if grep -q "FAKE KEY" "$tmp/out"; then
				bad "11b HOME=$h: the sandbox read $zhome/.ssh/id_test"
			else
				ok; say ok "11b HOME=$h: the real ~/.ssh/id_test is not readable"
			fi
			ncases=$((ncases + 1))
		done
		(cd "$zws" && as_z env HOME="$zws/elsewhere" cat "$zhome/.ssh/id_test") </dev/null >"$tmp/out" 2>&1
		if grep -q "FAKE KEY" "$tmp/out"; then ok; else bad "11b (control): $zuser cannot read its own key"; fi
	fi
	# (d) the home as the workspace: refused, unless given deliberately with -D
	(cd "$zhome" && as_z "$zrun" -- echo ran) </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] && ! grep -q '^ran' "$tmp/out" && grep -qi home "$tmp/err"; then
		ok; say ok "11d the home as the workspace is refused"
	else
		bad "11d cd \$HOME && zsp-run -- echo ran: exit $rc, $(head -1 "$tmp/out")"
		sed 's/^/  | /' "$tmp/err" | head -3
	fi
	(cd "$zhome" && as_z "$zrun" -D WORKSPACE="$zhome" -- echo ran) </dev/null >"$tmp/out" 2>"$tmp/err"
	if grep -q '^ran' "$tmp/out"; then
		ok; say ok "11d -D WORKSPACE=\$HOME runs (deliberate)"
	else
		bad "11d -D WORKSPACE=\$HOME does not run: $(head -2 "$tmp/err")"
	fi
	(cd /home && as_z env HOME="$zhome" "$zrun" -- echo ran) </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] && ! grep -q '^ran' "$tmp/out"; then
		ok; say ok "11d a workspace above the home (/home) is refused"
	else
		bad "11d cd /home && zsp-run -- echo ran: exit $rc (a workspace containing the home)"
	fi
	# a project below the home is the ordinary case: it runs
	as_z mkdir -p "$zhome/hostlater.$$/proj"
	(cd "$zhome/hostlater.$$/proj" && as_z "$zrun" -- echo ran) </dev/null >"$tmp/out" 2>"$tmp/err"
	if grep -q '^ran' "$tmp/out"; then
		ok; say ok "11d a project below the home runs"
	else
		bad "11d a project below the home does not run: $(head -2 "$tmp/err")"
	fi
	ncases=$((ncases + 4))
	cleanup_home
	zkey_made= zssh_made=
}

# -- 12. warnings about rules Linux does not enforce are on by default --
cases_warnings() {
	newws
	(cd "$ws" && as "$who" "$ZSP_RUN" -- true) </dev/null >"$tmp/out" 2>"$tmp/err"
	if grep -q warning "$tmp/err" && grep -q unenforced "$tmp/err"; then
		ok; say ok "12 -Wunenforced is on by default"
	else
		bad "12 zsp-run -- true prints no -Wunenforced warning by default"
	fi
	(cd "$ws" && as "$who" "$ZSP_RUN" -Wno-unenforced -- true) </dev/null >"$tmp/out" 2>"$tmp/err"
	if grep -q unenforced "$tmp/err"; then
		bad "12 -Wno-unenforced still warns"
	else
		ok; say ok "12 -Wno-unenforced silences it"
	fi
	ncases=$((ncases + 2))
}

for who in $(identities); do
	if ! template "$who"; then
		bad "the template workspace cannot be made: $(tail -3 "$tmp/setup.out")"
		continue
	fi
	ncases=0
	cases_git
	cases_files
	cases_inputs
	if [ -z "${HOSTLATER_CASES:-}" ]; then cases_warnings; fi
	echo "[$who] $ncases cases"
	controls=no
done

if [ -n "${HOSTLATER_CASES:-}" ]; then
	:
elif [ -z "$zuid" ] || [ -z "$zhome" ] || [ ! -d "$zhome" ]; then
	echo "SKIP [$zuser] no user $zuser with a home directory: the home cases (11b, 11d) are left out"
elif [ "$(id -u)" -eq "$zuid" ] || { [ "$(id -u)" -eq 0 ] && case " $zsp_identities " in *" nobody "*) true ;; *) false ;; esac; }; then
	ncases=0
	cases_home
	echo "[$zuser] $ncases cases"
else
	echo "SKIP [$zuser] the home cases (11b, 11d) run as root or as $zuser only"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
