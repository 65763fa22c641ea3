/* sandbox.h: what a sandbox keeps of its own in zsp's state directory: one directory per policy
 * and workspace, STATE/sandboxes/KEY, with the tools' caches (cache/ID) and the private /tmp
 * (tmp/), and a small index (meta) saying whose it is. Made and opened without following a
 * symbolic link (the sandbox writes below cache/ and tmp/ and may leave links there), trimmed
 * to the policy's size limits after each run, listed and cleared by `zspc cache`
 * (doc/linux.md "Caches and the private /tmp"). */
#ifndef ZSP_SANDBOX_H
#define ZSP_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "backends/linux.h"

#define ZSP_SANDBOX_KEY_LEN 16

/* Every call that returns int returns an enum zsp_status (zsp.h): ZSP_OK; ZSP_EIO for a state
 * directory that cannot be used (missing and not makeable, not a directory, a symbolic link,
 * someone else's, group- or world-writable, not writable, corrupt), with what to do in err;
 * ZSP_EINTERNAL on out-of-memory. */

/* The key of a policy and a workspace (canonical): 16 hex digits of SHA-256(policy NUL path). */
void zsp_sandbox_key(const char *policy, const char *workspace, char key[ZSP_SANDBOX_KEY_LEN + 1]);

/* STATE/sandboxes/KEY, malloc'd (nothing is made); NULL when out of memory. */
char *zsp_sandbox_path(const char *state_dir, const char *key);

typedef struct zsp_sandbox {
	char *dir;        /* STATE/sandboxes/KEY, malloc'd */
	int fd;           /* that directory, with a shared flock while a run uses it; -1: closed */
	uint64_t avail;   /* free bytes of its file system when it was opened */
} zsp_sandbox;

/* Makes (mode 700) or opens the sandbox of policy and workspace in state_dir, writes its meta,
 * and takes a shared lock on it, waiting while `zspc cache clear` or a trim holds it. */
int zsp_sandbox_open(const char *state_dir, const char *policy, const char *workspace, zsp_sandbox *sb,
		     char *err, size_t errlen);
void zsp_sandbox_close(zsp_sandbox *sb);

/* Makes the plan's state entries below the sandbox (plan.state), each component opened with
 * O_NOFOLLOW and checked to be the user's own. fds[i] gets an O_PATH descriptor of entry i when
 * it is a bind source (argi >= 0), else -1; the caller closes them. */
int zsp_sandbox_prepare(const zsp_sandbox *sb, const zsp_bwrap_state *st, size_t n, int *fds, char *err,
			size_t errlen);

/* What a trim did to cache/ or tmp/: the bytes it held before and after, the files removed. */
typedef struct zsp_sandbox_trimmed {
	const char *sub;  /* "cache" or "tmp" */
	uint64_t before, after, files;
	bool walked;      /* it was measured (else its size was only estimated, below its limit) */
	bool busy;        /* over its limit, but another run was using the sandbox: left as it is */
} zsp_sandbox_trimmed;

/* After a run: cache/ and tmp/ are each kept to a limit (bytes of disk usage; UINT64_MAX: none)
 * by removing their least recently used files (by the later of access and modification), and
 * the directories left empty, until they hold no more; never through a symbolic link, never
 * outside their file system. Measuring means walking every file, so it is done only when the
 * estimate (the size last measured, plus what the file system lost in free space since the
 * sandbox was opened) exceeds the limit, or a day has passed: a run that wrote little costs
 * two statvfs calls. Files are removed only when no other run holds the sandbox; the shared
 * lock is held again when it returns. out[0] is cache/'s, out[1] tmp/'s. */
int zsp_sandbox_trim(zsp_sandbox *sb, uint64_t cache_limit, uint64_t tmp_limit, zsp_sandbox_trimmed out[2],
		     char *err, size_t errlen);

/* One sandbox of a state directory, as `zspc cache list` shows it. */
typedef struct zsp_sandbox_info {
	char key[ZSP_SANDBOX_KEY_LEN + 1];
	char *policy, *workspace;  /* from its meta (escaped as written); NULL when unreadable */
	char *problem;             /* why it cannot be used or read, or NULL */
	char **parts;              /* cache/ID and tmp, with their sizes */
	uint64_t *bytes;
	size_t nparts;
	uint64_t total;
	time_t used;               /* when a run last opened it */
	bool in_use;
} zsp_sandbox_info;

/* Every sandbox of state_dir (none when it has no sandboxes/ directory), sorted by key. */
int zsp_sandbox_list(const char *state_dir, zsp_sandbox_info **out, size_t *n, char *err, size_t errlen);
void zsp_sandbox_list_free(zsp_sandbox_info *v, size_t n);

/* Removes the sandbox key of state_dir, caches and private /tmp. ZSP_EIO (err says so) when a
 * run is using it, and *busy, if not NULL, is set. */
int zsp_sandbox_clear(const char *state_dir, const char *key, bool *busy, char *err, size_t errlen);

#endif
