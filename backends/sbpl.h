/* sbpl.h: the macOS lowering of a normalized policy: a Seatbelt profile (SBPL) for sandbox-exec.
 * zspc --emit sbpl|sandbox-exec uses it; doc/sbpl.md says what each rule becomes and why. */
#ifndef ZSP_SBPL_H
#define ZSP_SBPL_H

#include <stddef.h>

#include "backends/backend.h"
#include "compiler/ir.h"
#include "lang/diag.h"

typedef struct zsp_sbpl_profile {
	char *text;               /* the profile, NUL-terminated; malloc'd */
	size_t len;
	const char **params;      /* parameters the profile reads with (param "NAME"), sorted;
				   * malloc'd array of strings owned by the IR */
	size_t nparams;
} zsp_sbpl_profile;

/* Lowers p. source names the policy file in the header. Warnings (ZSP_W_UNENFORCED) and errors
 * go to d. Returns an enum zsp_status: ZSP_OK; ZSP_EPOLICY after an error was reported;
 * ZSP_EINTERNAL on out-of-memory (also reported). Unless ZSP_OK, *out holds nothing to free. */
int zsp_sbpl_emit(const zsp_ir_policy *p, const char *source, zsp_diag *d, zsp_sbpl_profile *out);
void zsp_sbpl_profile_free(zsp_sbpl_profile *prof);

/* The path macOS resolves: /tmp, /var and /etc (whole first component) live under /private.
 * malloc'd; NULL on out-of-memory. */
char *zsp_sbpl_canonical(const char *path);

/* The macOS rows of the backend table (backends/table.c): the profile, and the sandbox-exec
 * command line running in->command, with one -DNAME=VALUE per parameter the profile reads
 * (the built-in ones from in->machine, canonical). */
int zsp_sbpl_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out);
int zsp_sandbox_exec_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out);

#endif
