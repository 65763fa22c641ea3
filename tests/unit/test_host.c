/* test_host.c: CUnit tests for compiler/host.c (canonical hosts and ports) and for the one
 * connect decision: zsp_oracle_connect, zsp_oracle_decide and `zspc --query` agree on a table. */
#include <CUnit/Basic.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "compiler/host.h"
#include "compiler/oracle.h"
#include "compiler/zsp.h"
#include "lang/arena.h"

enum { W = ZSP_HOST_WILDCARD | ZSP_HOST_PORT_ANY };

static const struct {
	const char *in;
	unsigned flags;
	zsp_host_kind kind;
	const char *want;
} good[] = {
	{ "example.com", 0, ZSP_HOST_NAME, "example.com" },
	{ "Example.COM", 0, ZSP_HOST_NAME, "example.com" },
	{ "example.com.", 0, ZSP_HOST_NAME, "example.com" },
	{ "localhost", 0, ZSP_HOST_NAME, "localhost" },
	{ "LOCALHOST.", 0, ZSP_HOST_NAME, "localhost" },
	{ "_dmarc.example.com", 0, ZSP_HOST_NAME, "_dmarc.example.com" },
	{ "my_db", 0, ZSP_HOST_NAME, "my_db" },
	{ "xn--bcher-kva.example", 0, ZSP_HOST_NAME, "xn--bcher-kva.example" },
	{ "XN--BCHER-KVA.example", 0, ZSP_HOST_NAME, "xn--bcher-kva.example" },
	{ "a-b.c-d", 0, ZSP_HOST_NAME, "a-b.c-d" },
	{ "1.2.3.4.example.com", 0, ZSP_HOST_NAME, "1.2.3.4.example.com" },
	{ "0x7f.example", 0, ZSP_HOST_NAME, "0x7f.example" },
	{ "1e5", 0, ZSP_HOST_NAME, "1e5" },
	{ "0xg", 0, ZSP_HOST_NAME, "0xg" },
	/* inet_aton forms */
	{ "127.0.0.1", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "127.1", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "127.0.1", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "2130706433", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "0x7f000001", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "0x7f.1", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "0X7F.0.0.1", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "0177.0.0.1", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "017700000001", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "127.0.0.1.", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "127.1.", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "0x0000000000007f.1", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "00000000000000000177.1", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "01.1", 0, ZSP_HOST_IPV4, "1.0.0.1" },
	{ "0", 0, ZSP_HOST_IPV4, "0.0.0.0" },
	{ "4294967295", 0, ZSP_HOST_IPV4, "255.255.255.255" },
	{ "10.1", 0, ZSP_HOST_IPV4, "10.0.0.1" },
	{ "1.16777215", 0, ZSP_HOST_IPV4, "1.255.255.255" },
	{ "1.2.65535", 0, ZSP_HOST_IPV4, "1.2.255.255" },
	{ "169.254.43518", 0, ZSP_HOST_IPV4, "169.254.169.254" },
	{ "0xa9fea9fe", 0, ZSP_HOST_IPV4, "169.254.169.254" },
	/* IPv6 */
	{ "[::1]", 0, ZSP_HOST_IPV6, "[::1]" },
	{ "[0:0:0:0:0:0:0:1]", 0, ZSP_HOST_IPV6, "[::1]" },
	{ "[0000:0000:0000:0000:0000:0000:0000:0001]", 0, ZSP_HOST_IPV6, "[::1]" },
	{ "[::]", 0, ZSP_HOST_IPV6, "[::]" },
	{ "[2001:DB8::1]", 0, ZSP_HOST_IPV6, "[2001:db8::1]" },
	{ "[2001:db8:0:0:1:0:0:1]", 0, ZSP_HOST_IPV6, "[2001:db8::1:0:0:1]" },
	{ "[2001:db8:0:1:1:1:1:1]", 0, ZSP_HOST_IPV6, "[2001:db8:0:1:1:1:1:1]" },
	{ "[1:0:0:1:0:0:0:1]", 0, ZSP_HOST_IPV6, "[1:0:0:1::1]" },
	{ "[fe80::]", 0, ZSP_HOST_IPV6, "[fe80::]" },
	{ "[fd00:ec2::254]", 0, ZSP_HOST_IPV6, "[fd00:ec2::254]" },
	{ "[::ffff:127.0.0.1]", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "[::FFFF:7f00:1]", 0, ZSP_HOST_IPV4, "127.0.0.1" },
	{ "[0:0:0:0:0:ffff:a9fe:a9fe]", 0, ZSP_HOST_IPV4, "169.254.169.254" },
	{ "[64:ff9b::7f00:1]", 0, ZSP_HOST_IPV6, "[64:ff9b::7f00:1]" },  /* NAT64: not folded */
	{ "[::ffff:0:7f00:1]", 0, ZSP_HOST_IPV6, "[::ffff:0:7f00:1]" },  /* SIIT: not folded */
	/* rule forms */
	{ "*", W, ZSP_HOST_ANY, "*" },
	{ "*.Example.com.", W, ZSP_HOST_SUBDOMAINS, "*.example.com" },
	{ "*.com", W, ZSP_HOST_SUBDOMAINS, "*.com" },
};

static const struct {
	const char *in;
	unsigned flags;
	const char *code;
	size_t off, len;
} bad[] = {
	{ "", 0, "host-empty", 0, 1 },
	{ ".", 0, "host-empty", 0, 1 },
	{ "localhost..", 0, "host-empty-label", 10, 1 },
	{ "example.com..", 0, "host-empty-label", 12, 1 },
	{ "a..b", 0, "host-empty-label", 2, 1 },
	{ ".a", 0, "host-empty-label", 0, 1 },
	{ "-a.com", 0, "host-hyphen", 0, 1 },
	{ "a-.com", 0, "host-hyphen", 1, 1 },
	{ "exa mple.com", 0, "host-bad-byte", 3, 1 },
	{ "a\tb", 0, "host-bad-byte", 1, 1 },
	{ "user@host", 0, "host-bad-byte", 4, 1 },
	{ "a%2eb", 0, "host-bad-byte", 1, 1 },
	{ "b\xc3\xbc" "cher.de", 0, "host-non-ascii", 1, 1 },
	{ "\xe2\x80\x8b" "example.com", 0, "host-non-ascii", 0, 1 },
	{ "::1", 0, "host-ipv6-brackets", 0, 1 },
	{ "1.2.3.4.5", 0, "host-bad-number", 0, 9 },
	{ "0x", 0, "host-bad-number", 0, 2 },
	{ "08.1.1.1", 0, "host-bad-number", 0, 8 },
	{ "256.1.1.1", 0, "host-bad-number", 0, 9 },
	{ "1.16777216", 0, "host-bad-number", 0, 10 },
	{ "4294967296", 0, "host-bad-number", 0, 10 },
	{ "0x.1", 0, "host-bad-number", 0, 4 },
	{ "1.0x", 0, "host-bad-number", 0, 4 },
	{ "example.123", 0, "host-bad-number", 0, 11 },
	{ "099", 0, "host-bad-number", 0, 3 },
	{ "[::1", 0, "host-bracket", 0, 1 },
	{ "[127.0.0.1]", 0, "host-ipv6", 1, 9 },
	{ "[::g]", 0, "host-ipv6", 1, 3 },
	{ "[]", 0, "host-ipv6", 1, 1 },
	{ "[fe80::1%eth0]", 0, "host-zone", 8, 5 },
	{ "[fe80::1%25eth0]", 0, "host-zone", 8, 7 },
	{ "[::1.2.3.4]", 0, "host-ipv4-compatible", 1, 9 },
	{ "[::7f00:1]", 0, "host-ipv4-compatible", 1, 8 },
	{ "*", 0, "host-wildcard", 0, 1 },
	{ "*.example.com", 0, "host-wildcard", 0, 2 },
	{ "a*.example.com", W, "host-wildcard", 1, 1 },
	{ "*.*.example.com", W, "host-wildcard", 2, 1 },
	{ "*.10.0.0.1", W, "host-wildcard-ip", 0, 10 },
	{ "*.[::1]", W, "host-bad-byte", 2, 1 },
	{ "*.", W, "host-empty", 1, 1 },
};

static void test_canon(void)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char out[ZSP_HOST_MAX], again[ZSP_HOST_MAX];
		zsp_host_kind k = 0, k2 = 0;
		zsp_host_error e = { 0 };
		bool ok = zsp_host_canon(good[i].in, strlen(good[i].in), good[i].flags, out, &k, &e);
		if (!ok || k != good[i].kind || strcmp(out, good[i].want) != 0)
			fprintf(stderr, "\n  canon(\"%s\"): %s kind %d, want \"%s\" kind %d (%s)\n", good[i].in,
				ok ? out : "refused", (int)k, good[i].want, (int)good[i].kind, ok ? "" : e.code);
		CU_ASSERT(ok && k == good[i].kind && strcmp(out, good[i].want) == 0);
		/* the canonical form is its own canonical form */
		CU_ASSERT(ok && zsp_host_canon(out, strlen(out), good[i].flags, again, &k2, &e) &&
			  strcmp(again, out) == 0 && k2 == k);
	}
}

static void test_canon_errors(void)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char out[ZSP_HOST_MAX];
		zsp_host_kind k;
		zsp_host_error e = { 0 };
		bool ok = zsp_host_canon(bad[i].in, strlen(bad[i].in), bad[i].flags, out, &k, &e);
		bool right = !ok && e.code && strcmp(e.code, bad[i].code) == 0 && e.off == bad[i].off &&
			     e.len == bad[i].len && e.msg && e.msg[0];
		if (!right)
			fprintf(stderr, "\n  canon(\"%s\"): %s @%zu+%zu, want %s @%zu+%zu\n", bad[i].in,
				ok ? out : e.code, e.off, e.len, bad[i].code, bad[i].off, bad[i].len);
		CU_ASSERT(right);
	}
}

static void test_canon_limits(void)
{
	char in[ZSP_HOSTPORT_INPUT_MAX + 8], out[ZSP_HOST_MAX];
	zsp_host_kind k;
	zsp_host_error e;
	/* 63 is the longest label, 253 the longest name (with its dot folded: 254) */
	memset(in, 'a', 64);
	CU_ASSERT(zsp_host_canon(in, 63, 0, out, &k, &e) && strlen(out) == 63);
	CU_ASSERT(!zsp_host_canon(in, 64, 0, out, &k, &e) && strcmp(e.code, "host-long-label") == 0);
	for (size_t i = 0; i < 256; i++)
		in[i] = i % 2 ? '.' : 'a';
	CU_ASSERT(zsp_host_canon(in, 253, 0, out, &k, &e) && strlen(out) == 253);
	CU_ASSERT(zsp_host_canon(in, 254, 0, out, &k, &e) && strlen(out) == 253);
	CU_ASSERT(!zsp_host_canon(in, 255, 0, out, &k, &e) && strcmp(e.code, "host-too-long") == 0);
	memmove(in + 2, in, 253);
	in[0] = '*';
	in[1] = '.';
	CU_ASSERT(!zsp_host_canon(in, 255, W, out, &k, &e) && strcmp(e.code, "host-too-long") == 0);
	CU_ASSERT(zsp_host_canon(in, 253, W, out, &k, &e) && strlen(out) == 253);
	memset(in, 'a', sizeof(in));
	CU_ASSERT(!zsp_host_canon(in, sizeof(in), 0, out, &k, &e) && strcmp(e.code, "host-too-long") == 0);
	CU_ASSERT(!zsp_host_canon("a\0b", 3, 0, out, &k, &e) && strcmp(e.code, "host-bad-byte") == 0);
}

static const struct {
	const char *in;
	unsigned flags;
	const char *host;  /* NULL: refused with code */
	unsigned port;
	const char *code, *hint;
} hostports[] = {
	{ "example.com:443", 0, "example.com", 443, NULL, NULL },
	{ "127.1:80", 0, "127.0.0.1", 80, NULL, NULL },
	{ "[::ffff:127.0.0.1]:22", 0, "127.0.0.1", 22, NULL, NULL },
	{ "[0:0:0:0:0:0:0:1]:65535", 0, "[::1]", 65535, NULL, NULL },
	{ "a.b:1", 0, "a.b", 1, NULL, NULL },
	{ "*.x.org:*", W, "*.x.org", 0, NULL, NULL },
	{ "*:*", W, "*", 0, NULL, NULL },
	{ "x.org:*", 0, NULL, 0, "host-port", NULL },
	{ "x.org:0", 0, NULL, 0, "host-port", NULL },
	{ "x.org:65536", 0, NULL, 0, "host-port", NULL },
	{ "x.org:0443", 0, NULL, 0, "host-port", NULL },
	{ "x.org:+443", 0, NULL, 0, "host-port", NULL },
	{ "x.org:-1", 0, NULL, 0, "host-port", NULL },
	{ "x.org:0x1bb", 0, NULL, 0, "host-port", NULL },
	{ "x.org: 443", 0, NULL, 0, "host-port", NULL },
	{ "x.org:443 ", 0, NULL, 0, "host-port", NULL },
	{ "x.org:", 0, NULL, 0, "host-port", NULL },
	{ "x.org:4294967739", 0, NULL, 0, "host-port", NULL },
	{ "x.org", 0, NULL, 0, "host-no-port", "write `x.org:443`" },
	{ "x.org", W, NULL, 0, "host-no-port", "write `x.org:443`, or `x.org:*` for any port" },
	{ ":443", 0, NULL, 0, "host-empty", NULL },
	{ "::1:443", 0, NULL, 0, "host-ipv6-brackets", NULL },
	{ "[::1]443", 0, NULL, 0, "host-bracket", NULL },
	{ "[::1]", 0, NULL, 0, "host-no-port", NULL },
	{ "https://registry.example.com", W, NULL, 0, "host-url", "write `registry.example.com:443`" },
	{ "http://registry.example.com/x", W, NULL, 0, "host-url", "write `registry.example.com:80`" },
	{ "https://u:p@registry.example.com:8443/", W, NULL, 0, "host-url", "write `registry.example.com:8443`" },
	{ "https://[::1]/", W, NULL, 0, "host-url", "write `[::1]:443`" },
	{ "ftp://h.org", W, NULL, 0, "host-url", "write `h.org:PORT`" },
	{ "registry.example.com/path:443", 0, NULL, 0, "host-url", NULL },
	{ "localhost..:80", 0, NULL, 0, "host-empty-label", NULL },
};

static void test_hostport(void)
{
	for (size_t i = 0; i < sizeof(hostports) / sizeof(hostports[0]); i++) {
		char host[ZSP_HOST_MAX];
		zsp_host_kind k;
		unsigned port = 99999;
		zsp_host_error e = { 0 };
		bool ok = zsp_hostport_parse(hostports[i].in, hostports[i].flags, host, &k, &port, &e);
		bool right = hostports[i].host
				     ? ok && strcmp(host, hostports[i].host) == 0 && port == hostports[i].port
				     : !ok && strcmp(e.code, hostports[i].code) == 0 &&
					       (!hostports[i].hint || strcmp(e.hint, hostports[i].hint) == 0);
		if (!right)
			fprintf(stderr, "\n  hostport(\"%s\"): %s %u (%s, hint \"%s\")\n", hostports[i].in,
				ok ? host : "refused", port, ok ? "" : e.code, ok ? "" : e.hint);
		CU_ASSERT(right);
	}
}

/* Every string of these bytes that ends in a number: an address exactly when glibc's inet_aton
 * (getaddrinfo AI_NUMERICHOST) reads one, and the same address. */
static void test_aton_agrees_with_glibc(void)
{
	static const char alphabet[] = "0123456789xX.abfAF";
	unsigned seed = 14, checked = 0, addresses = 0;
	for (unsigned n = 0; n < 200000; n++) {
		char s[16];
		size_t len = 1 + ((seed = seed * 1103515245 + 12345) >> 16) % 14;
		for (size_t i = 0; i < len; i++)
			s[i] = alphabet[((seed = seed * 1103515245 + 12345) >> 16 & 0xffff) % (sizeof(alphabet) - 1)];
		s[len] = '\0';
		if (s[len - 1] == '.')
			continue; /* folded by zsp, refused by inet_aton */
		char out[ZSP_HOST_MAX];
		zsp_host_kind k = 0;
		zsp_host_error e;
		bool ok = zsp_host_canon(s, len, 0, out, &k, &e);
		struct addrinfo hints = { .ai_flags = AI_NUMERICHOST, .ai_family = AF_INET }, *r = NULL;
		bool glibc = getaddrinfo(s, NULL, &hints, &r) == 0;
		char want[INET_ADDRSTRLEN] = "";
		if (glibc) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)r->ai_addr)->sin_addr, want, sizeof(want));
			freeaddrinfo(r);
		}
		bool is_addr = ok && k == ZSP_HOST_IPV4;
		if (is_addr != glibc || (glibc && strcmp(out, want) != 0)) {
			fprintf(stderr, "\n  \"%s\": zsp %s (%s), glibc %s\n", s, ok ? out : "refused",
				ok ? "" : e.code, glibc ? want : "refused");
			CU_FAIL("inet_aton disagreement");
			return;
		}
		/* a name zsp keeps never ends in a number, so no resolver reads it as an address */
		if (ok && k == ZSP_HOST_NAME) {
			const char *last = strrchr(out, '.') ? strrchr(out, '.') + 1 : out;
			CU_ASSERT(strspn(last, "0123456789") < strlen(last));
		}
		checked++;
		addresses += glibc;
	}
	CU_ASSERT(checked > 100000 && addresses > 1000);
}

/* RFC 5952 text as glibc's inet_ntop writes it, for every address zsp keeps as IPv6. */
static void test_ipv6_agrees_with_glibc(void)
{
	unsigned seed = 5952, compared = 0;
	for (unsigned n = 0; n < 50000; n++) {
		unsigned char b[16];
		for (int i = 0; i < 8; i++) {
			seed = seed * 1103515245 + 12345;
			unsigned r = seed >> 16 & 0xffff;
			unsigned w = r % 3 == 0 ? 0 : r % 3 == 1 ? (r >> 2) & 0xf : r; /* many zero runs */
			b[2 * i] = (unsigned char)(w >> 8);
			b[2 * i + 1] = (unsigned char)w;
		}
		char text[INET6_ADDRSTRLEN], in[INET6_ADDRSTRLEN + 2], out[ZSP_HOST_MAX];
		inet_ntop(AF_INET6, b, text, sizeof(text));
		snprintf(in, sizeof(in), "[%s]", text);
		zsp_host_kind k;
		zsp_host_error e;
		if (!zsp_host_canon(in, strlen(in), 0, out, &k, &e) || k != ZSP_HOST_IPV6)
			continue; /* mapped (folded) or IPv4-compatible (refused) */
		compared++;
		CU_ASSERT(strlen(out) == strlen(text) + 2 && strncmp(out + 1, text, strlen(text)) == 0);
		/* and the long form of the same address comes back to it */
		char longform[64];
		snprintf(longform, sizeof(longform), "[%x:%x:%x:%x:%x:%x:%x:%x]", b[0] << 8 | b[1], b[2] << 8 | b[3],
			 b[4] << 8 | b[5], b[6] << 8 | b[7], b[8] << 8 | b[9], b[10] << 8 | b[11], b[12] << 8 | b[13],
			 b[14] << 8 | b[15]);
		char out2[ZSP_HOST_MAX];
		CU_ASSERT(zsp_host_canon(longform, strlen(longform), 0, out2, &k, &e) && strcmp(out2, out) == 0);
	}
	CU_ASSERT(compared > 40000);
}

/* ---- one decision ------------------------------------------------------------------------ */

static const char policy_text[] =
	"zsp 1;\n"
	"policy \"p\" {\n"
	"  net {\n"
	"    mode proxy;\n"
	"    allow \"*:443\", \"*.example.com:80\", \"LocalHost.:8080\", \"[::1]:3000\", \"10.1:22\";\n"
	"    allow \"registry.example.com:*\";\n"
	"    deny \"127.0.0.1:*\", \"[0:0::1]:443\", \"169.254.43518:*\", \"EVIL.example.com.:*\";\n"
	"  }\n"
	"}\n";

static const struct {
	const char *host;
	unsigned port;
	const char *decision, *reason;
} decisions[] = {
	{ "127.0.0.1", 443, "deny", "net-rule" },
	{ "127.1", 443, "deny", "net-rule" },
	{ "2130706433", 443, "deny", "net-rule" },
	{ "0x7f.1", 443, "deny", "net-rule" },
	{ "0x7F000001", 443, "deny", "net-rule" },
	{ "0177.0.0.1", 443, "deny", "net-rule" },
	{ "127.0.1", 443, "deny", "net-rule" },
	{ "127.0.0.1.", 443, "deny", "net-rule" },
	{ "[::ffff:127.0.0.1]", 443, "deny", "net-rule" },
	{ "[::ffff:7f00:1]", 443, "deny", "net-rule" },
	{ "[::1]", 443, "deny", "net-rule" },
	{ "[0:0:0:0:0:0:0:1]", 443, "deny", "net-rule" },
	{ "[::0:1]", 3000, "allow", "net-rule" },
	{ "[::1]", 3001, "deny", "net-not-allowed" },
	{ "169.254.169.254", 443, "deny", "net-rule" },
	{ "[::ffff:a9fe:a9fe]", 80, "deny", "net-rule" },
	{ "0xa9.0xfe.0xa9.0xfe", 443, "deny", "net-rule" },
	{ "10.0.0.1", 22, "allow", "net-rule" },
	{ "167772161", 22, "allow", "net-rule" },
	{ "012.0.0.01", 22, "allow", "net-rule" },
	{ "localhost", 8080, "allow", "net-rule" },
	{ "LOCALHOST.", 8080, "allow", "net-rule" },
	{ "localhost..", 8080, "deny", "bad-request" },
	{ "a.example.com", 80, "allow", "net-rule" },
	{ "A.Example.Com.", 80, "allow", "net-rule" },
	{ "example.com", 80, "deny", "net-not-allowed" },
	{ "evil.example.com", 443, "deny", "net-rule" },
	{ "EVIL.EXAMPLE.COM.", 80, "deny", "net-rule" },
	{ "registry.example.com", 80, "allow", "net-rule" },
	{ "registry.example.com", 1, "allow", "net-rule" },
	{ "x.org", 443, "allow", "net-rule" },
	{ "x.org", 80, "deny", "net-not-allowed" },
	{ "[2001:db8::1]", 443, "allow", "net-rule" },
	{ "1.2.3.4.5", 443, "deny", "bad-request" },
	{ "08.1.1.1", 443, "deny", "bad-request" },
	{ "0x", 443, "deny", "bad-request" },
	{ "[fe80::1%eth0]", 443, "deny", "bad-request" },
	{ "[::127.0.0.1]", 443, "deny", "bad-request" },
	{ "b\xc3\xbc" "cher.de", 443, "deny", "bad-request" },
	{ "exa mple.com", 443, "deny", "bad-request" },
	{ "*", 443, "deny", "bad-request" },
	{ "*.example.com", 80, "deny", "bad-request" },
	{ "", 443, "deny", "bad-request" },
};

static zsp_policy_set *policy_set;
static zsp_oracle *oracle;

static void quiet(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	fwrite(text, 1, len, stderr);
}

static int setup_oracle(void)
{
	static zsp_oracle_env env = { .workspace = "/w", .home = "/h" };
	zsp_compiler *c = zsp_compiler_new();
	if (!c)
		return 1;
	zsp_compiler_set_sink(c, quiet, NULL);
	int rc = zsp_compile_buffer(c, "hosts.zsp", policy_text, strlen(policy_text), &policy_set);
	zsp_compiler_free(c);
	if (rc != ZSP_OK)
		return 1;
	const zsp_ir_policy *p = zsp_ir_find_policy(zsp_policy_set_ir(policy_set), "p");
	oracle = p ? zsp_oracle_new(p, &env) : NULL;
	return oracle ? 0 : 1;
}

static int teardown_oracle(void)
{
	zsp_oracle_free(oracle);
	zsp_policy_set_free(policy_set);
	return 0;
}

static const char *str(const char *s)
{
	return s ? s : "(null)";
}

/* `zspc --query` on the same policy: its decision, reason and rule from the JSON line. */
static bool query(const char *request, char *decision, char *reason, char *rule, size_t size)
{
	const char *zspc = getenv("ZSPC") ? getenv("ZSPC") : "./zspc";
	char file[] = "/tmp/test_host.XXXXXX", cmd[1024], line[4096];
	int fd = mkstemp(file);
	if (fd < 0 || write(fd, policy_text, strlen(policy_text)) != (ssize_t)strlen(policy_text)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	/* the request goes through a file: no shell quoting of hostile text */
	char reqfile[] = "/tmp/test_host_req.XXXXXX";
	int rfd = mkstemp(reqfile);
	bool ok = rfd >= 0 && write(rfd, request, strlen(request)) == (ssize_t)strlen(request);
	if (rfd >= 0)
		close(rfd);
	snprintf(cmd, sizeof(cmd), "'%s' --query \"$(cat '%s')\" --format json '%s' 2>&1", zspc, reqfile, file);
	FILE *f = ok ? popen(cmd, "r") : NULL;
	ok = f && fgets(line, sizeof(line), f);
	if (f)
		pclose(f);
	unlink(file);
	unlink(reqfile);
	if (!ok)
		return false;
	const char *keys[3] = { "\"decision\":\"", "\"reason\":\"", "\"rule\":" };
	char *outs[3] = { decision, reason, rule };
	for (int i = 0; i < 3; i++) {
		const char *at = strstr(line, keys[i]);
		if (!at)
			return false;
		at += strlen(keys[i]);
		size_t n = 0;
		if (i == 2 && strncmp(at, "null", 4) == 0) {
			snprintf(rule, size, "(null)");
			continue;
		}
		if (i == 2)
			at++;
		/* up to the closing quote; a rule's own quotes come as \" */
		for (const char *c = at; *c && n + 1 < size; c++) {
			if (*c == '\\' && c[1]) {
				outs[i][n++] = *++c;
				continue;
			}
			if (*c == '"')
				break;
			outs[i][n++] = *c;
		}
		outs[i][n] = '\0';
	}
	return true;
}

static void test_one_decision(void)
{
	zsp_arena *a = zsp_arena_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	for (size_t i = 0; i < sizeof(decisions) / sizeof(decisions[0]); i++) {
		zsp_verdict direct, via;
		CU_ASSERT_EQUAL(zsp_oracle_connect(oracle, a, decisions[i].host, decisions[i].port, true, &direct), ZSP_OK);
		char text[512], err[256];
		snprintf(text, sizeof(text), "connect \"%s:%u\"", decisions[i].host, decisions[i].port);
		zsp_ir_request req;
		CU_ASSERT_EQUAL_FATAL(zsp_request_parse(a, text, &req, err, sizeof(err)), ZSP_OK);
		CU_ASSERT_EQUAL(zsp_oracle_decide(oracle, a, &req, true, &via), ZSP_OK);
		const char *want = decisions[i].decision;
		bool right = strcmp(zsp_decision_name(direct.decision), want) == 0 &&
			     strcmp(direct.reason, decisions[i].reason) == 0;
		bool agree = direct.decision == via.decision && strcmp(direct.reason, via.reason) == 0 &&
			     strcmp(str(direct.rule), str(via.rule)) == 0;
		char qd[64] = "", qr[64] = "", qrule[256] = "";
		bool q = query(text, qd, qr, qrule, sizeof(qrule));
		bool agree_cli = q && strcmp(qd, zsp_decision_name(direct.decision)) == 0 &&
				 strcmp(qr, direct.reason) == 0 && strcmp(qrule, str(direct.rule)) == 0;
		if (!right || !agree || !agree_cli)
			fprintf(stderr, "\n  %s: connect %s %s (%s), decide %s %s (%s), --query %s %s (%s); want %s %s\n",
				text, zsp_decision_name(direct.decision), direct.reason, str(direct.rule),
				zsp_decision_name(via.decision), via.reason, str(via.rule), q ? qd : "failed", qr,
				qrule, want, decisions[i].reason);
		CU_ASSERT(right);
		CU_ASSERT(agree);
		CU_ASSERT(agree_cli);
		/* a bad host names its error first */
		if (strcmp(decisions[i].reason, "bad-request") == 0)
			CU_ASSERT(strncmp(direct.detail, "host-", 5) == 0);
	}
	zsp_verdict v;
	CU_ASSERT(zsp_oracle_connect(oracle, a, "x.org", 0, false, &v) == ZSP_OK &&
		  strcmp(v.reason, "bad-request") == 0);
	CU_ASSERT(zsp_oracle_connect(oracle, a, "x.org", 65536, false, &v) == ZSP_OK &&
		  strcmp(v.reason, "bad-request") == 0);
	zsp_arena_free(a);
}

/* The proxy calls it from several threads: each with its own arena, the same answers. */
struct worker {
	zsp_decision got[sizeof(decisions) / sizeof(decisions[0])];
	bool failed;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	zsp_arena *a = zsp_arena_new();
	for (int round = 0; a && round < 200; round++)
		for (size_t i = 0; i < sizeof(decisions) / sizeof(decisions[0]); i++) {
			zsp_verdict v;
			if (zsp_oracle_connect(oracle, a, decisions[i].host, decisions[i].port, round % 2, &v) != ZSP_OK)
				w->failed = true;
			if (round && v.decision != w->got[i])
				w->failed = true;
			w->got[i] = v.decision;
		}
	zsp_arena_free(a);
	w->failed |= !a;
	return NULL;
}

static void test_threads(void)
{
	size_t n;
	const unsigned *hits = zsp_oracle_hits(oracle, &n);
	unsigned long before = 0, after = 0;
	for (size_t i = 0; i < n; i++)
		before += hits[i];
	pthread_t t[4];
	struct worker w[4];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, work, &w[i]), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	unsigned rule_decided = 0;
	for (size_t i = 0; i < sizeof(decisions) / sizeof(decisions[0]); i++)
		rule_decided += strcmp(decisions[i].reason, "net-rule") == 0;
	for (int i = 0; i < 4; i++) {
		CU_ASSERT(!w[i].failed);
		for (size_t j = 0; j < sizeof(decisions) / sizeof(decisions[0]); j++)
			CU_ASSERT(strcmp(zsp_decision_name(w[i].got[j]), decisions[j].decision) == 0);
	}
	for (size_t i = 0; i < n; i++)
		after += hits[i];
	/* no increment lost between the threads */
	CU_ASSERT_EQUAL(after - before, 4ul * 200 * rule_decided);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	CU_pSuite canon = CU_add_suite("host", NULL, NULL);
	CU_pSuite decide = CU_add_suite("connect", setup_oracle, teardown_oracle);
	if (!canon || !decide || !CU_add_test(canon, "canonical forms", test_canon) ||
	    !CU_add_test(canon, "refused forms", test_canon_errors) ||
	    !CU_add_test(canon, "length limits", test_canon_limits) ||
	    !CU_add_test(canon, "HOST:PORT", test_hostport) ||
	    !CU_add_test(canon, "IPv4 as glibc reads it", test_aton_agrees_with_glibc) ||
	    !CU_add_test(canon, "IPv6 as glibc writes it", test_ipv6_agrees_with_glibc) ||
	    !CU_add_test(decide, "connect, decide and --query agree", test_one_decision) ||
	    !CU_add_test(decide, "from several threads", test_threads)) {
		CU_cleanup_registry();
		return CU_get_error();
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
