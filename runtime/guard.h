/* guard.h: after a run, what the sandbox left in its writable roots that the host would run
 * later (git config, hooks and pointers at any depth, agent and tool settings) is moved aside
 * and reported. doc/host-later.md says which routes this closes and its window. */
#ifndef ZSP_GUARD_H
#define ZSP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "backends/linux.h"

/* What is moved aside gets this suffix (then .2, .3, ... when taken). */
#define ZSP_GUARD_SUFFIX ".zsp-blocked"

typedef struct zsp_guard_opts {
	const char *const *roots;  /* the sandbox's writable roots, canonical */
	size_t nroots;
	const char *const *fixed;  /* mounted read-only for the run: the sandbox could not change */
	size_t nfixed;             /* them, and anything below them */
	const char *const *names;  /* protected names relative to a directory (".vscode",
				    * ".claude/settings.json"), checked at any depth */
	size_t nnames;
	const char *home;          /* `~/` in a git include path */
	struct timespec since;     /* a file whose ctime is at or after it changed during the run */
	const zsp_walk_index *index; /* directories unchanged since the last check are not read
				    * again (its own index per root, not the backend's); NULL: every
				    * directory is read */
} zsp_guard_opts;

typedef struct zsp_guard_result {
	size_t blocked;            /* moved aside */
	size_t failed;             /* should have been moved and could not be */
	size_t unchecked;          /* directories that could not be walked */
} zsp_guard_result;

/* The ctime threshold for a run starting now: the file system's coarse clock, with a margin
 * (a file changed just before the start is checked too; that is the safe side). */
struct timespec zsp_guard_start(void);

/* Walks every root; reports each move (and each failure) on out, one line each. Returns an enum
 * zsp_status: ZSP_OK (see *r), ZSP_EINTERNAL when out of memory (then the check is incomplete:
 * r->failed is set). */
int zsp_guard_check(const zsp_guard_opts *o, FILE *out, zsp_guard_result *r);

#endif
