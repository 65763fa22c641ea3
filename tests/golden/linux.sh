#!/bin/sh
# linux.sh: golden text of the Linux backends. For each linux/NAME.zsp (and each examples/*.zsp)
# `zspc --emit bwrap` must print linux/NAME.bwrap and `zspc --emit pfc` linux/NAME.pfc, in a
# fixed world: a fixture tree under $tmp (written @T@ in the files), a clean environment, and the
# built-in parameters given with -D. stderr must equal NAME.warn (or be empty).
# Usage: linux.sh [--bless].

bless=false
case ${1-} in
--bless) bless=true ;;
'') ;;
*) echo "usage: $0 [--bless]" >&2; exit 64 ;;
esac

zsp_suite=golden-linux zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
golden=$top_srcdir/tests/golden/linux

if [ "$(uname -m)" != x86_64 ]; then
	echo "SKIP: the PFC golden files are x86_64 programs"
	exit 77
fi

# The fixture: a workspace with a .git directory and secrets, a worktree whose .git is a file,
# a home with credentials and a cargo home. Names are fixed so the output is stable.
T=$tmp/t
mkdir -p "$T/ws/.git/hooks" "$T/ws/src" "$T/ws/secrets" "$T/ws/vendor" "$T/home/.ssh" \
	"$T/home/.config/app" "$T/tmp" "$T/repos/main/.git/hooks" "$T/repos/main/.git/worktrees/wt" \
	"$T/repos/wt" "$T/home/.cargo/registry" "$T/home/.cache" "$T/home/cargo-home" "$T/shared"
: >"$T/ws/.git/config"
echo 'SECRET=1' >"$T/ws/.env"
: >"$T/home/.ssh/id_ed25519"
: >"$T/repos/main/.git/config"
echo "gitdir: $T/repos/main/.git/worktrees/wt" >"$T/repos/wt/.git"
echo '../..' >"$T/repos/main/.git/worktrees/wt/commondir"

passed=0
failed=0


# The caches and the private /tmp are named in zsp's state directory, $T/state; the key of a
# policy and workspace is a hash of the workspace's path, which moves with $T: @KEY@.
emit() {
	state=
	[ "$1" = bwrap ] && state="--state-dir $T/state"
	(cd "$T/ws" && env -i PATH=/usr/bin:/bin LANG=C.UTF-8 LC_ALL=C.UTF-8 LC_EVIL=1 LC_X=y SECRET_TOKEN=x \
		"$ZSPC" --emit "$1" $state -D WORKSPACE="$T/ws" -D HOME="$T/home" -D TMPDIR="$T/tmp" \
		-D UID=1000 -D USER=u $3 "$2") 2>"$tmp/err" |
		sed "s|$T|@T@|g; s|$tmp|@TMP@|g; s|/sandboxes/[0-9a-f]\{16\}|/sandboxes/@KEY@|g"
	# what the policy includes beside it (examples/node.zsp: workspace.zsp) is @SRCDIR@/NAME
	sed -i "s|$T|@T@|g; s|$tmp|@TMP@|g; s|$2|@SRC@|g; s|$(dirname "$2")/|@SRCDIR@/|g" "$tmp/err"
}

for src in "$golden"/*.zsp "$top_srcdir"/examples/*.zsp; do
	name=$(basename "$src" .zsp)
	case $src in "$top_srcdir"/examples/*) name=example-$name ;; esac
	# NAME.args: extra options, with @T@ standing for the fixture (word-split on purpose)
	extra=
	[ -f "$golden/$name.args" ] && extra=$(sed "s|@T@|$T|g" "$golden/$name.args")
	emit bwrap "$src" "$extra" >"$tmp/out"
	golden_check "$name" bwrap "$golden/$name.bwrap" "$tmp/out"
	if [ -s "$tmp/err" ] || [ -f "$golden/$name.warn" ]; then
		golden_check "$name" warnings "$golden/$name.warn" "$tmp/err"
	fi
	emit pfc "$src" "$extra" >"$tmp/out"
	golden_check "$name" pfc "$golden/$name.pfc" "$tmp/out"
done

# The fixture is as it was: emitting never creates anything.
if [ -e "$T/ws/.codex" ] || [ -e "$T/ws/.claude" ]; then
	failed=$((failed + 1))
	echo "FAIL zspc --emit bwrap created placeholders in the workspace"
fi

$bless && { echo "blessed"; exit 0; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
