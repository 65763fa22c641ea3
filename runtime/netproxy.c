/* netproxy.c: the bridge of `mode proxy` (netproxy.h; doc/linux.md "The proxy's bridge"). The
 * listeners are made in the sandbox's network namespace by a short-lived child that joins it
 * from outside, as the masks are made in its mount namespace (runtime/mask.c), and handed to
 * zsp-run's proxy process over SCM_RIGHTS: a socket keeps the namespace it was made in, so the
 * proxy accepts connections from inside while it connects upstream in the host's namespace.
 * Nothing of zsp's runs inside the sandbox, and the listeners are never in its descriptors. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/cli.h"
#include "runtime/mask.h"
#include "runtime/netproxy.h"
#include "runtime/proxy.h"

enum { SOCK_FD = 3, STOP_FD = 4, FIRST_FREE = 5, MAX_LISTENERS = 2 };

int zsp_netproxy_secret(char *secret)
{
	unsigned char raw[ZSP_NETPROXY_SECRET_LEN / 2];
	size_t got = 0;
	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < sizeof(raw); i++) {
		secret[2 * i] = hex[raw[i] >> 4];
		secret[2 * i + 1] = hex[raw[i] & 15];
	}
	secret[ZSP_NETPROXY_SECRET_LEN] = 0;
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

/* What each variable holds: the HTTP proxy's URL, the SOCKS5 one (the same port: the proxy
 * tells them apart by the first byte, 0x05 for SOCKS5), the loopback that is not proxied, or
 * the JVM's properties (it reads no proxy variable, and refuses Basic authentication for
 * CONNECT unless jdk.http.auth.tunneling.disabledSchemes is emptied). */
enum { V_HTTP, V_SOCKS, V_NO, V_JAVA };
static const struct {
	const char *name;
	int value;
} env_table[ZSP_NETPROXY_NENV] = {
	{ "HTTP_PROXY", V_HTTP },   { "HTTPS_PROXY", V_HTTP },        { "http_proxy", V_HTTP },
	{ "https_proxy", V_HTTP },  { "ALL_PROXY", V_SOCKS },         { "all_proxy", V_SOCKS },
	{ "NO_PROXY", V_NO },       { "no_proxy", V_NO },             { "npm_config_proxy", V_HTTP },
	{ "npm_config_https_proxy", V_HTTP }, { "CARGO_HTTP_PROXY", V_HTTP }, { "JAVA_TOOL_OPTIONS", V_JAVA },
};

/* NO_PROXY: the sandbox's own loopback, which the proxy cannot reach, is not proxied; but a
 * loopback name a host rule allows means the host's service on purpose (`allow
 * "127.0.0.1:5432"`), reached through the proxy only, so that name stays out of the list. */
static char *no_proxy(const zsp_ir_policy *p)
{
	static const char *const names[][2] = { { "localhost", "localhost" }, { "127.0.0.1", "127.0.0.1" },
						{ "::1", "[::1]" } };
	char *v = calloc(1, sizeof("localhost,127.0.0.1,::1"));
	if (!v)
		return NULL;
	for (size_t k = 0; k < 3; k++) {
		bool named = false;
		for (size_t i = 0; i < p->nhosts && !named; i++)
			named = p->hosts[i].decision != ZSP_DENY && strcmp(p->hosts[i].host, names[k][1]) == 0;
		if (!named) {
			if (*v)
				strcat(v, ",");
			strcat(v, names[k][0]);
		}
	}
	return v;
}

static char *env_value(int kind, const zsp_ir_policy *p, const char *secret)
{
	const char *lo = "127.0.0.1";
	unsigned port = ZSP_NETPROXY_PORT;
	char *v = NULL;
	int n = -1;
	switch (kind) {
	case V_HTTP:
		n = asprintf(&v, "http://zsp:%s@%s:%u", secret, lo, port);
		break;
	case V_SOCKS:
		n = asprintf(&v, "socks5h://zsp:%s@%s:%u", secret, lo, port);
		break;
	case V_NO:
		return no_proxy(p);
	default:
		n = asprintf(&v, "-Dhttp.proxyHost=%s -Dhttp.proxyPort=%u -Dhttps.proxyHost=%s -Dhttps.proxyPort=%u "
			     "-Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1] -Djdk.http.auth.tunneling.disabledSchemes= "
			     "-Djdk.http.auth.proxying.disabledSchemes= -Dhttp.proxyUser=zsp -Dhttp.proxyPassword=%s "
			     "-Dhttps.proxyUser=zsp -Dhttps.proxyPassword=%s",
			     lo, port, lo, port, secret, secret);
	}
	return n < 0 ? NULL : v;
}

int zsp_netproxy_env_make(zsp_netproxy_env *e, const zsp_ir_policy *p, const char *secret)
{
	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < ZSP_NETPROXY_NENV; i++) {
		e->name[i] = env_table[i].name;
		if (!(e->value[i] = env_value(env_table[i].value, p, secret))) {
			zsp_netproxy_env_free(e);
			return -1;
		}
	}
	return 0;
}

void zsp_netproxy_env_free(zsp_netproxy_env *e)
{
	for (size_t i = 0; i < ZSP_NETPROXY_NENV; i++) {
		if (e->value[i])
			explicit_bzero(e->value[i], strlen(e->value[i]));
		free(e->value[i]);
		e->value[i] = NULL;
	}
}

const char *zsp_netproxy_env_conflict(const zsp_ir_policy *p, const zsp_ir_env **at)
{
	for (size_t i = 0; i < p->nenv_set; i++)
		for (size_t k = 0; k < ZSP_NETPROXY_NENV; k++)
			if (strcmp(p->env_set[i].name, env_table[k].name) == 0) {
				*at = &p->env_set[i];
				return env_table[k].name;
			}
	return NULL;
}

int zsp_netproxy_listen(int sock)
{
	int one = 1;
	return setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
}

/* A listener on addr, non-blocking; -1 with errno. */
static int listener(int family, const void *addr, socklen_t len)
{
	int s = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (s >= 0 && (family != AF_INET6 || setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) == 0) &&
	    bind(s, addr, len) == 0 && listen(s, SOMAXCONN) == 0)
		return s;
	int e = errno;
	if (s >= 0)
		close(s);
	errno = e;
	return -1;
}

/* What the joining child reports when it fails: the step and its errno. */
enum { JOIN_OK, JOIN_SAME_NS, JOIN_NS, JOIN_V4, JOIN_V6, JOIN_SEND };
static const char *const join_step[] = {
	[JOIN_SAME_NS] = "the exec step is in zsp-run's own network namespace",
	[JOIN_NS] = "cannot enter the sandbox's network namespace",
	[JOIN_V4] = "cannot listen on the sandbox's 127.0.0.1",
	[JOIN_V6] = "cannot listen on the sandbox's ::1",
	[JOIN_SEND] = "cannot hand the listeners over",
};

/* In the joining child: the user namespace that owns pid's network namespace (zsp-run's uid
 * made it, through bwrap, so this holds every capability there), then the network namespace,
 * and the listeners there. JOIN_OK with the listeners in fds[0..*n), or the step with errno. */
static int make_listeners(pid_t pid, int fds[MAX_LISTENERS], size_t *n)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/ns/net", (int)pid);
	int net = open(p, O_RDONLY | O_CLOEXEC);
	struct stat a, b;
	if (net < 0 || fstat(net, &a) != 0 || stat("/proc/self/ns/net", &b) != 0)
		return JOIN_NS;
	/* never the host's own loopback: that would serve the proxy to every local process */
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		errno = EINVAL;
		return JOIN_SAME_NS;
	}
	int uns = ioctl(net, NS_GET_USERNS);
	if (uns < 0 || setns(uns, CLONE_NEWUSER) != 0 || setns(net, CLONE_NEWNET) != 0)
		return JOIN_NS;
	struct sockaddr_in v4 = { .sin_family = AF_INET, .sin_port = htons(ZSP_NETPROXY_PORT),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6, .sin6_port = htons(ZSP_NETPROXY_PORT),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	*n = 0;
	if ((fds[0] = listener(AF_INET, &v4, sizeof(v4))) < 0)
		return JOIN_V4;
	*n = 1;
	/* a namespace without IPv6 (ipv6.disable, disable_ipv6) has no ::1 to take: the variables
	 * name 127.0.0.1 only, and nothing else can listen on a ::1 that is not there */
	fds[1] = listener(AF_INET6, &v6, sizeof(v6));
	if (fds[1] >= 0)
		*n = 2;
	else if (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL)
		return JOIN_V6;
	return JOIN_OK;
}

static bool send_fds(int sock, const int *fds, size_t n, int step, int err)
{
	unsigned char msgbuf[2] = { (unsigned char)step, (unsigned char)(err < 256 ? err : 255) };
	struct iovec iov = { .iov_base = msgbuf, .iov_len = sizeof(msgbuf) };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(MAX_LISTENERS * sizeof(int))];
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n) {
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(n * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	ssize_t w;
	while ((w = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return w == (ssize_t)sizeof(msgbuf);
}

/* The listeners for pid's sandbox, made by a child that joins its namespaces: their count
 * (fds[0..n)), or 0 after saying why on stderr. */
static size_t listeners_for(pid_t pid, int fds[MAX_LISTENERS])
{
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
		zsp_warn("cannot make the proxy's listeners: %s", strerror(errno));
		return 0;
	}
	pid_t c = fork();
	if (c == 0) {
		close(pair[0]);
		int made[MAX_LISTENERS];
		size_t n = 0;
		int step = make_listeners(pid, made, &n);
		int err = step == JOIN_OK ? 0 : errno;
		_exit(send_fds(pair[1], made, step == JOIN_OK ? n : 0, step, err) && step == JOIN_OK ? 0 : 1);
	}
	close(pair[1]);
	if (c < 0) {
		zsp_warn("cannot make the proxy's listeners: %s", strerror(errno));
		close(pair[0]);
		return 0;
	}
	unsigned char got[2] = { JOIN_SEND, 0 };
	struct iovec iov = { .iov_base = got, .iov_len = sizeof(got) };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(MAX_LISTENERS * sizeof(int))];
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	ssize_t r;
	while ((r = recvmsg(pair[0], &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	int e = r < 0 ? errno : 0;
	close(pair[0]);
	while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
		;
	size_t n = 0;
	for (struct cmsghdr *h = r > 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
			size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
				if (n < MAX_LISTENERS)
					fds[n++] = fd;
				else
					close(fd);
			}
		}
	if (r == (ssize_t)sizeof(got) && got[0] == JOIN_OK && n > 0 && !(m.msg_flags & MSG_CTRUNC))
		return n;
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	int step = r == (ssize_t)sizeof(got) && got[0] < sizeof(join_step) / sizeof(join_step[0]) && got[0] != JOIN_OK
			   ? got[0] : JOIN_SEND;
	zsp_warn("cannot make the proxy's listeners: %s: %s", join_step[step],
		 strerror(r == (ssize_t)sizeof(got) && got[0] != JOIN_OK ? got[1] : e ? e : EPROTO));
	return 0;
}

/* The proxy process's signals: a person's ^C, ^\ and a hang-up go to the sandbox (zsp-run passes
 * them on) and the proxy serves on until it ends; a peer gone is a write error, not a signal. */
static void proxy_signals(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, dfl = { .sa_handler = SIG_DFL };
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGQUIT, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	sigaction(SIGTERM, &dfl, NULL);
}

static _Noreturn void proxy_main(const zsp_ir_policy *p, const zsp_oracle_env *env, const char *secret)
{
	zsp_oracle *o = zsp_oracle_new(p, env);
	if (!o) {
		zsp_warn("cannot start the proxy: out of memory");
		_exit(1);
	}
	pid_t pid = zsp_exec_step_request(SOCK_FD, 'n');
	if (pid == 0)
		_exit(0);
	if (pid < 0) {
		zsp_warn("cannot hear the exec step ask for the proxy's listeners: %s", strerror(errno));
		_exit(1);
	}
	int fds[MAX_LISTENERS];
	size_t n = listeners_for(pid, fds);
	if (!n)
		_exit(1);
	char k = 'k';
	ssize_t w;
	while ((w = write(SOCK_FD, &k, 1)) < 0 && errno == EINTR)
		;
	if (w != 1) {
		zsp_warn("cannot tell the exec step the proxy listens: %s", strerror(errno));
		_exit(1);
	}
	close(SOCK_FD);
	zsp_proxy_cfg cfg = { .oracle = o, .listeners = fds, .nlisteners = n, .secret = secret, .log_fd = STDERR_FILENO };
	char err[512];
	int rc = zsp_proxy_serve(&cfg, STOP_FD, err, sizeof(err));
	if (rc != ZSP_OK)
		zsp_warn("the proxy stopped: %s", err);
	_exit(rc == ZSP_OK ? 0 : 1);
}

pid_t zsp_netproxy_start(const zsp_ir_policy *p, const zsp_oracle_env *env, int sock, int stop_fd,
			 const char *secret)
{
	pid_t parent = getpid();
	pid_t c = fork();
	if (c != 0)
		return c;
	/* dies with zsp-run, even by SIGKILL; a zsp-run gone before the prctl is seen after it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(1);
	proxy_signals();
	/* nothing of zsp-run's but stderr, the socket and the stop pipe: the pipes whose end tells
	 * zsp-run that bwrap is gone must not be held open here, nor the caller's stdin and stdout */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
		_exit(1);
	int s = fcntl(sock, F_DUPFD_CLOEXEC, FIRST_FREE + 16), t = fcntl(stop_fd, F_DUPFD_CLOEXEC, FIRST_FREE + 16);
	if (s < 0 || t < 0 || dup2(s, SOCK_FD) != SOCK_FD || dup2(t, STOP_FD) != STOP_FD)
		_exit(1);
	syscall(SYS_close_range, (unsigned)FIRST_FREE, ~0U, 0U);
	proxy_main(p, env, secret);
}
