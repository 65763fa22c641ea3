#!/bin/sh
# escape.sh: the escape battery. Attacks that must fail inside the real sandbox (bwrap, seccomp,
# the kernel), each run by zsp-probe under zsp-run with the built-in workspace policy (or a
# policy of tests/e2e/policies/) as the current user and, under root, again as uid 65534: writes
# outside the workspace, credentials, symlinks, hard links, `..` and /proc/*/root paths, the
# protected names of a repository, TIOCSTI, ptrace, sockets of every kind and ABI, nested user
# namespaces, the hardening set, setuid, secret variables, host unix sockets, resource limits.
# An attack fails when the probe says `denied`; after the file attacks the host is checked too.
# A few positive controls (the probe sees success where the policy allows it) make sure a probe
# that always says `denied` cannot pass.

zsp_suite=e2e-escape zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

nattacks=0

# verdict LINE EXPECT: whether the probe's LINE meets EXPECT, which is
#   denied         any `denied: ...` line
#   denied:ERRNO   `denied: ERRNO ...`
#   allowed        `allowed` (positive controls only)
#   denied|segv    `denied`, or `inconclusive: killed by SIGSEGV` (int $0x80, see below)
verdict() {
	case $2 in
	denied) case $1 in denied*) return 0 ;; esac ;;
	denied:*) case $1 in "denied: ${2#denied:} "* | "denied: ${2#denied:}") return 0 ;; esac ;;
	allowed) case $1 in allowed*) return 0 ;; esac ;;
	'denied|segv') case $1 in denied* | "inconclusive: killed by SIGSEGV") return 0 ;; esac ;;
	esac
	return 1
}

# probe_line: the probe's answer in what a run printed (a pty adds \r; TIOCSTI may prefix an x).
probe_line() {
	tr -d '\r' <"$1" | grep -Eo '(allowed|denied|inconclusive)([ :(].*)?$' | tail -1
}

# judge NAME EXPECT: records the verdict on $tmp/out for the attack or control NAME.
judge() {
	line=$(probe_line "$tmp/out")
	if verdict "$line" "$2"; then
		ok
	else
		bad "$1: expected $2, the probe said: ${line:-nothing}"
		sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -8
	fi
}

# attack NAME EXPECT CMD...: runs CMD as $who in $ws; the probe's line must meet EXPECT.
attack() {
	name=$1 expect=$2
	shift 2
	nattacks=$((nattacks + 1))
	(cd "$ws" && as "$who" "$@") </dev/null >"$tmp/out" 2>"$tmp/err"
	judge "$name" "$expect"
}

# control NAME CMD...: a positive control: CMD (run like an attack) must be allowed.
control() {
	name=$1
	shift
	(cd "$ws" && as "$who" "$@") </dev/null >"$tmp/out" 2>"$tmp/err"
	judge "control: $name" allowed
}

# host NAME TEST...: the host's state after attack NAME (TEST is a test(1) expression).
host() {
	name=$1
	shift
	if [ "$@" ]; then ok; else bad "$name: on the host, [ $* ] does not hold"; fi
}

# spawn WHO CMD...: like `as`, but replaces the (background) subshell, so $! is CMD's pid.
spawn() {
	w=$1
	shift
	if [ "$w" = nobody ]; then
		exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
			${nobody_libs:+env LD_LIBRARY_PATH="$nobody_libs"} env HOME="$home" TMPDIR="$tmpdir" PATH=/usr/bin:/bin "$@"
	fi
	exec env HOME="$home" TMPDIR="$tmpdir" PATH=/usr/bin:/bin "$@"
}

# own PATH...: give what the suite made for an attack to $who, as fresh does with the world.
own() {
	if [ "$who" = nobody ]; then chown -h 65534:65534 "$@"; fi
}

# wait_for_socket PATH: a listener started in the background is ready.
wait_for_socket() {
	i=0
	while [ ! -S "$1" ] && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -S "$1" ]
}

# util-linux script(1) gives zsp-run a pty (the TIOCSTI attacks); the probe's listen-unix
# fixture stands for the host's unix sockets.
script=$(PATH=/usr/bin:/bin command -v script)
[ -n "$script" ] || echo "note: no script(1) (util-linux): the terminal attacks run without a pty" >&2

# The setuid-root copy of the probe for the unprivileged pass: only root can make one.
suid=
if [ "$(id -u)" -eq 0 ] && findmnt -no OPTIONS -T "$tmp" 2>/dev/null | grep -qw nosuid; then
	echo "note: $tmp is on a nosuid mount: the setuid-root attacks are left out (set TMPDIR elsewhere to run them)" >&2
elif [ "$(id -u)" -eq 0 ]; then
	mkdir "$tmp/suid"
	chmod 755 "$tmp/suid"
	cp "$ZSP_PROBE" "$tmp/suid/zsp-probe"
	chown root:root "$tmp/suid/zsp-probe"
	chmod 4755 "$tmp/suid/zsp-probe"
	suid=$tmp/suid/zsp-probe
fi

for who in $(identities); do
	fresh "$who"
	# what $who runs and reads (lib.sh: copies out of the build tree for nobody)
	policies=$top_srcdir/tests/e2e/policies
	P=$ZSP_PROBE
	nattacks=0
	run="$ZSP_RUN"

	# ---- positive controls: the probe can see success ----
	control "write in the workspace" "$run" -- "$P" write "$ws/src"
	control "write in TMPDIR" "$run" -- "$P" write "$tmpdir"
	if [ -e /etc/hostname ]; then ro=/etc/hostname; else ro=/etc/passwd; fi
	control "read $ro" "$run" -- "$P" read "$ro"
	control "read the workspace" "$run" -- "$P" read "$ws/src/main.rs"
	control "socket inet (the sandbox's own loopback)" "$run" -- "$P" socket inet
	control "socket inet with mode full" "$run" -p "$policies/netfull.zsp" -- "$P" socket inet
	# For root, `limit nproc` needs a pids cgroup (RLIMIT_NPROC never applies to the real root):
	# where none can be made (a container without cgroups), zsp-run must refuse the run, and
	# the limit attacks below are replaced by that refusal.
	limits=yes
	if [ "$(id -u)" -eq 0 ] && [ "$who" = self ]; then
		(cd "$ws" && "$run" -p "$policies/limits.zsp" -- true) </dev/null >"$tmp/out" 2>"$tmp/err"
		lrc=$?
		if [ "$lrc" -eq 125 ] && grep -q "no pids cgroup could be created" "$tmp/err"; then
			limits=refused
			echo "note: root has no pids cgroup here: the resource-limit attacks check that zsp-run refuses" >&2
			ok
		elif [ "$lrc" -ne 0 ]; then
			bad "limits.zsp: zsp-run -- true exits $lrc: $(head -3 "$tmp/err")"
		fi
	fi
	if [ "$limits" = yes ]; then
		control "a file below the fsize limit" "$run" -p "$policies/limits.zsp" -- "$P" fsize "$ws/small" 524288
		control "processes below the nproc limit" "$run" -p "$policies/limits.zsp" -- "$P" nproc 8
	fi

	# ---- 1. writes outside the workspace ----
	attack "write outside the workspace" denied "$run" -- "$P" write "$world/outside"
	attack "shell redirection outside the workspace" denied "$run" -- sh -c \
		'echo x > "$1" && echo allowed || { echo "denied: (sh could not create $1)"; exit 1; }' \
		sh "$world/outside"
	host "write outside the workspace" ! -e "$world/outside"
	attack "write the home directory (~/.bashrc)" denied "$run" -- "$P" write "$home/.bashrc"
	host "write ~/.bashrc" ! -e "$home/.bashrc"
	attack "write a shared temp dir (/var/tmp)" denied "$run" -- "$P" write /var/tmp
	attack "write a global /sys knob" denied "$run" -- "$P" write \
		/sys/kernel/mm/transparent_hugepage/enabled
	# A global sysctl: kernel.core_pattern ("|/path" runs a program as root outside every
	# namespace). The probe's write is a zero-byte write: nothing changes if it goes through.
	attack "write /proc/sys/kernel/core_pattern" denied "$run" -- "$P" write \
		/proc/sys/kernel/core_pattern
	attack "read /proc/kcore" denied "$run" -- "$P" read /proc/kcore

	# ---- 2. credentials ----
	attack "read ~/.ssh/id_ed25519" denied "$run" -- "$P" read "$home/.ssh/id_ed25519"
	attack "list ~/.ssh" denied "$run" -- "$P" read "$home/.ssh"
	attack "write ~/.ssh/authorized_keys" denied "$run" -- "$P" write "$home/.ssh/authorized_keys"
	host "write ~/.ssh/authorized_keys" ! -e "$home/.ssh/authorized_keys"
	mkdir -p "$home/.aws"
	echo "aws_secret_access_key = x" >"$home/.aws/credentials"
	own "$home/.aws" "$home/.aws/credentials"
	attack "read ~/.aws/credentials" denied "$run" -- "$P" read "$home/.aws/credentials"
	# an inherited descriptor on the key: zsp-run closes it before bwrap
	attack "the key through an inherited fd" denied sh -c \
		'exec 9<"$1"; exec "$2" -- "$3" read /proc/self/fd/9' sh \
		"$home/.ssh/id_ed25519" "$run" "$P"

	# ---- 3. symlinks ----
	ln -s "$home/.ssh/id_ed25519" "$ws/key"
	ln -s "$world" "$ws/out"
	own "$ws/key" "$ws/out"
	attack "read the key through a host symlink" denied "$run" -- "$P" read "$ws/key"
	attack "write outside through a host symlink" denied "$run" -- "$P" write "$ws/out/pwned"
	host "write through a host symlink" ! -e "$world/pwned"
	attack "read the key through a sandbox symlink" denied "$run" -- sh -c \
		'ln -s "$1" "$2" || { echo "denied: (symlink refused)"; exit 1; }; exec "$3" read "$2"' \
		sh "$home/.ssh/id_ed25519" "$ws/key2" "$P"
	rm -f "$ws/key2"
	attack "write outside through a sandbox symlink" denied "$run" -- sh -c \
		'ln -s "$1" "$2" || { echo "denied: (symlink refused)"; exit 1; }; exec "$3" write "$2/pwned2"' \
		sh "$world" "$ws/out2" "$P"
	rm -f "$ws/out2"
	host "write through a sandbox symlink" ! -e "$world/pwned2"

	# ---- 4. hard links ----
	attack "hard link to ~/.ssh/id_ed25519" denied "$run" -- "$P" link "$home/.ssh/id_ed25519" "$ws/k"
	host "hard link to the key" ! -e "$ws/k"
	attack "hard link to .git/config" denied "$run" -- "$P" link "$ws/.git/config" "$ws/cfg"
	attack "write through a hard link to .git/config" denied "$run" -- sh -c \
		'ln "$1" "$2" || { echo "denied: (link refused, nothing to write through)"; exit 1; }; exec "$3" write "$2"' \
		sh "$ws/.git/config" "$ws/cfg" "$P"
	rm -f "$ws/cfg"
	ln -s "$ws/.git/config" "$ws/cfg-link"
	own "$ws/cfg-link"
	# the sandbox's .git/config is its layer's copy (doc/host-later.md): writes reach the copy,
	# and after the run the host's gets only what cannot run a program
	attack "write .git/config through a host symlink (the layer's copy)" allowed "$run" -- "$P" write "$ws/cfg-link"
	host "write through a link to .git/config: not applied" "$(cat "$ws/.git/config")" = "[core]"
	attack "append to .git/config through a host symlink (the layer's copy)" allowed "$run" -- sh -c \
		'echo "[core] hooksPath = /tmp" >> "$1" && echo allowed || { echo "denied: (sh could not append)"; exit 1; }' \
		sh "$ws/cfg-link"
	host "append through a link to .git/config: the key taken out" "$(cat "$ws/.git/config")" = "[core]"
	grep -q "not applied to the host: .*config: core.hookspath" "$tmp/err" && ok ||
		bad "no report of the refused core.hooksPath: $(cat "$tmp/err")"

	# ---- 5. .. paths ----
	attack "write ws/../outside" denied "$run" -- "$P" write "$ws/../outside"
	host "write ws/../outside" ! -e "$world/outside"
	attack "read ws/../home/.ssh/id_ed25519" denied "$run" -- "$P" read "$ws/../home/.ssh/id_ed25519"

	# ---- 6. /proc/*/root and cwd ----
	attack "read /proc/self/root/~/.ssh/id_ed25519" denied "$run" -- "$P" read "/proc/self/root$home/.ssh/id_ed25519"
	attack "write /proc/self/root/outside2" denied "$run" -- "$P" write "/proc/self/root$world/outside2"
	attack "read /proc/1/root/~/.ssh/id_ed25519" denied "$run" -- "$P" read "/proc/1/root$home/.ssh/id_ed25519"
	attack "write /proc/1/root/outside2" denied "$run" -- "$P" write "/proc/1/root$world/outside2"
	attack "write /proc/self/cwd/../outside2" denied "$run" -- "$P" write /proc/self/cwd/../outside2
	host "writes through /proc" ! -e "$world/outside2"

	# ---- 7. repository metadata ----
	attack "create .git/hooks/pre-commit" denied "$run" -- "$P" write "$ws/.git/hooks/pre-commit"
	attack "write .git/config (the layer's copy)" allowed "$run" -- "$P" write "$ws/.git/config"
	host "write .git/config: not applied" "$(cat "$ws/.git/config")" = "[core]"
	attack "unlink .git/config (the layer's copy)" allowed "$run" -- "$P" unlink "$ws/.git/config"
	attack "rename .git/config away" denied "$run" -- "$P" rename "$ws/.git/config" "$ws/config.old"
	host "unlink or rename .git/config" "$(cat "$ws/.git/config")" = "[core]"

	# ---- 8. rename .git or .git/hooks away, then recreate them ----
	attack "rename .git away" denied "$run" -- "$P" rename "$ws/.git" "$ws/.git-old"
	attack "rename .git/hooks away" denied "$run" -- "$P" rename "$ws/.git/hooks" "$ws/.git/hooks-old"
	attack "mv .git away and plant a hook" denied "$run" -- sh -c \
		'{ mv .git .git-old || mv .git/hooks .git/hooks-old; } 2>/dev/null &&
		 mkdir -p .git/hooks && echo "#!/bin/sh" > .git/hooks/pre-commit &&
		 echo allowed || { echo "denied: (could not replace .git/hooks)"; exit 1; }'
	host "rename .git away: .git/hooks is still there" -d "$ws/.git/hooks"
	host "rename .git away: no pre-commit" ! -e "$ws/.git/hooks/pre-commit"
	host "rename .git away: no .git-old" ! -e "$ws/.git-old"
	host "rename .git away: no hooks-old" ! -e "$ws/.git/hooks-old"
	host "rename .git away: .git/config intact" "$(cat "$ws/.git/config")" = "[core]"

	# ---- 9. missing protected names ----
	# Not mounted (no placeholder in the user's tree): the command may create one while it runs
	# (the window of doc/host-later.md); when the run ends it is moved aside, so the host never
	# finds it under its name. The probe removes what it made; the shell cases leave theirs.
	control "mkdir .codex (moved aside after the run)" "$run" -- "$P" mkdir "$ws/.codex"
	control "write .mcp.json (moved aside after the run)" "$run" -- "$P" write "$ws/.mcp.json"
	control "write .bashrc (moved aside after the run)" "$run" -- "$P" write "$ws/.bashrc"
	attack "mkdir -p .claude/commands in a shell (moved aside after the run)" allowed "$run" -- sh -c \
		'mkdir -p .claude/commands/x && echo allowed'
	control "write .vscode/settings.json (mkdir -p)" "$run" -- sh -c \
		'mkdir -p .vscode && echo "{}" > .vscode/settings.json && echo allowed'
	grep -q "blocked for the host: .*/\.vscode" "$tmp/err" && ok || bad "no report of the moved .vscode: $(cat "$tmp/err")"
	host "missing protected names: .vscode moved aside" -e "$ws/.vscode.zsp-blocked/settings.json"
	host "missing protected names: .claude/commands moved aside" -e "$ws/.claude/commands.zsp-blocked"
	rm -rf "$ws"/*.zsp-blocked "$ws"/.*.zsp-blocked "$ws/.claude"
	for n in .codex .vscode .claude .mcp.json .bashrc; do
		host "missing protected names: no $n left" ! -e "$ws/$n"
	done

	# ---- 9b. a worktree: the workspace's .git is a file pointing into a repository that lies in
	# another writable root (TMPDIR); its hooks and config, and the pointer, are protected too ----
	wt=$world/wt
	repo=$tmpdir/repo
	mkdir -p "$wt/src" "$repo/.git/hooks" "$repo/.git/worktrees/wt"
	echo "[core]" >"$repo/.git/config"
	echo "gitdir: $repo/.git/worktrees/wt" >"$wt/.git"
	echo "../.." >"$repo/.git/worktrees/wt/commondir"
	own "$wt" "$wt/src" "$wt/.git" "$repo" "$repo/.git" "$repo/.git/hooks" "$repo/.git/config" \
		"$repo/.git/worktrees" "$repo/.git/worktrees/wt" "$repo/.git/worktrees/wt/commondir"
	wtrun() { (cd "$wt" && as "$who" "$run" -- "$P" "$@") </dev/null >"$tmp/out" 2>"$tmp/err"; }
	nattacks=$((nattacks + 3))
	wtrun write "$repo/.git/hooks/pre-commit"
	judge "worktree: write the repository's hooks/pre-commit" denied
	wtrun write "$repo/.git/config"
	judge "worktree: write the repository's config (in TMPDIR: its layer's copy)" allowed
	host "worktree: the repository's config not applied" "$(cat "$repo/.git/config")" = "[core]"
	wtrun write "$wt/.git"
	judge "worktree: rewrite the .git pointer" denied
	(cd "$wt" && as "$who" "$run" -- "$P" write "$wt/src/lib.rs") </dev/null >"$tmp/out" 2>"$tmp/err"
	judge "control: worktree: write a source file" allowed
	host "worktree: no hook planted" ! -e "$repo/.git/hooks/pre-commit"
	rm -rf "$wt" "$repo"

	# ---- 10. .env ----
	attack "read .env" denied "$run" -- "$P" read "$ws/.env"
	attack "write .env" denied "$run" -- "$P" write "$ws/.env"
	host "write .env" "$(cat "$ws/.env")" = "SECRET=hunter2"
	echo "SECRET=nested" >"$ws/src/.env"
	own "$ws/src/.env"
	attack "read src/.env (**/.env)" denied "$run" -- "$P" read "$ws/src/.env"

	# ---- 11. the caller's terminal: zsp-run under a pty, so fd 0 is a terminal ----
	for op in "tiocsti" "tiocsti --high" "tioclinux" "tioclinux --high"; do
		# TIOCLINUX needs a virtual console (there is none under script(1)): the filter
		# answers EPERM before the kernel looks, so `denied` is required, not only "not allowed".
		if [ -n "$script" ]; then
			attack "$op into the caller's terminal" denied "$script" -qec "'$run' -- '$P' $op" /dev/null
		else	# no pty: the filter is still tested, the terminal is not
			attack "$op (no pty)" denied "$run" -- "$P" $op
		fi
	done

	# ---- 12. processes outside the sandbox ----
	(spawn "$who" sleep 30) &
	sleeper=$!
	attack "ptrace a process outside" denied "$run" -- "$P" ptrace "$sleeper"
	attack "kill a process outside (signal 0)" denied "$run" -- "$P" kill "$sleeper"
	attack "syscall ptrace" denied "$run" -- "$P" syscall ptrace
	kill "$sleeper" 2>/dev/null
	wait "$sleeper" 2>/dev/null

	# ---- 13. sockets ----
	# mode none: inet sockets reach the sandbox's own loopback only, unix sockets come from
	# socketpair only (tests/e2e/sockets.sh: the host's loopback, abstract and pathname sockets)
	for fam in netlink packet vsock; do
		attack "socket $fam" denied "$run" -- "$P" socket "$fam"
		attack "socket $fam with high bits" denied "$run" -- "$P" socket "$fam" --high
	done
	attack "socket inet with high bits" denied "$run" -- "$P" socket inet --high
	attack "socket unix" denied "$run" -- "$P" socket unix
	attack "socket unix with high bits" denied "$run" -- "$P" socket unix --high
	attack "socket unix dgram" denied "$run" -- "$P" socket unix dgram
	attack "socket unix raw" denied "$run" -p "$policies/netfull.zsp" -- "$P" socket unix raw
	attack "socketpair-dgram" denied "$run" -- "$P" socketpair-dgram
	attack "io_uring socket" denied "$run" -- "$P" iouring-socket

	# ---- 14. other system call ABIs ----
	# x32: the filter kills every non-native ABI (SIGSYS), before the kernel could say ENOSYS
	# (this kernel has no CONFIG_X86_X32_ABI).
	attack "x32 socket" denied "$run" -- "$P" x32-socket
	# i386: where the kernel or the hypervisor offers no ia32 entry (ia32_emulation=0, some VMs:
	# this one has CONFIG_IA32_EMULATION=y, yet the int $0x80 gate raises #GP, also outside any
	# sandbox), the probe dies of SIGSEGV before seccomp sees the call; the attack fails either
	# way, and `allowed` is never accepted.
	attack "int 0x80 socketcall" 'denied|segv' "$run" -- "$P" int80-socketcall
	attack "int 0x80 socket" 'denied|segv' "$run" -- "$P" int80-socket

	# ---- 15. nested user namespaces ----
	attack "unshare user namespace" denied "$run" -- "$P" unshare-userns
	attack "clone user namespace" denied "$run" -- "$P" clone-userns
	attack "clone3 user namespace" denied "$run" -- "$P" clone3-userns

	# ---- 16. the hardening set ----
	for op in mount open-tree fsopen keyctl add-key bpf perf-event-open userfaultfd; do
		attack "$op" denied "$run" -- "$P" "$op"
	done
	attack "personality READ_IMPLIES_EXEC" denied "$run" -- "$P" personality 0x0040000
	for call in open_by_handle_at setns process_vm_writev pidfd_getfd init_module kexec_load; do
		attack "syscall $call" denied "$run" -- "$P" syscall "$call"
	done

	# ---- 17. privilege ----
	attack "capabilities inside" denied "$run" -- "$P" caps
	if [ "$who" = nobody ] && [ -n "$suid" ]; then
		# the setuid copy works outside (else the attack would prove nothing)...
		(cd "$ws" && as "$who" "$suid" euid) </dev/null >"$tmp/out" 2>"$tmp/err"
		judge "control: a setuid-root probe outside the sandbox" allowed
		# ...and gives neither uid 0 nor capabilities inside (no_new_privs)
		attack "setuid-root euid" denied "$run" -- "$suid" euid
		attack "setuid-root capabilities" denied "$run" -- "$suid" caps
	fi

	# ---- 18. secret environment ----
	for var in API_TOKEN AWS_SECRET_ACCESS_KEY GITHUB_TOKEN; do
		attack "secret variable $var" denied env "$var=s3cret" "$run" -- "$P" env "$var"
	done

	# ---- 19. host unix sockets: an ssh-agent (stream) and a /dev/log (datagram) ----
	sockdir=$world
	if [ "${#sockdir}" -gt 90 ]; then	# sun_path holds 107 bytes
		sockdir=$(mktemp -d /tmp/zsp-esc.XXXXXX)
		chmod 755 "$sockdir"
		own "$sockdir"
	fi
	(spawn "$who" "$P" listen-unix "$sockdir/agent.sock" stream 30 >/dev/null) &
	agent=$!
	(spawn "$who" "$P" listen-unix "$sockdir/log.sock" dgram 30 >/dev/null) &
	logger=$!
	if wait_for_socket "$sockdir/agent.sock" && wait_for_socket "$sockdir/log.sock"; then
		ok
		control "connect to the agent outside the sandbox" "$P" unix-connect "$sockdir/agent.sock"
		control "connect to the log socket outside the sandbox" "$P" unix-connect "$sockdir/log.sock"
		attack "connect to the host's ssh-agent" denied env SSH_AUTH_SOCK="$sockdir/agent.sock" \
			"$run" -- "$P" unix-connect "$sockdir/agent.sock"
		attack "connect to a host datagram socket (/dev/log)" denied \
			"$run" -- "$P" unix-connect "$sockdir/log.sock"
		attack "SSH_AUTH_SOCK in the environment" denied env SSH_AUTH_SOCK="$sockdir/agent.sock" \
			"$run" -- "$P" env SSH_AUTH_SOCK
	else
		bad "host unix sockets: the listeners did not start"
	fi
	kill "$agent" "$logger" 2>/dev/null
	pkill -f "listen-unix $sockdir/" 2>/dev/null
	wait "$agent" "$logger" 2>/dev/null
	[ "$sockdir" = "$world" ] || rm -rf "$sockdir"

	# ---- a symlink planted by one run must not widen the next (policies/island.zsp) ----
	mkdir -p "$ws/a/docs"
	echo "secret docs" >"$home/.ssh/docs"
	own "$ws/a" "$home/.ssh/docs"
	attack "plant: rename a directory holding a read-only island" allowed \
		"$run" -p "$policies/island.zsp" -- "$P" rename "$ws/a" "$ws/a.moved"
	rm -rf "$ws/a"
	ln -s "$home/.ssh" "$ws/a"
	own "$ws/a"
	attack "read a hidden file through a planted symlink" denied \
		"$run" -p "$policies/island.zsp" -- "$P" read "$ws/a/docs"
	attack "read the hidden file itself after the plant" denied \
		"$run" -p "$policies/island.zsp" -- "$P" read "$home/.ssh/docs"
	rm -f "$ws/a" "$home/.ssh/docs"

	# ---- 20, 21. resource limits (policies/limits.zsp: fsize 1 MiB, nproc 64) ----
	if [ "$limits" = yes ]; then
		attack "fill the disk past fsize" denied:EFBIG "$run" -p "$policies/limits.zsp" -- "$P" fsize "$ws/big" 4194304
		big=$(stat -c %s "$ws/big" 2>/dev/null || echo 0)
		host "fill the disk past fsize: no 4 MiB file" "$big" -lt 4194304
		# RLIMIT_NPROC never applies to the machine's real root (bwrap maps root to root): for
		# root, zsp-run enforces `limit nproc` with a pids cgroup instead.
		attack "fork bomb past nproc" denied:EAGAIN "$run" -p "$policies/limits.zsp" -- "$P" nproc 200
	else
		(cd "$ws" && "$run" -p "$policies/limits.zsp" -- "$P" nproc 200) </dev/null >"$tmp/out" 2>"$tmp/err"
		[ $? -eq 125 ] && ! grep -q "^forked" "$tmp/out" && ok ||
			bad "fork bomb without a pids cgroup: zsp-run did not refuse the run"
	fi

	echo "[$who] $nattacks attacks"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
