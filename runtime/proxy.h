/* proxy.h: zsp's egress proxy for `net { mode proxy; }` (doc/proxy.md). One implementation
 * serves both zsp-run on Linux (which hands it listeners made inside the sandbox's network
 * namespace) and the zsp-proxy program on macOS (which listens on the host's loopback). Every
 * host and port is decided by zsp_oracle_connect, the function `zspc --query 'connect "H:P"'`
 * asks; the proxy adds what the oracle cannot: resolution, the address checks, the TLS
 * ClientHello check, and connecting to exactly the address it checked. */
#ifndef ZSP_PROXY_H
#define ZSP_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "compiler/oracle.h"

/* A pinned name: HOST on PORT is taken to resolve to addr only (like curl's --resolve
 * HOST:PORT:ADDR). A pin counts as naming the address, so the address checks pass it. */
typedef struct zsp_proxy_pin {
	const char *host;   /* as canonicalized by compiler/host.h */
	unsigned port;
	struct sockaddr_storage addr;
	socklen_t addrlen;
} zsp_proxy_pin;

/* Where each connection decision goes (the audit trail: zsp-run and zsp-proxy pass the store's
 * writer; NULL: nowhere). begin is called before the upstream connect and returns a handle
 * (0 on failure to record: the connection is then refused, fail closed); end completes it
 * with the byte counts and the duration. Called from the proxy's one thread. */
typedef struct zsp_proxy_audit {
	void *ctx;
	long long (*begin)(void *ctx, const char *host, unsigned port, const char *addr,
			   const zsp_verdict *v);
	void (*end)(void *ctx, long long handle, unsigned long long up, unsigned long long down,
		    long long duration_ms, const char *error);
	/* A request for HOST:PORT that was refused (reason as in X-Proxy-Error; v the oracle's
	 * verdict, or NULL when the refusal came before or after the oracle). May be NULL. */
	void (*refused)(void *ctx, const char *host, unsigned port, const char *reason,
			const zsp_verdict *v);
} zsp_proxy_audit;

typedef struct zsp_proxy_cfg {
	const zsp_oracle *oracle;      /* decides every host and port */
	const int *listeners;          /* listening stream sockets (any namespace), non-blocking */
	size_t nlisteners;
	const char *secret;            /* the per-run secret every client must present: HTTP
					* Proxy-Authorization Basic with user "zsp" and this as the
					* password, SOCKS5 username/password (RFC 1929) the same;
					* NULL: no authentication (zsp-proxy --no-auth only) */
	const zsp_proxy_pin *pins;
	size_t npins;
	/* What getaddrinfo would answer, for tests (zsp-proxy's $ZSP_PROXY_HOSTS in a test
	 * build): a name listed here resolves to its addresses only, any other name fails; unlike
	 * a pin, the address checks still apply. Ports are ignored. NULL: getaddrinfo. */
	const zsp_proxy_pin *lookup;
	size_t nlookup;
	const zsp_proxy_audit *audit;  /* NULL: no audit */
	unsigned max_conns;            /* open client connections at once; 0: the default */
	int idle_timeout_ms;           /* a connection idle this long is closed; 0: the default */
	int header_timeout_ms;         /* a request not complete by then gets 408; 0: the default */
	const char *policy;            /* the policy's name, for the `zspc grant add` line an ask
					* refusal names; NULL: left out */
	int log_fd;                    /* one line per refusal for people (zsp-run: stderr); -1: none */
} zsp_proxy_cfg;

/* Serves until stop_fd becomes readable or is hung up (zsp-run: the end of a pipe it holds,
 * closed when the sandbox ends; the proxy then closes every connection and returns). Runs in
 * the calling thread. ZSP_OK, or an enum zsp_status with why in err. */
int zsp_proxy_serve(const zsp_proxy_cfg *cfg, int stop_fd, char *err, size_t errlen);

#endif
