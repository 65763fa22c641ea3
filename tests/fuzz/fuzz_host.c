/* fuzz_host.c: a libFuzzer target for compiler/host.c, the parser that reads the hosts agents
 * and sandboxed commands name. Each input is canonicalized as a host (as a request and as a rule)
 * and as HOST:PORT. An accepted host must be in its canonical form already (canonicalizing it
 * again gives the same text and kind), and be what its kind says: a name of [a-z0-9_-] labels
 * that does not end in a number, a dotted quad glibc reads back as itself, bracketed RFC 5952
 * text that inet_ntop writes the same; an IPv4 address read from a name must be what glibc's
 * inet_aton reads. A refusal must name its error and point inside the input. Matching a rule
 * made from the input against a host made from it must follow the rules of zsp_host_matches. */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/host.h"
#include "tests/fuzz/fuzz.h"

static void check_error(const zsp_host_error *e, size_t len)
{
	if (!e->code || strncmp(e->code, "host-", 5) != 0 || !e->msg || !e->msg[0] || e->len == 0)
		abort();
	if (len ? e->off + e->len > len : e->off != 0)
		abort();
	if (!memchr(e->hint, '\0', sizeof(e->hint)))
		abort();
}

static bool is_number_label(const char *l)
{
	size_t n = strlen(l);
	if (n >= 2 && l[0] == '0' && l[1] == 'x')
		return strspn(l + 2, "0123456789abcdef") == n - 2;
	return n && strspn(l, "0123456789") == n;
}

static void check_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253 || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != n)
		abort();
	for (const char *l = s;;) {
		size_t ll = strcspn(l, ".");
		if (ll == 0 || ll > 63 || l[0] == '-' || l[ll - 1] == '-')
			abort();
		if (!l[ll]) {
			if (is_number_label(l))
				abort();
			break;
		}
		l += ll + 1;
	}
}

static void check_host(const char *in, size_t len, unsigned flags, const char *out, zsp_host_kind kind)
{
	size_t n = strnlen(out, ZSP_HOST_MAX);
	if (n == ZSP_HOST_MAX || n == 0)
		abort();
	char again[ZSP_HOST_MAX];
	zsp_host_kind k2;
	zsp_host_error e;
	if (!zsp_host_canon(out, n, flags, again, &k2, &e) || strcmp(again, out) != 0 || k2 != kind)
		abort();
	switch (kind) {
	case ZSP_HOST_NAME:
		check_name(out);
		break;
	case ZSP_HOST_IPV4: {
		struct in_addr a;
		char back[INET_ADDRSTRLEN];
		if (inet_pton(AF_INET, out, &a) != 1 || !inet_ntop(AF_INET, &a, back, sizeof(back)) ||
		    strcmp(back, out) != 0)
			abort();
		/* read from a name: glibc's inet_aton reads the same address */
		if (in && in[0] != '[') {
			char text[ZSP_HOSTPORT_INPUT_MAX + 1];
			memcpy(text, in, len);
			text[len] = '\0';
			if (len && text[len - 1] == '.')
				text[len - 1] = '\0';
			struct in_addr g;
			if (inet_aton(text, &g) != 1 || g.s_addr != a.s_addr)
				abort();
		}
		break;
	}
	case ZSP_HOST_IPV6: {
		unsigned char b[16];
		char inner[INET6_ADDRSTRLEN], back[INET6_ADDRSTRLEN];
		if (out[0] != '[' || out[n - 1] != ']' || n - 2 >= sizeof(inner))
			abort();
		memcpy(inner, out + 1, n - 2);
		inner[n - 2] = '\0';
		if (inet_pton(AF_INET6, inner, b) != 1 || !inet_ntop(AF_INET6, b, back, sizeof(back)) ||
		    strcmp(back, inner) != 0)
			abort();
		break;
	}
	case ZSP_HOST_ANY:
		if (!(flags & ZSP_HOST_WILDCARD) || strcmp(out, "*") != 0)
			abort();
		break;
	case ZSP_HOST_SUBDOMAINS:
		if (!(flags & ZSP_HOST_WILDCARD) || strncmp(out, "*.", 2) != 0)
			abort();
		check_name(out + 2);
		break;
	default:
		abort();
	}
}

static void one_host(const char *s, size_t len, unsigned flags, char *out, zsp_host_kind *kind, bool *ok)
{
	zsp_host_error e;
	*ok = zsp_host_canon(s, len, flags, out, kind, &e);
	if (*ok)
		check_host(s, len, flags, out, *kind);
	else
		check_error(&e, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > ZSP_HOSTPORT_INPUT_MAX + 16)
		return 0;
	char s[ZSP_HOSTPORT_INPUT_MAX + 17];
	memcpy(s, data, size);
	s[size] = '\0';
	char req[ZSP_HOST_MAX], rule[ZSP_HOST_MAX];
	zsp_host_kind rk, wk;
	bool req_ok, rule_ok;
	one_host(s, size, 0, req, &rk, &req_ok);
	one_host(s, size, ZSP_HOST_WILDCARD | ZSP_HOST_PORT_ANY, rule, &wk, &rule_ok);
	/* the wildcard flag only adds `*` and `*.name`: a request host is a rule host too */
	if (req_ok && (!rule_ok || strcmp(req, rule) != 0))
		abort();

	/* HOST:PORT: accepted ones print and read back the same */
	size_t n = strlen(s);
	for (unsigned flags = 0; flags <= (ZSP_HOST_WILDCARD | ZSP_HOST_PORT_ANY); flags += 3) {
		char host[ZSP_HOST_MAX], text[ZSP_HOST_MAX + 8], host2[ZSP_HOST_MAX];
		zsp_host_kind k, k2;
		unsigned port, port2;
		zsp_host_error e;
		if (!zsp_hostport_parse(s, flags, host, &k, &port, &e)) {
			check_error(&e, n);
			continue;
		}
		check_host(NULL, 0, flags, host, k);
		if (port > 65535 || (port == 0 && !(flags & ZSP_HOST_PORT_ANY)))
			abort();
		if (port)
			snprintf(text, sizeof(text), "%s:%u", host, port);
		else
			snprintf(text, sizeof(text), "%s:*", host);
		if (!zsp_hostport_parse(text, flags, host2, &k2, &port2, &e) || strcmp(host, host2) != 0 ||
		    port != port2 || k != k2)
			abort();
	}

	/* matching: a rule made from one half of the input, a host from the other */
	size_t half = size / 2;
	char h[ZSP_HOST_MAX], r[ZSP_HOST_MAX];
	zsp_host_kind hk, rk2;
	bool hok, rok;
	one_host(s + half, size - half, 0, h, &hk, &hok);
	one_host(s, half, ZSP_HOST_WILDCARD, r, &rk2, &rok);
	if (hok && rok) {
		bool m = zsp_host_matches(r, h);
		size_t hl = strlen(h), sl = strlen(r) - 1;
		bool want = rk2 == ZSP_HOST_ANY ? true
			    : rk2 == ZSP_HOST_SUBDOMAINS
				    ? hk == ZSP_HOST_NAME && hl > sl && strcmp(h + hl - sl, r + 1) == 0
				    : strcmp(r, h) == 0;
		if (m != want)
			abort();
	}
	if (hok && !zsp_host_matches(h, h))
		abort();
	return 0;
}
