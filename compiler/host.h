/* host.h: the one canonical form of a host and port, shared by host rules, connect requests and
 * the proxy (doc/oracle.md "Hosts"): names folded, IP literals in every spelling made one. */
#ifndef ZSP_HOST_H
#define ZSP_HOST_H

#include <stdbool.h>
#include <stddef.h>

/* A canonical host with its NUL: a name is at most 253 bytes, a bracketed IPv6 address 41. */
#define ZSP_HOST_MAX 256
/* Longer input is refused before it is looked at (host-too-long). */
#define ZSP_HOSTPORT_INPUT_MAX 1024

typedef enum zsp_host_kind {
	ZSP_HOST_NAME = 1,   /* "example.com": lower case, no trailing dot */
	ZSP_HOST_IPV4,       /* "127.0.0.1": dotted quad, from any form inet_aton(3) accepts */
	ZSP_HOST_IPV6,       /* "[::1]": brackets and RFC 5952 text */
	ZSP_HOST_ANY,        /* "*" (rules only) */
	ZSP_HOST_SUBDOMAINS, /* "*.example.com": strict subdomains of a name (rules only) */
} zsp_host_kind;

typedef struct zsp_host_error {
	const char *code;  /* stable name such as "host-empty-label" (doc/oracle.md "Hosts") */
	const char *msg;   /* for people, static */
	char hint[320];    /* what to write instead, or "" */
	size_t off, len;   /* the byte span of the input that is wrong (len >= 1 when possible) */
} zsp_host_error;

enum {
	ZSP_HOST_WILDCARD = 1 << 0, /* accept `*` and `*.name` (rules; a request names one host) */
	ZSP_HOST_PORT_ANY = 1 << 1, /* accept the port `*` (rules), returned as 0 */
};

/* Canonicalizes the host s[0..len): a name (ASCII letters, digits, `-`, `_`, labels of 1-63
 * bytes, at most 253 bytes; lower-cased, one trailing dot dropped), an IPv4 address in any form
 * inet_aton(3) accepts (`127.1`, `0x7f.1`, `2130706433`) as a dotted quad, a bracketed IPv6
 * address as RFC 5952 text (an IPv4-mapped one as its IPv4 address). A name whose last label
 * is a number must be such an address. Refused, with e filled: everything else, a zone id,
 * IPv4-compatible IPv6 addresses, non-ASCII names (no IDNA: the A-label must be written).
 * Allocates nothing; thread-safe. */
bool zsp_host_canon(const char *s, size_t len, unsigned flags, char out[ZSP_HOST_MAX],
		    zsp_host_kind *kind, zsp_host_error *e);

/* Splits and canonicalizes "HOST:PORT" (IPv6 as "[ADDR]:PORT"); a port is decimal 1-65535
 * without sign or leading zero. A URL (`https://host`) is refused with the host:port to write
 * in the hint. */
bool zsp_hostport_parse(const char *s, unsigned flags, char host[ZSP_HOST_MAX],
			zsp_host_kind *kind, unsigned *port, zsp_host_error *e);

/* Whether the canonical rule host `rule` covers the canonical request host `host`: `*` every
 * host, `*.name` strict subdomains of name (never name itself, never an IP address), anything
 * else the same text. */
bool zsp_host_matches(const char *rule, const char *host);

#endif
