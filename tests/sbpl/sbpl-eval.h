/* sbpl-eval.h: a test-only evaluator of Seatbelt profiles (SBPL), so that the profiles zspc
 * emits for macOS can be checked against the oracle on any machine (doc/sbpl-eval.md). */
#ifndef SBPL_EVAL_H
#define SBPL_EVAL_H

#include <stdbool.h>
#include <stddef.h>

#define SBPL_MAX_INPUT (8u << 20) /* bytes of profile text */
#define SBPL_MAX_DEPTH 64         /* nesting of parentheses */

typedef struct sbpl_profile sbpl_profile;

/* A -D NAME=VALUE, read by (param "NAME"). */
struct sbpl_param {
	const char *name, *value;
};

/* Which rule decided: line 0 means the profile's default (or the implicit allow). */
struct sbpl_verdict {
	bool allow;
	unsigned line, col;
};

/* Parses and checks a profile. On error returns NULL and writes "LINE:COL: message" to err. */
sbpl_profile *sbpl_parse(const char *text, size_t len, const struct sbpl_param *params, size_t nparams,
			 char *err, size_t errlen);
void sbpl_free(sbpl_profile *p);

/* Decides OPERATION (a concrete name such as file-read-data) on TARGET: a path for file-* and
 * process-exec, "host:port" or "/socket/path" for network-*, a name for mach-lookup,
 * sysctl-read, user-preference-read, iokit-open, a domain (AF_UNIX) for system-socket,
 * "same-sandbox" or anything else for signal and process-info-*; ignored otherwise (may be NULL).
 * Returns 0, or -1 for an unknown operation or a malformed target (err says why). */
int sbpl_decide(const sbpl_profile *p, const char *operation, const char *target, struct sbpl_verdict *v,
		char *err, size_t errlen);

/* sbpl_decide for a process that holds the sandbox extensions exts (class names, such as
 * com.apple.sandbox.pty, which Seatbelt issues for the replica of a pty the sandbox opened
 * through /dev/ptmx) for a path target: what (extension "CLASS") matches. */
int sbpl_decide_ext(const sbpl_profile *p, const char *operation, const char *target,
		    const char *const *exts, size_t nexts, struct sbpl_verdict *v, char *err, size_t errlen);

#endif
