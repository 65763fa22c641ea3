#!/bin/sh
# sockets.sh: what the sandbox's sockets reach, as root and as uid 65534 (lib.sh). Unix
# datagrams (SOCK_DGRAM, SOCK_RAW) never leave; the host's pathname sockets, abstract names and
# loopback are out of reach; the sandbox's own loopback (127.0.0.1 and ::1) serves and connects.
# (With `allow unix` or mode full a pathname socket stays reachable: no supervisor yet.)
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
    open("abstract", "w").write(name)
    open("port", "w").write(str(t.getsockname()[1]))
    open("ready", "w").write("")
    kinds = {d: "dgram", s: "stream", a: "abstract", t: "tcp"}
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
		python3 -c "$PY" serve 60) </dev/null >/dev/null 2>"$tmp/serve.err" &
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

	# -- mode full: the host's network and its unix sockets, but still no unix datagrams --
	what="mode full"
	client sandbox -p "$top_srcdir/tests/e2e/policies/netfull.zsp" -- python3 -c "$PY" try full
	expect dgram EPERM
	expect raw EPERM

	sleep 0.5
	what="the host fixture after the sandboxed clients"
	check "no datagram of the sandbox arrived" '! grep -Eq "^datagram .*-(sandbox|unix|full)$" "$sock/got"'
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
done

echo "$zsp_suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
