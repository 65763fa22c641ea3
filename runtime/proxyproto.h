/* proxyproto.h: the egress proxy's parsers (doc/proxy.md), pure: bytes in, a result out, no
 * sockets, no allocation, so that each can be fuzzed and unit-tested on its own. The event loop
 * (runtime/proxy.c) feeds them what it has read so far and acts on the answer. */
#ifndef ZSP_PROXYPROTO_H
#define ZSP_PROXYPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "compiler/host.h"

/* What a parser says about the bytes it was given. */
enum {
	ZSP_PP_MORE = 0,   /* incomplete: read more and ask again */
	ZSP_PP_DONE = 1,   /* complete: the out-structure is filled */
	ZSP_PP_ERROR = -1, /* refused: the out-structure's error says why */
};

/* ---- HTTP/1.1 ------------------------------------------------------------------------- */

/* The largest request head (request line and headers) read: past it, 431. */
#define ZSP_PP_HEAD_MAX 16384

typedef struct zsp_pp_http {
	bool connect;                 /* CONNECT host:port; else an absolute-form request */
	char host[ZSP_HOST_MAX];      /* canonical (compiler/host.h) */
	unsigned port;
	size_t head_len;              /* bytes of the head, its blank line included */
	const char *auth;             /* the Proxy-Authorization value (into the input), or NULL */
	size_t auth_len;
	/* absolute-form only: the request line's pieces and where the headers start, all into the
	 * input, for zsp_pp_http_rewrite */
	const char *method, *path;
	size_t method_len, path_len;
	size_t hdr_off;               /* where the first header line starts */
	int status;                   /* on ZSP_PP_ERROR: 400, 405, 431, 501 */
	const char *error;            /* on ZSP_PP_ERROR: the X-Proxy-Error reason, static */
	const char *detail;           /* for people, static */
} zsp_pp_http;

/* Parses a request head from buf[0..len). ZSP_PP_MORE until the blank line is there (or the
 * head passes ZSP_PP_HEAD_MAX: 431); ZSP_PP_DONE with r filled; ZSP_PP_ERROR with r->status,
 * r->error and r->detail. Refused: a bare CR or LF, NUL and control bytes, obsolete line
 * folding, a header name that is no token, a method other than CONNECT with an origin-form
 * target, an https: or other scheme in absolute form, userinfo, several Host or
 * Proxy-Authorization headers, Content-Length with Transfer-Encoding, and an absolute URI
 * whose Host header names another host or port (host-mismatch). */
int zsp_pp_http_parse(const char *buf, size_t len, zsp_pp_http *r);

/* Writes the absolute-form request r (parsed from buf) in origin form to out[0..cap): the
 * request line with the path only, Host, the client's headers without the hop-by-hop ones
 * (Connection and what it names, Keep-Alive, Proxy-Connection, Proxy-Authorization, TE,
 * Trailer, Upgrade) and `Connection: close`. The length, or 0 when cap is too small. */
size_t zsp_pp_http_rewrite(const char *buf, const zsp_pp_http *r, char *out, size_t cap);

/* Whether an Authorization value is `Basic base64("zsp:" secret)` (the scheme case-folded),
 * compared in time that depends on the lengths only. */
bool zsp_pp_basic_ok(const char *value, size_t len, const char *secret);

/* ---- SOCKS5 (RFC 1928, RFC 1929) --------------------------------------------------------- */

/* SOCKS5 reply codes (RFC 1928 §6) */
enum {
	ZSP_SOCKS_OK = 0x00, ZSP_SOCKS_FAIL = 0x01, ZSP_SOCKS_NOT_ALLOWED = 0x02,
	ZSP_SOCKS_NET_UNREACH = 0x03, ZSP_SOCKS_HOST_UNREACH = 0x04, ZSP_SOCKS_REFUSED = 0x05,
	ZSP_SOCKS_TTL = 0x06, ZSP_SOCKS_CMD = 0x07, ZSP_SOCKS_ATYP = 0x08,
};

/* The greeting: VER 5, NMETHODS, METHODS. ZSP_PP_DONE with *used its length and *method the
 * method to answer (0x00 no authentication when want_auth is false and offered; 0x02
 * username/password when want_auth and offered; else 0xFF: no acceptable method). */
int zsp_pp_socks_greeting(const unsigned char *buf, size_t len, bool want_auth, size_t *used,
			  unsigned char *method);

/* The RFC 1929 sub-negotiation: ZSP_PP_DONE with *used, and *ok whether the user is `zsp`
 * and the password the secret (constant time). ZSP_PP_ERROR: not version 1. */
int zsp_pp_socks_auth(const unsigned char *buf, size_t len, const char *secret, size_t *used, bool *ok);

/* The request: ZSP_PP_DONE with *used, host (canonical) and port filled, or ZSP_PP_ERROR with
 * *reply the SOCKS reply code to send (0x07 for BIND and UDP ASSOCIATE, 0x08 for an unknown
 * address type, 0x02 for a host name that is no host: *error its reason). */
int zsp_pp_socks_request(const unsigned char *buf, size_t len, size_t *used, char host[ZSP_HOST_MAX],
			 unsigned *port, unsigned char *reply, const char **error);

/* ---- TLS ClientHello ------------------------------------------------------------------- */

/* How much of a tunnel's first bytes is kept to find a ClientHello's SNI: past it, refused. */
#define ZSP_PP_HELLO_MAX 16384

enum {
	ZSP_TLS_NOT_TLS = 2, /* the first bytes are not a TLS handshake record: nothing to check */
	ZSP_TLS_NO_SNI = 3,  /* a ClientHello without server_name */
	ZSP_TLS_SNI = 4,     /* a ClientHello with a host_name: sni filled (canonical) */
};

/* Looks at a tunnel's first client bytes buf[0..len): ZSP_PP_MORE (the ClientHello is not
 * complete yet: it may span several reads and several TLS records), ZSP_TLS_NOT_TLS,
 * ZSP_TLS_NO_SNI, ZSP_TLS_SNI with sni canonical, or ZSP_PP_ERROR with *error (a malformed
 * ClientHello, an SNI that is no host name, a ClientHello over ZSP_PP_HELLO_MAX). */
int zsp_pp_tls_sni(const unsigned char *buf, size_t len, char sni[ZSP_HOST_MAX], const char **error);

/* ---- addresses ------------------------------------------------------------------------- */

/* Why the proxy never connects to the address unless a rule or a pin names it: "loopback",
 * "private", "link-local", "multicast", "unspecified", "broadcast", "metadata", "reserved", or
 * NULL for an address that is fine. IPv4-mapped IPv6 addresses are judged as their IPv4. */
const char *zsp_pp_addr_blocked(const struct sockaddr *sa);

/* The address as text without port ("10.0.0.1", "::1"), into out (at least 64 bytes). */
void zsp_pp_addr_text(const struct sockaddr *sa, char *out, size_t cap);

#endif
