/* mask.h: the file masks zsp-run makes in the sandbox's mount namespace, from outside, while
 * the exec step waits (doc/linux.md "Masks"). bwrap would make them too, but it reads its whole
 * mount table after every bind, so a mask per file would cost launch time in the square of the
 * files masked. Linux only; zsp-run's, not libzsp's. */
#ifndef ZSP_MASK_H
#define ZSP_MASK_H

#include <stddef.h>
#include <sys/types.h>

/* The options zsp-run sets on its end of the exec step's socket before bwrap starts: the
 * kernel then attaches the exec step's pid to its request. 0, or -1 with errno. */
int zsp_masks_listen(int sock);

/* The pid the kernel attached to the exec step's request byte on such a socket (the byte must be
 * want: 'm' for the masks, 'n' for mode proxy's listeners): >0, 0 when the sandbox closed the
 * socket first, -1 with errno (EPROTO for another byte or no credentials). */
pid_t zsp_exec_step_request(int sock, char want);

/* A child of zsp-run's, started before bwrap (so that its fork costs nothing on the way to the
 * command), that waits on sock for the exec step's request, then binds ZSP_MASK_PATH (linux.h)
 * over each of paths[0..n) in the mount namespace of the process that asked (opened there
 * without following a symbolic link: a path that is one now, or a directory, fails the run),
 * checks that each now reads as the empty mask, and answers. A path that no longer exists has
 * nothing left to hide and is skipped. When a mask fails it says why on stderr and sends no
 * answer, so the exec step does not run the command; when the sandbox ends before asking it
 * exits quietly. It holds nothing of zsp-run's but stderr and sock. Its pid, or -1 with errno;
 * zsp-run reaps it. */
pid_t zsp_masks_start(int sock, char *const *paths, size_t n);

#endif
