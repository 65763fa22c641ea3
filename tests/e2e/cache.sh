#!/bin/sh
# cache.sh: the sandbox's own caches and /tmp (doc/linux.md "Caches and the private /tmp"), for
# real: npm install of a local tarball and a Python venv with a local wheel under the built-in
# policy, the caches in zsp's state and the host's untouched (with a control: without `cache
# npm` npm fails); persistence across runs; one set per workspace; zspc cache list|clear; the
# size limit acting after a run (and waiting for another run); the host's /tmp neither seen
# nor written while the sandbox's persists; links left in the state directory never followed,
# by a mount, a trim or a clear; a state directory that cannot be used refused with a clear
# error. No network. Each case runs as the current user and, under root, again as uid 65534.

zsp_suite=e2e-cache zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

python=/usr/bin/python3      # Debian's, with ensurepip (python3-venv); never a pyenv shim
have_npm=true have_venv=true
command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 || have_npm=false
[ -x "$python" ] && "$python" -c 'import ensurepip, venv' 2>/dev/null || have_venv=false
for need in npm:$have_npm python3-venv:$have_venv; do
	case $need in
	*:false)
		if [ -n "${CI:-}" ]; then
			echo "FAIL ${need%:*} is missing (dev.sh installs it), and under CI that is a failure"
			failed=$((failed + 1))
		else
			echo "SKIP the ${need%:*} cases: ${need%:*} is not installed (dev.sh installs it)"
		fi
		;;
	esac
done

# run WHERE CMD...: CMD (a zsp-run as `as` gives it) in WHERE as $who: stdout $tmp/out,
# stderr $tmp/err, the status in $rc.
run() {
	where=$1
	shift
	(cd "$where" && as "$who" "$@") >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# run_tmp WHERE ARG...: zsp-run ARG... with TMPDIR=/tmp, where the policy's ${TMPDIR} is the
# host's shared /tmp: the case the private /tmp is for.
run_tmp() {
	where=$1
	shift
	if [ "$who" = nobody ]; then
		(cd "$where" && as_nobody env HOME="$home" TMPDIR=/tmp PATH=/usr/bin:/bin "$ZSP_RUN" -D HOME="$home" "$@")
	else
		(cd "$where" && env HOME="$home" TMPDIR=/tmp PATH=/usr/bin:/bin "$ZSP_RUN" -D HOME="$home" "$@")
	fi >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

expect() {   # expect WANT WHAT: the last run's status
	if [ "$rc" -eq "$1" ]; then ok; else bad "$2: exit $rc, expected $1"; sed 's/^/  | /' "$tmp/err" | head -8; fi
}

own() {   # own PATH...: WHO's, like the rest of the world
	if [ "$who" = nobody ]; then chown -R 65534:65534 "$@"; fi
}

# The sandbox directory of the last run's workspace, from its meta file.
sandbox_of() {
	for m in "$home"/.local/state/zsp/sandboxes/*/meta; do
		if [ -f "$m" ] && grep -qx "workspace $1" "$m"; then dirname "$m"; return; fi
	done
}

# A local npm package, as `npm pack` makes it (package/ in a gzip'd tar), and a wheel, as a
# zip with its dist-info: made here, on the host, so nothing is downloaded.
make_packages() {
	mkdir -p "$1/stage/package"
	printf '{"name":"zsp-local-pkg","version":"1.0.0","main":"index.js"}\n' >"$1/stage/package/package.json"
	printf 'module.exports = 42;\n' >"$1/stage/package/index.js"
	tar -C "$1/stage" -czf "$1/zsp-local-pkg-1.0.0.tgz" package
	rm -rf "$1/stage"
	! $have_venv || "$python" - "$1/zsplocal-1.0-py3-none-any.whl" <<'EOF'
import base64, hashlib, sys, zipfile
files = {
    "zsplocal.py": b"X = 42\n",
    "zsplocal-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: zsplocal\nVersion: 1.0\n",
    "zsplocal-1.0.dist-info/WHEEL":
        b"Wheel-Version: 1.0\nGenerator: zsp-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
    record.append("zsplocal-1.0.dist-info/RECORD,,")
    z.writestr("zsplocal-1.0.dist-info/RECORD", "\n".join(record) + "\n")
EOF
}

npm_install='npm install --offline --no-audit --no-fund --no-update-notifier ./vendor/zsp-local-pkg-1.0.0.tgz &&
	node -e "process.exit(require(\"zsp-local-pkg\") === 42 ? 0 : 1)"'

for who in $(identities); do
	fresh "$who"
	state=$home/.local/state/zsp
	mkdir -p "$ws/vendor"
	make_packages "$ws/vendor"
	printf '{"name":"app","version":"1.0.0"}\n' >"$ws/package.json"
	victim=$world/victim
	mkdir -p "$victim"
	echo keep >"$victim/keep"
	own "$ws" "$victim"
	marker=zsp-cache-marker.$$.$who
	hostfile=/tmp/zsp-cache-host.$$.$who
	echo host >"$hostfile"
	chmod 644 "$hostfile"

	# -- npm: the control first (no `cache npm`: the read-only home stops it), then the built-in
	if $have_npm; then
		run "$ws" "$ZSP_RUN" -p "$top_srcdir/tests/e2e/policies/no-cache.zsp" -- sh -c "$npm_install"
		[ "$rc" -ne 0 ] && ok || bad "control: npm install worked without a cache of the sandbox's own"
		grep -q '\.npm' "$tmp/err" "$tmp/out" && ok || { bad "control: npm did not fail on ~/.npm"; sed 's/^/  | /' "$tmp/err" | head -5; }
		rm -rf "$ws/node_modules" "$ws/package-lock.json"
		run "$ws" "$ZSP_RUN" -- sh -c "$npm_install"
		expect 0 "npm install of a local tarball under the built-in policy"
		[ -f "$ws/node_modules/zsp-local-pkg/index.js" ] && ok || bad "npm install left no package in the workspace"
		sb=$(sandbox_of "$ws")
		[ -n "$sb" ] && [ -n "$(find "$sb/cache/npm/_cacache" -type f 2>/dev/null | head -1)" ] && ok ||
			bad "npm's cache did not land in the sandbox's own ($state/sandboxes/*/cache/npm)"
		[ ! -e "$home/.npm" ] && ok || bad "the host's ~/.npm was written"
	fi

	# -- a Python venv with a local wheel; pip's cache is the sandbox's
	if $have_venv; then
		run "$ws" "$ZSP_RUN" -- sh -c "$python -m venv venv && venv/bin/pip install --no-index \
			--disable-pip-version-check vendor/zsplocal-1.0-py3-none-any.whl >/dev/null &&
			venv/bin/python -c 'import sys, zsplocal; sys.exit(0 if zsplocal.X == 42 else 1)' &&
			venv/bin/pip cache dir"
		expect 0 "a venv with a local wheel under the built-in policy"
		sb=$(sandbox_of "$ws")
		[ -n "$sb" ] && [ "$(tail -n 1 "$tmp/out")" = "$sb/cache/pip" ] && ok ||
			bad "pip's cache is $(tail -n 1 "$tmp/out"), not the sandbox's own ($sb/cache/pip)"
		[ ! -e "$home/.cache/pip" ] && ok || bad "the host's ~/.cache/pip was written"
	fi

	# -- persistence across runs: the caches and the private /tmp
	run_tmp "$ws" -- sh -c "echo one >\"\$npm_config_cache/$marker\" && echo two >/tmp/$marker"
	expect 0 "a run writes its cache and its /tmp"
	[ ! -e "/tmp/$marker" ] && ok || bad "the sandbox's /tmp write reached the host's /tmp"
	run_tmp "$ws" -- sh -c "cat \"\$npm_config_cache/$marker\" /tmp/$marker"
	[ "$rc" -eq 0 ] && [ "$(tr '\n' ' ' <"$tmp/out")" = "one two " ] && ok ||
		{ bad "the next run does not find them: exit $rc, $(cat "$tmp/out")"; sed 's/^/  | /' "$tmp/err" | head -5; }
	sb=$(sandbox_of "$ws")
	[ -f "$sb/tmp/$marker" ] && ok || bad "the private /tmp is not the sandbox's directory ($sb/tmp)"

	# -- the host's /tmp: not seen, not written; the workspace in it still is the host's
	run_tmp "$ws" -- sh -c "test ! -e $hostfile && ! ls -A /tmp | grep -qx ${hostfile#/tmp/} &&
		echo w >/tmp/zsp-cache-w.$$ && echo y >\"$ws/in-ws.$who\" && test -r \"$home\""
	expect 0 "the host's /tmp is not visible, the workspace and home in it are"
	[ ! -e "/tmp/zsp-cache-w.$$" ] && [ -f "$sb/tmp/zsp-cache-w.$$" ] && ok ||
		bad "a write to /tmp did not land in the sandbox's own /tmp"
	[ -f "$ws/in-ws.$who" ] && ok || bad "the workspace below the host's /tmp is not written"
	run_tmp "$ws" -- sh -c "echo x >\"$home/planted\""
	[ "$rc" -ne 0 ] && [ ! -e "$home/planted" ] && ok || bad "the home below /tmp became writable"

	# -- another workspace has caches and a /tmp of its own
	ws2=$world/ws2
	mkdir -p "$ws2"
	own "$ws2"
	run_tmp "$ws2" -- sh -c "test ! -e \"\$npm_config_cache/$marker\" && test ! -e /tmp/$marker && echo \"\$npm_config_cache\""
	expect 0 "a second workspace sees neither the first's cache nor its /tmp"
	[ -n "$(cat "$tmp/out")" ] && [ "$(cat "$tmp/out")" != "$sb/cache/npm" ] && ok ||
		bad "two workspaces share a cache ($(cat "$tmp/out"))"

	# -- zspc cache list | clear
	run "$ws" "$ZSPC" cache list
	expect 0 "zspc cache list"
	grep -q "workspace $ws\$" "$tmp/out" && grep -q "workspace $ws2\$" "$tmp/out" &&
		grep -q "cache/npm" "$tmp/out" && grep -q "^ *tmp " "$tmp/out" && ok ||
		{ bad "zspc cache list does not show both workspaces and their parts"; sed 's/^/  | /' "$tmp/out"; }
	run "$ws" "$ZSPC" cache clear
	expect 0 "zspc cache clear (the current workspace)"
	grep -q "^cleared .*workspace $ws)" "$tmp/out" && ok || bad "zspc cache clear did not say what it removed"
	[ ! -e "$sb" ] && [ -n "$(sandbox_of "$ws2")" ] && ok || bad "zspc cache clear removed the wrong sandboxes"
	run "$ws" "$ZSPC" cache list
	grep -q "workspace $ws\$" "$tmp/out" && bad "a cleared sandbox is still listed" || ok
	run_tmp "$ws" -- sh -c "test ! -e \"\$npm_config_cache/$marker\" && test ! -e /tmp/$marker"
	expect 0 "after clear, the workspace's caches and /tmp start empty"
	run "$ws" "$ZSPC" cache clear --key nothex
	expect 64 "zspc cache clear --key with a bad key"

	# -- the size limit, after the run: least recently used files first
	ws3=$world/ws3
	mkdir -p "$ws3"
	own "$ws3"
	limit="$top_srcdir/tests/e2e/policies/cache-limit.zsp"
	run_tmp "$ws3" -p "$limit" -- sh -c 'head -c 3145728 /dev/zero >"$npm_config_cache/old.bin" &&
		touch -d 2001-01-01 "$npm_config_cache/old.bin" &&
		head -c 2097152 /dev/zero >"$npm_config_cache/new.bin" && head -c 3145728 /dev/zero >/tmp/big.bin'
	expect 0 "a run over the limits"
	sb3=$(sandbox_of "$ws3")
	[ -n "$sb3" ] && [ ! -e "$sb3/cache/npm/old.bin" ] && [ -f "$sb3/cache/npm/new.bin" ] && ok ||
		bad "the cache limit did not remove the least recently used file (only)"
	[ ! -e "$sb3/tmp/big.bin" ] && ok || bad "the tmp limit did not act"
	grep -q "caches held .* over their 4 MiB limit (\`cache limit\`): removed the 1 least recently used files" "$tmp/err" &&
		grep -q "/tmp held .* over its 2 MiB limit (\`tmp limit\`): removed the 1 least" "$tmp/err" && ok ||
		{ bad "what the limits removed is not said on stderr"; sed 's/^/  | /' "$tmp/err"; }
	# ... thousands of files (the oldest go first: what is left is the newest)
	run_tmp "$ws3" -p "$limit" -- sh -c 'rm -f "$npm_config_cache"/*.bin && mkdir "$npm_config_cache/many" &&
		cd "$npm_config_cache/many" && i=0 && while [ $i -lt 3000 ]; do echo $i >f$i; i=$((i + 1)); done &&
		touch -d 2001-01-01 f0 f1 f2'
	left=$(find "$sb3/cache/npm/many" -type f 2>/dev/null | wc -l)
	[ "$rc" -eq 0 ] && [ "$left" -gt 0 ] && [ "$left" -lt 3000 ] && [ ! -e "$sb3/cache/npm/many/f0" ] &&
		[ -f "$sb3/cache/npm/many/f2999" ] && [ "$(du -sk "$sb3/cache/npm" | cut -f1)" -le 4096 ] && ok ||
		bad "a trim of 3000 files: exit $rc, $left left, $(du -sk "$sb3/cache/npm" | cut -f1) KiB"
	rm -rf "$sb3/cache/npm/many"
	# ... and not under a run still using the caches
	hold='touch "$npm_config_cache/holder-up" && sleep 4'
	(cd "$ws3" && if [ "$who" = nobody ]; then as_nobody env HOME="$home" TMPDIR=/tmp PATH=/usr/bin:/bin \
		"$ZSP_RUN" -D HOME="$home" -p "$limit" -- sh -c "$hold"; else env HOME="$home" TMPDIR=/tmp \
		PATH=/usr/bin:/bin "$ZSP_RUN" -D HOME="$home" -p "$limit" -- sh -c "$hold"; fi) >/dev/null 2>&1 &
	holder=$!
	i=0
	while [ ! -e "$sb3/cache/npm/holder-up" ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	run_tmp "$ws3" -p "$limit" -- sh -c 'head -c 6291456 /dev/zero >"$npm_config_cache/busy.bin"'
	[ -f "$sb3/cache/npm/busy.bin" ] && grep -q "another run is using them" "$tmp/err" && ok ||
		{ bad "a trim did not wait for the run still using the caches"; sed 's/^/  | /' "$tmp/err"; }
	wait "$holder"

	# -- links in the state directory are never followed
	run "$ws" "$ZSP_RUN" -- true
	sb=$(sandbox_of "$ws")
	# a link the sandbox leaves inside its cache: the trim and the clear remove the link only
	run "$ws" "$ZSP_RUN" -- sh -c "ln -s \"$victim\" \"\$npm_config_cache/to-victim\" &&
		ln -s \"$victim/keep\" \"\$npm_config_cache/to-keep\""
	expect 0 "a sandbox leaves links in its cache"
	for part in cache/npm tmp; do
		mv "$sb/$part" "$sb/$part.real"
		ln -s "$victim" "$sb/$part"
		run_tmp "$ws" -- sh -c "touch \"\$npm_config_cache/planted\" /tmp/planted"
		[ "$rc" -eq 125 ] && grep -q "is a symbolic link or not a directory" "$tmp/err" && ok ||
			{ bad "$part replaced by a link: exit $rc, expected 125 and why"; sed 's/^/  | /' "$tmp/err" | head -4; }
		[ ! -e "$victim/planted" ] && ok || bad "$part replaced by a link: the link's target was mounted"
		rm "$sb/$part"
		mv "$sb/$part.real" "$sb/$part"
	done
	# a directory of the private /tmp on the way to the workspace's mount point
	run_tmp "$ws" -- true
	pin=${ws#/tmp/}
	if [ "$pin" != "$ws" ]; then
		pin=${pin%%/*}
		mv "$sb/tmp/$pin" "$sb/tmp/$pin.real"
		ln -s "$victim" "$sb/tmp/$pin"
		run_tmp "$ws" -- true
		[ "$rc" -eq 125 ] && grep -q "is a symbolic link" "$tmp/err" && ok ||
			bad "a link on the way to a mount point in the private /tmp: exit $rc, expected 125"
		rm "$sb/tmp/$pin"
		mv "$sb/tmp/$pin.real" "$sb/tmp/$pin"
	fi
	# the sandbox's own directory replaced by a link: refused; clear removes the link only
	key=$(basename "$sb")
	mv "$sb" "$sb.real"
	ln -s "$victim" "$sb"
	run "$ws" "$ZSP_RUN" -- true
	[ "$rc" -eq 125 ] && grep -q "is a symbolic link" "$tmp/err" && ok || bad "the sandbox's directory as a link: exit $rc"
	run "$ws" "$ZSPC" cache clear --key "$key"
	expect 0 "zspc cache clear of a sandbox that is a link"
	[ ! -e "$sb" ] && [ ! -L "$sb" ] && [ -f "$victim/keep" ] && ok || bad "clear followed the sandbox's link"
	mv "$sb.real" "$sb"
	run "$ws" "$ZSPC" cache clear
	expect 0 "zspc cache clear of a cache holding links"
	[ ! -e "$sb" ] && [ -f "$victim/keep" ] && [ "$(cat "$victim/keep")" = keep ] && ok ||
		bad "clearing a cache with links in it removed what they point to"
	# a trim over the limit with links to the victim in the cache
	run_tmp "$ws3" -p "$limit" -- sh -c "ln -s \"$victim\" \"\$npm_config_cache/a-link\" &&
		touch -h -d 2001-01-01 \"\$npm_config_cache/a-link\" && head -c 5242880 /dev/zero >\"\$npm_config_cache/more.bin\""
	[ -f "$victim/keep" ] && ok || bad "a trim removed what a link in the cache points to"

	# -- a state directory that cannot be used: a clear error, and nothing runs
	st=$world/states
	mkdir -p "$st"
	: >"$st/file"
	mkdir -p "$st/open" && chmod 777 "$st/open"
	own "$st"
	chmod 777 "$st/open"
	for bad_state in file open; do
		run "$ws" "$ZSP_RUN" --state-dir "$st/$bad_state" -- touch "$ws/ran.$bad_state"
		expect 125 "state directory $bad_state"
		grep -q "state directory $st/$bad_state" "$tmp/err" && ok || { bad "state directory $bad_state: no clear error"; sed 's/^/  | /' "$tmp/err"; }
		[ ! -e "$ws/ran.$bad_state" ] && ok || bad "the command ran with an unusable state directory"
	done
	# (another user's directory needs root to make; a read-only one needs a caller the mode
	# binds: uid 65534, or an unprivileged user running the suite)
	if [ "$who" = nobody ] || [ "$(id -u)" -ne 0 ]; then
		mkdir -p "$st/ro" && { [ "$who" != nobody ] || chown 65534:65534 "$st/ro"; } && chmod 500 "$st/ro"
		run "$ws" "$ZSP_RUN" --state-dir "$st/ro" -- true
		expect 125 "a state directory that is not writable"
		grep -q "not writable" "$tmp/err" && ok || bad "a read-only state directory: no clear error"
	else
		mkdir -p "$st/foreign" && chown 65534:65534 "$st/foreign" && chmod 700 "$st/foreign"
		run "$ws" "$ZSP_RUN" --state-dir "$st/foreign" -- true
		expect 125 "a state directory of another user"
		grep -q "not yours" "$tmp/err" && ok || bad "another user's state directory: no clear error"
	fi
	# a corrupt sandbox: its directory a file, its meta unreadable
	run "$ws" "$ZSP_RUN" -- true
	sb=$(sandbox_of "$ws")
	echo garbage >"$sb/meta"
	run "$ws" "$ZSPC" cache list
	expect 0 "zspc cache list with a corrupt entry"
	grep -q "unusable: its meta file" "$tmp/out" && ok || bad "a corrupt meta file is not reported"
	run "$ws" "$ZSP_RUN" -- true
	expect 0 "a run rewrites a corrupt meta file"
	rm -rf "$sb" && : >"$sb" && own "$sb"
	run "$ws" "$ZSP_RUN" -- true
	expect 125 "the sandbox's directory is a file"
	grep -q "is a symbolic link or not a directory" "$tmp/err" && ok || bad "a sandbox that is a file: no clear error"
	rm -f "$sb" "$hostfile"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
