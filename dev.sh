#!/bin/sh
# dev.sh: everything the README's two commands need on a fresh Debian 12 machine:
# install missing packages (as root), bootstrap, configure and build out of tree, then run a job.
#   ./dev.sh demo    compile the built-in example policy and print its normalized IR
#   ./dev.sh check   run every test: make check, the same under ASan+UBSan, make distcheck
set -eu

top=$(cd "$(dirname "$0")" && pwd)
build="$top/_build"
jobs=$(nproc 2>/dev/null || echo 2)
packages="build-essential autoconf automake libtool pkg-config flex bison libseccomp-dev
libsqlite3-dev libpcre2-dev libcunit1-dev bubblewrap xz-utils"

say() { printf 'dev.sh: %s\n' "$*" >&2; }

install_packages() {
	missing=
	for p in $packages; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		say "missing Debian packages:$missing"
		say "install them as root: apt-get install$missing"
		exit 1
	fi
	say "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# configure (once) and build in $1 with configure options $2...
build_in() {
	dir=$1
	shift
	if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
	   [ "$top/Makefile.am" -nt "$top/configure" ]; then
		say "bootstrapping (autoreconf)"
		(cd "$top" && autoreconf -fi >/dev/null 2>&1) || { (cd "$top" && autoreconf -fi); exit 1; }
	fi
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ] || [ "$top/configure" -nt "$dir/config.status" ]; then
		say "configuring $dir $*"
		(cd "$dir" && "$top/configure" -q "$@")
	fi
	make -s -C "$dir" -j"$jobs" >/dev/null
}

# Runs make TARGET in DIR, keeps the output, and adds its PASS/FAIL counts to the totals.
passed=0
failed=0
run_tests() {
	dir=$1
	target=$2
	count=${3:-count}
	log="$dir/dev-$target.out"
	status=0
	make -C "$dir" -j"$jobs" "$target" >"$log" 2>&1 || status=$?
	grep -E '^(# )?(PASS|FAIL|XPASS|ERROR|SKIP|XFAIL)|^(golden|fuzz_regress|cli):|passed, ' "$log" || true
	p=$(sed -n 's/^# PASS: *//p' "$log" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^# \(FAIL\|XPASS\|ERROR\): *//p' "$log" | awk '{s+=$1} END {print s+0}')
	if [ "$status" -ne 0 ]; then
		[ "$f" -eq 0 ] && f=1
		say "make $target in $dir failed; its output:"
		tail -n 60 "$log" >&2
		for l in $(find "$dir/tests" -name '*.log' 2>/dev/null); do
			grep -q '^FAIL\|^ERROR' "${l%.log}.trs" 2>/dev/null && { say "--- $l"; tail -n 40 "$l" >&2; }
		done
	fi
	if [ "$count" = once ]; then
		# distcheck reruns the suite from the tarball: count it as one check
		if [ "$status" -eq 0 ]; then p=1 f=0; else p=0 f=1; fi
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

case "${1:-}" in
demo)
	install_packages
	build_in "$build"
	"$build/zspc" --emit ir "$top/examples/workspace.zsp"
	;;
check)
	install_packages
	build_in "$build"
	run_tests "$build" check
	say "AddressSanitizer + UndefinedBehaviorSanitizer build"
	build_in "$build-asan" --enable-asan --enable-ubsan
	run_tests "$build-asan" check
	say "make distcheck"
	run_tests "$build" distcheck once
	echo "total: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	;;
*)
	echo "usage: $0 demo|check" >&2
	exit 64
	;;
esac
