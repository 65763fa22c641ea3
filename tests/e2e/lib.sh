# lib.sh: sourced by the end-to-end suites after testenv.sh. Every case runs twice: as the user
# running the suite and, when that is root, again as an unprivileged uid (65534) via setpriv,
# so the sandbox is exercised with and without privilege.
: "${ZSP_RUN:=$top_builddir/zsp-run}"
: "${ZSP_PROBE:=$top_builddir/zsp-probe}"
export ZSP_PROBE
if [ ! -x "$ZSP_RUN" ] || [ ! -x "$ZSP_PROBE" ]; then
	echo "$zsp_suite: no zsp-run or zsp-probe in $top_builddir" >&2
	exit 99
fi
chmod 755 "$tmp" ${shm:+"$shm"}

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL [$who] $*"; }

# The identities to run as: "root" (or the current user) then "nobody" when we are root.
identities() {
	if [ "$(id -u)" -eq 0 ]; then
		if command -v setpriv >/dev/null 2>&1; then
			echo "self nobody"
		else
			echo "$zsp_suite: setpriv is missing (util-linux): the unprivileged pass cannot run" >&2
			echo self
		fi
	else
		echo self
	fi
}

# as WHO CMD...: runs CMD as WHO with a HOME of WHO's own under $tmp.
as() {
	w=$1
	shift
	if [ "$w" = nobody ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
			env HOME="$home" TMPDIR="$tmpdir" PATH=/usr/bin:/bin "$@"
	else
		env HOME="$home" TMPDIR="$tmpdir" PATH=/usr/bin:/bin "$@"
	fi
}

# fresh WHO: a new world for one identity: $home with credentials, $ws (a git workspace),
# $tmpdir, all owned by WHO.
fresh() {
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
