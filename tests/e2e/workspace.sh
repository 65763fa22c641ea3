#!/bin/sh
# workspace.sh: the default WORKSPACE (runtime/workspace.c) is the top of the user's git work
# tree holding the current directory, else the current directory, the same for zsp-run and
# zspc: a commit from a subdirectory lands in the host's repository; a dotfiles repository at
# the home is no workspace; a .git (or its directory) that someone else owns is ignored; a
# `.git` file (a worktree's) marks a top; `/` is never taken; GIT_DIR and GIT_WORK_TREE do not
# choose it. Each case has a control that comes out the other way. Runs as the current user
# and, under root, as uid 65534.

zsp_suite=e2e-workspace zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# g ARGS...: the host's own git as $who, with no configuration but this
g() {
	as "$who" env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -c user.name=zsp \
		-c user.email=zsp@example.invalid -c init.defaultBranch=main "$@"
}

# repo DIR: a repository made by the host's git at DIR, with one commit
repo() {
	mkdir -p "$1" && mine "$1" && g init -q "$1" && g -C "$1" commit -q --allow-empty -m init
}

# query DIR REQUEST [ARGS...]: zspc's answer to REQUEST (as $who, in DIR, the world's home)
query() {
	d=$1 r=$2
	shift 2
	(cd "$d" && as "$who" "$ZSPC" -D HOME="$home" "$@" --query "$r" "$top_srcdir/examples/workspace.zsp") \
		2>/dev/null
}

# workspace_is DIR TOP LABEL: from DIR, zspc and zsp-run both take TOP for the workspace:
# the oracle allows a write in TOP and denies one beside it, and zsp-run binds TOP writable
workspace_is() {
	d=$1 top=$2 label=$3
	[ "$(query "$d" "write \"$top/zsp-probe-file\"")" = allow ] && ok ||
		bad "$label: the oracle refuses a write in $top"
	[ "$(query "$d" "write \"${top%/*}/zsp-probe-file\"")" = deny ] && ok ||
		bad "$label: the oracle allows a write in ${top%/*}, above the workspace $top"
	(cd "$d" && as "$who" "$ZSP_RUN" --print) </dev/null >"$tmp/print" 2>"$tmp/print.err"
	if awk -v t="$top" 'p == "--bind" && $0 == t { f = 1 } { p = $0 } END { exit !f }' "$tmp/print"; then
		ok
	else
		bad "$label: zsp-run --print does not bind $top: $(head -3 "$tmp/print.err")"
	fi
	if awk -v t="${top%/*}" 'p == "--bind" && $0 == t { f = 1 } { p = $0 } END { exit !f }' "$tmp/print"; then
		bad "$label: zsp-run binds ${top%/*} writable"
	else
		ok
	fi
}

# other: a uid that is not $who's (for files someone else planted); empty when we cannot chown
if [ "$(id -u)" -eq 0 ]; then other_self=65534; else other_self=; fi

for who in $(identities); do
	fresh "$who"
	if [ "$who" = nobody ]; then other=0; else other=$other_self; fi

	# -- a commit from a subdirectory, under the built-in policy, lands in the host repository
	r=$world/repo
	repo "$r" && mkdir -p "$r/src/deep" && mine "$r" || bad "cannot make a repository at $r"
	(cd "$r/src/deep" && as "$who" "$ZSP_RUN" -- sh -c 'echo hello >../../added.txt &&
		git add ../../added.txt &&
		git -c user.name=zsp -c user.email=zsp@example.invalid commit -q -m "from a subdirectory"') \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 0 ] && ok || { bad "git commit from src/deep: exit $rc"; grep -v warning "$tmp/err" | grep -v '^ ' | head -5; }
	[ "$(g -C "$r" log -1 --format=%s 2>&1)" = "from a subdirectory" ] && ok ||
		bad "the host's git does not see the commit: $(g -C "$r" log --oneline 2>&1 | head -3)"
	[ "$(g -C "$r" show HEAD:added.txt 2>&1)" = hello ] && ok || bad "the commit does not hold added.txt"
	g -C "$r" fsck --no-progress >"$tmp/fsck" 2>&1 && ok || bad "git fsck after the commit: $(head -3 "$tmp/fsck")"
	workspace_is "$r/src/deep" "$r" "a subdirectory of a repository"
	# -D WORKSPACE still decides
	[ "$(query "$r/src/deep" "write \"$r/x\"" -D WORKSPACE="$r/src/deep")" = deny ] && ok ||
		bad "-D WORKSPACE=src/deep: the oracle allows a write in the repository's top"
	# GIT_DIR and GIT_WORK_TREE are the agent's to set: they choose nothing
	[ "$(cd "$ws" && as "$who" env GIT_DIR="$r/.git" GIT_WORK_TREE="$world" "$ZSPC" -D HOME="$home" \
		--query "write \"$world/x\"" "$top_srcdir/examples/workspace.zsp" 2>/dev/null)" = deny ] && ok ||
		bad "GIT_WORK_TREE chose the workspace"

	# -- a dotfiles repository at the home is no workspace: a project below it is its own
	repo "$home" && mkdir -p "$home/proj/sub" && mine "$home" || bad "cannot make a repository at $home"
	workspace_is "$home/proj/sub" "$home/proj/sub" "below a dotfiles repository at ~ (-D HOME)"
	(cd "$home/proj/sub" && as "$who" "$ZSP_RUN" -- sh -c 'touch here && touch ../../there') \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	[ -e "$home/proj/sub/here" ] && [ ! -e "$home/there" ] && ok ||
		bad "below a dotfiles repository: the sandbox wrote where it should not (or not where it should)"
	# each home `~` may mean stops the walk: $HOME alone (the policy's ~ is the passwd entry's)
	[ "$(cd "$home/proj/sub" && as "$who" "$ZSPC" --query "write \"$home/proj/x\"" \
		"$top_srcdir/examples/workspace.zsp" 2>/dev/null)" = deny ] && ok ||
		bad "\$HOME alone does not stop the walk: the workspace is the dotfiles repository"
	# -D HOME alone ($HOME elsewhere)
	[ "$(cd "$home/proj/sub" && as "$who" env HOME=/nonexistent "$ZSPC" -D HOME="$home" \
		--query "write \"$home/proj/x\"" "$top_srcdir/examples/workspace.zsp" 2>/dev/null)" = deny ] && ok ||
		bad "-D HOME alone does not stop the walk"
	# control: a home elsewhere, and the same repository is a workspace like any other
	[ "$(cd "$home/proj/sub" && as "$who" env HOME=/nonexistent "$ZSPC" -D HOME=/nonexistent \
		--query "write \"$home/proj/x\"" "$top_srcdir/examples/workspace.zsp" 2>/dev/null)" = allow ] && ok ||
		bad "control: a repository that is not at the home is not taken"
	# at the home itself: the home is the current directory, and zsp-run refuses it
	(cd "$home" && as "$who" "$ZSP_RUN" -- echo ran) </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -ne 0 ] && ! grep -q '^ran' "$tmp/out" && grep -q "home" "$tmp/err" && ok ||
		bad "zsp-run at a home that is a repository: exit $rc, $(head -1 "$tmp/out")"

	# -- a .git someone else owns is ignored, and so is one in someone else's directory
	if [ -n "$other" ]; then
		s=$world/shared
		repo "$s" && mkdir -p "$s/mine" && mine "$s" && chown -R "$other" "$s/.git" ||
			bad "cannot plant $s/.git"
		workspace_is "$s/mine" "$s/mine" "a .git of uid $other above"
		p=$world/planted
		repo "$p" && mkdir -p "$p/mine" && mine "$p" && chown "$other" "$p" ||
			bad "cannot plant $p"
		workspace_is "$p/mine" "$p/mine" "a .git in a directory of uid $other"
		# control: all of it ours, and the top is taken
		c=$world/control
		repo "$c" && mkdir -p "$c/mine" && mine "$c" || bad "cannot make $c"
		workspace_is "$c/mine" "$c" "control: a repository of ours"
		# a .git that is no repository (an empty directory) is not a top either
		e=$world/empty
		mkdir -p "$e/.git" "$e/mine" && mine "$e"
		workspace_is "$e/mine" "$e/mine" "an empty .git directory"
	else
		echo "SKIP [$who] foreign .git: files of another uid need root to make"
	fi

	# -- a .git file (a worktree's, a submodule's) marks a top
	m=$world/main
	repo "$m" && g -C "$m" worktree add -q -b side "$world/wt" >/dev/null 2>&1 &&
		mkdir -p "$world/wt/sub" && mine "$world/wt" || bad "cannot make the worktree $world/wt"
	[ -f "$world/wt/.git" ] && grep -q '^gitdir: ' "$world/wt/.git" && ok ||
		bad "the worktree's .git is not a gitdir: file"
	workspace_is "$world/wt/sub" "$world/wt" "a worktree (.git file)"
	f=$world/pointer
	mkdir -p "$f/sub" && printf 'gitdir: ../main/.git/modules/x\n' >"$f/.git" && mine "$f"
	workspace_is "$f/sub" "$f" "a submodule's .git file"
	printf 'not a pointer\n' >"$f/.git"
	workspace_is "$f/sub" "$f/sub" "a .git file that is no gitdir: pointer"

	# -- `/` is never the workspace, even when it holds the user's own repository: zspc in a
	# root of its own (bwrap) whose `/` is a repository
	fr=$world/fakeroot
	repo "$fr" && mkdir -p "$fr/sub" "$fr/ex" && cp "$top_srcdir/examples/"*.zsp "$fr/ex/" && mine "$fr" ||
		bad "cannot make $fr"
	set --
	for d in bin sbin lib lib32 lib64 libx32; do
		if [ -L "/$d" ]; then
			ln -s "$(readlink "/$d")" "$fr/$d"   # merged /usr: the host's links, in the new root
		elif [ -d "/$d" ]; then
			set -- "$@" --ro-bind "/$d" "/$d"
		fi
	done
	for q in "write \"/sub/x\" allow" "write \"/x\" deny"; do
		want=${q##* } q=${q% *}
		got=$(as "$who" bwrap --bind "$fr" / --ro-bind /usr /usr --ro-bind /etc /etc "$@" \
			--ro-bind "$ZSPC" /zspc ${nobody_libs:+--ro-bind "$nobody_libs" "$nobody_libs"} \
			--dev /dev --proc /proc --chdir /sub /zspc -D HOME=/nonexistent --query "$q" \
			/ex/workspace.zsp 2>"$tmp/err")
		[ "$got" = "$want" ] && ok || bad "in a root that is a repository: $q: $got, expected $want ($(head -2 "$tmp/err"))"
	done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
