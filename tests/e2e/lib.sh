# lib.sh: sourced by the end-to-end suites after testenv.sh. Every case runs twice: as the user
# running the suite and, when that is root, again as an unprivileged uid (65534) via setpriv,
# so the sandbox is exercised with and without privilege.
#
# The unprivileged pass never runs anything from the build or source tree: they may lie where
# uid 65534 cannot go (a checkout in /root, mode 700: every case would exit 126). It runs copies
# instead, made by root in $tmp/nobody (mode 755, readable by all): bin/ holds zsp-run, zsp-exec,
# zspc and zsp-probe side by side (zsp-run finds its exec step and the probe beside itself, zspc
# finds zsp-run; $ZSP_PROBE names the copy too), src/ the policies the suites read (examples/,
# corpus/requests/, tests/e2e/policies/). `fresh WHO` points ZSP_RUN, ZSP_PROBE, ZSPC and top_srcdir at the
# copies for nobody and back at the originals for self. When the pass cannot run (no setpriv,
# $tmp out of uid 65534's reach, a copy that does not run as it), the reason is printed and the
# pass skipped, which is a failure when $CI is set.
: "${ZSP_RUN:=$top_builddir/zsp-run}"
: "${ZSP_PROBE:=$top_builddir/zsp-probe}"
export ZSP_PROBE
if [ ! -x "$ZSP_RUN" ] || [ ! -x "$ZSP_PROBE" ]; then
	echo "$zsp_suite: no zsp-run or zsp-probe in $top_builddir" >&2
	exit 99
fi
case $("$ZSP_RUN" --version 2>&1) in
*"(test build: honours ZSP_BWRAP, ZSP_PROBE, ZSP_DATADIR)"*) ;;
*)
	echo "$zsp_suite: $ZSP_RUN is not a test build: configure with --enable-test-overrides" >&2
	exit 99
	;;
esac
chmod 755 "$tmp" ${shm:+"$shm"}

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL [$who] $*"; }

# What self runs; use_programs nobody switches to the copies.
self_run=$ZSP_RUN self_probe=$ZSP_PROBE self_zspc=$ZSPC self_srcdir=$top_srcdir
nobody_dir=$tmp/nobody
nobody_libs=   # the copied shared libraries of libtool-wrapped programs, if any

# as_nobody CMD...: CMD as uid/gid 65534 without groups or capabilities (environment kept).
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		${nobody_libs:+env LD_LIBRARY_PATH="$nobody_libs"} "$@"
}

# copy_program SRC DEST: a copy of the program SRC that runs from anywhere. A libtool wrapper
# script (a program linked against the uninstalled libzsp.so) is replaced by the real binary
# of .libs/ and the libraries of its LD_LIBRARY_PATH are copied to $nobody_dir/lib.
copy_program() {
	if [ "$(head -c 2 "$1")" != '#!' ]; then
		cp "$1" "$2"
		return
	fi
	if ! grep -q 'libtool' "$1"; then
		why="$1 is a script, not a program"
		return 1
	fi
	name=$(sed -n "s/^ *program='\\(.*\\)'\$/\\1/p" "$1" | head -n 1)
	real=$(dirname "$1")/.libs/${name:-$(basename "$1")}
	if [ ! -f "$real" ]; then
		why="$1 is a libtool wrapper without its program $real"
		return 1
	fi
	cp "$real" "$2"
	mkdir -p "$nobody_dir/lib"
	libpath=$(sed -n 's/^ *LD_LIBRARY_PATH="\(.*\):\$LD_LIBRARY_PATH"$/\1/p' "$1" | head -n 1)
	old_ifs=$IFS
	IFS=:
	for d in $libpath; do
		for l in "$d"/*.so*; do
			if [ -f "$l" ]; then cp -P "$l" "$nobody_dir/lib/"; fi
		done
	done
	IFS=$old_ifs
	nobody_libs=$nobody_dir/lib
}

# setup_nobody: makes the copies and checks that uid 65534 can run them; else sets $why.
# (Each check runs a program that looks the path up as uid 65534: setpriv itself still finds
# its command with root's access, so `as_nobody $path` would succeed where `env $path` fails.)
setup_nobody() {
	if ! command -v setpriv >/dev/null 2>&1; then
		why="setpriv is missing (util-linux)"
		return 1
	fi
	if ! (cd / && as_nobody test -x "$tmp"); then
		why="uid 65534 cannot reach $tmp (TMPDIR=${TMPDIR:-}): run the suite with TMPDIR unset or reachable by all"
		return 1
	fi
	why="could not copy the programs to $nobody_dir"
	mkdir -p "$nobody_dir/bin" "$nobody_dir/src/corpus" "$nobody_dir/src/tests/e2e" || return 1
	copy_program "$self_run" "$nobody_dir/bin/zsp-run" &&
		copy_program "$(dirname "$self_run")/zsp-exec" "$nobody_dir/bin/zsp-exec" &&
		copy_program "$self_probe" "$nobody_dir/bin/zsp-probe" &&
		copy_program "$self_zspc" "$nobody_dir/bin/zspc" || return 1
	cp -R "$self_srcdir/examples" "$nobody_dir/src/" &&
		cp -R "$self_srcdir/corpus/requests" "$nobody_dir/src/corpus/" &&
		cp -R "$self_srcdir/tests/e2e/policies" "$nobody_dir/src/tests/e2e/" || {
		why="could not copy the policies of $self_srcdir to $nobody_dir"
		return 1
	}
	chown -R 0:0 "$nobody_dir"
	chmod -R u+w,go-w,a+rX "$nobody_dir"
	chmod 755 "$nobody_dir/bin/"*
	for p in zsp-run zspc; do
		if ! out=$(cd "$nobody_dir" && as_nobody env "$nobody_dir/bin/$p" --version 2>&1); then
			why="uid 65534 cannot run the copy $nobody_dir/bin/$p: $out"
			return 1
		fi
	done
	if ! (cd / && as_nobody test -r "$nobody_dir/src/examples/workspace.zsp"); then
		why="uid 65534 cannot read $nobody_dir/src/examples/workspace.zsp"
		return 1
	fi
}

# use_programs WHO: the programs and policies the cases of WHO run and read.
use_programs() {
	if [ "$1" = nobody ]; then
		ZSP_RUN=$nobody_dir/bin/zsp-run ZSP_PROBE=$nobody_dir/bin/zsp-probe
		ZSPC=$nobody_dir/bin/zspc top_srcdir=$nobody_dir/src
	else
		ZSP_RUN=$self_run ZSP_PROBE=$self_probe ZSPC=$self_zspc top_srcdir=$self_srcdir
	fi
	export ZSP_RUN ZSP_PROBE ZSPC
}

# The identities to run as: "self" (root or the current user) then "nobody" when we are root.
zsp_identities=self
if [ "$(id -u)" -eq 0 ]; then
	why=
	if setup_nobody; then
		zsp_identities="self nobody"
	elif [ -n "${CI:-}" ]; then
		echo "FAIL [nobody] the unprivileged pass cannot run, and under CI (CI=$CI) that is a failure: $why"
		failed=$((failed + 1))
	else
		echo "SKIP [nobody] the unprivileged pass cannot run: $why"
	fi
fi
identities() { echo "$zsp_identities"; }

# as WHO CMD...: runs CMD as WHO with a HOME of WHO's own under $tmp. `~` in a policy is the
# account's home in the password database, not $HOME: a CMD that is zsp-run is given
# -D HOME=$home, so that the world's home is the one the policy protects.
as() {
	w=$1
	shift
	if [ "$1" = "$ZSP_RUN" ]; then
		shift
		set -- "$ZSP_RUN" -D HOME="$home" "$@"
	fi
	if [ "$w" = nobody ]; then
		as_nobody env HOME="$home" TMPDIR="$tmpdir" PATH=/usr/bin:/bin "$@"
	else
		env HOME="$home" TMPDIR="$tmpdir" PATH=/usr/bin:/bin "$@"
	fi
}

# fresh WHO: a new world for one identity: $home with credentials, $ws (a git workspace),
# $tmpdir, all owned by WHO; and WHO's programs (use_programs).
fresh() {
	use_programs "$1"
	world=$tmp/$1.$$.$(date +%s%N)
	home=$world/home
	ws=$world/ws
	tmpdir=$world/tmp
	mkdir -p "$home/.ssh" "$ws/.git/hooks" "$ws/src" "$tmpdir"
	echo "PRIVATE KEY" >"$home/.ssh/id_ed25519"
	echo "[core]" >"$ws/.git/config"
	echo "SECRET=hunter2" >"$ws/.env"
	echo "fn main() {}" >"$ws/src/main.rs"
	chmod 755 "$world"
	if [ "$1" = nobody ]; then
		chown -R 65534:65534 "$world"
	fi
}

# mine PATH...: PATH belongs to $who (for the unprivileged pass, uid 65534 owns it)
mine() {
	if [ "$who" = nobody ]; then chown -R 65534:65534 "$@"; fi
}

# zrun SCRIPT [ZSP-RUN OPTIONS...]: sh -c SCRIPT in a sandbox of the built-in policy, as $who,
# with -v, from $ws; stdout in $tmp/out, stderr in $tmp/err, exit status in rc
zrun() {
	script=$1
	shift
	(cd "$ws" && as "$who" "$ZSP_RUN" -v "$@" -D WORKSPACE="$ws" -- sh -c "$script") \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
