/* resolve.h: where a path leads on this machine, walked component by component as the kernel
 * does, with /proc/self meaning the requesting process (doc/oracle.md "Path tools"). */
#ifndef ZSP_RESOLVE_H
#define ZSP_RESOLVE_H

#include "lang/arena.h"

enum zsp_resolve_status {
	ZSP_RESOLVE_OK,          /* *out holds the path reached */
	ZSP_RESOLVE_UNKNOWN,     /* only the requester could follow it: *why says what */
	ZSP_RESOLVE_NOMEM = -1,
};

/* Resolves path (absolute, or relative to cwd) as the requester's open() would: each symlink
 * before the `..` after it (a `..` goes to the parent of the link's target), at most 40 links,
 * and the part that does not exist appended, its `.` and `..` folded. The requester runs on this
 * machine with root `/` and working directory cwd: /proc/self/root and /proc/thread-self/root
 * lead to `/`, /proc/self/cwd to cwd; other entries of /proc/self stay spelt /proc/self/...
 * Nothing below /proc/self, /proc/thread-self or /proc/PID is ever read from this machine (it
 * would describe the oracle itself). UNKNOWN for /proc/self/fd/N, /proc/self/exe, map_files and
 * ns entries, root, cwd and exe of any /proc/PID, /proc/self/cwd without a cwd, a link held by
 * another mount of procfs, and more than 40 links. Never fails but on out-of-memory. */
int zsp_resolve_path(zsp_arena *a, const char *path, const char *cwd, char **out, const char **why);

#endif
