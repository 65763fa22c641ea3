/* opens.h: zsp-run --strict's open decisions (doc/linux.md "Strict"). The sandbox's open, openat,
 * creat, truncate, rename and link calls come to zsp-run's supervisor through seccomp user
 * notification; each is resolved inside the sandbox's root by the supervisor itself, judged
 * against the policy's glob rules on the path it found (one decision with the oracle's
 * read_file/edit_file: zsp_oracle_fs_rule), and performed by the supervisor on exactly what it
 * judged: the descriptor it opened is given to the caller (SECCOMP_IOCTL_NOTIF_ADDFD), never the
 * call continued, as the kernel would read the path again from memory the sandbox controls.
 * Linux only; zsp-run's. */
#ifndef ZSP_OPENS_H
#define ZSP_OPENS_H

#include <linux/seccomp.h>
#include <stdbool.h>

#include "compiler/ir.h"

typedef struct zsp_opens zsp_opens;

/* The decisions of one run of p; workspace and home as the oracle takes them. NULL on
 * out-of-memory. p must outlive the result. */
zsp_opens *zsp_opens_new(const zsp_ir_policy *p, const char *workspace, const char *home);
void zsp_opens_free(zsp_opens *o);

/* The system calls zsp_opens_answer takes (the notify filter sends exactly these). */
bool zsp_opens_takes(int nr);

/* What zsp_opens_answer did besides returning an errno. */
enum {
	ZSP_OPENS_SENT = -1,    /* answered: the descriptor went with the answer */
	ZSP_OPENS_BLOCKS = -2,  /* nothing done: the open may block (a FIFO), answer it again with
				 * may_block on a thread of its own */
};

/* Decides and performs req on listener: 0 for success (to be answered with *val), an errno to
 * answer with, or one of the codes above. may_block: the open of a FIFO may wait for its peer
 * here. Safe to call from several threads at once. */
int zsp_opens_answer(const zsp_opens *o, int listener, const struct seccomp_notif *req, bool may_block,
		     long long *val);

/* Makes the calling thread fit to perform the sandbox's calls: its own umask of 0 (the caller's
 * is applied to the mode given), and as root no effective capabilities (the sandbox has none,
 * so the supervisor must not open what it could not). Threads it creates inherit both. 0, or
 * the errno of what failed. */
int zsp_opens_thread_setup(void);

#endif
