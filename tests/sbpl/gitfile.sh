#!/bin/sh
# gitfile.sh: `zspc --emit sbpl` follows a `.git` file (`gitdir: PATH`, worktrees and
# submodules) and the repository's commondir, so the protected .git names hold where git looks.
# Layouts made by hand and by real `git worktree add` / `git submodule add`; the profile is
# judged by the SBPL evaluator (doc/sbpl-eval.md) on the paths Seatbelt would see.

zsp_suite=sbpl-gitfile zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
: "${SBPL_EVAL:=$top_builddir/tests/sbpl/sbpl-eval}"

if [ ! -x "$SBPL_EVAL" ]; then
	echo "$zsp_suite: no sbpl-eval at $SBPL_EVAL" >&2
	exit 99
fi
if ! command -v git >/dev/null 2>&1; then
	echo "SKIP: no git"
	exit 77
fi

passed=0
failed=0
T=$(cd "$tmp" && pwd -P)
export GIT_CONFIG_NOSYSTEM=1 HOME="$T/home" GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
mkdir -p "$HOME"

# The path Seatbelt sees: symlinks resolved, /tmp /var /etc under /private.
seen() {
	p=$(realpath -m -- "$1")
	case $p in /tmp | /tmp/* | /var | /var/* | /etc | /etc/*) p=/private$p ;; esac
	printf '%s\n' "$p"
}

# emit NAME ROOT... : the profile of a policy writing each ROOT, with the .git names protected,
# into $T/NAME.sb (stderr in $T/NAME.err).
emit() {
	name=$1
	shift
	roots=
	for r in "$@"; do roots="$roots${roots:+, }\"$r\""; done
	cat >"$T/$name.zsp" <<EOF
zsp 1;
policy "$name" {
  fs {
    read "/";
    write $roots;
    deny "$T/secret";
    protect ".git/hooks", ".git/config";
  }
}
EOF
	# a FIFO must not block the emitter
	timeout 20 "$ZSPC" --emit sbpl "$T/$name.zsp" >"$T/$name.sb" 2>"$T/$name.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		failed=$((failed + 1))
		echo "FAIL $name: zspc exit $rc"
		cat "$T/$name.err"
	fi
	profile=$T/$name.sb
	case=$name
}

# write allow|deny PATH: a write of PATH as data and as a new file (and, denied, its removal)
write() {
	ops="file-write-data file-write-create"
	[ "$1" = deny ] && ops="$ops file-write-unlink"
	target=$(seen "$2")
	for op in $ops; do
		got=$("$SBPL_EVAL" "$profile" "$op" "$target")
		if [ "$got" = "$1" ]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "FAIL $case: $op $target: $got, want $1"
		fi
	done
}

# op OPERATION allow|deny PATH: one operation, the path taken as given
op() {
	got=$("$SBPL_EVAL" "$profile" "$1" "$3")
	if [ "$got" = "$2" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $case: $1 $3: $got, want $2"
	fi
}

# warned PATTERN: the emitter's stderr has a -Wunenforced warning matching PATTERN
warned() {
	if grep -q "warning: .*$1.*\[-Wunenforced\]" "$T/$case.err"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $case: no warning matching '$1':"
		cat "$T/$case.err"
	fi
}

quiet() {
	if [ -s "$T/$case.err" ]; then
		failed=$((failed + 1))
		echo "FAIL $case: unexpected diagnostics:"
		cat "$T/$case.err"
	else
		passed=$((passed + 1))
	fi
}

# repository: a git directory's usual entries, by hand
gitdir() {
	mkdir -p "$1/hooks" "$1/objects/ab" "$1/refs"
	echo 'ref: refs/heads/main' >"$1/HEAD"
	: >"$1/config"
}

# Allowed in a followed git directory: what git writes while working.
working() {
	write allow "$1/index"
	write allow "$1/HEAD"
	write allow "$1/objects/ab/cdef"
	write allow "$1/refs/heads/main"
}

# Absolute gitdir, no commondir.
mkdir -p "$T/abs" "$T/store"
gitdir "$T/store/abs.git"
echo "gitdir: $T/store/abs.git" >"$T/abs/.git"
emit absolute "$T/abs" "$T/store"
quiet
write deny "$T/store/abs.git/hooks/x"
write deny "$T/store/abs.git/hooks"
write deny "$T/store/abs.git/config"
write deny "$T/store/abs.git/commondir"
write deny "$T/abs/.git"
working "$T/store/abs.git"
write allow "$T/abs/file"

# Relative gitdir with `..`, and a relative commondir.
mkdir -p "$T/rel/x"
gitdir "$T/store/rel.git"
gitdir "$T/store/common"
printf 'gitdir: x/../../store/rel.git\n' >"$T/rel/.git"
printf '../common\n' >"$T/store/rel.git/commondir"
emit relative "$T/rel" "$T/store"
quiet
write deny "$T/store/rel.git/hooks/x"
write deny "$T/store/rel.git/config"
write deny "$T/store/rel.git/commondir"
write deny "$T/store/common/hooks/x"
write deny "$T/store/common/config"
write deny "$T/rel/.git"
working "$T/store/rel.git"
working "$T/store/common"

# An absolute commondir.
mkdir -p "$T/acom"
gitdir "$T/store/acom.git"
echo "gitdir: $T/store/acom.git" >"$T/acom/.git"
echo "$T/store/common" >"$T/store/acom.git/commondir"
emit abs-commondir "$T/acom" "$T/store"
quiet
write deny "$T/store/common/hooks/x"
write deny "$T/store/common/config"
working "$T/store/common"

# A worktree made by git: the admin directory, its commondir (../..) and gitdir files.
git init -q -b main "$T/main" && git -C "$T/main" commit -q --allow-empty -m init &&
	git -C "$T/main" worktree add -q -b wt "$T/wt" || exit 99
emit worktree "$T/wt" "$T/main/.git"
quiet
admin=$T/main/.git/worktrees/wt
write deny "$admin/hooks/x"
write deny "$admin/config"
write deny "$admin/commondir"
write deny "$admin/gitdir"
write deny "$T/main/.git/hooks/pre-commit"
write deny "$T/main/.git/config"
write deny "$T/wt/.git"
working "$admin"
working "$T/main/.git"
write allow "$T/wt/README"

# The same worktree reached through a symlink in the gitdir: Seatbelt sees the resolved path.
mkdir -p "$T/viaLink"
ln -s "$T/main/.git/worktrees" "$T/links"
echo "gitdir: $T/links/wt" >"$T/viaLink/.git"
emit symlinked-gitdir "$T/viaLink" "$T/main/.git" "$T/links"
quiet
write deny "$admin/hooks/x"
write deny "$admin/config"
write deny "$admin/commondir"
write deny "$admin/gitdir"
write deny "$T/main/.git/hooks/x"
working "$admin"
# the spelled path too, and the link cannot be removed or renamed away
op file-write-data deny "$(seen "$T")/links/wt/hooks/x"
op file-write-unlink deny "$(seen "$T")/links"

# A submodule made by git: sub/.git says gitdir: ../.git/modules/sub.
git init -q -b main "$T/super" && git init -q -b main "$T/super/other" &&
	git -C "$T/super/other" commit -q --allow-empty -m init &&
	git -C "$T/super" -c protocol.file.allow=always submodule add -q ./other sub >/dev/null 2>&1 ||
	exit 99
emit submodule "$T/super/sub" "$T/super/.git"
quiet
mod=$T/super/.git/modules/sub
write deny "$mod/hooks/x"
write deny "$mod/config"
write deny "$T/super/sub/.git"
working "$mod"

# A symlinked .git: not followed; the link itself stays read-only.
mkdir -p "$T/symdot"
ln -s "$T/store/abs.git" "$T/symdot/.git"
emit symlinked-dotgit "$T/symdot" "$T/store"
warned "symdot/.git. is a symbolic link, not followed"
op file-write-data deny "$(seen "$T")/symdot/.git"
op file-write-unlink deny "$(seen "$T")/symdot/.git"
# Seatbelt resolves the link: the names under its target are not protected (the warning says so)

# Malformed pointers: the .git name stays read-only, with a warning.
mkdir -p "$T/bad"
echo "not a pointer" >"$T/bad/.git"
emit malformed "$T/bad"
warned "bad/.git. is not followed (no .gitdir: PATH. line)"
write deny "$T/bad/.git"
write allow "$T/bad/file"

mkdir -p "$T/twolines"
printf 'gitdir: /a\ngitdir: /b\n' >"$T/twolines/.git"
emit two-lines "$T/twolines"
warned "more than one line"
write deny "$T/twolines/.git"

mkdir -p "$T/fifo"
mkfifo "$T/fifo/.git"
emit fifo "$T/fifo"
warned "not a regular file"
write deny "$T/fifo/.git"

mkdir -p "$T/badcom"
gitdir "$T/store/badcom.git"
echo "gitdir: $T/store/badcom.git" >"$T/badcom/.git"
: >"$T/store/badcom.git/commondir"
emit bad-commondir "$T/badcom" "$T/store"
warned "badcom.git/commondir. is not followed"
write deny "$T/store/badcom.git/hooks/x"
write deny "$T/store/badcom.git/commondir"

# A gitdir that does not exist: protected as spelled, with a warning.
mkdir -p "$T/gone"
echo "gitdir: $T/store/gone.git" >"$T/gone/.git"
emit missing "$T/gone" "$T/store"
warned "which does not exist here"
write deny "$T/store/gone.git/hooks/x"
write deny "$T/store/gone.git/config"

# A gitdir inside a denied directory changes nothing there: it stays hidden.
mkdir -p "$T/hid"
gitdir "$T/secret/hid.git"
echo "gitdir: $T/secret/hid.git" >"$T/hid/.git"
emit denied "$T/hid"
quiet
op file-read-data deny "$(seen "$T")/secret/hid.git/hooks/x"
op file-read-data deny "$(seen "$T")/secret/hid.git/config"
if grep -q 'hid\.git/' "$T/denied.sb"; then
	failed=$((failed + 1))
	echo "FAIL denied: the profile names the hidden gitdir"
else
	passed=$((passed + 1))
fi
write deny "$T/hid/.git"

# A gitdir the policy keeps read-only: nothing added there either.
mkdir -p "$T/ro"
gitdir "$T/store/ro.git"
echo "gitdir: $T/store/ro.git" >"$T/ro/.git"
emit read-only "$T/ro"
quiet
write deny "$T/store/ro.git/index"
op file-read-data allow "$(seen "$T")/store/ro.git/config"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
