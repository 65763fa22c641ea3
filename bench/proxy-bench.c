/* proxy-bench.c: the egress proxy's cost (runtime/proxy.c), in one process and one run: the
 * proxy on its own thread, a sink and echo server on 127.0.0.1, and the client. Reports
 * throughput through a CONNECT tunnel against a direct loopback transfer of the same bytes (the
 * ratio), the connect latency the proxy adds (p50, p99 of connect + CONNECT + one echoed byte,
 * against connect + one echoed byte), tunnels per second, and memory per open tunnel.
 * Usage: proxy-bench [-b MiB] [-n LATENCY_SAMPLES] [-k OPEN_TUNNELS] */
#define _GNU_SOURCE   /* accept4 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "compiler/oracle.h"
#include "runtime/proxy.h"

static void die(const char *what)
{
	fprintf(stderr, "proxy-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int listener(unsigned *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&a, &l))
		die("listen");
	*port = ntohs(a.sin_port);
	return fd;
}

static int dial(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	return fd;
}

/* The upstream: a first byte 'E' makes the connection an echo, anything else a sink that
 * answers one byte at EOF. */
#define BUF (256 * 1024)

static void *serve_one(void *arg)
{
	int fd = (int)(long)arg;
	char *buf = malloc(BUF);
	ssize_t n = buf ? read(fd, buf, BUF) : -1;
	bool echo = n > 0 && buf[0] == 'E';
	while (n > 0) {
		if (echo && write(fd, buf, (size_t)n) != n)
			break;
		n = read(fd, buf, BUF);
	}
	free(buf);
	if (!echo && write(fd, "k", 1) != 1)
		(void)0;
	close(fd);
	return NULL;
}

static void *upstream_main(void *arg)
{
	int lfd = (int)(long)arg;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 64 * 1024);
		if (pthread_create(&t, &at, serve_one, (void *)(long)fd))
			close(fd);
		pthread_attr_destroy(&at);
	}
	return NULL;
}

struct served {
	zsp_proxy_cfg cfg;
	int stop[2];
};

static void *proxy_main(void *arg)
{
	struct served *s = arg;
	char err[256];
	if (zsp_proxy_serve(&s->cfg, s->stop[0], err, sizeof(err)) != ZSP_OK)
		fprintf(stderr, "%s\n", err);
	return NULL;
}

static unsigned up_port;

/* A tunnel to the upstream through the proxy on port. */
static int tunnel(unsigned port)
{
	int fd = dial(port);
	char req[256];
	int n = snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n"
			 "Proxy-Authorization: Basic enNwOmJlbmNoLXNlY3JldC0wMTIzNDU2Nzg5\r\n\r\n", up_port);
	if (write(fd, req, (size_t)n) != n)
		die("write");
	char r[256];
	size_t got = 0;
	while (got < 4 || memcmp(r + got - 4, "\r\n\r\n", 4) != 0) {
		ssize_t k = read(fd, r + got, 1);
		if (k <= 0 || ++got == sizeof(r))
			die("CONNECT answer");
	}
	if (strncmp(r, "HTTP/1.1 200", 12) != 0) {
		fprintf(stderr, "proxy-bench: CONNECT refused: %.*s\n", (int)got, r);
		exit(1);
	}
	return fd;
}

static double transfer(int fd, size_t total)
{
	static char buf[256 * 1024];
	memset(buf, 'x', sizeof(buf));
	double t0 = now();
	for (size_t sent = 0; sent < total;) {
		size_t n = total - sent < sizeof(buf) ? total - sent : sizeof(buf);
		ssize_t w = write(fd, buf, n);
		if (w <= 0)
			die("write");
		sent += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	char k;
	if (read(fd, &k, 1) != 1)
		die("sink answer");
	double t = now() - t0;
	close(fd);
	return t;
}

static double round_trip(int fd)
{
	char c = 'E';
	if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
		die("echo");
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, res = 0;
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
	size_t mib = 1024;
	int samples = 2000, open_n = 500;
	for (int c; (c = getopt(argc, argv, "b:n:k:")) != -1;) {
		if (c == 'b')
			mib = strtoul(optarg, NULL, 10);
		else if (c == 'n')
			samples = atoi(optarg);
		else if (c == 'k')
			open_n = atoi(optarg);
		else
			return 2;
	}
	int ulfd = listener(&up_port);
	pthread_t ut;
	pthread_create(&ut, NULL, upstream_main, (void *)(long)ulfd);

	char policy[256];
	snprintf(policy, sizeof(policy), "zsp 1;\npolicy \"b\" { net { mode proxy; allow \"127.0.0.1:%u\"; } }\n", up_port);
	zsp_compiler *cc = zsp_compiler_new();
	zsp_policy_set *set = NULL;
	if (!cc || zsp_compile_buffer(cc, "bench.zsp", policy, strlen(policy), &set) != ZSP_OK)
		die("policy");
	zsp_compiler_free(cc);
	const zsp_ir_policy *p = zsp_ir_pick_policy(zsp_policy_set_ir(set), NULL);
	zsp_oracle_env env = {0};
	zsp_oracle *o = zsp_oracle_new(p, &env);
	unsigned pport;
	int plfd = listener(&pport);
	struct served s = {.cfg = {.oracle = o, .listeners = &plfd, .nlisteners = 1,
				   .secret = "bench-secret-0123456789", .log_fd = 2,
				   .max_conns = (unsigned)open_n + 64}};
	if (pipe(s.stop))
		die("pipe");
	/* the proxy wants a non-blocking listener */
	if (fcntl(plfd, F_SETFL, fcntl(plfd, F_GETFL) | O_NONBLOCK) != 0)
		die("fcntl");
	pthread_t pt;
	pthread_create(&pt, NULL, proxy_main, &s);

	size_t total = mib << 20;
	/* alternated, best of three each: the machine is shared, the first run warms it */
	double direct = 1e9, proxied = 1e9;
	for (int r = 0; r < 3; r++) {
		double t = transfer(dial(up_port), total);
		direct = t < direct ? t : direct;
		t = transfer(tunnel(pport), total);
		proxied = t < proxied ? t : proxied;
	}
	printf("throughput, %zu MiB, best of 3: direct %.0f MiB/s, through the proxy %.0f MiB/s: %.0f%% of direct\n",
	       mib, mib / direct, mib / proxied, 100 * direct / proxied);

	double *d = malloc(sizeof(double) * (size_t)samples), *q = malloc(sizeof(double) * (size_t)samples);
	for (int i = 0; i < samples; i++) {
		double t0 = now();
		int fd = dial(up_port);
		round_trip(fd);
		d[i] = now() - t0;
		close(fd);
		t0 = now();
		fd = tunnel(pport);
		round_trip(fd);
		q[i] = now() - t0;
		close(fd);
	}
	qsort(d, (size_t)samples, sizeof(double), cmp);
	qsort(q, (size_t)samples, sizeof(double), cmp);
	int p50 = samples / 2, p99 = samples * 99 / 100;
	printf("connect + first byte, %d samples: direct p50 %.0f us p99 %.0f us; through the proxy p50 %.0f us "
	       "p99 %.0f us; added p50 %.0f us p99 %.0f us\n", samples, d[p50] * 1e6, d[p99] * 1e6, q[p50] * 1e6,
	       q[p99] * 1e6, (q[p50] - d[p50]) * 1e6, (q[p99] - d[p99]) * 1e6);

	double t0 = now();
	int conns = 0;
	while (now() - t0 < 2.0) {
		int fd = tunnel(pport);
		close(fd);
		conns++;
	}
	printf("tunnels opened and closed one after another: %.0f per second\n", conns / (now() - t0));

	usleep(300 * 1000);
	long before = rss_kib();
	int *held = malloc(sizeof(int) * (size_t)open_n);
	for (int i = 0; i < open_n; i++) {
		held[i] = tunnel(pport);
		round_trip(held[i]);
	}
	long after = rss_kib();
	printf("memory: %d open tunnels add %ld KiB to the process (proxy, upstream threads and client): "
	       "%.1f KiB each (the proxy maps 2 x 256 KiB of buffers per connection, touched as used)\n", open_n, after - before,
	       (double)(after - before) / open_n);
	for (int i = 0; i < open_n; i++)
		close(held[i]);
	close(s.stop[1]);
	pthread_join(pt, NULL);
	zsp_oracle_free(o);
	zsp_policy_set_free(set);
	return 0;
}
