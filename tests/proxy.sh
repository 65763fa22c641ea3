#!/bin/sh
# proxy.sh: zsp-proxy end to end (doc/proxy.md): tests/proxy.py against a real upstream on
# 127.0.0.1, as the user running the suite and, when that is root, again with the proxy run as
# uid 65534 (setpriv), from a copy that uid can reach. Needs a test build ($ZSP_PROXY_HOSTS
# stands in for DNS) and python3.
set -u
zsp_suite=proxy.sh
zsp_up=..
. "$(dirname "$0")/testenv.sh"
ZSP_PROXY=${ZSP_PROXY:-$top_builddir/zsp-proxy}
if ! command -v python3 >/dev/null 2>&1; then
	echo "proxy.sh: no python3 (dev.sh installs it)"
	[ -n "${CI:-}" ] && exit 99
	exit 77
fi
if [ ! -x "$ZSP_PROXY" ]; then
	echo "proxy.sh: no zsp-proxy at $ZSP_PROXY" >&2
	exit 99
fi
rc=0
mkdir "$tmp/self"
echo "proxy.sh: as $(id -un)"
python3 "$top_srcdir/tests/proxy.py" "$ZSP_PROXY" "$ZSPC" "$tmp/self" || rc=1
if [ "$(id -u)" = 0 ]; then
	if command -v setpriv >/dev/null 2>&1; then
		mkdir -m 755 "$tmp/nobody" "$tmp/nobody/run"
		chmod 755 "$tmp"
		cp "$ZSP_PROXY" "$tmp/nobody/zsp-proxy"
		chmod 755 "$tmp/nobody/zsp-proxy"
		echo "proxy.sh: the proxy as uid 65534"
		python3 "$top_srcdir/tests/proxy.py" "$tmp/nobody/zsp-proxy" "$ZSPC" "$tmp/nobody/run" \
			setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all || rc=1
	else
		echo "proxy.sh: no setpriv: the unprivileged pass is skipped"
		[ -n "${CI:-}" ] && rc=1
	fi
fi
exit $rc
