/* supervise.h: the supervisor of zsp-run: a thread that takes the sandbox's connect() calls
 * through seccomp user notification and performs each one itself, to an allowed unix socket only
 * (doc/linux.md "Sockets"); with --strict, its path calls too (runtime/opens.h). Linux only;
 * zsp-run's, not libzsp's. */
#ifndef ZSP_SUPERVISE_H
#define ZSP_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/ir.h"

typedef struct zsp_supervisor zsp_supervisor;

typedef struct zsp_supervise_opts {
	bool connects;            /* connect() (zsp_linux_mediates_unix) */
	bool opens;               /* the path calls (zsp-run --strict) */
	const char *workspace, *home;  /* as the oracle takes them, for the path calls */
} zsp_supervise_opts;

/* The supervisor of one run of p: the allowed unix sockets stat'd now, on the host (an allowed
 * path that is no socket now stays unreachable for this run: said on stderr), and the filter
 * zsp-exec installs. ZSP_OK, or ZSP_EINTERNAL / ZSP_EIO with the reason in msg. */
int zsp_supervise_new(const zsp_ir_policy *p, const zsp_supervise_opts *o, zsp_supervisor **out, char *msg,
		      size_t len);

/* The BPF program of the connect() filter (runtime/zsp-exec.c installs it). */
const void *zsp_supervise_filter(const zsp_supervisor *s, size_t *len);

/* Starts the thread; it owns s and sock from here on, also when it cannot start (then the
 * listener that zsp-exec sends is closed with sock, and the sandbox's connect() calls fail with
 * ENOSYS). The thread receives the listener on sock, answers until the sandbox's last process is
 * gone, then frees s. ZSP_OK, or ZSP_EIO with the reason in msg. */
int zsp_supervise_start(zsp_supervisor *s, int sock, char *msg, size_t len);

/* Frees s when it was never started. */
void zsp_supervise_free(zsp_supervisor *s);

#endif
