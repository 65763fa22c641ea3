/* test_proxyproto.c: CUnit tests for the egress proxy's parsers (runtime/proxyproto.c): HTTP
 * heads and their rewriting, Basic credentials, SOCKS5 messages, the ClientHello's SNI across
 * records and reads, and the address classes the proxy refuses. */
#include <CUnit/Basic.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "runtime/proxyproto.h"

static int parse(const char *s, zsp_pp_http *r)
{
	return zsp_pp_http_parse(s, strlen(s), r);
}

static void test_http_good(void)
{
	zsp_pp_http r;
	CU_ASSERT_EQUAL(parse("CONNECT Example.COM.:443 HTTP/1.1\r\nHost: x\r\n\r\n", &r), ZSP_PP_DONE);
	CU_ASSERT(r.connect);
	CU_ASSERT_STRING_EQUAL(r.host, "example.com");
	CU_ASSERT_EQUAL(r.port, 443);
	CU_ASSERT_PTR_NULL(r.auth);
	CU_ASSERT_EQUAL(parse("CONNECT 0x7f.1:80 HTTP/1.1\r\nProxy-Authorization:  Basic abc \r\n\r\n", &r), ZSP_PP_DONE);
	CU_ASSERT_STRING_EQUAL(r.host, "127.0.0.1");
	CU_ASSERT(r.auth && r.auth_len == 9 && memcmp(r.auth, "Basic abc", 9) == 0);
	CU_ASSERT_EQUAL(parse("CONNECT [::ffff:127.0.0.1]:80 HTTP/1.1\r\n\r\n", &r), ZSP_PP_DONE);
	CU_ASSERT_STRING_EQUAL(r.host, "127.0.0.1");
	CU_ASSERT_EQUAL(parse("GET http://a.test/p HTTP/1.1\r\nHost: A.test:80\r\n\r\n", &r), ZSP_PP_DONE);
	CU_ASSERT(!r.connect);
	CU_ASSERT_EQUAL(r.port, 80);
	CU_ASSERT_EQUAL(parse("GET HTTP://[::1]:8080 HTTP/1.0\r\n\r\n", &r), ZSP_PP_DONE);
	CU_ASSERT_STRING_EQUAL(r.host, "[::1]");
	CU_ASSERT_EQUAL(r.port, 8080);
	CU_ASSERT_EQUAL(r.path_len, 0);
	/* incomplete */
	CU_ASSERT_EQUAL(parse("CONNECT a.test:443 HTTP/1.1\r\nHost: a", &r), ZSP_PP_MORE);
	CU_ASSERT_EQUAL(parse("CONNECT a.test:443 HTTP/1.1\r\n\r", &r), ZSP_PP_MORE);
	CU_ASSERT_EQUAL(parse("", &r), ZSP_PP_MORE);
}

static void test_http_bad(void)
{
	static const struct {
		const char *in;
		int status;
		const char *error;
	} bad[] = {
		{"GET / HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"GET https://a.test/ HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"GET ftp://a.test/ HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"GET http://u:p@a.test/ HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n", 400, "host-mismatch"},
		{"GET http://a.test/ HTTP/1.1\r\nHost: a.test:81\r\n\r\n", 400, "host-mismatch"},
		{"GET http://a.test:81/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400, "host-mismatch"},
		{"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: a.test\r\n\r\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/1.1\r\nProxy-Authorization: a\r\nProxy-Authorization: b\r\n\r\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/1.1\nHost: a.test\n\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/1.1\r\nX : a\r\n\r\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/1.1\r\nnocolon\r\n\r\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/1.1\r\nX: \x01\r\n\r\n", 400, "bad-request"},
		{"GET http://a.test/ HTTP/2.0\r\n\r\n", 505, "bad-request"},
		{"GET  http://a.test/ HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"G(T http://a.test/ HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"CONNECT a.test HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"CONNECT a.test:0 HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"CONNECT a.test:0443 HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"CONNECT localhost..:443 HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n", 400, "bad-request"},
		{"CONNECT https://a.test:443 HTTP/1.1\r\n\r\n", 400, "bad-request"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		zsp_pp_http r;
		int rc = parse(bad[i].in, &r);
		CU_ASSERT_EQUAL(rc, ZSP_PP_ERROR);
		if (rc != ZSP_PP_ERROR) {
			printf("\n  accepted: %s\n", bad[i].in);
			continue;
		}
		CU_ASSERT_EQUAL(r.status, bad[i].status);
		CU_ASSERT_STRING_EQUAL(r.error, bad[i].error);
		CU_ASSERT_PTR_NOT_NULL(r.detail);
	}
	/* a head over the limit: 431, complete or not */
	static char big[ZSP_PP_HEAD_MAX + 64];
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "GET http://a.test/ HTTP/1.1\r\nX: ", 32);
	zsp_pp_http r;
	CU_ASSERT_EQUAL(parse(big, &r), ZSP_PP_ERROR);
	CU_ASSERT_EQUAL(r.status, 431);
	memcpy(big + sizeof(big) - 5, "\r\n\r\n", 4);
	CU_ASSERT_EQUAL(parse(big, &r), ZSP_PP_ERROR);
	CU_ASSERT_EQUAL(r.status, 431);
}

static void test_http_rewrite(void)
{
	const char *in = "POST http://a.test:8080/x?y HTTP/1.1\r\nHost: a.test:8080\r\n"
			 "Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: 5\r\n"
			 "Proxy-Authorization: Basic abc\r\nProxy-Connection: close\r\nTE: trailers\r\n"
			 "Upgrade: h2c\r\nContent-Length: 3\r\nX-Keep: 2\r\n\r\nabc";
	zsp_pp_http r;
	CU_ASSERT_EQUAL_FATAL(parse(in, &r), ZSP_PP_DONE);
	char out[1024];
	size_t n = zsp_pp_http_rewrite(in, &r, out, sizeof(out));
	CU_ASSERT_FATAL(n > 0 && n < sizeof(out));
	out[n] = '\0';
	CU_ASSERT_STRING_EQUAL(out, "POST /x?y HTTP/1.1\r\nHost: a.test:8080\r\nContent-Length: 3\r\n"
				    "X-Keep: 2\r\nConnection: close\r\n\r\n");
	CU_ASSERT_EQUAL(r.head_len, strlen(in) - 3);
	/* no path, a query only, the default port */
	const char *q = "GET http://A.test?z HTTP/1.0\r\n\r\n";
	CU_ASSERT_EQUAL_FATAL(parse(q, &r), ZSP_PP_DONE);
	n = zsp_pp_http_rewrite(q, &r, out, sizeof(out));
	out[n] = '\0';
	CU_ASSERT_STRING_EQUAL(out, "GET /?z HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n");
	CU_ASSERT_EQUAL(zsp_pp_http_rewrite(q, &r, out, 10), 0);   /* too small: refused, not cut */
}

static void test_basic(void)
{
	/* base64("zsp:secret") = enNwOnNlY3JldA== */
	static const char v[] = "Basic enNwOnNlY3JldA==";
	CU_ASSERT(zsp_pp_basic_ok(v, strlen(v), "secret"));
	CU_ASSERT(zsp_pp_basic_ok("basic enNwOnNlY3JldA==", 22, "secret"));
	CU_ASSERT(!zsp_pp_basic_ok(v, strlen(v), "secreT"));
	CU_ASSERT(!zsp_pp_basic_ok(v, strlen(v), "secret2"));
	CU_ASSERT(!zsp_pp_basic_ok(v, strlen(v), NULL));
	CU_ASSERT(!zsp_pp_basic_ok("Basic enNwOnNlY3JldA=", 21, "secret"));   /* bad length */
	CU_ASSERT(!zsp_pp_basic_ok("Basic enNw=nNlY3JldA==", 22, "secret"));  /* '=' inside */
	CU_ASSERT(!zsp_pp_basic_ok("Bearer enNwOnNlY3JldA==", 23, "secret"));
	CU_ASSERT(!zsp_pp_basic_ok("Basic c3J0OnNlY3JldA==", 22, "secret"));  /* srt:secret */
	CU_ASSERT(!zsp_pp_basic_ok("Basic ", 6, ""));
}

static void test_socks(void)
{
	size_t used;
	unsigned char m;
	CU_ASSERT_EQUAL(zsp_pp_socks_greeting((const unsigned char *)"\x05\x02\x00\x02", 4, true, &used, &m), ZSP_PP_DONE);
	CU_ASSERT(used == 4 && m == 2);
	CU_ASSERT_EQUAL(zsp_pp_socks_greeting((const unsigned char *)"\x05\x01\x00", 3, true, &used, &m), ZSP_PP_DONE);
	CU_ASSERT_EQUAL(m, 0xFF);   /* no-auth only, a secret set: refused */
	CU_ASSERT_EQUAL(zsp_pp_socks_greeting((const unsigned char *)"\x05\x01\x00", 3, false, &used, &m), ZSP_PP_DONE);
	CU_ASSERT_EQUAL(m, 0);
	CU_ASSERT_EQUAL(zsp_pp_socks_greeting((const unsigned char *)"\x05\x02\x00", 3, true, &used, &m), ZSP_PP_MORE);
	CU_ASSERT_EQUAL(zsp_pp_socks_greeting((const unsigned char *)"\x04\x01", 2, true, &used, &m), ZSP_PP_ERROR);

	bool ok;
	CU_ASSERT_EQUAL(zsp_pp_socks_auth((const unsigned char *)"\x01\x03zsp\x06secret", 12, "secret", &used, &ok), ZSP_PP_DONE);
	CU_ASSERT(ok && used == 12);
	CU_ASSERT_EQUAL(zsp_pp_socks_auth((const unsigned char *)"\x01\x03zsp\x06secreT", 12, "secret", &used, &ok), ZSP_PP_DONE);
	CU_ASSERT(!ok);
	CU_ASSERT_EQUAL(zsp_pp_socks_auth((const unsigned char *)"\x01\x03srt\x06secret", 12, "secret", &used, &ok), ZSP_PP_DONE);
	CU_ASSERT(!ok);
	CU_ASSERT_EQUAL(zsp_pp_socks_auth((const unsigned char *)"\x01\x03zsp\x06secr", 10, "secret", &used, &ok), ZSP_PP_MORE);
	CU_ASSERT_EQUAL(zsp_pp_socks_auth((const unsigned char *)"\x02", 1, "secret", &used, &ok), ZSP_PP_ERROR);

	char host[ZSP_HOST_MAX];
	unsigned port;
	unsigned char code;
	const char *err;
	static const unsigned char dom[] = "\x05\x01\x00\x03\x0c" "Example.COM." "\x01\xbb";
	CU_ASSERT_EQUAL(zsp_pp_socks_request(dom, sizeof(dom) - 1, &used, host, &port, &code, &err), ZSP_PP_DONE);
	CU_ASSERT_STRING_EQUAL(host, "example.com");
	CU_ASSERT_EQUAL(port, 443);
	CU_ASSERT_EQUAL(used, sizeof(dom) - 1);
	CU_ASSERT_EQUAL(zsp_pp_socks_request(dom, sizeof(dom) - 2, &used, host, &port, &code, &err), ZSP_PP_MORE);
	static const unsigned char v4[] = {5, 1, 0, 1, 127, 0, 0, 1, 0, 80};
	CU_ASSERT_EQUAL(zsp_pp_socks_request(v4, sizeof(v4), &used, host, &port, &code, &err), ZSP_PP_DONE);
	CU_ASSERT_STRING_EQUAL(host, "127.0.0.1");
	static const unsigned char v6[] = {5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1, 0, 80};
	CU_ASSERT_EQUAL(zsp_pp_socks_request(v6, sizeof(v6), &used, host, &port, &code, &err), ZSP_PP_DONE);
	CU_ASSERT_STRING_EQUAL(host, "10.0.0.1");   /* IPv4-mapped: its IPv4 address */
	static const unsigned char bind[] = {5, 2, 0, 1, 127, 0, 0, 1, 0, 80};
	CU_ASSERT_EQUAL(zsp_pp_socks_request(bind, sizeof(bind), &used, host, &port, &code, &err), ZSP_PP_ERROR);
	CU_ASSERT(code == ZSP_SOCKS_CMD && strcmp(err, "socks-bind") == 0);
	static const unsigned char udp[] = {5, 3, 0, 1};
	CU_ASSERT_EQUAL(zsp_pp_socks_request(udp, sizeof(udp), &used, host, &port, &code, &err), ZSP_PP_ERROR);
	CU_ASSERT(code == ZSP_SOCKS_CMD && strcmp(err, "socks-udp") == 0);
	static const unsigned char atyp[] = {5, 1, 0, 9, 0, 0};
	CU_ASSERT_EQUAL(zsp_pp_socks_request(atyp, sizeof(atyp), &used, host, &port, &code, &err), ZSP_PP_ERROR);
	CU_ASSERT_EQUAL(code, ZSP_SOCKS_ATYP);
	static const unsigned char nul[] = "\x05\x01\x00\x03\x05" "a\0b.c" "\x00\x50";
	CU_ASSERT_EQUAL(zsp_pp_socks_request(nul, sizeof(nul) - 1, &used, host, &port, &code, &err), ZSP_PP_ERROR);
	CU_ASSERT_EQUAL(code, ZSP_SOCKS_NOT_ALLOWED);
	static const unsigned char port0[] = {5, 1, 0, 1, 1, 2, 3, 4, 0, 0};
	CU_ASSERT_EQUAL(zsp_pp_socks_request(port0, sizeof(port0), &used, host, &port, &code, &err), ZSP_PP_ERROR);
	static const unsigned char compat[] = {5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1, 0, 80};
	CU_ASSERT_EQUAL(zsp_pp_socks_request(compat, sizeof(compat), &used, host, &port, &code, &err), ZSP_PP_ERROR);
}

/* A ClientHello with the SNI name (NULL: none), in records of at most rec bytes. */
static size_t hello(unsigned char *out, const char *name, size_t rec)
{
	unsigned char body[600], hs[700];
	size_t n = 0;
	body[n++] = 3, body[n++] = 3;
	memset(body + n, 0x11, 32), n += 32;
	body[n++] = 0;                            /* session id */
	body[n++] = 0, body[n++] = 2, body[n++] = 0x13, body[n++] = 0x01;
	body[n++] = 1, body[n++] = 0;             /* compression */
	size_t el = name ? 9 + strlen(name) : 0;
	el += 7;                                  /* supported_versions */
	body[n++] = (unsigned char)(el >> 8), body[n++] = (unsigned char)el;
	if (name) {
		size_t l = strlen(name);
		unsigned char e[] = {0, 0, (unsigned char)((l + 5) >> 8), (unsigned char)(l + 5),
				     (unsigned char)((l + 3) >> 8), (unsigned char)(l + 3), 0,
				     (unsigned char)(l >> 8), (unsigned char)l};
		memcpy(body + n, e, 9), n += 9;
		memcpy(body + n, name, l), n += l;
	}
	static const unsigned char sv[] = {0, 0x2b, 0, 3, 2, 3, 4};
	memcpy(body + n, sv, 7), n += 7;
	hs[0] = 1, hs[1] = 0, hs[2] = (unsigned char)(n >> 8), hs[3] = (unsigned char)n;
	memcpy(hs + 4, body, n);
	size_t hn = n + 4, o = 0;
	for (size_t i = 0; i < hn; i += rec) {
		size_t f = hn - i < rec ? hn - i : rec;
		out[o++] = 0x16, out[o++] = 3, out[o++] = 1, out[o++] = (unsigned char)(f >> 8), out[o++] = (unsigned char)f;
		memcpy(out + o, hs + i, f), o += f;
	}
	return o;
}

static void test_tls(void)
{
	unsigned char buf[2000];
	char sni[ZSP_HOST_MAX];
	const char *err;
	size_t n = hello(buf, "Registry.Example.COM.", 4000);
	CU_ASSERT_EQUAL(zsp_pp_tls_sni(buf, n, sni, &err), ZSP_TLS_SNI);
	CU_ASSERT_STRING_EQUAL(sni, "registry.example.com");
	/* every prefix is incomplete, never judged */
	for (size_t k = 1; k < n; k++)
		CU_ASSERT_EQUAL(zsp_pp_tls_sni(buf, k, sni, &err), ZSP_PP_MORE);
	/* split over records of 7 bytes: reassembled */
	n = hello(buf, "evil.example.com", 7);
	CU_ASSERT_EQUAL(zsp_pp_tls_sni(buf, n, sni, &err), ZSP_TLS_SNI);
	CU_ASSERT_STRING_EQUAL(sni, "evil.example.com");
	CU_ASSERT_EQUAL(zsp_pp_tls_sni(buf, n - 1, sni, &err), ZSP_PP_MORE);
	n = hello(buf, NULL, 4000);
	CU_ASSERT_EQUAL(zsp_pp_tls_sni(buf, n, sni, &err), ZSP_TLS_NO_SNI);
	CU_ASSERT_EQUAL(zsp_pp_tls_sni((const unsigned char *)"SSH-2.0-x\r\n", 11, sni, &err), ZSP_TLS_NOT_TLS);
	CU_ASSERT_EQUAL(zsp_pp_tls_sni((const unsigned char *)"GET / HTTP/1.1\r\n", 16, sni, &err), ZSP_TLS_NOT_TLS);
	CU_ASSERT_EQUAL(zsp_pp_tls_sni((const unsigned char *)"\x16", 1, sni, &err), ZSP_PP_MORE);
	/* malformed */
	n = hello(buf, "a.test", 4000);
	buf[5] = 2;   /* ServerHello */
	CU_ASSERT_EQUAL(zsp_pp_tls_sni(buf, n, sni, &err), ZSP_PP_ERROR);
	n = hello(buf, "a.test", 20);
	buf[25] = 0x17;   /* the second record is application data */
	CU_ASSERT_EQUAL(zsp_pp_tls_sni(buf, n, sni, &err), ZSP_PP_ERROR);
	n = hello(buf, "a..test", 4000);
	CU_ASSERT_EQUAL(zsp_pp_tls_sni(buf, n, sni, &err), ZSP_PP_ERROR);
	CU_ASSERT_STRING_EQUAL(err, "tls-bad-sni");
	n = hello(buf, "a.test", 4000);
	buf[n - 8 - 6] ^= 0x40;   /* the server_name list length */
	CU_ASSERT_EQUAL(zsp_pp_tls_sni(buf, n, sni, &err), ZSP_PP_ERROR);
	/* a handshake declared over the limit */
	static const unsigned char huge[] = {0x16, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff};
	CU_ASSERT_EQUAL(zsp_pp_tls_sni(huge, sizeof(huge), sni, &err), ZSP_PP_ERROR);
	CU_ASSERT_STRING_EQUAL(err, "tls-hello-too-large");
}

static const char *blocked(const char *a)
{
	struct sockaddr_storage ss = {0};
	if (inet_pton(AF_INET, a, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	return zsp_pp_addr_blocked((struct sockaddr *)&ss);
}

static void test_addresses(void)
{
	static const struct {
		const char *addr, *why;
	} t[] = {
		{"127.0.0.1", "loopback"}, {"127.255.0.9", "loopback"}, {"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"}, {"64:ff9b::7f00:1", "loopback"},
		{"10.1.2.3", "private"}, {"172.16.0.1", "private"}, {"172.31.255.255", "private"},
		{"192.168.1.1", "private"}, {"100.64.0.1", "private"}, {"100.127.255.255", "private"},
		{"fc00::1", "private"}, {"fd12::1", "private"}, {"::ffff:192.168.0.1", "private"},
		{"169.254.1.1", "link-local"}, {"fe80::1", "link-local"},
		{"224.0.0.1", "multicast"}, {"ff02::1", "multicast"},
		{"0.0.0.0", "unspecified"}, {"::", "unspecified"}, {"255.255.255.255", "broadcast"},
		{"169.254.169.254", "metadata"}, {"fd00:ec2::254", "metadata"},
		{"100.100.100.200", "metadata"}, {"168.63.129.16", "metadata"},
		{"::ffff:169.254.169.254", "metadata"}, {"::10.0.0.1", "reserved"}, {"240.0.0.1", "reserved"},
		{"1.1.1.1", NULL}, {"172.32.0.1", NULL}, {"100.128.0.1", NULL}, {"2001:db8::1", NULL},
		{"8.8.8.8", NULL}, {"192.169.0.1", NULL}, {"2606:4700::1111", NULL},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *got = blocked(t[i].addr);
		bool same = got == t[i].why || (got && t[i].why && strcmp(got, t[i].why) == 0);
		CU_ASSERT(same);
		if (!same)
			printf("\n  %s: %s, wanted %s\n", t[i].addr, got ? got : "fine", t[i].why ? t[i].why : "fine");
	}
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	CU_pSuite s = CU_add_suite("proxyproto", NULL, NULL);
	if (!s || !CU_add_test(s, "HTTP heads", test_http_good) || !CU_add_test(s, "HTTP refusals", test_http_bad) ||
	    !CU_add_test(s, "origin form", test_http_rewrite) || !CU_add_test(s, "Basic", test_basic) ||
	    !CU_add_test(s, "SOCKS5", test_socks) || !CU_add_test(s, "ClientHello", test_tls) ||
	    !CU_add_test(s, "addresses", test_addresses)) {
		CU_cleanup_registry();
		return CU_get_error();
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
