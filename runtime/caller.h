/* caller.h: what zsp-run's supervisor learns about the sandboxed thread a seccomp notification
 * is about (runtime/supervise.c, runtime/opens.c): its working directory and root as the
 * sandbox sees them, its descriptors, a string from its memory, its ids in the sandbox's /proc.
 * Everything read here may change the moment after: callers decide on what they resolve
 * themselves, never on what they read (doc/linux.md "Sockets", "Strict"). */
#ifndef ZSP_CALLER_H
#define ZSP_CALLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The caller is still blocked in the call notification id is about: its pid still names it. */
bool zsp_caller_valid(int listener, uint64_t id);

/* The caller's working directory as the sandbox sees it: /proc/TID/cwd read from outside names
 * it from the top of the sandbox's own mount tree, its root. false when it is gone or too long. */
bool zsp_caller_cwd(pid_t tid, char *buf, size_t size);

/* A pidfd of the calling thread (PIDFD_THREAD from Linux 6.9; before it, of its thread group's
 * leader, whose descriptor table the thread shares unless it unshared it). -1 with errno set. */
int zsp_caller_pidfd(pid_t tid);

/* The NUL-terminated string at addr in tid's memory into buf: 0, ENAMETOOLONG when it does not
 * fit in size bytes, EFAULT when it cannot be read, ESRCH when the caller is gone. */
int zsp_caller_string(pid_t tid, uint64_t addr, char *buf, size_t size);

/* From /proc/TID/status: the thread's process and thread ids in the sandbox's pid namespace
 * (the second entries of NStgid and NSpid: zsp-run's namespace is the first, bwrap makes one
 * below it) and its umask. false when the caller is gone or the file says otherwise. */
typedef struct zsp_caller_ids {
	long tgid, tid;
	mode_t umask;
} zsp_caller_ids;
bool zsp_caller_ids_read(pid_t tid, zsp_caller_ids *out);

/* The device number of tid's controlling terminal (0: none), from /proc/TID/stat. -1 when it
 * cannot be read. */
long long zsp_caller_tty(pid_t tid);

#endif
