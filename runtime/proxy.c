/* proxy.c: the egress proxy's event loop (runtime/proxy.h, doc/proxy.md). One thread, epoll,
 * non-blocking sockets; names are resolved by a second thread so that a slow lookup stalls no
 * other connection. Every connection goes: read the request (HTTP or SOCKS5), authenticate,
 * decide through zsp_oracle_connect, resolve, check each address, connect to exactly that
 * address, then relay both ways (a tunnel first has its TLS ClientHello checked). */
#define _GNU_SOURCE   /* accept4, pipe2 */
#include "runtime/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "compiler/zsp.h"
#include "lang/arena.h"
#include "runtime/proxyproto.h"

#define BUF_SIZE (256 * 1024)
#define MAX_ADDRS 8
#define DEFAULT_MAX_CONNS 512
#define DEFAULT_IDLE_MS (300 * 1000)
#define DEFAULT_HEADER_MS (10 * 1000)
#define DRAIN_MS 1000     /* how long a refused client may still send before it is closed */
#define TICK_MS 200       /* how often deadlines are looked at */

enum state {
	ST_FIRST,     /* nothing read yet: HTTP, SOCKS5 or SOCKS4 */
	ST_HEAD,      /* an HTTP request head */
	ST_SGREET,    /* SOCKS5 greeting */
	ST_SAUTH,     /* SOCKS5 username/password */
	ST_SREQ,      /* SOCKS5 request */
	ST_RESOLVE,   /* waiting for the resolver thread */
	ST_CONNECT,   /* non-blocking connect in progress */
	ST_PEEK,      /* tunnel open: the client's first bytes are checked for a ClientHello */
	ST_RELAY,     /* both ways */
	ST_REPLY,     /* a final reply is written, then ST_DRAIN */
	ST_DRAIN,     /* write side shut: reading and dropping until EOF or the deadline */
};

enum kind { K_CLIENT, K_UPSTREAM, K_LISTEN, K_STOP, K_RESOLVER };

struct tag {
	enum kind kind;
	struct conn *c;
	int fd;
};

struct conn {
	enum state st;
	int cfd, ufd;
	unsigned gen;              /* bumped on every close: stale resolver answers are dropped */
	struct tag tc, tu;
	uint32_t cev, uev;         /* the events registered */
	bool socks, tunnel;
	char host[ZSP_HOST_MAX];
	unsigned port;
	bool named;                /* a rule or pin names the address: the address checks pass it */
	zsp_pp_http http;
	unsigned char *cu;         /* client -> upstream (the request before the relay) */
	size_t cu_off, cu_len;
	unsigned char *uc;         /* upstream -> client (replies before the relay) */
	size_t uc_off, uc_len;
	bool c_eof, u_eof, c_shut, u_shut;
	struct sockaddr_storage addrs[MAX_ADDRS];
	socklen_t alens[MAX_ADDRS];
	int naddrs, cur;
	long long audit;
	unsigned long long up, down;
	long long t_start, deadline;
	const char *error;         /* why it ended, for the audit */
	struct conn *next_free;
};

struct job {
	struct job *next;
	struct conn *c;
	unsigned gen;
	char host[ZSP_HOST_MAX];
	int rc;
	int naddrs;
	struct sockaddr_storage addrs[MAX_ADDRS];
	socklen_t alens[MAX_ADDRS];
};

struct proxy {
	const zsp_proxy_cfg *cfg;
	int ep;
	zsp_arena *arena;
	struct conn *slots, *free;
	unsigned nconns, max_conns;
	int idle_ms, header_ms;
	struct tag *ltags;
	bool listen_paused;
	struct tag stop_tag, res_tag;
	/* the resolver thread: jobs in, answers out through a pipe (a job pointer per write) */
	pthread_t res_thread;
	bool res_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *jobs;
	bool res_stop;
	int res_pipe[2];
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void logf_(struct proxy *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct proxy *p, const char *fmt, ...)
{
	if (p->cfg->log_fd < 0)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	ssize_t w = write(p->cfg->log_fd, line, (size_t)n);
	(void)w;
}

/* ---- resolver thread ---------------------------------------------------------------------- */

static void *resolver_main(void *arg)
{
	struct proxy *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->jobs && !p->res_stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->res_stop) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		struct job *j = p->jobs;
		p->jobs = j->next;
		pthread_mutex_unlock(&p->mu);
		j->naddrs = 0;
		if (p->cfg->lookup) {
			for (size_t i = 0; i < p->cfg->nlookup && j->naddrs < MAX_ADDRS; i++)
				if (strcmp(p->cfg->lookup[i].host, j->host) == 0) {
					memcpy(&j->addrs[j->naddrs], &p->cfg->lookup[i].addr, p->cfg->lookup[i].addrlen);
					j->alens[j->naddrs++] = p->cfg->lookup[i].addrlen;
				}
			j->rc = j->naddrs ? 0 : EAI_NONAME;
			if (write(p->res_pipe[1], &j, sizeof(j)) != sizeof(j))
				free(j);
			continue;
		}
		struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
		struct addrinfo *res = NULL;
		j->rc = getaddrinfo(j->host, NULL, &hints, &res);
		for (struct addrinfo *ai = res; ai && j->naddrs < MAX_ADDRS; ai = ai->ai_next) {
			if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
			    ai->ai_addrlen > sizeof(j->addrs[0]))
				continue;
			memcpy(&j->addrs[j->naddrs], ai->ai_addr, ai->ai_addrlen);
			j->alens[j->naddrs++] = ai->ai_addrlen;
		}
		if (res)
			freeaddrinfo(res);
		if (write(p->res_pipe[1], &j, sizeof(j)) != sizeof(j))
			free(j);   /* only when the loop is gone */
	}
}

/* ---- epoll bookkeeping -------------------------------------------------------------------- */

static void set_events(struct proxy *p, int fd, struct tag *t, uint32_t *cur, uint32_t want)
{
	if (fd < 0 || *cur == want)
		return;
	struct epoll_event ev = {.events = want, .data.ptr = t};
	epoll_ctl(p->ep, want == 0 ? EPOLL_CTL_DEL : *cur == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
	*cur = want;
}

static bool reading_request(const struct conn *c)
{
	return c->st == ST_FIRST || c->st == ST_HEAD || c->st == ST_SGREET || c->st == ST_SAUTH ||
	       c->st == ST_SREQ;
}

/* The events each side waits for, from the state and the buffers. */
static void arm(struct proxy *p, struct conn *c)
{
	uint32_t ce = 0, ue = 0;
	bool relaying = c->st == ST_RELAY || c->st == ST_PEEK;
	if (c->uc_len > c->uc_off)
		ce |= EPOLLOUT;
	if (!c->c_eof && c->cu_len < (reading_request(c) ? ZSP_PP_HEAD_MAX : BUF_SIZE) &&
	    (reading_request(c) || c->st == ST_DRAIN || c->st == ST_PEEK ||
	     (c->st == ST_RELAY && c->cu_len == c->cu_off)))
		ce |= EPOLLIN;
	if (c->st == ST_CONNECT)
		ue |= EPOLLOUT;
	if (relaying && !c->u_eof && c->uc_len == c->uc_off)
		ue |= EPOLLIN;
	if (c->st == ST_RELAY && c->cu_len > c->cu_off)
		ue |= EPOLLOUT;
	set_events(p, c->cfd, &c->tc, &c->cev, ce);
	set_events(p, c->ufd, &c->tu, &c->uev, ue);
}

/* ---- connections -------------------------------------------------------------------------- */

static void conn_close(struct proxy *p, struct conn *c)
{
	if (c->audit && p->cfg->audit)
		p->cfg->audit->end(p->cfg->audit->ctx, c->audit, c->up, c->down, now_ms() - c->t_start,
				   c->error);
	set_events(p, c->cfd, &c->tc, &c->cev, 0);
	set_events(p, c->ufd, &c->tu, &c->uev, 0);
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	free(c->cu);
	free(c->uc);
	unsigned gen = c->gen + 1;
	memset(c, 0, sizeof(*c));
	c->gen = gen;
	c->cfd = c->ufd = -1;
	c->next_free = p->free;
	p->free = c;
	p->nconns--;
	if (p->listen_paused && p->nconns < p->max_conns) {
		for (size_t i = 0; i < p->cfg->nlisteners; i++) {
			struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &p->ltags[i]};
			epoll_ctl(p->ep, EPOLL_CTL_ADD, p->ltags[i].fd, &ev);
		}
		p->listen_paused = false;
	}
}

static void queue_client(struct conn *c, const void *s, size_t n)
{
	if (BUF_SIZE - c->uc_len < n)
		n = BUF_SIZE - c->uc_len;
	memcpy(c->uc + c->uc_len, s, n);
	c->uc_len += n;
}

/* Ends the request with a reply: written, then the write side shut and the rest drained. */
static void finish(struct proxy *p, struct conn *c, const void *reply, size_t n, const char *error)
{
	c->error = error;
	if (c->ufd >= 0) {
		set_events(p, c->ufd, &c->tu, &c->uev, 0);
		close(c->ufd);
		c->ufd = -1;
	}
	c->uc_off = c->uc_len = 0;
	queue_client(c, reply, n);
	c->st = ST_REPLY;
	c->deadline = now_ms() + DRAIN_MS;
	arm(p, c);
}

static void http_reply(struct proxy *p, struct conn *c, int status, const char *reason, const char *body)
{
	static const struct { int code; const char *text; } texts[] = {
		{400, "Bad Request"}, {403, "Forbidden"}, {407, "Proxy Authentication Required"},
		{408, "Request Timeout"}, {431, "Request Header Fields Too Large"},
		{502, "Bad Gateway"}, {503, "Service Unavailable"}, {504, "Gateway Timeout"},
		{505, "HTTP Version Not Supported"},
	};
	const char *text = "Error";
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (texts[i].code == status)
			text = texts[i].text;
	char out[2048];
	int n = snprintf(out, sizeof(out),
			 "HTTP/1.1 %d %s\r\nX-Proxy-Error: %s\r\n%sContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
			 status, text, reason,
			 status == 407 ? "Proxy-Authenticate: Basic realm=\"zsp\"\r\n" : "",
			 strlen(body) + 1, body);
	if (n < 0 || (size_t)n >= sizeof(out))
		n = snprintf(out, sizeof(out), "HTTP/1.1 %d %s\r\nX-Proxy-Error: %s\r\n"
			     "Content-Length: 0\r\nConnection: close\r\n\r\n", status, text, reason);
	finish(p, c, out, (size_t)n, reason);
}

static void socks_reply(struct proxy *p, struct conn *c, unsigned char code, const char *reason)
{
	unsigned char r[10] = {5, code, 0, 1};
	finish(p, c, r, sizeof(r), reason);
}

/* Refuses the request with the reason as X-Proxy-Error or the SOCKS code, and logs it. */
static void refuse_v(struct proxy *p, struct conn *c, int status, unsigned char socks, const char *reason,
		     const char *detail, const zsp_verdict *v)
{
	if (c->host[0] && p->cfg->audit && p->cfg->audit->refused)
		p->cfg->audit->refused(p->cfg->audit->ctx, c->host, c->port, reason, v);
	if (c->host[0])
		logf_(p, "zsp-proxy: refused %s:%u: %s (%s)", c->host, c->port, reason, detail);
	else
		logf_(p, "zsp-proxy: refused a request: %s (%s)", reason, detail);
	if (c->socks) {
		socks_reply(p, c, socks, reason);
		return;
	}
	char body[1024];
	if (c->host[0])
		snprintf(body, sizeof(body), "zsp-proxy: %s:%u: %s", c->host, c->port, detail);
	else
		snprintf(body, sizeof(body), "zsp-proxy: %s", detail);
	http_reply(p, c, status, reason, body);
}

static void refuse(struct proxy *p, struct conn *c, int status, unsigned char socks, const char *reason,
		   const char *detail)
{
	refuse_v(p, c, status, socks, reason, detail, NULL);
}

static void accept_all(struct proxy *p, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				logf_(p, "zsp-proxy: accept: %s: not accepting until a connection ends",
				      strerror(errno));
				for (size_t i = 0; i < p->cfg->nlisteners; i++)
					epoll_ctl(p->ep, EPOLL_CTL_DEL, p->ltags[i].fd, NULL);
				p->listen_paused = true;
			}
			return;
		}
		if (!p->free) {
			/* over the limit: answered at once and closed, never kept */
			unsigned char b = 0;
			ssize_t r = recv(fd, &b, 1, MSG_PEEK);
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nX-Proxy-Error: "
						   "too-many-connections\r\nContent-Length: 0\r\n"
						   "Connection: close\r\n\r\n";
			static const unsigned char sbusy[] = {5, 0xFF};
			ssize_t w = r == 1 && b == 5 ? send(fd, sbusy, 2, MSG_NOSIGNAL)
						     : send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL);
			(void)w;
			shutdown(fd, SHUT_WR);
			close(fd);
			logf_(p, "zsp-proxy: refused a connection: too-many-connections (%u open)", p->nconns);
			continue;
		}
		struct conn *c = p->free;
		unsigned gen = c->gen;
		c->cu = malloc(BUF_SIZE);
		c->uc = malloc(BUF_SIZE);
		if (!c->cu || !c->uc) {
			free(c->cu);
			free(c->uc);
			c->cu = c->uc = NULL;
			close(fd);
			return;
		}
		p->free = c->next_free;
		p->nconns++;
		c->gen = gen;
		c->cfd = fd;
		c->ufd = -1;
		c->st = ST_FIRST;
		c->tc = (struct tag){K_CLIENT, c, fd};
		c->tu = (struct tag){K_UPSTREAM, c, -1};
		c->t_start = now_ms();
		c->deadline = c->t_start + p->header_ms;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		arm(p, c);
	}
}

/* ---- deciding and connecting -------------------------------------------------------------- */

static bool rule_names_host(const zsp_verdict *v, const char *host)
{
	size_t n = strlen(host);
	return v->rule && strncmp(v->rule, "allow \"", 7) == 0 && strncmp(v->rule + 7, host, n) == 0 &&
	       v->rule[7 + n] == ':';
}

static void start_connect(struct proxy *p, struct conn *c);
static void peek(struct proxy *p, struct conn *c);
static bool flush(int fd, unsigned char *buf, size_t *off, size_t *len, unsigned long long *count);

static bool literal_addr(const char *host, unsigned port, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		return true;
	}
	char tmp[ZSP_HOST_MAX];
	size_t n = strlen(host);
	if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
		memcpy(tmp, host + 1, n - 2);
		tmp[n - 2] = '\0';
		if (inet_pton(AF_INET6, tmp, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons((uint16_t)port);
			*len = sizeof(*s6);
			return true;
		}
	}
	return false;
}

/* The addresses are known: each is checked, then the first is connected. */
static void addresses_known(struct proxy *p, struct conn *c)
{
	for (int i = 0; i < c->naddrs; i++) {
		const char *why = zsp_pp_addr_blocked((struct sockaddr *)&c->addrs[i]);
		if (why && !c->named) {
			char a[64], d[256];
			zsp_pp_addr_text((struct sockaddr *)&c->addrs[i], a, sizeof(a));
			snprintf(d, sizeof(d), "resolves to %s, a %s address no rule names", a, why);
			refuse(p, c, 403, ZSP_SOCKS_NOT_ALLOWED, "blocked-address", d);
			return;
		}
	}
	c->cur = 0;
	start_connect(p, c);
}

static void grant_hint(char *out, size_t cap, const struct conn *c, const char *policy)
{
	/* a policy name the shell would read otherwise is left out rather than printed wrong */
	bool plain = policy && policy[0] &&
		     strspn(policy, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(policy);
	snprintf(out, cap, "asks for approval and there is no prompt here; to allow it once, run: "
			   "zspc grant add --tool connect --exact '%s:%u' --allow --once%s%s", c->host, c->port,
		 plain ? " --policy " : "", plain ? policy : "");
}

/* The request names host:port and is authenticated: the oracle decides. */
static void decide(struct proxy *p, struct conn *c)
{
	zsp_verdict v;
	zsp_arena_reset(p->arena);
	if (zsp_oracle_connect(p->cfg->oracle, p->arena, c->host, c->port, false, &v) != ZSP_OK) {
		refuse(p, c, 403, ZSP_SOCKS_FAIL, "internal-error", "the decision failed (out of memory)");
		return;
	}
	if (v.decision == ZSP_ASK) {
		char d[512];
		grant_hint(d, sizeof(d), c, p->cfg->policy);
		refuse_v(p, c, 403, ZSP_SOCKS_NOT_ALLOWED, "ask", d, &v);
		return;
	}
	if (v.decision != ZSP_ALLOW) {
		refuse_v(p, c, 403, ZSP_SOCKS_NOT_ALLOWED, v.reason ? v.reason : "denied",
			 v.detail ? v.detail : "denied", &v);
		return;
	}
	c->naddrs = 0;
	c->named = false;
	for (size_t i = 0; i < p->cfg->npins; i++) {
		const zsp_proxy_pin *pin = &p->cfg->pins[i];
		if (pin->port == c->port && strcmp(pin->host, c->host) == 0 && c->naddrs < MAX_ADDRS &&
		    pin->addrlen <= sizeof(c->addrs[0])) {
			memcpy(&c->addrs[c->naddrs], &pin->addr, pin->addrlen);
			c->alens[c->naddrs++] = pin->addrlen;
			c->named = true;
		}
	}
	if (c->naddrs) {
		addresses_known(p, c);
		return;
	}
	if (literal_addr(c->host, c->port, &c->addrs[0], &c->alens[0])) {
		c->naddrs = 1;
		c->named = rule_names_host(&v, c->host);
		addresses_known(p, c);
		return;
	}
	if (strcmp(c->host, "localhost") == 0) {
		/* loopback by name, never by a lookup that /etc/hosts could change */
		literal_addr("127.0.0.1", c->port, &c->addrs[0], &c->alens[0]);
		literal_addr("[::1]", c->port, &c->addrs[1], &c->alens[1]);
		c->naddrs = 2;
		c->named = rule_names_host(&v, c->host);
		addresses_known(p, c);
		return;
	}
	struct job *j = calloc(1, sizeof(*j));
	if (!j) {
		refuse(p, c, 403, ZSP_SOCKS_FAIL, "internal-error", "out of memory");
		return;
	}
	j->c = c;
	j->gen = c->gen;
	snprintf(j->host, sizeof(j->host), "%s", c->host);
	pthread_mutex_lock(&p->mu);
	struct job **tail = &p->jobs;
	while (*tail)
		tail = &(*tail)->next;
	*tail = j;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	c->st = ST_RESOLVE;
	arm(p, c);
}

static void resolved(struct proxy *p, struct job *j)
{
	struct conn *c = j->c;
	if (c->gen != j->gen || c->st != ST_RESOLVE) {
		free(j);
		return;
	}
	if (j->rc != 0 || j->naddrs == 0) {
		char d[256];
		snprintf(d, sizeof(d), "the name does not resolve (%s)", j->rc ? gai_strerror(j->rc) : "no address");
		free(j);
		refuse(p, c, 502, ZSP_SOCKS_HOST_UNREACH, "resolve-failed", d);
		return;
	}
	for (int i = 0; i < j->naddrs; i++) {
		memcpy(&c->addrs[i], &j->addrs[i], j->alens[i]);
		((struct sockaddr_in *)&c->addrs[i])->sin_port = htons((uint16_t)c->port); /* same offset in v6 */
		c->alens[i] = j->alens[i];
	}
	c->naddrs = j->naddrs;
	free(j);
	addresses_known(p, c);
}

static unsigned char socks_errno(int e)
{
	return e == ECONNREFUSED ? ZSP_SOCKS_REFUSED : e == ENETUNREACH ? ZSP_SOCKS_NET_UNREACH
	     : e == EHOSTUNREACH || e == ETIMEDOUT ? ZSP_SOCKS_HOST_UNREACH : ZSP_SOCKS_FAIL;
}

/* Connects to c->addrs[c->cur], the next after a failure; the audit record is begun first. */
static void start_connect(struct proxy *p, struct conn *c)
{
	int last = 0;
	for (; c->cur < c->naddrs; c->cur++) {
		struct sockaddr *sa = (struct sockaddr *)&c->addrs[c->cur];
		if (p->cfg->audit && !c->audit) {
			char a[64];
			zsp_verdict v;
			zsp_arena_reset(p->arena);
			zsp_pp_addr_text(sa, a, sizeof(a));
			if (zsp_oracle_connect(p->cfg->oracle, p->arena, c->host, c->port, false, &v) != ZSP_OK ||
			    !(c->audit = p->cfg->audit->begin(p->cfg->audit->ctx, c->host, c->port, a, &v))) {
				refuse(p, c, 403, ZSP_SOCKS_FAIL, "audit-failed",
				       "the connection could not be recorded in the audit trail");
				return;
			}
		}
		int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			last = errno;
			continue;
		}
		if (connect(fd, sa, c->alens[c->cur]) == 0 || errno == EINPROGRESS) {
			c->ufd = fd;
			c->tu.fd = fd;
			c->st = ST_CONNECT;
			c->deadline = now_ms() + p->header_ms;
			arm(p, c);
			return;
		}
		last = errno;
		close(fd);
	}
	char d[256];
	snprintf(d, sizeof(d), "cannot connect: %s", strerror(last ? last : ECONNREFUSED));
	refuse(p, c, 502, socks_errno(last), "connect-failed", d);
}

static void connected(struct proxy *p, struct conn *c)
{
	int err = 0;
	socklen_t el = sizeof(err);
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
		err = errno;
	if (err) {
		set_events(p, c->ufd, &c->tu, &c->uev, 0);
		close(c->ufd);
		c->ufd = -1;
		c->cur++;
		if (c->cur < c->naddrs) {
			start_connect(p, c);
			return;
		}
		char d[256];
		snprintf(d, sizeof(d), "cannot connect: %s", strerror(err));
		refuse(p, c, 502, socks_errno(err), "connect-failed", d);
		return;
	}
	int one = 1;
	setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->deadline = now_ms() + p->idle_ms;
	if (c->socks) {
		static const unsigned char ok[10] = {5, 0, 0, 1};
		queue_client(c, ok, sizeof(ok));
		c->st = ST_PEEK;
	} else if (c->tunnel) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		queue_client(c, ok, sizeof(ok) - 1);
		c->st = ST_PEEK;
	} else {
		/* the head is rewritten to origin form in front of the body bytes already read */
		char *head = malloc(ZSP_PP_HEAD_MAX + 512);
		size_t rest = c->cu_len - c->http.head_len;
		size_t n = head ? zsp_pp_http_rewrite((const char *)c->cu, &c->http, head, ZSP_PP_HEAD_MAX + 512) : 0;
		if (n == 0 || n + rest > BUF_SIZE) {
			free(head);
			refuse(p, c, 400, 0, "header-too-large", "the rewritten request head does not fit");
			return;
		}
		memmove(c->cu + n, c->cu + c->http.head_len, rest);
		memcpy(c->cu, head, n);
		free(head);
		c->cu_off = 0;
		c->cu_len = n + rest;
		c->st = ST_RELAY;
	}
	if (c->st == ST_PEEK && c->cu_len > c->cu_off) {
		/* bytes sent after the request line, before the 200: the ClientHello */
		memmove(c->cu, c->cu + c->cu_off, c->cu_len - c->cu_off);
		c->cu_len -= c->cu_off;
		c->cu_off = 0;
		peek(p, c);
		if (c->cfd < 0)
			return;
	} else if (c->st == ST_PEEK) {
		c->cu_off = c->cu_len = 0;
	}
	if (c->st == ST_RELAY && !flush(c->ufd, c->cu, &c->cu_off, &c->cu_len, &c->up)) {
		c->error = "upstream-gone";
		conn_close(p, c);
		return;
	}
	arm(p, c);
}

/* ---- reading requests --------------------------------------------------------------------- */

static void on_http_head(struct proxy *p, struct conn *c)
{
	int rc = zsp_pp_http_parse((const char *)c->cu, c->cu_len, &c->http);
	if (rc == ZSP_PP_MORE) {
		if (c->c_eof)
			conn_close(p, c);
		return;
	}
	if (rc == ZSP_PP_ERROR) {
		/* the host is named only once authentication passed */
		c->host[0] = '\0';
		refuse(p, c, c->http.status, 0, c->http.error, c->http.detail);
		return;
	}
	if (p->cfg->secret && !(c->http.auth && zsp_pp_basic_ok(c->http.auth, c->http.auth_len, p->cfg->secret))) {
		refuse(p, c, 407, 0, "auth-required",
		       c->http.auth ? "wrong proxy credentials" : "proxy credentials required");
		return;
	}
	c->tunnel = c->http.connect;
	snprintf(c->host, sizeof(c->host), "%s", c->http.host);
	c->port = c->http.port;
	if (c->tunnel)
		c->cu_off = c->http.head_len;
	decide(p, c);
}

static void on_socks(struct proxy *p, struct conn *c)
{
	for (;;) {
		const unsigned char *b = c->cu + c->cu_off;
		size_t n = c->cu_len - c->cu_off, used = 0;
		int rc;
		if (c->st == ST_SGREET) {
			unsigned char m;
			rc = zsp_pp_socks_greeting(b, n, p->cfg->secret != NULL, &used, &m);
			if (rc == ZSP_PP_DONE) {
				unsigned char r[2] = {5, m};
				queue_client(c, r, 2);
				if (m == 0xFF) {
					logf_(p, "zsp-proxy: refused a SOCKS5 client: auth-required (no acceptable method)");
					finish(p, c, r, 2, "auth-required");
					return;
				}
				c->st = m == 2 ? ST_SAUTH : ST_SREQ;
			}
		} else if (c->st == ST_SAUTH) {
			bool ok = false;
			rc = zsp_pp_socks_auth(b, n, p->cfg->secret, &used, &ok);
			if (rc == ZSP_PP_DONE) {
				unsigned char r[2] = {1, ok ? 0 : 1};
				if (!ok) {
					logf_(p, "zsp-proxy: refused a SOCKS5 client: auth-required (wrong credentials)");
					finish(p, c, r, 2, "auth-required");
					return;
				}
				queue_client(c, r, 2);
				c->st = ST_SREQ;
			}
		} else {
			unsigned char code;
			const char *err;
			rc = zsp_pp_socks_request(b, n, &used, c->host, &c->port, &code, &err);
			if (rc == ZSP_PP_DONE) {
				c->cu_off += used;
				decide(p, c);
				return;
			}
			if (rc == ZSP_PP_ERROR) {
				c->host[0] = '\0';
				refuse(p, c, 0, code, err, "a SOCKS5 request the proxy does not serve");
				return;
			}
		}
		if (rc == ZSP_PP_ERROR) {
			logf_(p, "zsp-proxy: refused a SOCKS client: bad-request (malformed SOCKS5)");
			finish(p, c, "", 0, "bad-request");
			return;
		}
		if (rc == ZSP_PP_MORE) {
			if (c->c_eof)
				conn_close(p, c);
			return;
		}
		c->cu_off += used;
	}
}

static void on_request_bytes(struct proxy *p, struct conn *c)
{
	if (c->st == ST_FIRST && c->cu_len > 0) {
		if (c->cu[0] == 4) {   /* SOCKS4 and 4a: request rejected (0x5B) */
			static const unsigned char r[8] = {0, 0x5B};
			logf_(p, "zsp-proxy: refused a SOCKS4 client: socks4 (only SOCKS5 is served)");
			finish(p, c, r, sizeof(r), "socks4");
			return;
		}
		c->socks = c->cu[0] == 5;
		c->st = c->socks ? ST_SGREET : ST_HEAD;
	}
	if (c->st == ST_HEAD)
		on_http_head(p, c);
	else if (c->st != ST_FIRST)
		on_socks(p, c);
	else if (c->c_eof)
		conn_close(p, c);
}

/* The tunnel's first client bytes: a TLS ClientHello must name the host allowed. */
static void peek(struct proxy *p, struct conn *c)
{
	char sni[ZSP_HOST_MAX];
	const char *err = NULL;
	int rc = zsp_pp_tls_sni(c->cu, c->cu_len, sni, &err);
	if (rc == ZSP_PP_MORE && c->c_eof && c->cu_len == 0) {
		c->st = ST_RELAY;   /* the client sent nothing at all: nothing to check */
		return;
	}
	if (rc == ZSP_PP_MORE && !c->c_eof)
		return;
	if (rc == ZSP_PP_MORE)
		err = "tls-hello-incomplete";   /* the client left in the middle of it */
	if (rc == ZSP_PP_ERROR || rc == ZSP_PP_MORE || (rc == ZSP_TLS_SNI && strcmp(sni, c->host) != 0)) {
		logf_(p, "zsp-proxy: refused %s:%u: %s%s%s", c->host, c->port, err ? err : "sni-mismatch",
		      rc == ZSP_TLS_SNI ? ": the ClientHello names " : "", rc == ZSP_TLS_SNI ? sni : "");
		c->error = err ? err : "sni-mismatch";
		if (p->cfg->audit && p->cfg->audit->refused)
			p->cfg->audit->refused(p->cfg->audit->ctx, c->host, c->port, c->error, NULL);
		conn_close(p, c);   /* the tunnel's 200 is out: all that is left is to close it */
		return;
	}
	c->st = ST_RELAY;
}

/* ---- relaying ----------------------------------------------------------------------------- */

/* Moves bytes from the buffer to fd; false on an error that ends the connection. */
static bool flush(int fd, unsigned char *buf, size_t *off, size_t *len, unsigned long long *count)
{
	while (*off < *len) {
		ssize_t w = send(fd, buf + *off, *len - *off, MSG_NOSIGNAL);
		if (w < 0)
			return errno == EAGAIN || errno == EINTR;
		*off += (size_t)w;
		if (count)
			*count += (unsigned long long)w;
	}
	*off = *len = 0;
	return true;
}

/* Reads what fits; 1 read, 0 EOF, -1 error, 2 nothing now. */
static int fill(int fd, unsigned char *buf, size_t *len, size_t max)
{
	ssize_t r = recv(fd, buf + *len, max - *len, 0);
	if (r > 0) {
		*len += (size_t)r;
		return 1;
	}
	if (r == 0)
		return 0;
	return errno == EAGAIN || errno == EINTR ? 2 : -1;
}

/* Shuts a side's write half once its peer said EOF and everything was passed on. */
static void half_close(struct conn *c)
{
	if (c->c_eof && !c->u_shut && c->cu_len == c->cu_off && c->ufd >= 0 &&
	    (c->st == ST_RELAY)) {
		shutdown(c->ufd, SHUT_WR);
		c->u_shut = true;
	}
	if (c->u_eof && !c->c_shut && c->uc_len == c->uc_off) {
		shutdown(c->cfd, SHUT_WR);
		c->c_shut = true;
	}
}

static void on_client(struct proxy *p, struct conn *c, uint32_t ev)
{
	if ((ev & EPOLLERR) || ((ev & EPOLLHUP) && c->c_eof)) {
		c->error = c->error ? c->error : "client-gone";
		conn_close(p, c);
		return;
	}
	if (ev & EPOLLOUT) {
		bool counted = c->st == ST_RELAY || c->st == ST_PEEK;
		if (!flush(c->cfd, c->uc, &c->uc_off, &c->uc_len, counted ? &c->down : NULL)) {
			c->error = c->error ? c->error : "client-gone";
			conn_close(p, c);
			return;
		}
		if (c->st == ST_REPLY && c->uc_len == 0) {
			shutdown(c->cfd, SHUT_WR);
			c->st = ST_DRAIN;
			if (c->c_eof) {
				conn_close(p, c);
				return;
			}
		}
	}
	if (ev & (EPOLLIN | EPOLLHUP)) {
		if (c->st == ST_DRAIN || c->st == ST_REPLY) {
			unsigned char junk[4096];
			ssize_t r = recv(c->cfd, junk, sizeof(junk), 0);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				conn_close(p, c);
				return;
			}
		} else if (!c->c_eof) {
			if (c->st == ST_RELAY && c->cu_off == c->cu_len)
				c->cu_off = c->cu_len = 0;
			size_t max = reading_request(c) ? ZSP_PP_HEAD_MAX : BUF_SIZE;
			int r = c->cu_len < max ? fill(c->cfd, c->cu, &c->cu_len, max) : 2;
			if (r < 0) {
				c->error = "client-gone";
				conn_close(p, c);
				return;
			}
			if (r == 0)
				c->c_eof = true;
			if (reading_request(c))
				on_request_bytes(p, c);
			else if (c->st == ST_PEEK)
				peek(p, c);
			if (c->cfd < 0)
				return;
			if (c->st == ST_RELAY && c->ufd >= 0 &&
			    !flush(c->ufd, c->cu, &c->cu_off, &c->cu_len, &c->up)) {
				c->error = "upstream-gone";
				conn_close(p, c);
				return;
			}
		}
	}
	if (c->cfd < 0)
		return;
	if (c->st == ST_RELAY || c->st == ST_PEEK)
		c->deadline = now_ms() + p->idle_ms;
	half_close(c);
	if (c->c_shut && c->u_shut && c->c_eof && c->u_eof) {
		conn_close(p, c);
		return;
	}
	arm(p, c);
}

static void on_upstream(struct proxy *p, struct conn *c, uint32_t ev)
{
	if (c->st == ST_CONNECT) {
		connected(p, c);
		return;
	}
	if ((ev & EPOLLERR) || ((ev & EPOLLHUP) && c->u_eof)) {
		c->error = c->error ? c->error : "upstream-gone";
		conn_close(p, c);
		return;
	}
	if ((ev & EPOLLOUT) && !flush(c->ufd, c->cu, &c->cu_off, &c->cu_len, &c->up)) {
		c->error = "upstream-gone";
		conn_close(p, c);
		return;
	}
	if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->u_eof && c->uc_len == c->uc_off) {
		c->uc_off = c->uc_len = 0;
		int r = fill(c->ufd, c->uc, &c->uc_len, BUF_SIZE);
		if (r < 0) {
			c->error = "upstream-gone";
			conn_close(p, c);
			return;
		}
		if (r == 0)
			c->u_eof = true;
		if (!flush(c->cfd, c->uc, &c->uc_off, &c->uc_len, &c->down)) {
			c->error = "client-gone";
			conn_close(p, c);
			return;
		}
	}
	c->deadline = now_ms() + p->idle_ms;
	half_close(c);
	if (c->c_shut && c->u_shut && c->c_eof && c->u_eof) {
		conn_close(p, c);
		return;
	}
	arm(p, c);
}

static void check_deadlines(struct proxy *p)
{
	long long t = now_ms();
	for (unsigned i = 0; i < p->max_conns; i++) {
		struct conn *c = &p->slots[i];
		if (c->cfd < 0 || c->deadline > t)
			continue;
		if (c->st == ST_HEAD || c->st == ST_FIRST) {
			c->host[0] = '\0';
			refuse(p, c, 408, 0, "header-timeout", "the request head did not come in time");
		} else if (c->st == ST_CONNECT || c->st == ST_RESOLVE) {
			refuse(p, c, 504, ZSP_SOCKS_HOST_UNREACH, "connect-timeout", "the upstream did not answer in time");
		} else {
			c->error = c->st == ST_RELAY || c->st == ST_PEEK ? "idle-timeout" : "timeout";
			conn_close(p, c);
		}
	}
	if (p->listen_paused && p->nconns < p->max_conns) {
		for (size_t i = 0; i < p->cfg->nlisteners; i++) {
			struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &p->ltags[i]};
			epoll_ctl(p->ep, EPOLL_CTL_ADD, p->ltags[i].fd, &ev);
		}
		p->listen_paused = false;
	}
}

/* ---- the loop ----------------------------------------------------------------------------- */

static int setup(struct proxy *p, const zsp_proxy_cfg *cfg, int stop_fd, char *err, size_t errlen)
{
	p->cfg = cfg;
	p->max_conns = cfg->max_conns ? cfg->max_conns : DEFAULT_MAX_CONNS;
	p->idle_ms = cfg->idle_timeout_ms > 0 ? cfg->idle_timeout_ms : DEFAULT_IDLE_MS;
	p->header_ms = cfg->header_timeout_ms > 0 ? cfg->header_timeout_ms : DEFAULT_HEADER_MS;
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	p->res_pipe[0] = p->res_pipe[1] = -1;
	p->arena = zsp_arena_new();
	p->slots = calloc(p->max_conns, sizeof(*p->slots));
	p->ltags = calloc(cfg->nlisteners ? cfg->nlisteners : 1, sizeof(*p->ltags));
	if (p->ep < 0 || !p->arena || !p->slots || !p->ltags || pipe2(p->res_pipe, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "zsp-proxy: cannot set up: %s", strerror(errno ? errno : ENOMEM));
		return ZSP_EINTERNAL;
	}
	for (unsigned i = p->max_conns; i-- > 0;) {
		p->slots[i].cfd = p->slots[i].ufd = -1;
		p->slots[i].gen = 1;
		p->slots[i].next_free = p->free;
		p->free = &p->slots[i];
	}
	for (size_t i = 0; i < cfg->nlisteners; i++) {
		p->ltags[i] = (struct tag){K_LISTEN, NULL, cfg->listeners[i]};
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &p->ltags[i]};
		if (epoll_ctl(p->ep, EPOLL_CTL_ADD, cfg->listeners[i], &ev) != 0) {
			snprintf(err, errlen, "zsp-proxy: listener %d: %s", cfg->listeners[i], strerror(errno));
			return ZSP_EUSAGE;
		}
	}
	p->stop_tag = (struct tag){K_STOP, NULL, stop_fd};
	p->res_tag = (struct tag){K_RESOLVER, NULL, p->res_pipe[0]};
	struct epoll_event sev = {.events = EPOLLIN, .data.ptr = &p->stop_tag};
	struct epoll_event rev = {.events = EPOLLIN, .data.ptr = &p->res_tag};
	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, stop_fd, &sev) != 0 ||
	    epoll_ctl(p->ep, EPOLL_CTL_ADD, p->res_pipe[0], &rev) != 0) {
		snprintf(err, errlen, "zsp-proxy: stop descriptor %d: %s", stop_fd, strerror(errno));
		return ZSP_EUSAGE;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->res_thread, NULL, resolver_main, p) != 0) {
		snprintf(err, errlen, "zsp-proxy: cannot start the resolver thread");
		return ZSP_EINTERNAL;
	}
	p->res_started = true;
	return ZSP_OK;
}

static void teardown(struct proxy *p)
{
	if (p->slots)
		for (unsigned i = 0; i < p->max_conns; i++)
			if (p->slots[i].cfd >= 0) {
				p->slots[i].error = "proxy-stopped";
				conn_close(p, &p->slots[i]);
			}
	if (p->res_started) {
		pthread_mutex_lock(&p->mu);
		p->res_stop = true;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->res_thread, NULL);
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	}
	for (struct job *j = p->jobs, *n; j; j = n) {
		n = j->next;
		free(j);
	}
	if (p->res_pipe[0] >= 0) {
		struct job *j;
		fcntl(p->res_pipe[0], F_SETFL, O_NONBLOCK);
		while (read(p->res_pipe[0], &j, sizeof(j)) == sizeof(j))
			free(j);
		close(p->res_pipe[0]);
		close(p->res_pipe[1]);
	}
	if (p->ep >= 0)
		close(p->ep);
	free(p->slots);
	free(p->ltags);
	if (p->arena)
		zsp_arena_free(p->arena);
}

int zsp_proxy_serve(const zsp_proxy_cfg *cfg, int stop_fd, char *err, size_t errlen)
{
	if (!cfg || !cfg->oracle || (cfg->nlisteners && !cfg->listeners) || (cfg->npins && !cfg->pins)) {
		snprintf(err, errlen, "zsp-proxy: no oracle or listeners");
		return ZSP_EUSAGE;
	}
	struct proxy p = {.ep = -1};
	int rc = setup(&p, cfg, stop_fd, err, errlen);
	long long next_tick = now_ms() + TICK_MS;
	struct epoll_event evs[64];
	while (rc == ZSP_OK) {
		int n = epoll_wait(p.ep, evs, 64, p.nconns ? TICK_MS : -1);
		if (n < 0 && errno != EINTR) {
			snprintf(err, errlen, "zsp-proxy: epoll_wait: %s", strerror(errno));
			rc = ZSP_EINTERNAL;
			break;
		}
		bool stop = false;
		for (int i = 0; i < n; i++) {
			struct tag *t = evs[i].data.ptr;
			if (t->kind == K_STOP) {
				stop = true;
			} else if (t->kind == K_LISTEN) {
				accept_all(&p, t->fd);
			} else if (t->kind == K_RESOLVER) {
				struct job *j;
				if (read(p.res_pipe[0], &j, sizeof(j)) == sizeof(j))
					resolved(&p, j);
			} else {
				/* an earlier event of this batch may have closed it (or reused the slot:
				 * the fd then no longer matches the tag's) */
				struct conn *c = t->c;
				int fd = t->kind == K_CLIENT ? c->cfd : c->ufd;
				if (fd < 0 || fd != t->fd)
					continue;
				if (t->kind == K_CLIENT)
					on_client(&p, c, evs[i].events);
				else
					on_upstream(&p, c, evs[i].events);
			}
		}
		if (stop)
			break;
		if (now_ms() >= next_tick) {
			check_deadlines(&p);
			next_tick = now_ms() + TICK_MS;
		}
	}
	teardown(&p);
	return rc;
}
