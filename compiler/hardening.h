/* hardening.h: the syscalls every zsp sandbox refuses unless a policy lifts them
 * (`syscalls allow`): the set Docker, Flatpak and Firejail agree on (doc/facts.md §seccomp). */
#ifndef ZSP_HARDENING_H
#define ZSP_HARDENING_H

#include <stddef.h>

typedef struct zsp_hardening_call {
	const char *name;
	int err;              /* errno returned: EPERM, or ENOSYS so libc falls back to a filtered call */
	const char *why;
} zsp_hardening_call;

extern const zsp_hardening_call zsp_hardening[];
extern const size_t zsp_hardening_count;

/* The entry for name, or NULL. */
const zsp_hardening_call *zsp_hardening_find(const char *name);

#endif
