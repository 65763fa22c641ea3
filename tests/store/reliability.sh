#!/bin/sh
# reliability.sh: the grant store under 8 concurrent processes and under SIGKILL, then the
# refusals (corrupt, group-writable, foreign owner, read-only directory); as root, again as nobody.
zsp_suite=store-reliability
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
rel=$top_builddir/tests/store/reliability
if [ ! -x "$rel" ]; then
	echo "$zsp_suite: no $rel" >&2
	exit 99
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$zsp_suite.XXXXXX") || exit 99
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
chmod 755 "$tmp"
: "${ZSP_RELIABILITY_OPS:=1000}"
: "${ZSP_RELIABILITY_KILLS:=60}"

failed=0
bad() { failed=$((failed + 1)); echo "FAIL [$who] $*"; }

# as WHO CMD...
as() {
	w=$1
	shift
	if [ "$w" = nobody ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"
	else
		"$@"
	fi
}

# refuses WHAT DIR WANT: opening DIR fails, and the message says WANT
refuses() {
	out=$(as "$who" "$rel" open "$2" 2>&1) && { bad "$1: opened"; return; }
	case $out in
	*"$3"*) echo "ok [$who] $1: $out" ;;
	*) bad "$1: '$out' lacks '$3'" ;;
	esac
}

# state WHO NAME: a fresh state dir with a grants.db, owned by WHO
state() {
	d=$tmp/$who.$1
	mkdir -p "$d"
	[ "$who" = nobody ] && chown 65534:65534 "$d"
	chmod 700 "$d"
	as "$who" "$rel" open "$d" || bad "$1: cannot create"
	echo "$d"
}

whos=self
if [ "$(id -u)" -eq 0 ]; then
	if command -v setpriv >/dev/null 2>&1; then
		whos="self nobody"
	else
		echo "$zsp_suite: setpriv is missing (util-linux): the unprivileged pass cannot run"
	fi
fi
for who in $whos; do
	d=$(state concurrent)
	as "$who" "$rel" concurrent "$d" 8 "$ZSP_RELIABILITY_OPS" 500 || bad "concurrent"
	d=$(state sigkill)
	as "$who" "$rel" sigkill "$d" "$ZSP_RELIABILITY_KILLS" || bad "sigkill"

	d=$(state corrupt)
	rm -f "$d/grants.db-wal" "$d/grants.db-shm"
	head -c 8192 /dev/urandom >"$d/grants.db"
	refuses corrupt "$d" "corrupt or not a zsp grant database"
	d=$(state groupwritable)
	chmod 660 "$d/grants.db"
	refuses group-writable "$d" "writable by group or others (mode 0660)"
	if [ "$(as "$who" id -u)" -eq 0 ]; then
		d=$(state foreign)
		chown 65534 "$d/grants.db"
		refuses "owned by another user" "$d" "owned by uid 65534, not by you"
		echo "skip [$who] read-only directory: root writes anyway"
	else
		d=$(state readonly)
		chmod 500 "$d"
		refuses "read-only directory" "$d" "directory not writable"
		echo "skip [$who] owned by another user: needs root to chown"
	fi
done
[ "$failed" -eq 0 ] || { echo "$zsp_suite: $failed failure(s)"; exit 1; }
echo "$zsp_suite: all passed"
