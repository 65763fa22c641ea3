/* zsp-proxy: the egress proxy of runtime/proxy.c as a program (doc/proxy.md), for macOS, where
 * no zsp-run starts it, and for tests. Listens on the host's loopback only, prints the URL a
 * client uses (the secret in it) and serves until SIGINT or SIGTERM. */
#define _GNU_SOURCE   /* pipe2 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "compiler/host.h"
#include "compiler/ir.h"
#include "compiler/oracle.h"
#include "lang/source.h"
#include "lang/buf.h"
#include "runtime/cli.h"
#include "runtime/decide.h"
#include "runtime/proxy.h"
#include "runtime/store.h"

static const char usage_text[] =
	"Usage: zsp-proxy [-D NAME=VALUE]... [--listen ADDR:PORT] [--resolve HOST:PORT:ADDR]...\n"
	"                 [--secret-file FILE | --no-auth] [--policy NAME] [--max-conns N]\n"
	"                 [--idle-timeout MS] [--header-timeout MS] [--record [--state-dir DIR]] POLICY\n"
	"Serves `net { mode proxy; }` of POLICY as an HTTP and SOCKS5 proxy on the loopback\n"
	"(default 127.0.0.1:0, a free port) and prints the URL to use, with its secret, on stdout.\n"
	"Without --secret-file a random secret is made. doc/proxy.md says what it refuses.\n";

static int stop_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
	(void)sig;
	char b = 1;
	ssize_t w = write(stop_pipe[1], &b, 1);
	(void)w;
}

/* ADDR:PORT with ADDR 127.x.y.z or [::1], PORT 0-65535 (0: any free port). */
static bool parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	const char *colon = strrchr(s, ':');
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) || strlen(colon + 1) > 5)
		return false;
	long port = strtol(colon + 1, NULL, 10);
	if (port > 65535)
		return false;
	char addr[64];
	size_t n = (size_t)(colon - s);
	if (n >= sizeof(addr))
		return false;
	memcpy(addr, s, n);
	addr[n] = '\0';
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		if ((ntohl(s4->sin_addr.s_addr) >> 24) != 127)
			return false;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		return true;
	}
	if (n > 2 && addr[0] == '[' && addr[n - 1] == ']') {
		addr[n - 1] = '\0';
		if (inet_pton(AF_INET6, addr + 1, &s6->sin6_addr) == 1 && IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr)) {
			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons((uint16_t)port);
			*len = sizeof(*s6);
			return true;
		}
	}
	return false;
}

/* HOST:PORT:ADDR (ADDR an IPv4 address, or IPv6 with or without brackets). */
static bool parse_pin(const char *s, zsp_proxy_pin *pin)
{
	const char *c1 = s[0] == '[' ? strstr(s, "]:") : strchr(s, ':');
	if (s[0] == '[' && c1)
		c1++;
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c1 || !c2)
		return false;
	char hp[ZSP_HOSTPORT_INPUT_MAX + 1], host[ZSP_HOST_MAX];
	size_t n = (size_t)(c2 - s);
	if (n >= sizeof(hp))
		return false;
	memcpy(hp, s, n);
	hp[n] = '\0';
	zsp_host_kind kind;
	zsp_host_error e;
	if (!zsp_hostport_parse(hp, 0, host, &kind, &pin->port, &e))
		return false;
	pin->host = strdup(host);
	char addr[64];
	snprintf(addr, sizeof(addr), "%s", c2 + 1);
	size_t al = strlen(addr);
	if (al > 2 && addr[0] == '[' && addr[al - 1] == ']') {
		memmove(addr, addr + 1, al - 2);
		addr[al - 2] = '\0';
	}
	memset(&pin->addr, 0, sizeof(pin->addr));
	struct sockaddr_in *s4 = (struct sockaddr_in *)&pin->addr;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&pin->addr;
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)pin->port);
		pin->addrlen = sizeof(*s4);
	} else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)pin->port);
		pin->addrlen = sizeof(*s6);
	} else {
		return false;
	}
	return pin->host != NULL;
}

/* The secret goes into a URL: 16 to 256 bytes of [A-Za-z0-9._~-]. */
static char *read_secret(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f)
		zsp_die(ZSP_ENOINPUT, "%s: %s", file, strerror(errno));
	char buf[300];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	n = strlen(buf);
	if (n < 16 || n > 256 || strspn(buf, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-") != n)
		zsp_die(ZSP_EUSAGE, "%s: the secret must be one line of 16 to 256 letters, digits or ._~-", file);
	char *s = strdup(buf);
	if (!s)
		zsp_die_oom();
	return s;
}

static char *random_secret(void)
{
	unsigned char r[16];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		zsp_die(ZSP_EINTERNAL, "getrandom: %s", strerror(errno));
	char *s = malloc(33);
	if (!s)
		zsp_die_oom();
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(s + 2 * i, 3, "%02x", r[i]);
	return s;
}

/* $ZSP_PROXY_HOSTS (test builds): lines "NAME ADDR" answering lookups instead of DNS. */
static zsp_proxy_pin *read_lookup(const char *file, size_t *n)
{
	FILE *f = fopen(file, "r");
	if (!f)
		zsp_die(ZSP_ENOINPUT, "%s: %s", file, strerror(errno));
	zsp_proxy_pin *pins = NULL;
	size_t cap = 0;
	char line[512];
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		char name[300], addr[80], spec[400];
		if (line[0] == '#' || sscanf(line, "%299s %79s", name, addr) != 2)
			continue;
		snprintf(spec, sizeof(spec), "%s:1:%s", name, addr);
		if (!zsp_array_reserve(&pins, &cap, *n + 1, sizeof(*pins)))
			zsp_die_oom();
		if (!parse_pin(spec, &pins[*n]))
			zsp_die(ZSP_EUSAGE, "%s: not NAME ADDR: %s", file, line);
		(*n)++;
	}
	fclose(f);
	/* an empty file still replaces DNS: every name then fails */
	if (!pins && !(pins = calloc(1, sizeof(*pins))))
		zsp_die_oom();
	return pins;
}

/* --record: each decision goes to the audit trail (runtime/store.h), as zspc --query --record
 * writes its own. The trail has no columns for the address, the bytes or the duration yet:
 * those go to stderr, one line per connection (doc/proxy.md "Audit"). */
struct recorder {
	zsp_store *store;
	const char *policy;
	char hash[65];
	long long next;
};

static int record(struct recorder *r, const char *host, unsigned port, int answer, const char *reason,
		  const zsp_verdict *v)
{
	char req[ZSP_HOST_MAX + 32], rule[512] = "";
	snprintf(req, sizeof(req), "connect \"%s:%u\"", host, port);
	if (v && v->loc.src) {
		unsigned line, col;
		zsp_source_position(v->loc.src, v->loc.begin, &line, &col);
		snprintf(rule, sizeof(rule), "%s:%u:%u", v->loc.src->path, line, col);
	}
	zsp_audit_record a = {.request = req, .decision = answer, .reason = reason,
			      .rule = rule[0] ? rule : NULL, .policy = r->policy, .policy_hash = r->hash,
			      .who = zsp_decider_user()};
	char err[256];
	if (zsp_store_audit(r->store, &a, err, sizeof(err)) != ZSP_OK) {
		zsp_warn("cannot record %s: %s", req, err);
		return -1;
	}
	return 0;
}

static long long rec_begin(void *ctx, const char *host, unsigned port, const char *addr, const zsp_verdict *v)
{
	struct recorder *r = ctx;
	if (record(r, host, port, ZSP_ANSWER_ALLOW, v->reason, v) != 0)
		return 0;   /* the proxy then refuses: fail closed */
	long long id = ++r->next;
	fprintf(stderr, "zsp-proxy: #%lld %s:%u: connecting to %s\n", id, host, port, addr);
	return id;
}

static void rec_end(void *ctx, long long id, unsigned long long up, unsigned long long down, long long ms,
		    const char *error)
{
	(void)ctx;
	fprintf(stderr, "zsp-proxy: #%lld closed: %llu bytes up, %llu down, %lld ms%s%s\n", id, up, down, ms,
		error ? ", " : "", error ? error : "");
}

static void rec_refused(void *ctx, const char *host, unsigned port, const char *reason, const zsp_verdict *v)
{
	record(ctx, host, port, ZSP_ANSWER_DENY, reason, v);
}

struct opts {
	zsp_cli_compile cc;
	const char *listen, *secret_file, *policy, *file;
	bool no_auth, record;
	const char *state_dir;
	unsigned max_conns;
	int idle_ms, header_ms;
	zsp_proxy_pin *pins;
	size_t npins;
};

static void parse_args(int argc, char **argv, struct opts *o)
{
	zsp_cli_compile_init(&o->cc, argc);
	o->pins = calloc((size_t)argc, sizeof(*o->pins));
	if (!o->pins)
		zsp_die_oom();
	o->listen = "127.0.0.1:0";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = !strcmp(a, "-D") || !strcmp(a, "--listen") || !strcmp(a, "--resolve") ||
			     !strcmp(a, "--secret-file") || !strcmp(a, "--policy") || !strcmp(a, "--max-conns") ||
			     !strcmp(a, "--idle-timeout") || !strcmp(a, "--header-timeout") ||
			     !strcmp(a, "--state-dir");
		if (takes && !v)
			exit(zsp_usage_error("%s needs a value", a));
		if (!strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			exit(0);
		} else if (!strcmp(a, "-D")) {
			if (zsp_cli_define(&o->cc, argv[++i]) != ZSP_OK)
				exit(ZSP_EUSAGE);
		} else if (!strncmp(a, "-D", 2)) {
			if (zsp_cli_define(&o->cc, argv[i] + 2) != ZSP_OK)
				exit(ZSP_EUSAGE);
		} else if (!strcmp(a, "--listen")) {
			o->listen = argv[++i];
		} else if (!strcmp(a, "--resolve")) {
			if (!parse_pin(argv[++i], &o->pins[o->npins++]))
				exit(zsp_usage_error("--resolve %s: not HOST:PORT:ADDR", argv[i]));
		} else if (!strcmp(a, "--secret-file")) {
			o->secret_file = argv[++i];
		} else if (!strcmp(a, "--record")) {
			o->record = true;
		} else if (!strcmp(a, "--state-dir")) {
			o->state_dir = argv[++i];
		} else if (!strcmp(a, "--no-auth")) {
			o->no_auth = true;
		} else if (!strcmp(a, "--policy")) {
			o->policy = argv[++i];
		} else if (!strcmp(a, "--max-conns")) {
			char *end;
			long n = strtol(argv[++i], &end, 10);
			if (*end || n < 1 || n > 100000)
				exit(zsp_usage_error("--max-conns %s: not 1 to 100000", argv[i]));
			o->max_conns = (unsigned)n;
		} else if (!strcmp(a, "--idle-timeout") || !strcmp(a, "--header-timeout")) {
			char *end;
			long n = strtol(argv[++i], &end, 10);
			if (*end || n < 1 || n > 86400000)
				exit(zsp_usage_error("%s %s: not 1 to 86400000 ms", a, argv[i]));
			*(a[2] == 'i' ? &o->idle_ms : &o->header_ms) = (int)n;
		} else if (a[0] == '-' && a[1]) {
			exit(zsp_usage_error("unknown option %s", a));
		} else if (o->file) {
			exit(zsp_usage_error("one POLICY file"));
		} else {
			o->file = a;
		}
	}
	if (!o->file)
		exit(zsp_usage_error("no POLICY file"));
	if (o->no_auth && o->secret_file)
		exit(zsp_usage_error("--secret-file and --no-auth exclude each other"));
}

static int listen_on(const char *spec, char *url_host, size_t cap, unsigned *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (!parse_listen(spec, &ss, &len))
		exit(zsp_usage_error("--listen %s: not 127.x.y.z:PORT or [::1]:PORT (only the loopback)", spec));
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 512) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		zsp_die(ZSP_ECANTCREAT, "--listen %s: %s", spec, strerror(errno));
	char a[64];
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
		snprintf(url_host, cap, "%s", a);
		*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
		snprintf(url_host, cap, "[%s]", a);
		*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return fd;
}

int main(int argc, char **argv)
{
	zsp_cli_init("zsp-proxy");
	struct opts o = {0};
	parse_args(argc, argv, &o);
	zsp_builtin_params b;
	zsp_cli_builtins(&b, &o.cc, NULL);
	zsp_compiler *c = zsp_cli_compiler(&o.cc, NULL, &b);
	zsp_policy_set *set = NULL;
	int rc = zsp_compile_file(c, o.file, &set);
	zsp_cli_summary(c);
	zsp_compiler_free(c);
	if (rc != ZSP_OK)
		return rc;
	const zsp_ir_policy *p = zsp_cli_pick_policy(zsp_policy_set_ir(set), o.policy);
	if (!p)
		return ZSP_EUSAGE;
	if (p->net_mode != ZSP_NET_PROXY)
		zsp_warn("policy %s has `mode %s`, not `mode proxy`: its host rules still decide here", p->name,
			 zsp_net_mode_name(p->net_mode));
	zsp_oracle_env env = {0};
	zsp_oracle *oracle = zsp_oracle_new(p, &env);
	if (!oracle)
		zsp_die_oom();
	char *secret = o.no_auth ? NULL : o.secret_file ? read_secret(o.secret_file) : random_secret();
	char host[80];
	unsigned port;
	int lfd = listen_on(o.listen, host, sizeof(host), &port);
	if (pipe2(stop_pipe, O_CLOEXEC) != 0)
		zsp_die(ZSP_EINTERNAL, "pipe: %s", strerror(errno));
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (secret)
		printf("http://zsp:%s@%s:%u\n", secret, host, port);
	else
		printf("http://%s:%u\n", host, port);
	fflush(stdout);
	const char *hosts = zsp_cli_test_override("ZSP_PROXY_HOSTS");
	size_t nlookup = 0;
	zsp_proxy_pin *lookup = hosts ? read_lookup(hosts, &nlookup) : NULL;
	struct recorder rec = {.policy = p->name};
	zsp_proxy_audit audit = {.ctx = &rec, .begin = rec_begin, .end = rec_end, .refused = rec_refused};
	if (o.record) {
		zsp_store_where where = {o.state_dir, NULL, true};
		char serr[512];
		if (zsp_store_open(&where, &rec.store, serr, sizeof(serr)) != ZSP_OK)
			zsp_die(ZSP_EIO, "%s", serr);
		if (zsp_policy_hash(zsp_policy_set_ir(set), p, rec.hash) != ZSP_OK)
			zsp_die_oom();
	}
	zsp_proxy_cfg cfg = {
		.oracle = oracle, .listeners = &lfd, .nlisteners = 1, .secret = secret,
		.audit = o.record ? &audit : NULL, .pins = o.pins, .npins = o.npins, .max_conns = o.max_conns, .log_fd = 2, .policy = p->name,
		.lookup = lookup, .nlookup = nlookup,
		.idle_timeout_ms = o.idle_ms, .header_timeout_ms = o.header_ms,
	};
	char err[256] = "";
	rc = zsp_proxy_serve(&cfg, stop_pipe[0], err, sizeof(err));
	if (rc != ZSP_OK)
		fprintf(stderr, "%s\n", err);
	close(lfd);
	free(secret);
	for (size_t i = 0; i < o.npins; i++)
		free((char *)o.pins[i].host);
	free(o.pins);
	for (size_t i = 0; i < nlookup; i++)
		free((char *)lookup[i].host);
	free(lookup);
	if (rec.store)
		zsp_store_close(rec.store);
	zsp_oracle_free(oracle);
	zsp_policy_set_free(set);
	zsp_cli_compile_free(&o.cc);
	return rc;
}
