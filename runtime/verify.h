/* verify.h: zsp-run --verify (and zspc --verify): every sandbox expectation of a policy's test
 * blocks is run as a probe in the real sandbox, and what the kernel did is compared with what
 * the oracle decided. */
#ifndef ZSP_VERIFY_H
#define ZSP_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

struct zsp_verify_opts {
	const char *file;
	const char *policy;        /* only the test blocks of this policy (NULL: all) */
	const char **includes;
	size_t nincludes;
	bool no_proc;
	bool verbose;              /* print agreements too */
};

/* 0 when the kernel agrees with the oracle on every expectation it could check, 1 on any
 * disagreement (each printed), ZSP_RUN_ESETUP when the sandbox cannot be built, 64/66 as zspc. */
int zsp_verify(const struct zsp_verify_opts *o);

#endif
