#!/bin/sh
# agree-params.sh: the oracle (zspc --query, the session), the Linux lowering (zspc --emit bwrap)
# and zsp-run --print must see the same built-in parameters (compiler/params.c), also when the
# environment lies: USER never comes from $USER, HOME never from $HOME (it is the passwd entry's
# home, and -D HOME=... the only way to choose another), TMPDIR the same way everywhere. Two
# computations of them once disagreed: the oracle allowed /tmp/evil while the sandbox bound
# /tmp/root.
set -u
ZSPC=${ZSPC:-${top_builddir:-.}/zspc}
ZSP_RUN=${ZSP_RUN:-${top_builddir:-.}/zsp-run}
abs() { case $1 in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
ZSPC=$(abs "$ZSPC")
ZSP_RUN=$(abs "$ZSP_RUN")
state_masks=$(abs "${top_srcdir:-$(dirname "$0")/..}/tests/state-masks.awk")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
# q PATH: PATH as the emitted argv prints it (shell-quoted when it needs to be)
q() { case $1 in *[!A-Za-z0-9_./=:,+@%-]*) printf "'%s'" "$1" ;; *) printf '%s' "$1" ;; esac; }
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

me=$(id -un)
[ "$me" != evil ] || { echo "FAIL: the test user must not be called evil"; exit 1; }
cat >"$tmp/p.zsp" <<'ZSP'
zsp 1;
policy "p" {
  param WORKSPACE;
  fs {
    read "/";
    write "${TMPDIR}/out-${USER}", "${HOME}/h-${USER}", "${WORKSPACE}";
  }
}
ZSP

# query REQUEST ENV...: the oracle's answer under that environment (its stderr in $tmp/query.err)
query() {
	req=$1
	shift
	(cd "$tmp/ws" && env "$@" "$ZSPC" --query "$req" "$tmp/p.zsp" 2>"$tmp/query.err")
}

# The home `~` and ${HOME} mean: the passwd entry's. h-$me must exist there to be bound.
pw_home=$(getent passwd "$(id -u)" | cut -d: -f6)
case $pw_home in
/*) ;;
*) echo "FAIL: no home directory in the passwd entry of uid $(id -u)"; exit 1 ;;
esac
made=
if [ ! -d "$pw_home/h-$me" ]; then
	mkdir "$pw_home/h-$me" || { echo "FAIL: cannot create $pw_home/h-$me"; exit 1; }
	made=$pw_home/h-$me
fi
trap 'rm -rf "$tmp"; [ -z "$made" ] || rmdir "$made"' EXIT

# warned FILE PROG HOME: FILE holds PROG's one warning that $HOME is not what ~ means
warned() {
	[ "$(grep -c 'warning: \$HOME is ' "$1")" -eq 1 ] &&
		grep -qxF "$2: warning: \$HOME is $3, but ~ in the policy means your account's home, $pw_home (give -D HOME=$3 to use it)" "$1"
}

# one hostile environment: HOME and TMPDIR point at home and tmpd
check_env() {
	label=$1 home=$2 tmpd=$3
	shift 3
	mkdir -p "$home/h-$me" "$home/h-evil" "$tmpd/out-$me" "$tmpd/out-evil"
	set -- USER=evil LOGNAME=evil HOME="$home" TMPDIR="$tmpd" "$@"
	# the oracle: the account's name, not $USER; the account's home, not $HOME
	[ "$(query "write \"$tmpd/out-$me/x\"" "$@")" = allow ] && ok ||
		bad "$label: the oracle refuses TMPDIR/out-$me"
	[ "$(query "write \"$tmpd/out-evil/x\"" "$@")" = deny ] && ok ||
		bad "$label: the oracle allows TMPDIR/out-evil (USER taken from the environment)"
	[ "$(query "write \"$pw_home/h-$me/x\"" "$@")" = allow ] && ok ||
		bad "$label: the oracle refuses the passwd home's h-$me"
	[ "$(query "write \"$home/h-$me/x\"" "$@")" = deny ] && ok ||
		bad "$label: the oracle allows \$HOME/h-$me (HOME taken from the environment)"
	warned "$tmp/query.err" zspc "$home" && ok || bad "$label: zspc --query does not warn once: $(cat "$tmp/query.err")"
	# the lowering and zsp-run bind exactly what the oracle allows
	(cd "$tmp/ws" && env "$@" "$ZSPC" --emit bwrap "$tmp/p.zsp") >"$tmp/emit" 2>"$tmp/emit.err" ||
		bad "$label: --emit bwrap failed: $(cat "$tmp/emit.err")"
	(cd "$tmp/ws" && env "$@" "$ZSP_RUN" -p "$tmp/p.zsp" --print) >"$tmp/print" 2>"$tmp/print.err" ||
		bad "$label: zsp-run --print failed: $(cat "$tmp/print.err")"
	warned "$tmp/emit.err" zspc "$home" && ok || bad "$label: zspc --emit bwrap does not warn once: $(cat "$tmp/emit.err")"
	warned "$tmp/print.err" zsp-run "$home" && ok || bad "$label: zsp-run does not warn once: $(cat "$tmp/print.err")"
	for f in emit print; do
		grep -qxF -- "$(q "$tmpd/out-$me")" "$tmp/$f" && ok || bad "$label: $f does not bind TMPDIR/out-$me"
		grep -qxF -- "$(q "$pw_home/h-$me")" "$tmp/$f" && ok || bad "$label: $f does not bind $pw_home/h-$me"
		! grep -qF -- "$home/" "$tmp/$f" && ok || bad "$label: $f binds a path below \$HOME"
		! grep -q -- "-evil" "$tmp/$f" && ok || bad "$label: $f binds a path named after \$USER"
	done
	# (zsp-run also hides zsp's own state directories where they exist: not the policy's)
	awk -f "$state_masks" "$tmp/print" >"$tmp/print.policy"
	awk -f "$state_masks" "$tmp/emit" >"$tmp/emit.policy"
	cmp -s "$tmp/emit.policy" "$tmp/print.policy" && ok || bad "$label: --emit bwrap and zsp-run --print differ"
	# -D HOME chooses another home, deliberately, and silences the warning
	[ "$( (cd "$tmp/ws" && env "$@" "$ZSPC" -D HOME="$home" --query "write \"$home/h-$me/x\"" "$tmp/p.zsp" 2>"$tmp/query.err"))" = allow ] &&
		ok || bad "$label: -D HOME=\$HOME: the oracle refuses \$HOME/h-$me"
	! grep -q 'warning: \$HOME' "$tmp/query.err" && ok || bad "$label: zspc warns about HOME despite -D HOME"
	(cd "$tmp/ws" && env "$@" "$ZSP_RUN" -D HOME="$home" -p "$tmp/p.zsp" --print) >"$tmp/print" 2>"$tmp/print.err"
	grep -qxF -- "$(q "$home/h-$me")" "$tmp/print" && ok || bad "$label: -D HOME=\$HOME: zsp-run does not bind \$HOME/h-$me"
	! grep -q 'warning: \$HOME' "$tmp/print.err" && ok || bad "$label: zsp-run warns about HOME despite -D HOME"
}

mkdir -p "$tmp/ws"
check_env "hostile USER and HOME" "$tmp/home" "$tmp/t"
check_env "hostile USER, HOME and TMPDIR elsewhere" "$tmp/other home" "$tmp/other tmp"
# a relative HOME is not a home either
[ "$(query "write \"$pw_home/h-$me/x\"" USER=evil HOME=relative TMPDIR="$tmp/t")" = allow ] && ok ||
	bad "relative HOME: the oracle does not use the passwd home $pw_home"
(cd "$tmp/ws" && env USER=evil HOME=relative TMPDIR="$tmp/t" "$ZSPC" --emit bwrap "$tmp/p.zsp") \
	>"$tmp/emit" 2>/dev/null
grep -qxF -- "$(q "$pw_home/h-$me")" "$tmp/emit" && ok ||
	bad "relative HOME: --emit bwrap does not use the passwd home $pw_home"
# HOME as the passwd entry has it: nothing to warn about
(cd "$tmp/ws" && env HOME="$pw_home/" "$ZSP_RUN" -p "$tmp/p.zsp" --print) >/dev/null 2>"$tmp/print.err"
! grep -q 'warning: \$HOME' "$tmp/print.err" && ok || bad "zsp-run warns about a HOME that is the passwd home: $(cat "$tmp/print.err")"
# and the session of libzsp gets the same values zspc gives it: zspc --query is that session
[ "$(query "write \"$tmp/ws/x\"" USER=evil)" = allow ] && ok || bad "WORKSPACE is not the current directory"

# WORKSPACE from a subdirectory of a repository: its top, for the oracle, the lowering and
# zsp-run alike (runtime/workspace.c; tests/e2e/workspace.sh has the other cases)
if command -v git >/dev/null 2>&1; then
	git init -q "$tmp/repo" && mkdir -p "$tmp/repo/a/b"
	(cd "$tmp/repo/a/b" && "$ZSPC" --query "write \"$tmp/repo/x\"" "$tmp/p.zsp" 2>/dev/null) >"$tmp/ans"
	[ "$(cat "$tmp/ans")" = allow ] && ok || bad "zspc --query from a/b: WORKSPACE is not the repository's top"
	# bound_rw FILE DIR: the argv in FILE binds DIR writable
	bound_rw() { awk -v d="$(q "$2")" 'p == "--bind" && $0 == d { f = 1 } { p = $0 } END { exit !f }' "$1"; }
	(cd "$tmp/repo/a/b" && "$ZSPC" --emit bwrap "$tmp/p.zsp") >"$tmp/emit" 2>/dev/null
	(cd "$tmp/repo/a/b" && "$ZSP_RUN" -p "$tmp/p.zsp" --print) >"$tmp/print" 2>/dev/null
	for f in emit print; do
		bound_rw "$tmp/$f" "$tmp/repo" && ok || bad "$f from a/b does not bind the repository's top"
		! bound_rw "$tmp/$f" "$tmp/repo/a/b" && ok || bad "$f from a/b binds a/b itself"
	done
	# the command still starts where it was started
	for f in emit print; do
		grep -A1 -x -- --chdir "$tmp/$f" | tail -1 | grep -qxF -- "$(q "$tmp/repo/a/b")" && ok ||
			bad "$f from a/b does not start the command in a/b"
	done
else
	bad "git is missing (dev.sh installs it)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
