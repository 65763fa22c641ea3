# testenv.sh: sourced by the shell test runners after they set zsp_suite (a name for
# messages) and zsp_up (the path from the runner's directory to the top of the tree).
# Makes top_srcdir, top_builddir and ZSPC absolute (the harness exports them; by hand they
# default from the runner's place), isolates diagnostics from the configured data directory,
# and gives the runner a private $tmp that is removed on exit.

: "${top_srcdir:=$(cd "$(dirname "$0")/$zsp_up" && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${ZSPC:=$top_builddir/zspc}"
case $ZSPC in
/*) ;;
*) ZSPC=$(pwd)/$ZSPC ;;
esac
case $top_srcdir in
/*) ;;
*) top_srcdir=$(pwd)/$top_srcdir ;;
esac
# Diagnostics name the data directory; keep them independent of the configured prefix.
ZSP_DATADIR=/nonexistent/share/zsp
export ZSP_DATADIR

if [ ! -x "$ZSPC" ]; then
	echo "$zsp_suite: no zspc at $ZSPC" >&2
	exit 99
fi
# Only a test build reads ZSP_DATADIR (and the e2e suites' ZSP_BWRAP, ZSP_PROBE).
case $("$ZSPC" --version 2>&1) in
*"(test build: honours ZSP_BWRAP, ZSP_PROBE, ZSP_DATADIR)"*) ;;
*)
	echo "$zsp_suite: $ZSPC is not a test build: configure with --enable-test-overrides" >&2
	exit 99
	;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$zsp_suite.XXXXXX") || exit 99
shm=
# zsp_need_tmpfs=1: also a private $shm on a tmpfs ($ZSP_TEST_TMPFS, else /dev/shm), where
# runtime directories go: thread grants are kept only on a tmpfs (doc/store.md).
if [ -n "${zsp_need_tmpfs:-}" ]; then
	shm=$(mktemp -d "${ZSP_TEST_TMPFS:-/dev/shm}/$zsp_suite.XXXXXX") || exit 99
	case $(stat -f -c %T "$shm") in
	tmpfs | ramfs) ;;
	*)
		echo "$zsp_suite: ${ZSP_TEST_TMPFS:-/dev/shm} is not a tmpfs (set ZSP_TEST_TMPFS)" >&2
		rmdir "$shm"
		exit 99
		;;
	esac
fi
trap 'rm -rf "$tmp" ${shm:+"$shm"}' EXIT
trap 'exit 130' INT TERM

# golden_check NAME KIND EXPECTED ACTUAL: with bless=true the golden file EXPECTED becomes
# ACTUAL; otherwise they must be equal (a diff is printed). Counts into passed/failed.
golden_check() {
	if ${bless:-false}; then
		cp "$4" "$3"
		return
	fi
	if [ -f "$3" ] && cmp -s "$3" "$4"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $1 ($2)"
		if [ -f "$3" ]; then diff -u "$3" "$4"; else echo "  no $3"; fi
	fi
}

