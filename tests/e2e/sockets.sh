#!/bin/sh
# sockets.sh: what the sandbox's sockets reach, as root and as uid 65534 (lib.sh). Unix
# datagrams (SOCK_DGRAM, SOCK_RAW) never leave; the host's pathname sockets, abstract names and
# loopback are out of reach; the sandbox's own loopback (127.0.0.1 and ::1) serves and connects.
# With `allow unix` or mode full, zsp-run's connect supervisor admits the allowed socket files
# only: every way around it (other paths, symbolic links swapped during the run, `..`, a socket
# of the sandbox's own, an address changed by another thread during the connect) is refused.
# A host fixture listens on all of them and logs what arrives; each case runs the same client
# outside the sandbox first (the control: the fixture really receives) and then inside.

zsp_suite=e2e-sockets zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
	echo "$zsp_suite: python3 is missing (dev.sh installs it)" >&2
	exit 99
fi

# The fixture and the clients, one python3 program (given with -c: the unprivileged pass cannot
# read the source tree). Paths are relative to the socket directory (sun_path holds 107 bytes).
PY='
import errno, os, select, socket, sys, threading, time
def log(what):
    with open("got", "a") as f:
        f.write(what + "\n")
def serve(seconds):
    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind("d.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind("s.sock"); s.listen(8)
    a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = "zsp-sockets-%d" % os.getpid(); a.bind("\0" + name); a.listen(8)
    t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(8)
    al = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); al.bind("allowed.sock"); al.listen(64)
    sp = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); sp.bind("allowed-sp.sock"); sp.listen(8)
    open("abstract", "w").write(name)
    open("port", "w").write(str(t.getsockname()[1]))
    open("ready", "w").write("")
    kinds = {d: "dgram", s: "stream", a: "abstract", t: "tcp", al: "allowed", sp: "allowed-sp"}
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select(list(kinds), [], [], 0.2)
        for k in r:
            if k is d:
                log("datagram " + d.recv(100).decode())
            else:
                c, _ = k.accept(); log("accepted " + kinds[k] + " " + c.recv(100).decode()); c.close()
def result(case, fn):
    try:
        fn(); print(case + ": OK")
    except OSError as e:
        print(case + ": " + errno.errorcode.get(e.errno, str(e.errno)))
def send(kind, tag):
    u = socket.socket(socket.AF_UNIX, kind); u.sendto(tag.encode(), "d.sock")
def connect(family, addr, tag):
    c = socket.socket(family, socket.SOCK_STREAM); c.settimeout(3); c.connect(addr); c.send(tag.encode()); c.close()
def try_all(tag):
    result("dgram", lambda: send(socket.SOCK_DGRAM, "dgram-" + tag))
    result("raw", lambda: send(socket.SOCK_RAW, "raw-" + tag))
    result("stream", lambda: connect(socket.AF_UNIX, "s.sock", "stream-" + tag))
    result("abstract", lambda: connect(socket.AF_UNIX, "\0" + open("abstract").read(), "abstract-" + tag))
    result("tcp", lambda: connect(socket.AF_INET, ("127.0.0.1", int(open("port").read())), "tcp-" + tag))
def unix_connect(path, tag, kind=socket.SOCK_STREAM, blocking=True):
    c = socket.socket(socket.AF_UNIX, kind); c.setblocking(blocking)
    try:
        c.connect(path)
    except BlockingIOError:
        select.select([], [c], [], 3)
        err = c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err: raise OSError(err, os.strerror(err))
    c.setblocking(True); c.send(tag.encode()); c.close()
def swap_race(n):
    # one thread points link.sock at the allowed socket and at the forbidden one in turn;
    # the connects that get through must all arrive at the allowed one (the fixture tells)
    stop = []
    def flip():
        while not stop:
            for target in ("allowed.sock", "s.sock"):
                try: os.symlink(target, "link.tmp"); os.rename("link.tmp", "link.sock")
                except OSError: pass
    th = threading.Thread(target=flip); th.start()
    good = 0
    for i in range(n):
        try: unix_connect("link.sock", "swap"); good += 1
        except OSError: pass
    stop.append(1); th.join()
    if good == 0: raise OSError(errno.EIO, "no connect went through")
def addr_race(n):
    # one thread rewrites the address (path and family) between an allowed and a forbidden
    # target while another connects with it: only allowed.sock may ever be reached
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    off = 2
    good_b = bytearray(110); good_b[0:2] = socket.AF_UNIX.to_bytes(2, sys.byteorder); good_b[off:off + 12] = b"allowed.sock"
    bad_b = bytearray(110); bad_b[0:2] = socket.AF_UNIX.to_bytes(2, sys.byteorder); bad_b[off:off + 6] = b"s.sock"
    fam_b = bytearray(good_b); fam_b[0:2] = socket.AF_INET.to_bytes(2, sys.byteorder)
    buf = ctypes.create_string_buffer(bytes(good_b), 110)
    stop = []
    def flip():
        while not stop:
            for v in (bad_b, good_b, fam_b, good_b):
                ctypes.memmove(buf, bytes(v), 110)
    sys.setswitchinterval(1e-5)
    th = threading.Thread(target=flip); th.start()
    reached = {}
    # n tries, and on (up to 20 n) until the race has hit the forbidden address at least once
    # and an allowed connect has gone through: on a loaded machine the flips can miss n tries
    i = 0
    while i < n or (i < 20 * n and not (reached.get(errno.EACCES) and reached.get("allowed.sock"))):
        i += 1
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if libc.connect(c.fileno(), buf, 110) == 0:
            peer = c.getpeername(); reached[peer] = reached.get(peer, 0) + 1; c.send(b"race")
        else:
            reached[ctypes.get_errno()] = reached.get(ctypes.get_errno(), 0) + 1
        c.close()
    stop.append(1); th.join()
    print("addr race reached s.sock: %d times" % reached.get("s.sock", 0))
    print("addr race refused: %d times" % reached.get(errno.EACCES, 0))
    if not reached.get("allowed.sock"): raise OSError(errno.EIO, "no connect went through")
def own_socket():
    b = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); b.bind("own.sock"); b.listen(1)
    unix_connect("own.sock", "own")
def relative_up(tag):
    os.mkdir("sub")
    os.chdir("sub")
    try: unix_connect("../allowed.sock", "up-" + tag)
    finally: os.chdir("..")
def mediated(tag):
    result("allowed stream", lambda: unix_connect("allowed.sock", "stream-" + tag))
    result("allowed absolute", lambda: unix_connect(os.getcwd() + "/allowed.sock", "abs-" + tag))
    result("allowed dot", lambda: unix_connect("./allowed.sock", "dot-" + tag))
    def in_thread():
        err = []
        def run():
            try: unix_connect("allowed.sock", "thread-" + tag)
            except OSError as e: err.append(e)
        th = threading.Thread(target=run); th.start(); th.join()
        if err: raise err[0]
    result("allowed from a thread", in_thread)
    result("allowed nonblocking", lambda: unix_connect("allowed.sock", "nb-" + tag, blocking=False))
    result("allowed seqpacket", lambda: unix_connect("allowed-sp.sock", "sp-" + tag, socket.SOCK_SEQPACKET))
    result("allowed seqpacket nonblocking", lambda: unix_connect("allowed-sp.sock", "spnb-" + tag, socket.SOCK_SEQPACKET, False))
    result("other path", lambda: unix_connect("s.sock", "other-" + tag))
    result("other absolute", lambda: unix_connect(os.getcwd() + "/s.sock", "otherabs-" + tag))
    os.symlink("s.sock", "sym.sock")
    result("symlink", lambda: unix_connect("sym.sock", "sym-" + tag))
    os.symlink(os.getcwd() + "/s.sock", "symabs.sock")
    result("absolute symlink", lambda: unix_connect("symabs.sock", "symabs-" + tag))
    os.symlink(os.getcwd() + "/allowed.sock", "symok.sock")
    result("symlink to allowed", lambda: unix_connect("symok.sock", "symok-" + tag))
    os.mkdir("d")
    result("dotdot", lambda: unix_connect("d/../s.sock", "dotdot-" + tag))
    result("dotdot absolute", lambda: unix_connect(os.getcwd() + "/d/../s.sock", "dotdotabs-" + tag))
    result("dotdot above", lambda: unix_connect("../" + os.path.basename(os.getcwd()) + "/allowed.sock", "above-" + tag))
    result("relative up", lambda: relative_up(tag))
    result("own socket", own_socket)
    result("abstract", lambda: connect(socket.AF_UNIX, "\0" + open("abstract").read(), "abstract-" + tag))
    result("tcp", lambda: connect(socket.AF_INET, ("127.0.0.1", int(open("port").read())), "tcp-" + tag))
    result("swap race", lambda: swap_race(int(os.environ.get("ZSP_RACE_N", "300"))))
    result("addr race", lambda: addr_race(int(os.environ.get("ZSP_RACE_N", "300"))))
def loopback():
    for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        def tcp():
            srv = socket.socket(fam); srv.bind((host, 0)); srv.listen(1)
            cli = socket.create_connection(srv.getsockname()[:2], timeout=3)
            peer, _ = srv.accept(); cli.sendall(b"ping")
            if peer.recv(4) != b"ping": raise OSError(errno.EIO, "wrong data")
        def udp():
            u = socket.socket(fam, socket.SOCK_DGRAM); u.bind((host, 0)); u.settimeout(3)
            u.sendto(b"pong", u.getsockname()[:2])
            if u.recv(4) != b"pong": raise OSError(errno.EIO, "wrong data")
        result("tcp " + host, tcp)
        result("udp " + host, udp)
    for name, kind in (("stream", socket.SOCK_STREAM), ("seqpacket", socket.SOCK_SEQPACKET), ("dgram", socket.SOCK_DGRAM)):
        result("socketpair " + name, lambda: socket.socketpair(socket.AF_UNIX, kind))
cmd = sys.argv[1]
if cmd == "serve": serve(int(sys.argv[2]))
elif cmd == "try": try_all(sys.argv[2])
elif cmd == "loopback": loopback()
elif cmd == "mediated": mediated(sys.argv[2])
'

# got CASE: what the last client printed for CASE.
got() { sed -n "s/^$1: //p" "$tmp/out"; }
# expect CASE WANT: the last client's CASE ended in WANT (OK or an errno name).
expect() {
	if [ "$(got "$1")" = "$2" ]; then
		ok
	else
		bad "$what: $1: expected $2, got '$(got "$1")'"
		sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -8
	fi
}
# arrived WHAT: the fixture logged WHAT.
arrived() { grep -qx "$1" "$sock/got" 2>/dev/null; }
check() { if eval "$2"; then ok; else bad "$what: $1"; sed 's/^/  | /' "$sock/got" 2>/dev/null | head -8; fi; }
# client WHERE ARGS...: the python client as $who in $sock, outside (host) or under zsp-run.
client() {
	where=$1
	shift
	if [ "$where" = host ]; then
		(cd "$sock" && as "$who" python3 -c "$PY" "$@")
	else
		(cd "$sock" && as "$who" "$ZSP_RUN" -Wno-unenforced "$@")
	fi >"$tmp/out" 2>"$tmp/err" </dev/null
}

for who in $(identities); do
	fresh "$who"
	sock=$ws/sock
	mkdir -p "$sock"
	if [ "$who" = nobody ]; then chown 65534:65534 "$sock"; fi

	(cd "$sock" && exec env HOME="$home" PATH=/usr/bin:/bin \
		$([ "$who" = nobody ] && echo setpriv --reuid=65534 --regid=65534 --clear-groups) \
		python3 -c "$PY" serve 120) </dev/null >/dev/null 2>"$tmp/serve.err" &
	server=$!
	n=0
	while [ ! -e "$sock/ready" ] && [ "$n" -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
	what="the host fixture"
	check "listens (d.sock, s.sock, an abstract name, 127.0.0.1)" '[ -e "$sock/ready" ]'

	# -- the control: every socket of the fixture is reachable outside the sandbox --
	what="outside the sandbox"
	client host try control
	for c in dgram raw stream abstract tcp; do expect "$c" OK; done
	sleep 0.5
	check "the fixture receives a datagram" 'arrived "datagram dgram-control"'
	check "the fixture receives a SOCK_RAW datagram" 'arrived "datagram raw-control"'
	check "the fixture accepts on its pathname socket" 'arrived "accepted stream stream-control"'
	check "the fixture accepts on its abstract name" 'arrived "accepted abstract abstract-control"'
	check "the fixture accepts on 127.0.0.1" 'arrived "accepted tcp tcp-control"'

	# -- the built-in policy: no unix socket but socketpair; the loopback is the sandbox's --
	what="built-in policy"
	client sandbox -- python3 -c "$PY" try sandbox
	expect dgram EPERM
	expect raw EPERM
	expect stream EPERM
	expect abstract EPERM
	expect tcp ECONNREFUSED

	# -- one unix path allowed: the socket types still filtered, the namespace still its own --
	what="allow unix"
	client sandbox -p "$top_srcdir/tests/e2e/policies/unix.zsp" -- python3 -c "$PY" try unix
	expect dgram EPERM
	expect raw EPERM
	expect abstract ECONNREFUSED
	expect tcp ECONNREFUSED

	# -- the supervisor: the allowed paths and nothing else, whatever the spelling --
	for mode in none full; do
		what="allow unix, mode $mode"
		policy=$top_srcdir/tests/e2e/policies/unix.zsp
		[ "$mode" = full ] && policy=$top_srcdir/tests/e2e/policies/unix-full.zsp
		rm -rf "$sock/sym.sock" "$sock/symabs.sock" "$sock/symok.sock" "$sock/d" "$sock/sub" \
			"$sock/own.sock" "$sock/link.sock" "$sock/link.tmp"
		client sandbox -p "$policy" -- python3 -c "$PY" mediated "$mode"
		for c in "allowed stream" "allowed absolute" "allowed dot" "allowed nonblocking" \
			"allowed from a thread" "allowed seqpacket" "allowed seqpacket nonblocking" "symlink to allowed" \
			"dotdot above" "relative up" "swap race" "addr race"; do
			expect "$c" OK
		done
		for c in "other path" "other absolute" symlink "absolute symlink" dotdot \
			"dotdot absolute" "own socket"; do
			expect "$c" EACCES
		done
		if [ "$mode" = full ]; then
			expect abstract EACCES
			expect tcp OK
		else
			expect abstract ECONNREFUSED
			expect tcp ECONNREFUSED
		fi
		sleep 0.5
		check "the allowed stream socket received" 'arrived "accepted allowed stream-$mode" && arrived "accepted allowed abs-$mode" && arrived "accepted allowed dot-$mode" && arrived "accepted allowed nb-$mode" && arrived "accepted allowed thread-$mode" && arrived "accepted allowed symok-$mode" && arrived "accepted allowed above-$mode" && arrived "accepted allowed up-$mode"'
		check "the allowed seqpacket socket received" 'arrived "accepted allowed-sp sp-$mode" && arrived "accepted allowed-sp spnb-$mode"'
		check "the races reached the allowed socket" 'arrived "accepted allowed swap" && arrived "accepted allowed race"'
		check "the address race never connected to the forbidden socket" 'grep -q "^addr race reached s.sock: 0 times" "$tmp/out"'
		check "the address race did try the forbidden socket" '! grep -q "^addr race refused: 0 times" "$tmp/out" && grep -q "^addr race refused:" "$tmp/out"'
		check "nothing reached the forbidden socket" '! grep -Eq "^accepted stream .*(-$mode|swap|race)$" "$sock/got"'
		check "no abstract connection arrived" '! grep -q "^accepted abstract abstract-$mode" "$sock/got"'
	done
	# a test of the supervisor that cannot fail is none: the same address race without it
	# (outside the sandbox) does reach the forbidden socket
	what="the address race outside the sandbox"
	rm -rf "$sock/sym.sock" "$sock/symabs.sock" "$sock/symok.sock" "$sock/d" "$sock/sub" \
		"$sock/own.sock" "$sock/link.sock" "$sock/link.tmp"
	(cd "$sock" && as "$who" env ZSP_RACE_N=3000 python3 -c "$PY" mediated control) >"$tmp/out" 2>&1 </dev/null
	check "reaches the forbidden socket" '! grep -q "^addr race reached s.sock: 0 times" "$tmp/out" && grep -q "^addr race reached s.sock:" "$tmp/out"'
	rm -rf "$sock/sym.sock" "$sock/symabs.sock" "$sock/symok.sock" "$sock/d" "$sock/sub" \
		"$sock/own.sock" "$sock/link.sock" "$sock/link.tmp"

	# -- mode full: the host's network, no unix datagrams, no unix socket without allow unix --
	what="mode full"
	client sandbox -p "$top_srcdir/tests/e2e/policies/netfull.zsp" -- python3 -c "$PY" try full
	expect dgram EPERM
	expect raw EPERM
	expect stream EACCES
	expect abstract EACCES

	sleep 0.5
	what="the host fixture after the sandboxed clients"
	check "no datagram of the sandbox arrived" '! grep -Eq "^datagram .*-(sandbox|unix|full)$" "$sock/got"'
	check "no pathname or abstract connection of mode full arrived" '! grep -Eq "^accepted (stream|abstract) .*-full$" "$sock/got"'
	check "no connection of the sandbox arrived" '! grep -Eq "^accepted (abstract|tcp) .*-(sandbox|unix)$" "$sock/got"'
	check "no connection of the built-in policy's sandbox arrived" '! grep -q "sandbox$" "$sock/got"'
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null

	# -- the sandbox's own loopback: a server and a client inside --
	what="loopback inside"
	client sandbox -- python3 -c "$PY" loopback
	expect "tcp 127.0.0.1" OK
	expect "udp 127.0.0.1" OK
	expect "tcp ::1" OK
	expect "udp ::1" OK
	expect "socketpair stream" OK
	expect "socketpair seqpacket" OK
	expect "socketpair dgram" EPERM

	# -- the same loopback with allow unix: its connects go through the supervisor --
	what="loopback inside, mediated"
	client sandbox -p "$top_srcdir/tests/e2e/policies/unix.zsp" -- python3 -c "$PY" loopback
	expect "tcp 127.0.0.1" OK
	expect "udp 127.0.0.1" OK
	expect "tcp ::1" OK
	expect "udp ::1" OK
	expect "socketpair stream" OK
done

echo "$zsp_suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
