#!/bin/sh
# netproxy.sh: `mode proxy` for real (runtime/netproxy.c, doc/linux.md "The proxy's bridge").
# Upstream servers listen on the host's 127.0.0.1: A, which the test policy names literally (so
# the proxy's address checks pass it), and B, which it does not. From inside the sandbox, curl
# and python3 reach A through HTTP_PROXY (absolute form), through a CONNECT tunnel and through
# SOCKS5 (ALL_PROXY); a direct connect to A fails; B is refused by the proxy (403, and nothing
# arrives at B); a wrong or missing secret is refused (407); DNS fails; the listeners are in no
# descriptor table of the sandbox; every variable is set, NO_PROXY leaving out the 127.0.0.1 the
# policy names; the secret is on no command line of the host; the proxy is gone after the run,
# when the command is killed and when zsp-run is killed; zsp-run exits with the command's
# status. npm installs a package from a local registry (served by A) under examples/node.zsp.
# Each case runs as the current user and, under root, again as uid 65534.

zsp_suite=e2e-netproxy zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

python=/usr/bin/python3      # Debian's; inside the sandbox PATH is /usr/bin:/bin
for need in "$python" /usr/bin/curl; do
	if [ ! -x "$need" ]; then
		echo "$zsp_suite: $need is missing (dev.sh installs it)" >&2
		exit 99
	fi
done
have_npm=true
command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 || have_npm=false

# The upstream: serves $1 on 127.0.0.1 (a free port, written to $2), logging each request's
# path to $3. A path without an extension is served from NAME.json, as a registry serves a
# package's metadata.
SERVE='
import http.server, os, sys
root, portfile, log = sys.argv[1:4]
class H(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)
    def log_message(self, *a):
        pass
    def do_GET(self):
        with open(log, "a") as f:
            f.write(self.path + "\n")
        p = self.path.split("?")[0]
        if "." not in os.path.basename(p) and os.path.isfile(os.path.join(root, p.lstrip("/") + ".json")):
            self.path = p + ".json"
        super().do_GET()
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
'
www=$tmp/www
mkdir -p "$www/zsplocal/-" "$tmp/pkg/package"
echo "hello through the proxy" >"$www/hello.txt"
servers=
for name in a b; do
	"$python" -c "$SERVE" "$www" "$tmp/port.$name" "$tmp/log.$name" &
	servers="$servers $!"
done
trap 'kill $servers 2>/dev/null; rm -rf "$tmp" ${shm:+"$shm"}' EXIT
for name in a b; do
	i=0
	while [ ! -s "$tmp/port.$name" ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
done
A=$(cat "$tmp/port.a") B=$(cat "$tmp/port.b")
if [ -z "$A" ] || [ -z "$B" ]; then
	echo "$zsp_suite: the upstream servers did not start" >&2
	exit 99
fi

# the local registry: one package, its tarball and its metadata
printf '{"name":"zsplocal","version":"1.0.0","main":"index.js"}\n' >"$tmp/pkg/package/package.json"
echo 'module.exports = 42;' >"$tmp/pkg/package/index.js"
tar -C "$tmp/pkg" -czf "$www/zsplocal/-/zsplocal-1.0.0.tgz" package
tgz=$www/zsplocal/-/zsplocal-1.0.0.tgz
sha1=$(sha1sum "$tgz" | cut -d' ' -f1)
sri=sha512-$(openssl dgst -sha512 -binary "$tgz" 2>/dev/null | base64 -w0)
[ "$sri" != sha512- ] || sri=
cat >"$www/zsplocal.json" <<EOF
{"name":"zsplocal","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"zsplocal",
"version":"1.0.0","main":"index.js","dist":{"tarball":"http://127.0.0.1:$A/zsplocal/-/zsplocal-1.0.0.tgz",
"shasum":"$sha1"${sri:+,\"integrity\":\"$sri\"}}}}}
EOF
chmod -R a+rX "$www"

cat >"$tmp/netproxy.zsp" <<EOF
zsp 1;
policy "netproxy" {
  param WORKSPACE;
  fs { read "/"; write "\${WORKSPACE}"; }
  net { mode proxy; allow "127.0.0.1:$A"; }
}
EOF
# a copy the unprivileged pass can read (the checkout may be under /root, mode 0700)
cp "$top_srcdir"/examples/*.zsp "$tmp/" && chmod 644 "$tmp"/*.zsp
cat >"$tmp/node-local.zsp" <<EOF
zsp 1;
include "$tmp/node.zsp";
policy "node-local" extends "node" {
  net { allow "127.0.0.1:$A"; }
}
EOF
chmod 644 "$tmp/netproxy.zsp" "$tmp/node-local.zsp"

# The client, inside: one line per case, "CASE: RESULT".
CLIENT='
u=http://127.0.0.1:'$A' ub=http://127.0.0.1:'$B'
env >env.txt
c() { curl -sS --max-time 5 "$@" 2>/dev/null; }
echo "plain: $(c "$u/hello.txt")"
echo "connect: $(c -p "$u/hello.txt")"
echo "https_proxy: $(c -p -x "$HTTPS_PROXY" "$u/hello.txt")"
echo "socks5: $(c -x "$ALL_PROXY" "$u/hello.txt")"
echo "urllib: $('"$python"' -c "import urllib.request as r; print(r.urlopen(\"$u/hello.txt\", timeout=10).read().decode().strip())" 2>&1)"
c --noproxy "*" "$u/direct.txt" >/dev/null; echo "direct: $?"
echo "other: $(c -o /dev/null -w "%{http_code}" "$ub/other-plain.txt")"
echo "other-connect: $(c -p -o /dev/null -w "%{http_connect}" "$ub/other-connect.txt")"
echo "other-socks: $(c -x "$ALL_PROXY" -o /dev/null "$ub/other-socks.txt"; echo $?)"
echo "nosecret: $(c -x http://127.0.0.1:3128 -o /dev/null -w "%{http_code}" "$u/nosecret.txt")"
echo "nosecret-connect: $(c -p -x http://127.0.0.1:3128 -o /dev/null -w "%{http_connect}" "$u/nosecret-connect.txt")"
echo "wrongsecret: $(c -x http://zsp:0000@127.0.0.1:3128 -o /dev/null -w "%{http_code}" "$u/wrongsecret.txt")"
echo "socks-nosecret: $(c -x socks5h://127.0.0.1:3128 -o /dev/null "$u/socks-nosecret.txt"; echo $?)"
echo "dns: $('"$python"' -c "import socket; socket.getaddrinfo(\"zsp-netproxy.example.com\", 80); print(\"resolved\")" 2>&1 | tail -n 1)"
'"$python"' -c "
import os
inodes = set()
for t in (\"/proc/net/tcp\", \"/proc/net/tcp6\"):
    try:
        lines = open(t).read().splitlines()[1:]
    except OSError:
        continue
    for l in lines:
        f = l.split()
        if f[1].endswith(\":0C38\") and f[3] == \"0A\":
            inodes.add(\"socket:[%s]\" % f[9])
held = []
for p in os.listdir(\"/proc\"):
    if not p.isdigit():
        continue
    try:
        fds = os.listdir(\"/proc/%s/fd\" % p)
    except OSError:
        continue
    for fd in fds:
        try:
            if os.readlink(\"/proc/%s/fd/%s\" % (p, fd)) in inodes:
                held.append(p + \"/\" + fd)
        except OSError:
            pass
print(\"listeners: %d held: %s\" % (len(inodes), \" \".join(held) or \"none\"))
"
exit 7
'

# expect CASE WANT: the client said "CASE: WANT"
expect() {
	if grep -qxF "$1: $2" "$tmp/out"; then ok; else bad "$1: $(grep "^$1:" "$tmp/out" || echo "(no line)"), expected $2"; fi
}

# proxy_of PID: the proxy, zsp-run PID's child that is a zsp-run (the masks' helper and bwrap
# are the others: no masks in these policies, so the one zsp-run child is the proxy)
proxy_of() {
	pgrep -P "$1" -x zsp-run | head -n 1
}

# gone PID: PID ends within 5 s
gone() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	! kill -0 "$1" 2>/dev/null
}

# start_bg CMD...: CMD (as ... zsp-run ...) in the background from $ws, in a subshell whose pid
# is sub (its status is zsp-run's); zsp-run's pid in zpid (the subshell's child: env and setpriv
# exec it), the proxy's in ppid, once the command has made $ws/started
start_bg() {
	rm -f "$ws/started"
	(cd "$ws" && "$@") </dev/null >/dev/null 2>&1 &
	sub=$!
	i=0
	while [ ! -e "$ws/started" ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	zpid=$(pgrep -P "$sub" | head -n 1)
	ppid=
	[ -z "$zpid" ] || ppid=$(proxy_of "$zpid")
}

for who in $(identities); do
	fresh "$who"
	: >"$tmp/log.a"
	: >"$tmp/log.b"
	printf '%s' "$CLIENT" >"$ws/client.sh"
	mine "$ws"
	(cd "$ws" && as "$who" "$ZSP_RUN" -p "$tmp/netproxy.zsp" -D WORKSPACE="$ws" -- sh client.sh) \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 7 ]; then ok; else bad "the client: exit $rc, expected the command's 7"; sed 's/^/  | /' "$tmp/err" | head -5; fi
	hello="hello through the proxy"
	expect plain "$hello"
	expect connect "$hello"
	expect https_proxy "$hello"
	expect socks5 "$hello"
	expect urllib "$hello"
	expect direct 7
	expect other 403
	expect other-connect 403
	expect nosecret 407
	expect nosecret-connect 407
	expect wrongsecret 407
	if grep -q '^other-socks: 0$' "$tmp/out"; then bad "SOCKS5 to the other port got through"; else ok; fi
	if grep -q '^socks-nosecret: 0$' "$tmp/out"; then bad "SOCKS5 without the secret got through"; else ok; fi
	if grep -q '^dns: resolved$' "$tmp/out"; then bad "a name resolved inside the sandbox"; else ok; fi
	if grep -qxE 'listeners: [12] held: none' "$tmp/out"; then ok; else bad "the listeners: $(grep '^listeners:' "$tmp/out" || echo '(no line)'), expected 1 or 2 held by nobody inside"; fi
	# nothing of the refused requests reached an upstream; what was allowed did
	if [ -s "$tmp/log.b" ]; then bad "the other upstream was reached: $(tr '\n' ' ' <"$tmp/log.b")"; else ok; fi
	if grep -q 'direct\|secret' "$tmp/log.a"; then bad "refused requests reached the upstream: $(tr '\n' ' ' <"$tmp/log.a")"; else ok; fi
	if [ "$(grep -c '^/hello.txt$' "$tmp/log.a")" -eq 5 ]; then ok; else bad "the allowed requests: $(grep -c '^/hello.txt$' "$tmp/log.a") of 5 arrived"; fi
	# the variables
	secret=$(sed -n 's|^HTTP_PROXY=http://zsp:\([0-9a-f]\{64\}\)@127\.0\.0\.1:3128$|\1|p' "$ws/env.txt")
	if [ -n "$secret" ]; then ok; else bad "HTTP_PROXY: $(grep '^HTTP_PROXY=' "$ws/env.txt" || echo unset)"; fi
	http=http://zsp:$secret@127.0.0.1:3128
	for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy npm_config_proxy npm_config_https_proxy CARGO_HTTP_PROXY; do
		if grep -qxF "$v=$http" "$ws/env.txt"; then ok; else bad "$v: $(grep "^$v=" "$ws/env.txt" || echo unset)"; fi
	done
	for v in ALL_PROXY all_proxy; do
		if grep -qxF "$v=socks5h://zsp:$secret@127.0.0.1:3128" "$ws/env.txt"; then ok; else bad "$v: $(grep "^$v=" "$ws/env.txt" || echo unset)"; fi
	done
	for v in NO_PROXY no_proxy; do
		if grep -qxF "$v=localhost,::1" "$ws/env.txt"; then ok; else bad "$v: $(grep "^$v=" "$ws/env.txt" || echo unset), expected localhost,::1 (the policy names 127.0.0.1)"; fi
	done
	java=" $(sed -n 's/^JAVA_TOOL_OPTIONS=//p' "$ws/env.txt")"
	for prop in -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 \
		"-Djdk.http.auth.tunneling.disabledSchemes= " -Dhttps.proxyUser=zsp "-Dhttps.proxyPassword=$secret" \
		"-Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]"; do
		case "$java " in *" $prop"*) ok ;; *) bad "JAVA_TOOL_OPTIONS lacks $prop: $java" ;; esac
	done
	# a second run has a secret of its own
	(cd "$ws" && as "$who" "$ZSP_RUN" -p "$tmp/netproxy.zsp" -D WORKSPACE="$ws" -- sh -c 'echo "$HTTP_PROXY"') \
		</dev/null >"$tmp/out2" 2>/dev/null
	if [ -n "$secret" ] && grep -q '^http://zsp:[0-9a-f]\{64\}@' "$tmp/out2" && ! grep -qF "$secret" "$tmp/out2"; then ok; else bad "the second run's secret: $(cat "$tmp/out2")"; fi

	# -- the proxy's life: gone after the run, when the command is killed, when zsp-run is
	start_bg as "$who" "$ZSP_RUN" -p "$tmp/netproxy.zsp" -D WORKSPACE="$ws" -- sh -c 'echo "$HTTP_PROXY" >started.url; touch started; exec sleep 31.25'
	if [ -n "$ppid" ]; then ok; else bad "no proxy process under zsp-run $zpid"; fi
	s2=$(sed -n 's|^http://zsp:\([0-9a-f]*\)@.*|\1|p' "$ws/started.url")
	# the secret is on no command line and in no environment of the host's processes (the
	# sandbox's own, which have it, are below bwrap and read their own)
	leak=
	for p in /proc/[0-9]*; do
		if [ -n "$s2" ] && grep -qF "$s2" "$p/cmdline" 2>/dev/null; then leak="$leak ${p#/proc/}"; fi
	done
	if [ -n "$s2" ] && [ -z "$leak" ]; then ok; else bad "the secret on the command line of:$leak${s2:- (no secret seen)}"; fi
	spid=$(pgrep -f 'sleep 31.25' | head -n 1)
	[ -n "$spid" ] && kill "$spid"
	wait "$sub"
	rc=$?
	if [ "$rc" -eq 143 ]; then ok; else bad "the killed command: zsp-run exit $rc, expected 143"; fi
	if [ -n "$ppid" ] && gone "$ppid"; then ok; else bad "the proxy $ppid outlived a killed command"; fi

	start_bg as "$who" "$ZSP_RUN" -p "$tmp/netproxy.zsp" -D WORKSPACE="$ws" -- sh -c 'touch started; exec sleep 31.5'
	kill -9 "$zpid"
	if [ -n "$ppid" ] && gone "$ppid"; then ok; else bad "the proxy ${ppid:-(none)} outlived zsp-run killed by SIGKILL"; fi
	spid=$(pgrep -f 'sleep 31.5' | head -n 1)
	[ -n "$spid" ] && kill "$spid"
	wait "$sub" 2>/dev/null

	start_bg as "$who" "$ZSP_RUN" -p "$tmp/netproxy.zsp" -D WORKSPACE="$ws" -- sh -c 'touch started; sleep 0.5'
	wait "$sub"
	if [ -n "$ppid" ] && ! kill -0 "$ppid" 2>/dev/null; then ok; else bad "the proxy ${ppid:-(none)} outlived the run"; fi

	# -- a policy that sets a proxy variable itself is refused, by name
	cat >"$tmp/setproxy.zsp" <<EOF
zsp 1;
policy "setproxy" {
  param WORKSPACE;
  fs { read "/"; write "\${WORKSPACE}"; }
  net { mode proxy; allow "127.0.0.1:$A"; }
  process { env set "https_proxy" = "http://elsewhere:8080"; }
}
EOF
	chmod 644 "$tmp/setproxy.zsp"
	(cd "$ws" && as "$who" "$ZSP_RUN" -p "$tmp/setproxy.zsp" -D WORKSPACE="$ws" -- true) </dev/null >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q 'env set https_proxy. conflicts with .mode proxy.' "$tmp/err"; then ok; else bad "env set https_proxy in mode proxy: exit $rc: $(head -n 1 "$tmp/err")"; fi

	# -- npm install from the local registry, under examples/node.zsp extended with its address
	if $have_npm; then
		: >"$tmp/log.a"
		(cd "$ws" && as "$who" "$ZSP_RUN" -p "$tmp/node-local.zsp" -D WORKSPACE="$ws" -- \
			npm install --registry "http://127.0.0.1:$A/" --no-audit --no-fund --no-update-notifier zsplocal) \
			</dev/null >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$rc" -eq 0 ] && [ "$(cat "$ws/node_modules/zsplocal/index.js" 2>/dev/null)" = 'module.exports = 42;' ]; then
			ok
		else
			bad "npm install through the proxy: exit $rc"
			sed 's/^/  | /' "$tmp/err" | tail -n 8
		fi
		if grep -q '^/zsplocal/-/zsplocal-1.0.0.tgz$' "$tmp/log.a"; then ok; else bad "the registry served no tarball: $(tr '\n' ' ' <"$tmp/log.a")"; fi
		# the same policy refuses the registry on another port
		(cd "$ws" && as "$who" "$ZSP_RUN" -p "$tmp/node-local.zsp" -D WORKSPACE="$ws" -- \
			npm view --registry "http://127.0.0.1:$B/" --fetch-retries=0 zsplocal version) \
			</dev/null >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$rc" -ne 0 ] && [ ! -s "$tmp/log.b" ]; then ok; else bad "npm reached the unlisted registry: exit $rc"; fi
	elif [ -n "${CI:-}" ]; then
		bad "npm is missing (dev.sh installs it), and under CI that is a failure"
	else
		echo "SKIP [$who] npm install: npm is not installed (dev.sh installs it)"
	fi
done

echo "$zsp_suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
