#!/usr/bin/env python3
"""tests/proxy.py: zsp-proxy against a real upstream on 127.0.0.1 (doc/proxy.md). Run by
tests/proxy.sh: python3 proxy.py ZSP_PROXY ZSPC TMPDIR [PREFIX...] (PREFIX: how to run the
proxy, e.g. setpriv as an unprivileged user). Domain names come from --resolve pins and from
$ZSP_PROXY_HOSTS (a test build's stand-in for DNS): no DNS is asked. Prints one line per
failure and exits 1 if any."""
import base64, os, socket, struct, subprocess, sys, threading, time

proxy_bin, zspc, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
prefix = sys.argv[4:]
failures = 0
passed = 0


def check(cond, what):
    global failures, passed
    if cond:
        passed += 1
    else:
        failures += 1
        print("FAIL", what, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


# ---- the upstream: HTTP for requests starting with a method, echo for anything else -----------
class Upstream:
    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.received = []   # the bytes each connection sent, in order
        self.lock = threading.Lock()
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            c, _ = self.sock.accept()
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        got = bytearray()
        with self.lock:
            self.received.append(got)
        try:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                got += b
                if got[:4] in (b"GET ", b"POST", b"HEAD"):
                    if b"\r\n\r\n" in got:
                        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n")
                        break
                else:
                    c.sendall(b)
        except OSError:
            pass
        c.close()

    def count(self):
        with self.lock:
            return len(self.received)

    def since(self, n):
        time.sleep(0.15)
        with self.lock:
            return [bytes(b) for b in self.received[n:]]


up = Upstream()
UP = up.port
closed_port = free_port()   # nothing listens there

policy = os.path.join(tmp, "proxy-test.zsp")
with open(policy, "w") as f:
    f.write(f"""zsp 1;
policy "t" {{
  net {{
    mode proxy;
    allow "127.0.0.1:{UP}", "registry.test:{UP}", "internal.test:{UP}", "rebind.test:{UP}",
          "metadata.test:{UP}", "mapped.test:{UP}", "nat64.test:{UP}", "localhost:{UP}",
          "down.test:{closed_port}", "nowhere.test:{UP}";
    allow "*.wild.test:{UP}", "*:{UP + 1 if UP < 65535 else UP - 1}";
    deny "evil.test:*", "bad.wild.test:*";
  }}
}}
""")
hosts = os.path.join(tmp, "proxy-hosts")
with open(hosts, "w") as f:
    f.write("internal.test 10.1.2.3\nrebind.test 127.0.0.1\nmetadata.test 169.254.169.254\n"
            "mapped.test ::ffff:127.0.0.1\nnat64.test 64:ff9b::7f00:1\n")
secret = "s3cr3t-0123456789abcdef"
with open(os.path.join(tmp, "proxy-secret"), "w") as f:
    f.write(secret + "\n")
os.chmod(tmp, 0o755)
for n in ("proxy-test.zsp", "proxy-hosts", "proxy-secret"):
    os.chmod(os.path.join(tmp, n), 0o644)


def start(*extra):
    env = dict(os.environ, ZSP_PROXY_HOSTS=hosts)
    p = subprocess.Popen(prefix + [proxy_bin, "--secret-file", os.path.join(tmp, "proxy-secret"),
                                   "--resolve", f"registry.test:{UP}:127.0.0.1",
                                   "--resolve", f"a.wild.test:{UP}:127.0.0.1",
                                   "--resolve", f"evil.test:{UP}:127.0.0.1",
                                   "--resolve", f"bad.wild.test:{UP}:127.0.0.1",
                                   "--resolve", f"down.test:{closed_port}:127.0.0.1",
                                   *extra, policy],
                         stdout=subprocess.PIPE, stderr=open(os.path.join(tmp, "proxy.err"), "a"), env=env)
    url = p.stdout.readline().decode().strip()
    hostport = url.rsplit("@", 1)[1]
    return p, int(hostport.rsplit(":", 1)[1])


proc, PORT = start("--header-timeout", "700")
time.sleep(0.2)
main_fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
AUTH = "Basic " + base64.b64encode(f"zsp:{secret}".encode()).decode()
check(True, "started")


def conn(port=None):
    s = socket.create_connection(("127.0.0.1", port or PORT), timeout=5)
    return s


def recv_all(s, limit=1 << 20):
    out = b""
    try:
        while len(out) < limit:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    return out


def http(req, port=None):
    s = conn(port)
    s.sendall(req)
    out = recv_all(s)
    s.close()
    return out


def status(resp):
    try:
        return int(resp.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0


def proxy_error(resp):
    for line in resp.split(b"\r\n"):
        if line.lower().startswith(b"x-proxy-error:"):
            return line.split(b":", 1)[1].strip().decode()
    return None


def connect_req(target, auth=AUTH):
    return (f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n" +
            (f"Proxy-Authorization: {auth}\r\n" if auth else "") + "\r\n").encode()


def refused(target, reason, what, auth=AUTH):
    n = up.count()
    r = http(connect_req(target, auth))
    check(status(r) in (400, 403, 407, 502) and proxy_error(r) == reason,
          f"{what}: CONNECT {target}: wanted {reason}, got {r[:120]!r}")
    check(up.since(n) == [], f"{what}: CONNECT {target}: bytes reached the upstream")


def tunnel(target):
    s = conn()
    s.sendall(connect_req(target))
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    return s, head


def client_hello(sni):
    ext = b""
    if sni is not None:
        name = sni.encode()
        entry = struct.pack("!BH", 0, len(name)) + name
        ext = struct.pack("!HHH", 0, len(entry) + 2, len(entry)) + entry
    body = (b"\x03\x03" + os.urandom(32) + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00" +
            struct.pack("!H", len(ext)) + ext)
    hs = b"\x01" + struct.pack("!I", len(body))[1:] + body
    return hs


def records(hs, size):
    """The handshake split into TLS records of at most size bytes."""
    out = b""
    for i in range(0, len(hs), size):
        frag = hs[i:i + size]
        out += b"\x16\x03\x01" + struct.pack("!H", len(frag)) + frag
    return out


# ---- allowed ---------------------------------------------------------------------------------
n = up.count()
r = http(f"GET http://registry.test:{UP}/x?y=1 HTTP/1.1\r\nHost: registry.test:{UP}\r\n"
         f"Proxy-Authorization: {AUTH}\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
         f"Proxy-Connection: keep-alive\r\nX-Keep: 2\r\n\r\n".encode())
check(status(r) == 200 and r.endswith(b"hello\n"), f"absolute-form: {r[:100]!r}")
got = up.since(n)
check(len(got) == 1 and got[0].startswith(f"GET /x?y=1 HTTP/1.1\r\nHost: registry.test:{UP}\r\n".encode()),
      f"absolute-form: origin form upstream: {got!r}")
low = got[0].lower() if got else b""
check(b"proxy-authorization" not in low and b"x-hop" not in low and b"proxy-connection" not in low
      and b"connection: close" in low and b"x-keep: 2" in low, f"absolute-form: hop-by-hop headers: {got!r}")

r = http(f"GET http://127.0.0.1:{UP} HTTP/1.1\r\nProxy-Authorization: {AUTH.replace('Basic', 'bAsIc')}\r\n\r\n".encode())
check(status(r) == 200, f"absolute-form to a literal address a rule names, no path: {r[:80]!r}")
r = http(f"GET http://localhost:{UP}/ HTTP/1.1\r\nHost: LOCALHOST.:{UP}\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode())
check(status(r) == 200, f"localhost by name, Host folded: {r[:80]!r}")
r = http(f"GET http://a.wild.test:{UP}/ HTTP/1.1\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode())
check(status(r) == 200, f"*.wild.test: {r[:80]!r}")

s, head = tunnel(f"registry.test:{UP}")
check(head.startswith(b"HTTP/1.1 200"), f"CONNECT: {head!r}")
s.sendall(b"ping")
check(s.recv(10) == b"ping", "CONNECT relays both ways")
s.shutdown(socket.SHUT_WR)
check(recv_all(s) == b"", "half-close: the upstream saw EOF and closed")
s.close()

# the same spellings of an allowed literal are one host
for spelling in ("127.1", "2130706433", "0x7f.1", "0177.0.0.1", "[::ffff:127.0.0.1]"):
    s, head = tunnel(f"{spelling}:{UP}")
    check(head.startswith(b"HTTP/1.1 200"), f"CONNECT {spelling}:{UP} is 127.0.0.1: {head!r}")
    s.close()

# a ClientHello naming the host, split in two writes and over two TLS records
for sni, split in (("registry.test", 7), ("REGISTRY.test.", 60)):
    n = up.count()
    s, head = tunnel(f"registry.test:{UP}")
    data = records(client_hello(sni), 50)
    s.sendall(data[:split])
    time.sleep(0.05)
    s.sendall(data[split:])
    back = b""
    while len(back) < len(data):
        b = s.recv(65536)
        if not b:
            break
        back += b
    check(back == data, f"SNI {sni} accepted and relayed")
    s.close()

# not TLS, and TLS without SNI: allowed
s, head = tunnel(f"registry.test:{UP}")
s.sendall(records(client_hello(None), 4000))
check(len(s.recv(65536)) > 0, "a ClientHello without SNI passes")
s.close()

# ---- refused ---------------------------------------------------------------------------------
other = UP + 2 if UP < 65534 else UP - 2
for spelling in ("127.0.0.1", "127.1", "2130706433", "0x7f.1", "[::ffff:127.0.0.1]", "[::1]",
                 "[0:0:0:0:0:0:0:1]", "localhost"):
    refused(f"{spelling}:{other}", "net-not-allowed", "direct address, unlisted port")
refused(f"[::1]:{UP}", "net-not-allowed", "IPv6 loopback")
refused(f"registry.test:{other}", "net-not-allowed", "unlisted port")
refused(f"evil.test:{UP}", "net-rule", "denied host")
refused(f"EVIL.test.:{UP}", "net-rule", "denied host, case and dot")
refused(f"bad.wild.test:{UP}", "net-rule", "deny beats *.wild.test")
refused(f"wild.test:{UP}", "net-not-allowed", "*.wild.test is strict subdomains")
refused(f"localhost..:{UP}", "bad-request", "second trailing dot")
refused(f"127.0.0.1%eth0:{UP}", "bad-request", "zone")
refused(f"registry.test:0{UP}", "bad-request", "port with a leading zero")
refused(f"internal.test:{UP}", "blocked-address", "a name resolving to a private address")
refused(f"rebind.test:{UP}", "blocked-address", "a name resolving to loopback")
refused(f"metadata.test:{UP}", "blocked-address", "a name resolving to the metadata address")
refused(f"mapped.test:{UP}", "blocked-address", "a name resolving to IPv4-mapped loopback")
refused(f"nat64.test:{UP}", "blocked-address", "a name resolving to NAT64 loopback")
refused(f"nowhere.test:{UP}", "resolve-failed", "a name that does not resolve")
refused(f"down.test:{closed_port}", "connect-failed", "nothing listening")
# `*:PORT` does not name an address: private literals stay refused
star = UP + 1 if UP < 65535 else UP - 1
for lit in ("10.0.0.1", "127.0.0.1", "169.254.169.254", "[fd00:ec2::254]", "100.100.100.200", "[fe80::1]",
            "224.0.0.1", "0.0.0.0", "255.255.255.255", "100.64.0.1", "[::ffff:10.0.0.1]"):
    refused(f"{lit}:{star}", "blocked-address", "a literal only `*` covers")
refused(f"registry.test:{UP}", "auth-required", "no token", auth=None)
refused(f"registry.test:{UP}", "auth-required", "wrong token",
        auth="Basic " + base64.b64encode(b"zsp:wrong").decode())
refused(f"registry.test:{UP}", "auth-required", "wrong user",
        auth="Basic " + base64.b64encode(f"srt:{secret}".encode()).decode())
refused(f"registry.test:{UP}", "auth-required", "not Basic", auth=f"Bearer {secret}")
r = http(connect_req(f"registry.test:{UP}", None))
check(b'Proxy-Authenticate: Basic realm="zsp"' in r and status(r) == 407, f"407 names the realm: {r[:200]!r}")

n = up.count()
r = http(f"GET http://registry.test:{UP}/ HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode())
check(status(r) == 400 and proxy_error(r) == "host-mismatch", f"Host mismatch: {r[:100]!r}")
r = http(f"GET http://registry.test:{UP}/ HTTP/1.1\r\nHost: registry.test:{other}\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode())
check(proxy_error(r) == "host-mismatch", f"Host port mismatch: {r[:100]!r}")
r = http(f"GET http://registry.test:{UP}/ HTTP/1.1\r\nHost: registry.test:{UP}\r\nHost: evil.test\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode())
check(status(r) == 400, f"two Host headers: {r[:100]!r}")
r = http(f"GET https://registry.test:{UP}/ HTTP/1.1\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode())
check(status(r) == 400, f"https in absolute form: {r[:100]!r}")
r = http(f"GET http://user@registry.test:{UP}/ HTTP/1.1\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode())
check(status(r) == 400, f"userinfo: {r[:100]!r}")
r = http(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
check(status(r) == 400, f"origin form: {r[:100]!r}")
r = http(b"GET http://registry.test/ HTTP/1.1\nHost: x\n\n")
check(status(r) == 400, f"bare LF: {r[:100]!r}")
r = http(f"GET http://registry.test:{UP}/ HTTP/1.1\r\nX: a\r\n b\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode())
check(status(r) == 400, f"obs-fold: {r[:100]!r}")
r = http(b"GET http://registry.test/ HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n")
check(status(r) == 431, f"oversized head: {r[:100]!r}")
check(up.since(n) == [], "no byte reached the upstream for the refused requests")

# SOCKS
def socks(methods=b"\x02", user=b"zsp", pw=secret.encode(), req=None):
    s = conn()
    s.sendall(b"\x05" + bytes([len(methods)]) + methods)
    g = s.recv(2)
    if g != b"\x05\x02":
        return s, g, None
    s.sendall(b"\x01" + bytes([len(user)]) + user + bytes([len(pw)]) + pw)
    a = s.recv(2)
    if a != b"\x01\x00" or req is None:
        return s, g, a
    s.sendall(req)
    return s, g, s.recv(10)


def sreq(cmd, atyp, addr, port):
    return bytes([5, cmd, 0, atyp]) + addr + struct.pack("!H", port)


def dom(name):
    return bytes([len(name)]) + name.encode()


n = up.count()
s, g, rep = socks(req=sreq(1, 3, dom("registry.test"), UP))
check(rep and rep[:2] == b"\x05\x00", f"SOCKS5 domain: {rep!r}")
s.sendall(b"hi")
check(s.recv(2) == b"hi", "SOCKS5 relays")
s.close()
s, g, rep = socks(req=sreq(1, 1, socket.inet_aton("127.0.0.1"), UP))
check(rep and rep[:2] == b"\x05\x00", f"SOCKS5 IPv4: {rep!r}")
s.close()
time.sleep(0.3)
m = up.count()
s, g, rep = socks(req=sreq(1, 4, socket.inet_pton(socket.AF_INET6, "::1"), UP))
check(rep and rep[:2] == b"\x05\x02", f"SOCKS5 IPv6 ::1: {rep!r}")
s, g, rep = socks(req=sreq(1, 3, dom("evil.test"), UP))
check(rep and rep[:2] == b"\x05\x02", f"SOCKS5 denied host: {rep!r}")
s, g, rep = socks(req=sreq(1, 3, dom("internal.test"), UP))
check(rep and rep[:2] == b"\x05\x02", f"SOCKS5 private by name: {rep!r}")
s, g, rep = socks(req=sreq(2, 3, dom("registry.test"), UP))
check(rep and rep[:2] == b"\x05\x07", f"SOCKS5 BIND: {rep!r}")
s, g, rep = socks(req=sreq(3, 1, socket.inet_aton("127.0.0.1"), UP))
check(rep and rep[:2] == b"\x05\x07", f"SOCKS5 UDP ASSOCIATE: {rep!r}")
s, g, rep = socks(req=sreq(1, 9, b"", UP))
check(rep and rep[:2] == b"\x05\x08", f"SOCKS5 unknown address type: {rep!r}")
s, g, a = socks(methods=b"\x00")
check(g == b"\x05\xff", f"SOCKS5 without authentication: {g!r}")
s, g, a = socks(pw=b"wrong")
check(a == b"\x01\x01", f"SOCKS5 wrong password: {a!r}")
s = conn()
s.sendall(b"\x04\x01" + struct.pack("!H", UP) + socket.inet_aton("127.0.0.1") + b"\x00")
check(s.recv(8)[:2] == b"\x00\x5b", "SOCKS4 rejected")
s = conn()
s.sendall(b"\x04\x01" + struct.pack("!H", UP) + b"\x00\x00\x00\x01" + b"\x00registry.test\x00")
check(s.recv(8)[:2] == b"\x00\x5b", "SOCKS4a rejected")
check(up.since(m) == [], "no byte reached the upstream for refused SOCKS requests")

# SNI mismatches, split; the tunnel is closed and nothing reaches the upstream
for sni, rec, split in (("evil.test", 50, 7), ("registry.test.evil", 4000, 3), ("a.wild.test", 30, 40)):
    n = up.count()
    s, head = tunnel(f"registry.test:{UP}")
    data = records(client_hello(sni), rec)
    s.sendall(data[:split])
    time.sleep(0.05)
    try:
        s.sendall(data[split:])
    except OSError:
        pass
    check(recv_all(s) == b"", f"SNI {sni}: the tunnel is closed")
    got = up.since(n)
    check(all(len(b) == 0 for b in got), f"SNI {sni}: bytes reached the upstream: {got!r}")
    s.close()
# the ClientHello sent at once behind the CONNECT head, before the 200
for sni, ok in (("registry.test", True), ("evil.test", False)):
    n = up.count()
    s = conn()
    data = records(client_hello(sni), 4000)
    s.sendall(connect_req(f"registry.test:{UP}") + data)
    got = recv_all(s, len(data) + 39)
    if ok:
        check(got.startswith(b"HTTP/1.1 200") and got.endswith(data), f"eager ClientHello {sni}: relayed")
    else:
        # closed before or right after the 200 (before: the 200 was still queued)
        check(not got.endswith(data) and (got == b"" or got.startswith(b"HTTP/1.1 200")),
              f"eager ClientHello {sni}: closed: {got[:60]!r}")
        check(all(len(b) == 0 for b in up.since(n)), f"eager ClientHello {sni}: no byte upstream")
    s.close()
# an SNI over SOCKS too
s, g, rep = socks(req=sreq(1, 3, dom("registry.test"), UP))
n = up.count()
s.sendall(records(client_hello("evil.test"), 4000))
check(recv_all(s) == b"", "SOCKS5 tunnel with another SNI is closed")
s.close()

# slow client: 408 after the header timeout; a client that vanishes mid-request
s = conn()
s.sendall(b"CONNECT registry.test")
t0 = time.time()
r = recv_all(s)
check(status(r) == 408 and 0.4 < time.time() - t0 < 3, f"header timeout: {r[:60]!r}")
for _ in range(20):
    s = conn()
    s.sendall(b"CONNECT registry.test:%d HTTP/1.1\r\nProxy-Au" % UP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
r = http(f"GET http://registry.test:{UP}/ HTTP/1.1\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode())
check(status(r) == 200, "still serving after clients vanished")

# ---- agreement with zspc --query ------------------------------------------------------------
names = ["registry.test", "REGISTRY.TEST.", "evil.test", "a.wild.test", "bad.wild.test", "wild.test",
         "x.y.wild.test", "127.0.0.1", "127.1", "0x7f000001", "[::1]", "[::ffff:7f00:1]", "localhost",
         "10.0.0.1", "example.com", "internal.test", "localhost..", "a..b", "-a.test", "1.2.3.4.5"]
ports = [UP, other, star, 443]
for h in names:
    for p in ports:
        q = subprocess.run([zspc, "--query", f'connect "{h}:{p}"', policy], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        r = http(connect_req(f"{h}:{p}"))
        oracle_deny = q.returncode != 0
        err = proxy_error(r)
        proxy_deny = err in ("net-not-allowed", "net-rule", "bad-request", "net-none")
        check(oracle_deny == proxy_deny, f"agreement {h}:{p}: zspc exit {q.returncode}, proxy {err or status(r)}")

# ---- the connection limit, then no descriptor leaked ----------------------------------------
def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


flood, FPORT = start("--max-conns", "8", "--header-timeout", "20000")
time.sleep(0.2)
base = fds(flood.pid)
held = [conn(FPORT) for _ in range(8)]
time.sleep(0.2)
n = up.count()
extra = []
for _ in range(30):
    s = conn(FPORT)
    try:
        s.sendall(connect_req(f"registry.test:{UP}"))
    except OSError:
        pass
    extra.append(recv_all(s))
    s.close()
check(all(x == b"" or status(x) == 503 for x in extra) and any(status(x) == 503 for x in extra),
      f"over the limit: 503: {extra[:2]!r}")
check(up.since(n) == [], "over the limit: nothing reached the upstream")
for s in held:
    s.close()
time.sleep(0.4)
r = http(f"GET http://registry.test:{UP}/ HTTP/1.1\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode(), FPORT)
check(status(r) == 200, "served again once the flood left")
time.sleep(0.3)
check(fds(flood.pid) == base, f"descriptors of the flooded proxy: {base} before, {fds(flood.pid)} after")
flood.terminate()
check(flood.wait(5) == 0, "the flooded proxy stops on SIGTERM")

# --record: each decision in the audit trail, as `zspc audit` shows it
state = os.path.join(tmp, "state")
os.makedirs(state, mode=0o700)
if prefix:
    os.chown(state, 65534, 65534)
errfile = os.path.join(tmp, "proxy.err")
rec, RPORT = start("--record", "--state-dir", state)
r = http(f"GET http://registry.test:{UP}/ HTTP/1.1\r\nProxy-Authorization: {AUTH}\r\n\r\n".encode(), RPORT)
check(status(r) == 200, f"--record: allowed: {r[:60]!r}")
r = http(connect_req(f"evil.test:{UP}"), RPORT)
check(status(r) == 403, f"--record: refused: {r[:60]!r}")
r = http(connect_req(f"internal.test:{UP}"), RPORT)
check(proxy_error(r) == "blocked-address", f"--record: blocked: {r[:60]!r}")
time.sleep(0.3)
rec.terminate()
check(rec.wait(5) == 0, "the recording proxy stops on SIGTERM")
a = subprocess.run(prefix + [zspc, "audit", "--state-dir", state], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
trail = a.stdout.decode()
check(a.returncode == 0 and f'allow connect "registry.test:{UP}"\treason=net-rule' in trail
      and f'deny connect "evil.test:{UP}"\treason=net-rule' in trail
      and f'deny connect "internal.test:{UP}"\treason=blocked-address' in trail,
      f"zspc audit lists the proxy's decisions: {trail!r} {a.stderr!r}")
log = open(errfile).read()
check("bytes up" in log and "connecting to 127.0.0.1" in log, "--record: bytes and address on stderr")

time.sleep(0.5)
d = fds(proc.pid)
check(d == main_fds, f"the main proxy holds {d} descriptors after every connection ended, {main_fds} at the start")
proc.terminate()
check(proc.wait(5) == 0, "the proxy stops on SIGTERM")
print(f"{passed} passed, {failures} failed")
sys.exit(1 if failures else 0)
