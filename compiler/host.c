/* host.c: canonical hosts and ports (host.h). Every spelling a resolver or a kernel reads as the
 * same address becomes the same text, so a deny rule cannot be passed by spelling it another way. */
#include "config.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "compiler/host.h"

static bool fail(zsp_host_error *e, const char *code, const char *msg, size_t off, size_t len)
{
	e->code = code;
	e->msg = msg;
	e->hint[0] = '\0';
	e->off = off;
	e->len = len ? len : 1;
	return false;
}

/* ---- IPv4: the forms inet_aton(3) accepts ---------------------------------------------- */

/* One part: 0x hex (at least one digit), 0 octal, else decimal; false past 32 bits. */
static bool aton_part(const char *s, size_t len, uint64_t *val)
{
	unsigned base = 10;
	size_t i = 0;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
		if (len == 2)
			return false;
	} else if (len >= 1 && s[0] == '0') {
		base = 8;
	}
	if (len == 0)
		return false;
	uint64_t v = 0;
	for (; i < len; i++) {
		unsigned c = (unsigned char)s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		if (d >= base)
			return false;
		v = v * base + d;
		if (v > 0xffffffffu)
			return false;
	}
	*val = v;
	return true;
}

/* a.b.c.d, a.b.c (c 16 bits), a.b (b 24 bits), a (32 bits), as glibc's inet_aton. */
static bool parse_aton(const char *s, size_t len, uint32_t *addr)
{
	uint64_t parts[4];
	size_t n = 0, start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (n == 4 || !aton_part(s + start, i - start, &parts[n]))
			return false;
		n++;
		start = i + 1;
	}
	uint64_t v = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		if (parts[i] > 255)
			return false;
		v |= parts[i] << (24 - 8 * i);
	}
	uint64_t last_max = n == 1 ? 0xffffffffu : (1u << (8 * (5 - n))) - 1;
	if (parts[n - 1] > last_max)
		return false;
	*addr = (uint32_t)(v | parts[n - 1]);
	return true;
}

static void put_ipv4(char *out, uint32_t a)
{
	snprintf(out, INET_ADDRSTRLEN, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

/* The last label is a number (digits, or 0x and hex digits): WHATWG's "ends in a number",
 * what resolvers and URL parsers read as an IPv4 address. */
static bool ends_in_number(const char *s, size_t len)
{
	size_t b = len;
	while (b > 0 && s[b - 1] != '.')
		b--;
	const char *l = s + b;
	size_t n = len - b;
	bool hex = n >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X');
	for (size_t i = hex ? 2 : 0; i < n; i++) {
		unsigned char c = (unsigned char)l[i];
		bool digit = c >= '0' && c <= '9';
		if (!digit && !(hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))))
			return false;
	}
	return n > 0;
}

/* ---- IPv6 ------------------------------------------------------------------------------ */

/* RFC 5952: lower-case hex without leading zeros, the longest run of two or more zero fields
 * (the first of equal ones) as `::`. */
static void put_ipv6(char out[ZSP_HOST_MAX], const unsigned char b[16])
{
	unsigned w[8];
	for (int i = 0; i < 8; i++)
		w[i] = (unsigned)b[2 * i] << 8 | b[2 * i + 1];
	int best = -1, best_len = 0;
	for (int i = 0; i < 8;) {
		int j = i;
		while (j < 8 && w[j] == 0)
			j++;
		if (j - i > best_len && j - i >= 2) {
			best = i;
			best_len = j - i;
		}
		i = j > i ? j : i + 1;
	}
	size_t n = 0;
	out[n++] = '[';
	for (int i = 0; i < 8; i++) {
		if (i == best) {
			out[n++] = ':';
			if (i == 0)
				out[n++] = ':';
			i += best_len - 1;
			continue;
		}
		n += (size_t)snprintf(out + n, ZSP_HOST_MAX - n, "%x%s", w[i], i < 7 ? ":" : "");
	}
	out[n++] = ']';
	out[n] = '\0';
}

static bool canon_ipv6(const char *s, size_t len, char out[ZSP_HOST_MAX], zsp_host_kind *kind,
		       zsp_host_error *e)
{
	if (len < 2 || s[len - 1] != ']')
		return fail(e, "host-bracket", "unterminated `[` in IPv6 address", 0, 1);
	const char *zone = memchr(s, '%', len);
	if (zone)
		return fail(e, "host-zone", "an IPv6 zone id (`%eth0`) names an interface of one machine: not allowed",
			    (size_t)(zone - s), (size_t)(s + len - 1 - zone));
	char text[INET6_ADDRSTRLEN];
	unsigned char b[16];
	size_t n = len - 2;
	if (n >= sizeof(text))
		return fail(e, "host-ipv6", "not an IPv6 address", 1, n);
	memcpy(text, s + 1, n);
	text[n] = '\0';
	if (inet_pton(AF_INET6, text, b) != 1)
		return fail(e, "host-ipv6", "not an IPv6 address", 1, n);
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char zero[12] = { 0 };
	if (memcmp(b, mapped, 12) == 0) {
		/* the kernel connects an IPv4-mapped address over IPv4: it is that address */
		put_ipv4(out, (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15]);
		*kind = ZSP_HOST_IPV4;
		return true;
	}
	if (memcmp(b, zero, 12) == 0 && (b[12] | b[13] | b[14] || b[15] > 1))
		return fail(e, "host-ipv4-compatible",
			    "an IPv4-compatible IPv6 address (`::a.b.c.d`, deprecated by RFC 4291) is not allowed: write the IPv4 address",
			    1, n);
	put_ipv6(out, b);
	*kind = ZSP_HOST_IPV6;
	return true;
}

/* ---- names ----------------------------------------------------------------------------- */

static bool name_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '_' || c == '.';
}

/* out: room for 254 bytes (253 and the NUL), which leaves the two of `*.` before it */
static bool canon_name(const char *s, size_t len, char *out, zsp_host_kind *kind, zsp_host_error *e)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80)
			return fail(e, "host-non-ascii",
				    "a host name is ASCII: write an internationalized name as its A-label (`xn--...`)",
				    i, 1);
		if (c == '*')
			return fail(e, "host-wildcard",
				    "a wildcard is only allowed as a whole leading label (`*.example.com`), and only in rules",
				    i, 1);
		if (c == ':')
			return fail(e, "host-ipv6-brackets", "IPv6 addresses are written in brackets: `[::1]:443`", i, 1);
		if (!name_byte(c))
			return fail(e, "host-bad-byte", "not a host name or IP address: a host name holds letters, digits, `-`, `_` and `.`",
				    i, 1);
	}
	if (len > 0 && s[len - 1] == '.')
		len--; /* `example.com.` is `example.com`; only one dot is folded */
	if (len == 0)
		return fail(e, "host-empty", "empty host", 0, 1);
	if (len > 253)
		return fail(e, "host-too-long", "a host name is at most 253 bytes", 0, len);
	for (size_t b = 0; b <= len;) {
		size_t end = b;
		while (end < len && s[end] != '.')
			end++;
		if (end == b)
			return fail(e, "host-empty-label",
				    end == len ? "a host name ends in at most one dot" : "a host name has an empty label (`..`)",
				    b, 1);
		if (end - b > 63)
			return fail(e, "host-long-label", "a label of a host name is at most 63 bytes", b, end - b);
		if (s[b] == '-' || s[end - 1] == '-')
			return fail(e, "host-hyphen", "a label of a host name neither starts nor ends with `-`",
				    s[b] == '-' ? b : end - 1, 1);
		b = end + 1;
	}
	if (ends_in_number(s, len)) {
		uint32_t a;
		if (!parse_aton(s, len, &a))
			return fail(e, "host-bad-number",
				    "looks like an IPv4 address but is none (inet_aton(3) refuses it, a resolver would look it up as a name)",
				    0, len);
		put_ipv4(out, a);
		*kind = ZSP_HOST_IPV4;
		return true;
	}
	for (size_t i = 0; i < len; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	out[len] = '\0';
	*kind = ZSP_HOST_NAME;
	return true;
}

bool zsp_host_canon(const char *s, size_t len, unsigned flags, char out[ZSP_HOST_MAX],
		    zsp_host_kind *kind, zsp_host_error *e)
{
	if (len > ZSP_HOSTPORT_INPUT_MAX)
		return fail(e, "host-too-long", "a host name is at most 253 bytes", 0, len);
	if (len == 0)
		return fail(e, "host-empty", "empty host", 0, 1);
	if (memchr(s, '\0', len))
		return fail(e, "host-bad-byte", "not a host name or IP address: a NUL byte", 0, len);
	if (s[0] == '[')
		return canon_ipv6(s, len, out, kind, e);
	if (len == 1 && s[0] == '*') {
		if (!(flags & ZSP_HOST_WILDCARD))
			return fail(e, "host-wildcard", "a request names one host, not `*`", 0, 1);
		strcpy(out, "*");
		*kind = ZSP_HOST_ANY;
		return true;
	}
	if (len >= 2 && s[0] == '*' && s[1] == '.') {
		if (!(flags & ZSP_HOST_WILDCARD))
			return fail(e, "host-wildcard", "a request names one host, not a pattern", 0, 2);
		zsp_host_kind k;
		if (!canon_name(s + 2, len - 2, out + 2, &k, e)) {
			e->off += 2;
			if (e->off + e->len > len) /* nothing after `*.`: the caret on the dot */
				e->off = len - 1, e->len = 1;
			return false;
		}
		if (k != ZSP_HOST_NAME)
			return fail(e, "host-wildcard-ip", "a `*.` pattern matches domain names, never IP addresses", 0, len);
		if (strlen(out + 2) > 251)
			return fail(e, "host-too-long", "a host name is at most 253 bytes", 0, len);
		out[0] = '*';
		out[1] = '.';
		*kind = ZSP_HOST_SUBDOMAINS;
		return true;
	}
	return canon_name(s, len, out, kind, e);
}

/* ---- HOST:PORT ------------------------------------------------------------------------- */

static bool parse_port(const char *p, unsigned flags, unsigned *port)
{
	if ((flags & ZSP_HOST_PORT_ANY) && strcmp(p, "*") == 0) {
		*port = 0;
		return true;
	}
	size_t n = strspn(p, "0123456789");
	if (n == 0 || n > 5 || p[n] || p[0] == '0')
		return false;
	unsigned long v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned long)(p[i] - '0');
	if (v > 65535)
		return false;
	*port = (unsigned)v;
	return true;
}

/* `scheme://host[:port][/...]`: the error names what to write instead. */
static bool url_error(const char *s, zsp_host_error *e)
{
	fail(e, "host-url", "a URL where a host belongs: write the host and port only", 0, strlen(s));
	const char *scheme_end = strstr(s, "://");
	if (!scheme_end)
		return false;
	const char *h = scheme_end + 3, *end = h + strcspn(h, "/?#");
	const char *at = memchr(h, '@', (size_t)(end - h));
	if (at)
		h = at + 1;
	size_t slen = (size_t)(scheme_end - s), hlen = (size_t)(end - h);
	const char *port = slen == 5 && strncmp(s, "https", 5) == 0 ? "443"
			   : slen == 4 && strncmp(s, "http", 4) == 0 ? "80" : "PORT";
	const char *close = h[0] == '[' ? memchr(h, ']', hlen) : NULL;
	const char *after = close ? close + 1 : h;
	bool has_port = after < end && memchr(after, ':', (size_t)(end - after)) != NULL;
	if (hlen > 0 && hlen <= 260)
		snprintf(e->hint, sizeof(e->hint), "write `%.*s%s%s`", (int)hlen, h, has_port ? "" : ":",
			 has_port ? "" : port);
	return false;
}

bool zsp_hostport_parse(const char *s, unsigned flags, char host[ZSP_HOST_MAX],
			zsp_host_kind *kind, unsigned *port, zsp_host_error *e)
{
	size_t len = strlen(s);
	if (len > ZSP_HOSTPORT_INPUT_MAX)
		return fail(e, "host-too-long", "a host name is at most 253 bytes", 0, len);
	if (strchr(s, '/'))
		return url_error(s, e);
	const char *colon;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close)
			return fail(e, "host-bracket", "unterminated `[` in IPv6 address", 0, 1);
		if (close[1] && close[1] != ':')
			return fail(e, "host-bracket", "expected `:PORT` after `]`", (size_t)(close + 1 - s), 1);
		colon = close[1] ? close + 1 : NULL;
	} else {
		colon = strrchr(s, ':');
		if (colon && memchr(s, ':', (size_t)(colon - s)))
			return fail(e, "host-ipv6-brackets", "IPv6 addresses are written in brackets: `[::1]:443`",
				    0, len);
	}
	if (!colon) {
		fail(e, "host-no-port", "no port", 0, len);
		int n = (int)(len > 140 ? 140 : len);
		if (flags & ZSP_HOST_PORT_ANY)
			snprintf(e->hint, sizeof(e->hint), "write `%.*s:443`, or `%.*s:*` for any port", n, s, n, s);
		else
			snprintf(e->hint, sizeof(e->hint), "write `%.*s:443`", n, s);
		return false;
	}
	if (!zsp_host_canon(s, (size_t)(colon - s), flags, host, kind, e))
		return false;
	if (!parse_port(colon + 1, flags, port))
		return fail(e, "host-port",
			    flags & ZSP_HOST_PORT_ANY ? "invalid port: a port is 1 to 65535 (decimal, no leading zero) or `*`"
						      : "invalid port: a port is 1 to 65535 (decimal, no leading zero)",
			    /* an empty port: the caret on the colon, inside the input */
			    (size_t)(colon - s) + (colon[1] != '\0'), colon[1] ? strlen(colon + 1) : 1);
	return true;
}

/* ---- matching -------------------------------------------------------------------------- */

bool zsp_host_matches(const char *rule, const char *host)
{
	if (strcmp(rule, "*") == 0)
		return true;
	if (rule[0] == '*' && rule[1] == '.') {
		/* strict subdomains only: never the apex, never an IP literal */
		size_t hl = strlen(host), sl = strlen(rule + 1);
		bool ip = host[0] == '[' || strspn(host, "0123456789.") == hl;
		return !ip && hl > sl && strcmp(host + hl - sl, rule + 1) == 0;
	}
	return strcmp(rule, host) == 0;
}
