/* gitlayer.h: the layers of git directories (backends/linux.h zsp_bwrap_layer). Before the run,
 * copies of each git directory's top-level files; after it, what the sandbox changed there is
 * applied to the host: config only as far as it cannot make git run a program. doc/host-later.md
 * ("git's own writes") says what is applied, what is not, and why. */
#ifndef ZSP_GITLAYER_H
#define ZSP_GITLAYER_H

#include <stddef.h>
#include <stdio.h>

#include "backends/linux.h"

typedef struct zsp_gitlayer zsp_gitlayer;

/* Makes base (a fresh directory, mode 0700, whose parents are made as needed) for a plan's
 * layers. *path is base's path (malloc'd) for zsp_linux_opts.layer_dir. ZSP_OK; ZSP_EIO with
 * why (a static buffer) when it cannot be made. */
int zsp_gitlayer_base(const char *state_dir, char **path, const char **why);

/* Fills the plan's layers in base (zsp_gitlayer_base's). ZSP_OK and *out; ZSP_EIO with why
 * (static) when a copy cannot be made; ZSP_EINTERNAL when out of memory. */
int zsp_gitlayer_make(const zsp_bwrap_plan *plan, const char *base, zsp_gitlayer **out,
		      const char **why);

/* After the run (no sandboxed process left): applies to each host git directory what changed
 * in its layer, says on out what was not applied and why, one line each, and removes the
 * layers and base. A layer that could not be applied in full is kept and its path said.
 * Returns the number of changes that could not be applied for a failure (not for a refusal). */
size_t zsp_gitlayer_apply(zsp_gitlayer *g, FILE *out);

/* The host configs apply() wrote (vetted: the check after the run need not judge them). */
const char *const *zsp_gitlayer_written(const zsp_gitlayer *g, size_t *n);

/* Removes what is left of base when apply() did not run (the sandbox never started). */
void zsp_gitlayer_free(zsp_gitlayer *g);

/* Removes an empty base (no layer was needed). */
void zsp_gitlayer_base_remove(const char *base);

#endif
