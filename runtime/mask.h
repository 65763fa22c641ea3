/* mask.h: the file masks zsp-run makes in the sandbox's mount namespace, from outside, while
 * the exec step waits (doc/linux.md "Masks"). bwrap would make them too, but it reads its whole
 * mount table after every bind, so a mask per file would cost launch time in the square of the
 * files masked. Linux only; zsp-run's, not libzsp's. */
#ifndef ZSP_MASK_H
#define ZSP_MASK_H

#include <stddef.h>

/* The options zsp-run sets on its end of the exec step's socket before bwrap starts: the
 * kernel then attaches the exec step's pid to its request. 0, or -1 with errno. */
int zsp_masks_listen(int sock);

/* Waits on sock for the exec step's request, then binds ZSP_MASK_PATH (linux.h) over each of
 * paths[0..n) in the mount namespace of the process that asked (opened there without following
 * a symbolic link: a path that is one now, or a directory, fails the run), checks that each
 * now reads as the empty mask, and answers. A path that no longer exists has nothing left to
 * hide and is skipped. ZSP_OK when every mask holds (or the sandbox ended before asking: its
 * status says why); otherwise ZSP_EIO with the reason in msg, no answer sent, and the exec step
 * does not run the command. */
int zsp_masks_make(int sock, char *const *paths, size_t n, char *msg, size_t len);

#endif
