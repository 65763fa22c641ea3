/* launch.h: one sandboxed run: the policy lowered for this machine (bwrap argv, BPF), then bwrap
 * started with a clean environment and only the descriptors it needs, waited for, cleaned up after. */
#ifndef ZSP_LAUNCH_H
#define ZSP_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "backends/linux.h"
#include "runtime/sandbox.h"

/* Exit status when the sandbox cannot be set up (the command never ran). */
#define ZSP_RUN_ESETUP 125
/* Exit status when the command ran but what it left for the host to run could not all be moved
 * aside (runtime/guard.h): the host is not safe to use there until it is removed. */
#define ZSP_RUN_EGUARD 121

typedef struct zsp_launch {
	const zsp_ir_policy *p;
	zsp_bwrap_plan plan;
	char *bpf;                 /* malloc'd */
	size_t bpflen;
	const char *bwrap;         /* path of bwrap */
	const char *home;          /* for the check after the run (`~/` in git include paths) */
	const char *workspace;     /* canonical; checked after the run even inside a shared root
				    * (/tmp) that is not walked, when the sandbox could write it */
	bool quiet;                /* no diagnosis on stderr when the sandbox fails to start */
	const char *layer_base;    /* zsp_linux_opts.layer_dir, made by zsp_gitlayer_base (NULL:
				    * none); the run fills it and removes it (runtime/gitlayer.h) */
	bool exec_step;            /* the plan binds zsp-exec (zsp_linux_opts.exec_step) */
	zsp_sandbox *sandbox;      /* the policy and workspace's own state (plan.state is made
				    * there, and trimmed after the run), or NULL */
	const zsp_walk_index *walk_index; /* zsp_linux_opts.walk_index: the check after the run
				    * keeps its own indexes with it (NULL: none) */
	bool opens_decided;        /* zsp_linux_opts.opens_decided: the supervisor takes the path
				    * calls (runtime/opens.h) */
} zsp_launch;

/* Lowers p for a run with the options o (its seccomp is always on). Diagnostics go to d. Returns
 * an enum zsp_status: ZSP_OK; ZSP_EPOLICY after errors were reported on d; otherwise the status
 * of zsp_bwrap_plan_build or zsp_seccomp_export (ZSP_EINTERNAL, ZSP_EIO; also reported). */
int zsp_launch_prepare(zsp_launch *l, const zsp_ir_policy *p, zsp_arena *a, zsp_diag *d,
		       const zsp_linux_opts *o);
void zsp_launch_release(zsp_launch *l);

/* Runs argv (argv[0] looked up on the sandbox's PATH) in the sandbox, with the policy's resource
 * limits, stdin/stdout/stderr inherited (those that are a terminal replaced by the sandbox's
 * own pty, relayed until the end: runtime/pty.h) and every other descriptor closed; with l->exec_step
 * through zsp-exec (zsp_exec_path), which exits 127 for a command not found and 126 for one
 * that cannot be run. The plan's state entries are made in l->sandbox first, and its bind
 * sources given to bwrap as the descriptors opened there (--bind-fd); after the run the caches
 * and the private /tmp are trimmed to the policy's limits, what was removed said on stderr.
 * Returns the command's exit status (128+N for signal N), or ZSP_RUN_ESETUP when the sandbox
 * could not be set up (then *why, if not NULL, says what failed; with the exec step that is
 * known for sure, as zsp-exec reports before it runs the command). After the run, what the
 * sandbox left in a git directory's layer is applied to the host as far as it is safe
 * (runtime/gitlayer.h), and what it left for the host to run is moved aside and reported on
 * stderr; ZSP_RUN_EGUARD (with *why) when some of it could not be. Signals that ask zsp-run to
 * stop (INT, TERM, HUP, QUIT) are passed on to the sandbox. */
int zsp_launch_run(const zsp_launch *l, char *const *argv, const char **why);

/* The bwrap zsp-run uses: the one found at configure time (a test build: $ZSP_BWRAP). */
const char *zsp_bwrap_path(void);

/* zsp's exec step (runtime/zsp-exec.c) on the host: $(pkglibexecdir)/zsp-exec for a zsp-run
 * installed in $(bindir), else the zsp-exec beside the running zsp-run (a build tree, a copy):
 * never one for the other, so that a zsp-run and its exec step come from one build. */
const char *zsp_exec_path(void);

#endif
