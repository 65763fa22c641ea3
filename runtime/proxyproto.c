/* proxyproto.c: the egress proxy's parsers (runtime/proxyproto.h): HTTP/1.1 request heads,
 * SOCKS5, the TLS ClientHello's SNI, and the address classes the proxy refuses. Pure. */
#include "runtime/proxyproto.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- helpers ------------------------------------------------------------------------------ */

static bool ct_equal(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	if (alen != blen)
		return false;
	unsigned char d = 0;
	for (size_t i = 0; i < alen; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static bool is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool ieq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

static int http_fail(zsp_pp_http *r, int status, const char *error, const char *detail)
{
	r->status = status;
	r->error = error;
	r->detail = detail;
	return ZSP_PP_ERROR;
}

/* Splits and canonicalizes an authority (host[:port], IPv6 in brackets) with a default port. */
static bool authority_parse(const char *s, size_t n, unsigned defport, char host[ZSP_HOST_MAX],
			    unsigned *port)
{
	char tmp[ZSP_HOST_MAX + 16];
	if (n == 0 || n >= sizeof(tmp) - 8)
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	const char *close = memchr(tmp, ']', n);
	const char *colon = strrchr(tmp, ':');
	bool has_port = tmp[0] == '[' ? close && colon && colon > close : colon != NULL;
	if (!has_port)
		snprintf(tmp + n, sizeof(tmp) - n, ":%u", defport);
	zsp_host_kind kind;
	zsp_host_error e;
	return zsp_hostport_parse(tmp, 0, host, &kind, port, &e);
}

/* ---- HTTP/1.1 ----------------------------------------------------------------------------- */

/* Checks the bytes seen so far: CRLF line ends only, no NUL or other controls but HT. The
 * offset just past the blank line ending the head, 0 when it is not there yet, -1 bad. */
static long head_scan(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c == '\r') {
			if (i + 1 < len && buf[i + 1] != '\n')
				return -1;
		} else if (c == '\n') {
			if (i == 0 || buf[i - 1] != '\r')
				return -1;
			if (i >= 3 && buf[i - 2] == '\n' && buf[i - 3] == '\r')
				return (long)i + 1;
		} else if ((c < 0x20 && c != '\t') || c == 0x7f) {
			return -1;
		}
	}
	return 0;
}

static int parse_target(const char *t, size_t n, zsp_pp_http *r)
{
	if (r->connect) {
		if (!authority_parse(t, n, 0, r->host, &r->port) || memchr(t, ':', n) == NULL)
			return http_fail(r, 400, "bad-request", "CONNECT needs HOST:PORT");
		return ZSP_PP_DONE;
	}
	if (n && t[0] == '/')
		return http_fail(r, 400, "bad-request", "not a proxy request: the target is no absolute URI");
	if (n < 7 || strncasecmp(t, "http://", 7) != 0)
		return http_fail(r, 400, "bad-request",
				 "only http:// in absolute form; https goes through CONNECT");
	const char *a = t + 7, *end = t + n;
	const char *p = a;
	while (p < end && *p != '/' && *p != '?' && *p != '#')
		p++;
	if (memchr(a, '@', (size_t)(p - a)))
		return http_fail(r, 400, "bad-request", "userinfo in the URI is refused");
	if (!authority_parse(a, (size_t)(p - a), 80, r->host, &r->port))
		return http_fail(r, 400, "bad-request", "the URI's host is no host");
	r->path = p;
	r->path_len = (size_t)(end - p);
	return ZSP_PP_DONE;
}

int zsp_pp_http_parse(const char *buf, size_t len, zsp_pp_http *r)
{
	memset(r, 0, sizeof(*r));
	long end = head_scan(buf, len > ZSP_PP_HEAD_MAX ? ZSP_PP_HEAD_MAX : len);
	if (end < 0)
		return http_fail(r, 400, "bad-request", "a control byte or a bare CR or LF in the request head");
	if (end == 0)
		return len >= ZSP_PP_HEAD_MAX ? http_fail(r, 431, "header-too-large", "the request head is over 16 KiB")
					      : ZSP_PP_MORE;
	r->head_len = (size_t)end;
	const char *line_end = memchr(buf, '\r', r->head_len);
	const char *sp1 = memchr(buf, ' ', (size_t)(line_end - buf));
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == buf || sp2 == sp1 + 1)
		return http_fail(r, 400, "bad-request", "the request line is not METHOD TARGET VERSION");
	for (const char *m = buf; m < sp1; m++)
		if (!is_tchar((unsigned char)*m))
			return http_fail(r, 400, "bad-request", "the method is no token");
	if (!ieq(sp2 + 1, (size_t)(line_end - sp2 - 1), "HTTP/1.1") &&
	    !ieq(sp2 + 1, (size_t)(line_end - sp2 - 1), "HTTP/1.0"))
		return http_fail(r, 505, "bad-request", "only HTTP/1.0 and HTTP/1.1");
	r->method = buf;
	r->method_len = (size_t)(sp1 - buf);
	r->connect = r->method_len == 7 && memcmp(buf, "CONNECT", 7) == 0;
	int rc = parse_target(sp1 + 1, (size_t)(sp2 - sp1 - 1), r);
	if (rc != ZSP_PP_DONE)
		return rc;
	r->hdr_off = (size_t)(line_end - buf) + 2;

	int nhost = 0, nauth = 0;
	bool has_cl = false, has_te = false;
	const char *host = NULL;
	size_t host_len = 0;
	for (const char *l = buf + r->hdr_off; l < buf + r->head_len - 2;) {
		const char *e = memchr(l, '\r', (size_t)(buf + r->head_len - l));
		if (*l == ' ' || *l == '\t')
			return http_fail(r, 400, "bad-request", "obsolete line folding is refused");
		const char *colon = memchr(l, ':', (size_t)(e - l));
		if (!colon || colon == l)
			return http_fail(r, 400, "bad-request", "a header line without a name");
		for (const char *c = l; c < colon; c++)
			if (!is_tchar((unsigned char)*c))
				return http_fail(r, 400, "bad-request", "a header name is no token");
		const char *v = colon + 1, *ve = e;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		size_t nl = (size_t)(colon - l);
		if (ieq(l, nl, "Host")) {
			nhost++;
			host = v;
			host_len = (size_t)(ve - v);
		} else if (ieq(l, nl, "Proxy-Authorization")) {
			nauth++;
			r->auth = v;
			r->auth_len = (size_t)(ve - v);
		} else if (ieq(l, nl, "Content-Length")) {
			has_cl = true;
		} else if (ieq(l, nl, "Transfer-Encoding")) {
			has_te = true;
		}
		l = e + 2;
	}
	if (nhost > 1 || nauth > 1)
		return http_fail(r, 400, "bad-request", "several Host or Proxy-Authorization headers");
	if (has_cl && has_te)
		return http_fail(r, 400, "bad-request", "both Content-Length and Transfer-Encoding");
	if (!r->connect && host) {
		char hh[ZSP_HOST_MAX];
		unsigned hp;
		if (!authority_parse(host, host_len, 80, hh, &hp) || strcmp(hh, r->host) != 0 || hp != r->port)
			return http_fail(r, 400, "host-mismatch", "the Host header names another host than the URI");
	}
	return ZSP_PP_DONE;
}

/* Whether the header name[0..n) is listed in a Connection header of the head. */
static bool named_by_connection(const char *buf, const zsp_pp_http *r, const char *name, size_t n)
{
	for (const char *l = buf + r->hdr_off; l < buf + r->head_len - 2;) {
		const char *e = memchr(l, '\r', (size_t)(buf + r->head_len - l));
		const char *colon = memchr(l, ':', (size_t)(e - l));
		if (ieq(l, (size_t)(colon - l), "Connection")) {
			for (const char *t = colon + 1; t < e;) {
				while (t < e && (*t == ' ' || *t == '\t' || *t == ','))
					t++;
				const char *te = t;
				while (te < e && *te != ',' && *te != ' ' && *te != '\t')
					te++;
				if (te > t && (size_t)(te - t) == n && strncasecmp(t, name, n) == 0)
					return true;
				t = te;
			}
		}
		l = e + 2;
	}
	return false;
}

static bool put(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
	if (cap - *n < len)
		return false;
	memcpy(out + *n, s, len);
	*n += len;
	return true;
}

size_t zsp_pp_http_rewrite(const char *buf, const zsp_pp_http *r, char *out, size_t cap)
{
	static const char *const hop[] = {"Connection", "Keep-Alive", "Proxy-Connection",
					  "Proxy-Authorization", "Proxy-Authenticate", "TE",
					  "Trailer", "Upgrade", "Host"};
	size_t n = 0;
	char hostline[ZSP_HOST_MAX + 32];
	int hl = r->port == 80 ? snprintf(hostline, sizeof(hostline), "Host: %s\r\n", r->host)
			       : snprintf(hostline, sizeof(hostline), "Host: %s:%u\r\n", r->host, r->port);
	bool slash = r->path_len == 0 || r->path[0] != '/';
	if (!put(out, cap, &n, r->method, r->method_len) || !put(out, cap, &n, " ", 1) ||
	    (slash && !put(out, cap, &n, "/", 1)) || !put(out, cap, &n, r->path, r->path_len) ||
	    !put(out, cap, &n, " HTTP/1.1\r\n", 11) || !put(out, cap, &n, hostline, (size_t)hl))
		return 0;
	for (const char *l = buf + r->hdr_off; l < buf + r->head_len - 2;) {
		const char *e = memchr(l, '\r', (size_t)(buf + r->head_len - l));
		const char *colon = memchr(l, ':', (size_t)(e - l));
		size_t nl = (size_t)(colon - l);
		bool drop = named_by_connection(buf, r, l, nl);
		for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]) && !drop; i++)
			drop = ieq(l, nl, hop[i]);
		if (!drop && !put(out, cap, &n, l, (size_t)(e - l) + 2))
			return 0;
		l = e + 2;
	}
	return put(out, cap, &n, "Connection: close\r\n\r\n", 21) ? n : 0;
}

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

bool zsp_pp_basic_ok(const char *value, size_t len, const char *secret)
{
	if (!secret || len < 6 || strncasecmp(value, "Basic ", 6) != 0)
		return false;
	const unsigned char *s = (const unsigned char *)value + 6;
	size_t n = len - 6;
	while (n && *s == ' ')
		s++, n--;
	unsigned char dec[768];
	size_t dn = 0;
	unsigned acc = 0;
	int bits = 0;
	size_t pad = 0;
	if (n % 4 != 0 || n / 4 * 3 > sizeof(dec))
		return false;
	while (pad < 2 && n - pad > 0 && s[n - 1 - pad] == '=')
		pad++;
	for (size_t i = 0; i < n - pad; i++) {
		int v = b64val(s[i]);
		if (v < 0)
			return false;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			dec[dn++] = (unsigned char)(acc >> bits);
		}
	}
	unsigned char want[4 + 512];
	size_t sl = strlen(secret);
	if (sl > 512)
		return false;
	memcpy(want, "zsp:", 4);
	memcpy(want + 4, secret, sl);
	return ct_equal(dec, dn, want, sl + 4);
}

/* ---- SOCKS5 ------------------------------------------------------------------------------- */

int zsp_pp_socks_greeting(const unsigned char *buf, size_t len, bool want_auth, size_t *used,
			  unsigned char *method)
{
	if (len < 2)
		return len && buf[0] != 5 ? ZSP_PP_ERROR : ZSP_PP_MORE;
	if (buf[0] != 5)
		return ZSP_PP_ERROR;
	size_t n = buf[1];
	if (len < 2 + n)
		return ZSP_PP_MORE;
	*used = 2 + n;
	*method = 0xFF;
	for (size_t i = 0; i < n; i++)
		if (buf[2 + i] == (want_auth ? 0x02 : 0x00))
			*method = buf[2 + i];
	return ZSP_PP_DONE;
}

int zsp_pp_socks_auth(const unsigned char *buf, size_t len, const char *secret, size_t *used, bool *ok)
{
	if (len < 1)
		return ZSP_PP_MORE;
	if (buf[0] != 1)
		return ZSP_PP_ERROR;
	if (len < 2)
		return ZSP_PP_MORE;
	size_t ul = buf[1];
	if (len < 3 + ul)
		return ZSP_PP_MORE;
	size_t pl = buf[2 + ul];
	if (len < 3 + ul + pl)
		return ZSP_PP_MORE;
	*used = 3 + ul + pl;
	bool user = ct_equal(buf + 2, ul, (const unsigned char *)"zsp", 3);
	bool pass = secret && ct_equal(buf + 3 + ul, pl, (const unsigned char *)secret, strlen(secret));
	*ok = user & pass;
	return ZSP_PP_DONE;
}

int zsp_pp_socks_request(const unsigned char *buf, size_t len, size_t *used, char host[ZSP_HOST_MAX],
			 unsigned *port, unsigned char *reply, const char **error)
{
	*error = "bad-request";
	*reply = ZSP_SOCKS_FAIL;
	if (len >= 1 && buf[0] != 5)
		return ZSP_PP_ERROR;
	if (len < 4)
		return ZSP_PP_MORE;
	if (buf[1] != 1) {   /* 2 BIND, 3 UDP ASSOCIATE, anything else */
		*reply = ZSP_SOCKS_CMD;
		*error = buf[1] == 2 ? "socks-bind" : buf[1] == 3 ? "socks-udp" : "socks-command";
		return ZSP_PP_ERROR;
	}
	char text[ZSP_HOST_MAX + 4];
	size_t need;
	if (buf[3] == 1) {
		need = 4 + 4 + 2;
		if (len < need)
			return ZSP_PP_MORE;
		inet_ntop(AF_INET, buf + 4, text, sizeof(text));
	} else if (buf[3] == 4) {
		need = 4 + 16 + 2;
		if (len < need)
			return ZSP_PP_MORE;
		text[0] = '[';
		inet_ntop(AF_INET6, buf + 4, text + 1, sizeof(text) - 2);
		strcat(text, "]");
	} else if (buf[3] == 3) {
		if (len < 5)
			return ZSP_PP_MORE;
		need = 5 + buf[4] + 2;
		if (len < need)
			return ZSP_PP_MORE;
		memcpy(text, buf + 5, buf[4]);
		text[buf[4]] = '\0';
		if (strlen(text) != buf[4]) {   /* a NUL inside the name */
			*reply = ZSP_SOCKS_NOT_ALLOWED;
			return ZSP_PP_ERROR;
		}
	} else {
		*reply = ZSP_SOCKS_ATYP;
		*error = "socks-address-type";
		return ZSP_PP_ERROR;
	}
	*used = need;
	*port = (unsigned)buf[need - 2] << 8 | buf[need - 1];
	zsp_host_kind kind;
	zsp_host_error e;
	if (*port == 0 || !zsp_host_canon(text, strlen(text), 0, host, &kind, &e)) {
		*reply = ZSP_SOCKS_NOT_ALLOWED;
		return ZSP_PP_ERROR;
	}
	return ZSP_PP_DONE;
}

/* ---- TLS ClientHello ---------------------------------------------------------------------- */

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static int hello_fail(const char **error, const char *why)
{
	*error = why;
	return ZSP_PP_ERROR;
}

/* The server_name extension's body: one host_name entry. */
static int sni_ext(const unsigned char *p, size_t n, char sni[ZSP_HOST_MAX], const char **error)
{
	if (n < 2 || get16(p) != n - 2)
		return hello_fail(error, "tls-bad-hello");
	bool found = false;
	for (size_t i = 2; i < n;) {
		if (n - i < 3)
			return hello_fail(error, "tls-bad-hello");
		unsigned type = p[i], l = get16(p + i + 1);
		if (n - i - 3 < l)
			return hello_fail(error, "tls-bad-hello");
		if (type == 0) {
			zsp_host_kind kind;
			zsp_host_error e;
			if (found || memchr(p + i + 3, '\0', l) ||
			    !zsp_host_canon((const char *)p + i + 3, l, 0, sni, &kind, &e))
				return hello_fail(error, "tls-bad-sni");
			found = true;
		}
		i += 3 + l;
	}
	return found ? ZSP_TLS_SNI : ZSP_TLS_NO_SNI;
}

static int hello_body(const unsigned char *p, size_t n, char sni[ZSP_HOST_MAX], const char **error)
{
	size_t i = 2 + 32;   /* legacy_version, random */
	if (n < i + 1 || n - i - 1 < p[i])
		return hello_fail(error, "tls-bad-hello");
	i += 1 + p[i];       /* session id */
	if (n - i < 2 || n - i - 2 < get16(p + i))
		return hello_fail(error, "tls-bad-hello");
	i += 2 + get16(p + i);   /* cipher suites */
	if (n - i < 1 || n - i - 1 < p[i])
		return hello_fail(error, "tls-bad-hello");
	i += 1 + p[i];       /* compression methods */
	if (i == n)
		return ZSP_TLS_NO_SNI;
	if (n - i < 2 || get16(p + i) != n - i - 2)
		return hello_fail(error, "tls-bad-hello");
	int rc = ZSP_TLS_NO_SNI;
	bool seen = false;
	for (i += 2; i < n;) {
		if (n - i < 4 || n - i - 4 < get16(p + i + 2))
			return hello_fail(error, "tls-bad-hello");
		unsigned type = get16(p + i), l = get16(p + i + 2);
		if (type == 0) {
			if (seen)
				return hello_fail(error, "tls-bad-hello");
			seen = true;
			rc = sni_ext(p + i + 4, l, sni, error);
			if (rc == ZSP_PP_ERROR)
				return rc;
		}
		i += 4 + l;
	}
	return rc;
}

int zsp_pp_tls_sni(const unsigned char *buf, size_t len, char sni[ZSP_HOST_MAX], const char **error)
{
	if (len == 0)
		return ZSP_PP_MORE;
	if (buf[0] != 0x16)
		return ZSP_TLS_NOT_TLS;
	if (len >= 2 && buf[1] != 0x03)
		return ZSP_TLS_NOT_TLS;
	/* the handshake messages spread over records: gathered here, bounded */
	static _Thread_local unsigned char hs[ZSP_PP_HELLO_MAX];
	size_t hn = 0;
	for (size_t i = 0;;) {
		if (len - i < 5)
			return i >= ZSP_PP_HELLO_MAX ? hello_fail(error, "tls-hello-too-large") : ZSP_PP_MORE;
		if (buf[i] != 0x16)
			return hello_fail(error, "tls-bad-hello");
		size_t rl = get16(buf + i + 3);
		if (rl == 0 || rl > 16384 + 256)
			return hello_fail(error, "tls-bad-hello");
		size_t have = len - i - 5 < rl ? len - i - 5 : rl;
		if (hn + have > sizeof(hs))
			return hello_fail(error, "tls-hello-too-large");
		memcpy(hs + hn, buf + i + 5, have);
		hn += have;
		if (hn >= 4) {
			if (hs[0] != 1)
				return hello_fail(error, "tls-not-client-hello");
			size_t ml = (size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3];
			if (ml + 4 > sizeof(hs))
				return hello_fail(error, "tls-hello-too-large");
			if (hn >= ml + 4)
				return hello_body(hs + 4, ml, sni, error);
		}
		if (have < rl)
			return ZSP_PP_MORE;
		i += 5 + rl;
	}
}

/* ---- addresses ---------------------------------------------------------------------------- */

static const char *v4_blocked(uint32_t a)
{
	if (a == 0xA9FEA9FE || a == 0x646464C8 || a == 0xA83F8110) /* 169.254.169.254, 100.100.100.200, 168.63.129.16 */
		return "metadata";
	if ((a >> 24) == 0)
		return "unspecified";
	if ((a >> 24) == 127)
		return "loopback";
	if ((a >> 24) == 10 || (a >> 20) == 0xAC1 || (a >> 16) == 0xC0A8 || (a >> 22) == (0x64400000u >> 22))
		return "private";   /* 10/8, 172.16/12, 192.168/16, 100.64/10 */
	if ((a >> 16) == 0xA9FE)
		return "link-local";
	if (a == 0xFFFFFFFF)
		return "broadcast";
	if ((a >> 28) == 0xE)
		return "multicast";
	if ((a >> 28) == 0xF)
		return "reserved";
	return NULL;
}

const char *zsp_pp_addr_blocked(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_blocked(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return "reserved";
	const unsigned char *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const unsigned char ec2[16] = {0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02};
	static const unsigned char zero[16];
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0)
		return v4_blocked((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15]);
	if (memcmp(b, ec2, 16) == 0)
		return "metadata";
	if (memcmp(b, zero, 15) == 0)
		return b[15] == 1 ? "loopback" : b[15] == 0 ? "unspecified" : "reserved";
	if (memcmp(b, zero, 12) == 0)
		return "reserved";   /* IPv4-compatible */
	if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0))
		return "private";    /* fc00::/7, and fec0::/10 (site-local, deprecated) */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "link-local";
	if (b[0] == 0xff)
		return "multicast";
	return NULL;
}

void zsp_pp_addr_text(const struct sockaddr *sa, char *out, size_t cap)
{
	const void *a = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
						 : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (!inet_ntop(sa->sa_family, a, out, (socklen_t)cap))
		snprintf(out, cap, "?");
}
