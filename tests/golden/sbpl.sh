#!/bin/sh
# sbpl.sh: golden text of the macOS backend. For each sbpl/NAME.zsp (and each examples/*.zsp, as
# example-NAME) `zspc --emit sbpl` must print sbpl/NAME.sbpl; NAME.args adds options (an --emit
# there replaces sbpl: `--emit sandbox-exec` prints NAME.argv, with NAME.cmd as the command).
# stderr, plus `exit N` when zspc fails, must equal NAME.warn (or be empty). Usage: sbpl.sh [--bless].

bless=false
case ${1-} in
--bless) bless=true ;;
'') ;;
*) echo "usage: $0 [--bless]" >&2; exit 64 ;;
esac

zsp_suite=golden-sbpl zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
golden=$top_srcdir/tests/golden/sbpl
# the version alone: a test build adds a note after it
version=$("$ZSPC" --version | sed 's/^zspc \([^ ]*\).*/\1/')

pw_home=$(getent passwd "$(id -u)" | cut -d: -f6)
passed=0
failed=0


# zspc runs in copies of the policies' directories: the default WORKSPACE that sandbox-exec
# gets is the top of the git work tree holding the current directory, and the source tree may
# or may not be one
mkdir -p "$tmp/tree"
cp -R "$golden" "$tmp/tree/sbpl" && cp -R "$top_srcdir/examples" "$tmp/tree/examples" || exit 99
for src in "$golden"/*.zsp "$top_srcdir"/examples/*.zsp; do
	name=$(basename "$src" .zsp)
	case $src in
	"$top_srcdir"/examples/*) name=example-$name dir=$tmp/tree/examples ;;
	*) dir=$tmp/tree/sbpl ;;
	esac
	dir=$(cd "$dir" && pwd -P)	# as zspc sees its working directory
	extra=
	[ -f "$golden/$name.args" ] && extra=$(cat "$golden/$name.args")
	case " $extra " in
	*" --emit "*) emit= ext=argv ;;
	*) emit="--emit sbpl" ext=sbpl ;;
	esac
	set --
	[ -f "$golden/$name.cmd" ] && eval "set -- -- $(cat "$golden/$name.cmd")"
	# a fixed machine for the built-in parameters that sandbox-exec gets from it, but HOME: that
	# is the account's home from the passwd entry, written @HOME@
	# shellcheck disable=SC2086 # options are word-split on purpose
	(cd "$dir" && env -i PATH=/usr/bin:/bin TMPDIR=/var/folders/zz/T \
		"$ZSPC" $emit $extra "$(basename "$src")" "$@") >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -ne 0 ] && echo "exit $rc" >>"$tmp/err"
	# the tree may live under /tmp, which macOS spells /private/tmp: both spellings are @DIR@
	sed -i "s|zspc $version\\.|zspc @VERSION@.|; s|/private$dir|@DIR@|g; s|$dir|@DIR@|g" "$tmp/out"
	sed -i "s|^-DHOME=/private$pw_home\$|-DHOME=@HOME@|; s|^-DHOME=$pw_home\$|-DHOME=@HOME@|" "$tmp/out"
	sed -i "s|/private$dir|@DIR@|g; s|$dir|@DIR@|g" "$tmp/err"
	golden_check "$name" "$ext" "$golden/$name.$ext" "$tmp/out"
	if [ -s "$tmp/err" ] || [ -f "$golden/$name.warn" ]; then
		golden_check "$name" warnings "$golden/$name.warn" "$tmp/err"
	fi
done

$bless && { echo "blessed"; exit 0; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
