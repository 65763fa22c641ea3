/* fuzz_proxy.c: libFuzzer targets for the egress proxy's parsers (runtime/proxyproto.c), one
 * per parser, chosen at build time by ZSP_FUZZ_PROXY (http, socks, tls). Each checks what the
 * event loop relies on: a length used never exceeds the input, a host accepted is canonical, a
 * refusal names its reason, a rewritten head carries no credentials and ends the head. */
#include "config.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler/host.h"
#include "runtime/proxyproto.h"
#include "tests/fuzz/fuzz.h"

static void check_host(const char *h)
{
	char again[ZSP_HOST_MAX];
	zsp_host_kind kind;
	zsp_host_error e;
	if (!zsp_host_canon(h, strlen(h), 0, again, &kind, &e) || strcmp(again, h) != 0)
		abort();
}

static __attribute__((unused)) void fuzz_http(const char *buf, size_t len)
{
	zsp_pp_http r;
	int rc = zsp_pp_http_parse(buf, len, &r);
	if (rc == ZSP_PP_ERROR) {
		if (!r.error || !r.detail || r.status < 400 || r.status > 505)
			abort();
		return;
	}
	if (rc == ZSP_PP_MORE) {
		if (len >= ZSP_PP_HEAD_MAX)
			abort();
		return;
	}
	if (r.head_len > len || r.head_len < 4 || memcmp(buf + r.head_len - 4, "\r\n\r\n", 4) != 0)
		abort();
	check_host(r.host);
	if (r.port < 1 || r.port > 65535)
		abort();
	if (r.auth && (r.auth < buf || r.auth + r.auth_len > buf + r.head_len))
		abort();
	(void)zsp_pp_basic_ok(r.auth ? r.auth : "", r.auth_len, "secret");
	if (r.connect)
		return;
	static char out[ZSP_PP_HEAD_MAX + 512];
	size_t n = zsp_pp_http_rewrite(buf, &r, out, sizeof(out));
	if (n == 0 || n > sizeof(out) || n < 4 || memcmp(out + n - 4, "\r\n\r\n", 4) != 0)
		abort();
	for (size_t i = 0; i + 20 <= n; i++)
		if ((i == 0 || out[i - 1] == '\n') && strncasecmp(out + i, "proxy-authorization:", 20) == 0)
			abort();
}

static __attribute__((unused)) void fuzz_socks(const unsigned char *buf, size_t len)
{
	size_t used = 0;
	unsigned char m, code;
	bool ok;
	if (zsp_pp_socks_greeting(buf, len, len & 1, &used, &m) == ZSP_PP_DONE && used > len)
		abort();
	if (zsp_pp_socks_auth(buf, len, "secret", &used, &ok) == ZSP_PP_DONE && used > len)
		abort();
	char host[ZSP_HOST_MAX];
	unsigned port;
	const char *err;
	int rc = zsp_pp_socks_request(buf, len, &used, host, &port, &code, &err);
	if (rc == ZSP_PP_DONE) {
		if (used > len || port < 1 || port > 65535)
			abort();
		check_host(host);
	} else if (rc == ZSP_PP_ERROR && (!err || code == 0)) {
		abort();
	}
	if (len >= 16) {
		struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
		memcpy(&s6.sin6_addr, buf, 16);
		(void)zsp_pp_addr_blocked((struct sockaddr *)&s6);
		struct sockaddr_in s4 = {.sin_family = AF_INET};
		memcpy(&s4.sin_addr, buf, 4);
		(void)zsp_pp_addr_blocked((struct sockaddr *)&s4);
	}
}

static __attribute__((unused)) void fuzz_tls(const unsigned char *buf, size_t len)
{
	char sni[ZSP_HOST_MAX];
	const char *err = NULL;
	int rc = zsp_pp_tls_sni(buf, len, sni, &err);
	if (rc == ZSP_TLS_SNI)
		check_host(sni);
	else if (rc == ZSP_PP_ERROR && !err)
		abort();
	else if (rc != ZSP_PP_MORE && rc != ZSP_TLS_NOT_TLS && rc != ZSP_TLS_NO_SNI && rc != ZSP_PP_ERROR)
		abort();
	/* a prefix of a complete ClientHello is never judged otherwise than MORE or the same */
	if (rc == ZSP_TLS_SNI && len > 1 && zsp_pp_tls_sni(buf, len - 1, sni, &err) == ZSP_TLS_NO_SNI)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if ZSP_FUZZ_PROXY == 1
	fuzz_http((const char *)data, size);
#elif ZSP_FUZZ_PROXY == 2
	fuzz_socks(data, size);
#else
	fuzz_tls(data, size);
#endif
	return 0;
}
