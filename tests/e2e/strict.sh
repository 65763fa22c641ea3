#!/bin/sh
# strict.sh: zsp-run --strict (runtime/opens.c, doc/linux.md "Strict"). Files that match a deny
# glob and that the host creates while the sandbox runs (where no launch-time mount can be)
# stay unreadable by every path to them: the name, `..`, a symlink, a hard link, a rename, a
# dirfd, /proc/self/cwd and /proc/self/root, /dev/fd; an O_TRUNC or truncate of one leaves the
# host's contents whole; a directory rename cannot take a match out of a glob with directories
# in it; a read-only glob match stays read-only. Each refusal has its control: the same run
# without --strict reads the file (so the attack is real). Everyday work goes on under
# --strict: creating, renaming and linking files, umask, FIFOs, O_TMPFILE, /proc/self, /dev/fd,
# git. Runs as the current user and, under root, as uid 65534.

zsp_suite=e2e-strict zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# during MODE SCRIPT: a sandbox of strict.zsp (MODE: --strict or "") waits for the host to make
# its files (make_secrets), then runs SCRIPT; stdout in $tmp/out, stderr in $tmp/err
during() {
	mode=$1 script=$2
	rm -f "$ws/ready" "$ws/go"
	(cd "$ws" && as "$who" "$ZSP_RUN" $mode -p "$pol" -D WORKSPACE="$ws" -- sh -c "
		: >ready; i=0
		while [ ! -e go ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
		$script") </dev/null >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	i=0
	while [ ! -e "$ws/ready" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
	make_secrets
	: >"$ws/go"
	wait $pid
	rc=$?
}

# the host's files, made while the sandbox runs: a .env below the workspace and outside the
# writable roots (the home), a key below keys/, a pinned file
make_secrets() {
	mkdir -p "$ws/sub" "$ws/keys" "$home/proj"
	echo SECRET-sub >"$ws/sub/.env"
	echo SECRET-home >"$home/proj/.env"
	echo SECRET-key >"$ws/keys/id.pem"
	echo LOCK-host >"$ws/x.pinned"
	mine "$ws/sub" "$ws/keys" "$ws/x.pinned" "$home/proj"
}

# the reads of the host's secrets, each its own line: "NAME: contents or error"
reads='
r() { k=$1; shift; o=$("$@" 2>&1 | tail -1); printf "%s: %s\n" "$k" "$o"; }
r name cat sub/.env
r dotdot cat ./sub/../sub/.env
r abs cat "$PWD/sub/.env"
r home cat "@HOME@/proj/.env"
r cwd cat /proc/self/cwd/sub/.env
r root cat "/proc/self/root$PWD/sub/.env"
r devfd sh -c "cat /dev/fd/3 3<sub/.env"
r symlink sh -c "ln -s sub/.env lnk && cat lnk"
r hardlink sh -c "ln sub/.env hard && cat hard"
r rename sh -c "mv sub/.env moved && cat moved"
r dirfd python3 -c "import os,sys; d=os.open(\"sub\", os.O_RDONLY); sys.stdout.write(os.read(os.open(\".env\", os.O_RDONLY, dir_fd=d), 100).decode())"
r key cat keys/id.pem
r keysdir sh -c "mv keys k2 && cat k2/id.pem; mv k2 keys 2>/dev/null"
r keylink sh -c "ln -s keys k3 && cat k3/id.pem"
r trunc sh -c ": >sub/.env"
r truncate truncate -s 0 sub/.env
r lockwrite sh -c "echo sandbox >>x.pinned"
r lockread cat x.pinned
'

for who in $(identities); do
	fresh "$who"
	# fresh points top_srcdir at the copy uid 65534 can read
	pol=$top_srcdir/tests/e2e/policies/strict.zsp
	script=$(printf '%s\n' "$reads" | sed "s|@HOME@|$home|")

	# -- control: without --strict the host's new files are there to read
	during "" "$script"
	[ -e "$ws/ready" ] && ok || bad "(control) the sandbox did not start: $(grep -v '^ ' "$tmp/err" | head -3)"
	grep -q "^name: SECRET-sub" "$tmp/out" && ok ||
		bad "(control) a .env made by the host during a run without --strict is not readable: $(head -3 "$tmp/out")"
	grep -q "^home: SECRET-home" "$tmp/out" && ok ||
		bad "(control) the home's new .env is not readable without --strict: $(grep '^home' "$tmp/out")"
	grep -q "^lockwrite: $" "$tmp/out" && ok ||
		bad "(control) a pinned file made during the run is not writable without --strict: $(grep '^lockwrite' "$tmp/out")"
	rm -rf "$ws/sub" "$ws/keys" "$ws/k2" "$ws/k3" "$ws/lnk" "$ws/hard" "$ws/moved" "$ws/x.pinned" "$home/proj"

	# -- --strict: every way to the new files is refused
	during --strict "$script"
	[ "$rc" -eq 0 ] && ok || bad "--strict: the run failed ($rc): $(grep -v '^ ' "$tmp/err" | head -3)"
	if grep -q SECRET "$tmp/out"; then
		bad "--strict: a secret made during the run was read: $(grep SECRET "$tmp/out" | tr '\n' ' ')"
	else ok; fi
	for k in name dotdot abs home cwd root devfd symlink hardlink rename dirfd key keysdir keylink trunc truncate; do
		grep -q "^$k: .*\(Permission denied\|cannot\|rror\)" "$tmp/out" && ok ||
			bad "--strict: $k was not refused: $(grep "^$k:" "$tmp/out")"
	done
	grep -q "^lockwrite: .*Read-only file system" "$tmp/out" && ok ||
		bad "--strict: a write to a read-only glob's match was not refused with EROFS: $(grep '^lockwrite' "$tmp/out")"
	grep -q "^lockread: LOCK-host" "$tmp/out" && ok ||
		bad "--strict: a read-only glob's match cannot be read: $(grep '^lockread' "$tmp/out")"
	# the host's side: contents whole, nothing moved, no new name for a secret
	[ "$(cat "$ws/sub/.env")" = SECRET-sub ] && ok || bad "--strict: the host's .env was changed: $(cat "$ws/sub/.env")"
	[ "$(cat "$ws/x.pinned")" = LOCK-host ] && ok || bad "--strict: the host's pinned file was changed"
	[ -e "$ws/keys/id.pem" ] && [ ! -e "$ws/k2" ] && [ ! -e "$ws/hard" ] && [ ! -e "$ws/moved" ] && ok ||
		bad "--strict: a secret was moved or linked: $(ls "$ws")"
	rm -rf "$ws/sub" "$ws/keys" "$ws/k2" "$ws/k3" "$ws/lnk" "$ws/hard" "$ws/moved" "$ws/x.pinned" "$home/proj"

	# -- everyday work under --strict
	(cd "$ws" && as "$who" "$ZSP_RUN" --strict -p "$pol" -D WORKSPACE="$ws" -- sh -c '
		echo hello >a.txt && cat a.txt
		cat <a.txt; exec 4<a.txt; cat /dev/fd/4; cat /dev/stdin <a.txt
		mkdir -p d/e && echo deep >d/e/f && mv d/e/f d/e/g && ln d/e/g d/e/h && cat d/e/h
		mv d d2 && cat d2/e/g
		umask 077; : >u; stat -c u=%a u; umask 022; : >v; stat -c v=%a v
		mkfifo ff; (echo fifo-ok >ff &); cat ff
		python3 -c "import tempfile; f=tempfile.TemporaryFile(); f.write(b\"tmpfile-ok\"); f.seek(0); print(f.read().decode())"
		grep -c "^Pid:" /proc/self/status; head -c 4 /proc/mounts; echo; ls /dev/fd >/dev/null && echo devfd-ok
		echo x >.env.example && cat .env.example
		(echo mine >new.env; echo made >sub2.env) && echo envlike-ok
		mkdir -p n && { echo own >n/.env; } 2>/dev/null || echo own-env-refused
		git init -q repo && cd repo && echo t >t && git add t && git -c user.name=z -c user.email=z@z commit -qm m && git log --oneline | wc -l
	') </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 0 ] && ok || bad "--strict everyday: exit $rc: $(grep -v '^ ' "$tmp/err" | head -5)"
	for want in hello deep u=600 v=644 fifo-ok tmpfile-ok 1 devfd-ok x envlike-ok own-env-refused; do
		grep -qx -- "$want" "$tmp/out" && ok || bad "--strict everyday: no line '$want' in: $(tr '\n' ' ' <"$tmp/out")"
	done
	[ "$(grep -c '^hello$' "$tmp/out")" -eq 4 ] && ok || bad "--strict everyday: a.txt was not read four ways: $(tr '\n' ' ' <"$tmp/out")"
	[ ! -e "$ws/n/.env" ] && ok || bad "--strict: the sandbox made a .env of its own"
	# the host's git sees the sandbox's commit, and nothing planted runs
	(cd "$ws/repo" && as "$who" git log --oneline 2>&1 | wc -l) | grep -qx 1 && ok || bad "--strict: the host's git does not see the commit"
	rm -rf "$ws/a.txt" "$ws/d2" "$ws/u" "$ws/v" "$ws/ff" "$ws/.env.example" "$ws/new.env" "$ws/sub2.env" "$ws/n" "$ws/repo"

	# -- the launch says nothing of matches made during the run: --strict holds them
	(cd "$ws" && as "$who" "$ZSP_RUN" --strict -D WORKSPACE="$ws" -- true) </dev/null >"$tmp/out" 2>"$tmp/err"
	! grep -q unenforced "$tmp/err" && ok || bad "--strict with the built-in policy warns: $(cat "$tmp/err")"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
