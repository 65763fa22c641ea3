#!/bin/sh
# agree-params.sh: the oracle (zspc --query, the session), the Linux lowering (zspc --emit bwrap)
# and zsp-run --print must see the same built-in parameters (compiler/params.c), also when the
# environment lies: USER never comes from $USER, HOME and TMPDIR the same way everywhere. Two
# computations of them once disagreed: the oracle allowed /tmp/evil while the sandbox bound
# /tmp/root.
set -u
ZSPC=${ZSPC:-${top_builddir:-.}/zspc}
ZSP_RUN=${ZSP_RUN:-${top_builddir:-.}/zsp-run}
abs() { case $1 in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
ZSPC=$(abs "$ZSPC")
ZSP_RUN=$(abs "$ZSP_RUN")
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

# query REQUEST ENV...: the oracle's answer under that environment
query() {
	req=$1
	shift
	(cd "$tmp/ws" && env "$@" "$ZSPC" --query "$req" "$tmp/p.zsp" 2>/dev/null)
}

# one hostile environment: HOSTILE_HOME / HOSTILE_TMP are where HOME and TMPDIR point
check_env() {
	label=$1 home=$2 tmpd=$3
	shift 3
	mkdir -p "$home/h-$me" "$home/h-evil" "$tmpd/out-$me" "$tmpd/out-evil"
	set -- USER=evil LOGNAME=evil HOME="$home" TMPDIR="$tmpd" "$@"
	# the oracle: the account's name, not $USER
	[ "$(query "write \"$tmpd/out-$me/x\"" "$@")" = allow ] && ok ||
		bad "$label: the oracle refuses TMPDIR/out-$me"
	[ "$(query "write \"$tmpd/out-evil/x\"" "$@")" = deny ] && ok ||
		bad "$label: the oracle allows TMPDIR/out-evil (USER taken from the environment)"
	[ "$(query "write \"$home/h-$me/x\"" "$@")" = allow ] && ok ||
		bad "$label: the oracle refuses HOME/h-$me"
	[ "$(query "write \"$home/h-evil/x\"" "$@")" = deny ] && ok ||
		bad "$label: the oracle allows HOME/h-evil"
	# the lowering and zsp-run bind exactly what the oracle allows
	(cd "$tmp/ws" && env "$@" "$ZSPC" --emit bwrap "$tmp/p.zsp") >"$tmp/emit" 2>"$tmp/emit.err" ||
		bad "$label: --emit bwrap failed: $(cat "$tmp/emit.err")"
	(cd "$tmp/ws" && env "$@" "$ZSP_RUN" -p "$tmp/p.zsp" --print) >"$tmp/print" 2>"$tmp/print.err" ||
		bad "$label: zsp-run --print failed: $(cat "$tmp/print.err")"
	for f in emit print; do
		grep -qxF -- "$(q "$tmpd/out-$me")" "$tmp/$f" && ok || bad "$label: $f does not bind TMPDIR/out-$me"
		grep -qxF -- "$(q "$home/h-$me")" "$tmp/$f" && ok || bad "$label: $f does not bind HOME/h-$me"
		! grep -q -- "-evil" "$tmp/$f" && ok || bad "$label: $f binds a path named after \$USER"
	done
	cmp -s "$tmp/emit" "$tmp/print" && ok || bad "$label: --emit bwrap and zsp-run --print differ"
}

mkdir -p "$tmp/ws"
check_env "hostile USER" "$tmp/home" "$tmp/t"
check_env "hostile USER, HOME and TMPDIR elsewhere" "$tmp/other home" "$tmp/other tmp"
# a relative HOME is not a home: every part falls back to the account's entry alike
pw_home=$(getent passwd "$(id -u)" | cut -d: -f6)
if [ -n "$pw_home" ] && [ -d "$pw_home" ]; then
	[ "$(query "write \"$pw_home/h-$me/x\"" USER=evil HOME=relative TMPDIR="$tmp/t")" = allow ] && ok ||
		bad "relative HOME: the oracle does not fall back to the passwd home $pw_home"
	made=
	[ -d "$pw_home/h-$me" ] || { mkdir "$pw_home/h-$me" 2>/dev/null && made=1; }
	if [ -d "$pw_home/h-$me" ]; then
		(cd "$tmp/ws" && env USER=evil HOME=relative TMPDIR="$tmp/t" "$ZSPC" --emit bwrap "$tmp/p.zsp") \
			>"$tmp/emit" 2>/dev/null
		grep -qxF -- "$(q "$pw_home/h-$me")" "$tmp/emit" && ok ||
			bad "relative HOME: --emit bwrap does not fall back to the passwd home $pw_home"
		[ -n "$made" ] && rmdir "$pw_home/h-$me" 2>/dev/null
	fi
fi
# and the session of libzsp gets the same values zspc gives it: zspc --query is that session
[ "$(query "write \"$tmp/ws/x\"" USER=evil)" = allow ] && ok || bad "WORKSPACE is not the current directory"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
