/* netproxy.h: the bridge of `net { mode proxy; }` on Linux (doc/linux.md "The proxy's bridge"):
 * zsp-run's proxy (runtime/proxy.h) serves on listeners made inside the sandbox's network
 * namespace, from outside, while the exec step waits; and the environment that points the
 * sandbox's tools at them. Linux only; zsp-run's, not libzsp's. */
#ifndef ZSP_NETPROXY_H
#define ZSP_NETPROXY_H

#include <stddef.h>
#include <sys/types.h>

#include "compiler/ir.h"
#include "compiler/oracle.h"

/* The port the listeners take on the sandbox's 127.0.0.1 and ::1. A fixed one is safe: the
 * namespace is the sandbox's own, new for the run (nothing else listens there), and the
 * listeners are bound before the command runs, so nothing in the sandbox can take it first. */
#define ZSP_NETPROXY_PORT 3128

/* The per-run secret, hex: 32 random bytes (getrandom). */
#define ZSP_NETPROXY_SECRET_LEN 64

/* Fills secret[ZSP_NETPROXY_SECRET_LEN + 1]. 0, or -1 with errno (no randomness: the run does
 * not start, as a guessable secret is no secret). */
int zsp_netproxy_secret(char *secret);

/* The sandbox's proxy variables, in the order bwrap is to set them: each name is also that of
 * a variable the sandbox must not get from the policy (zsp_netproxy_env_conflict). */
#define ZSP_NETPROXY_NENV 12
typedef struct zsp_netproxy_env {
	const char *name[ZSP_NETPROXY_NENV];
	char *value[ZSP_NETPROXY_NENV];   /* malloc'd: zsp_netproxy_env_free wipes and frees */
} zsp_netproxy_env;

/* e for the proxy on 127.0.0.1:ZSP_NETPROXY_PORT with the secret, for policy p: NO_PROXY holds
 * localhost, 127.0.0.1 and ::1 (the sandbox's own loopback), less those a host rule of p allows
 * by name (the host's service, reached through the proxy). 0, or -1 (out of memory). */
int zsp_netproxy_env_make(zsp_netproxy_env *e, const zsp_ir_policy *p, const char *secret);
void zsp_netproxy_env_free(zsp_netproxy_env *e);

/* The name of the first variable the policy's `env set` gives that mode proxy sets itself, or
 * NULL; *at is that rule. The host's own values of these never reach the sandbox in mode proxy:
 * the proxy's replace them. */
const char *zsp_netproxy_env_conflict(const zsp_ir_policy *p, const zsp_ir_env **at);

/* The options zsp-run sets on its end of the exec step's net socket before bwrap starts (the
 * kernel then attaches the exec step's pid to its request). 0, or -1 with errno. */
int zsp_netproxy_listen(int sock);

/* A child of zsp-run's, started before bwrap and before any thread: it decides with an oracle
 * of its own for p (env), waits on sock for the exec step's request, has a child of its own
 * join the user namespace owning the asker's network namespace, then that namespace, and make
 * the listeners there (127.0.0.1 and, where the namespace has it, ::1, on ZSP_NETPROXY_PORT),
 * which come back over SCM_RIGHTS; then it answers "k" and serves them (zsp_proxy_serve, with
 * the secret) until stop_fd is readable or hung up. Upstream connections are made in its own
 * namespace, the host's. It dies with zsp-run (PR_SET_PDEATHSIG) and holds nothing of zsp-run's
 * but stderr, sock and stop_fd. When the listeners fail it says why on stderr and sends no
 * answer, so the exec step does not run the command; when the sandbox ends before asking it
 * exits quietly. Its pid, or -1 with errno; zsp-run reaps it. */
pid_t zsp_netproxy_start(const zsp_ir_policy *p, const zsp_oracle_env *env, int sock, int stop_fd,
			 const char *secret);

#endif
