/* backend.h: the one interface of every lowering. A backend turns one normalized policy (its
 * parameters resolved through the IR) into what a platform enforces. Adding a backend is one
 * file and one row of the table in backends/table.c; zspc --emit NAME finds it there. */
#ifndef ZSP_BACKEND_H
#define ZSP_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/ir.h"
#include "compiler/params.h"
#include "compiler/zsp.h"
#include "lang/buf.h"
#include "lang/diag.h"

struct zsp_wsl_invocation;

/* Everything a backend may know besides the policy: backends never read the environment, the
 * password database or the current directory themselves (doc/linux.md "Inputs"). */
typedef struct zsp_backend_input {
	const zsp_ir_policy *p;
	const char *source;              /* the policy file as named (profile headers) */
	char *const *environ;            /* what `env` rules pick from (NULL: nothing) */
	const char *chdir;               /* where the sandboxed command starts (NULL: unchanged) */
	const zsp_builtin_params *machine;   /* values for parameters a command line passes on */
	const char *const *command;      /* the command to run, for backends that print one */
	size_t ncommand;
	bool nul;                        /* bwrap: NUL-separated arguments (bwrap --args FD) */
	const struct zsp_wsl_invocation *wsl;   /* wsl: the translated zsp-run invocation */
	const char *sandbox_dir;         /* bwrap: where zsp-run keeps this policy and workspace's
					  * caches and private /tmp (runtime/sandbox.h) */
} zsp_backend_input;

typedef struct zsp_backend {
	const char *name;                /* --emit NAME */
	const char *platform;            /* linux, macos, windows */
	const char *what;                /* one line for --help */
	bool binary;                     /* not text: refused on a terminal */
	bool command;                    /* prints a command line: needs input->command */
	/* Warnings (ZSP_W_UNENFORCED) for what the platform cannot enforce as written. */
	void (*check)(const zsp_backend_input *in, zsp_diag *d);
	/* Appends the lowering to out. ZSP_OK; ZSP_EPOLICY after errors on d; ZSP_EINTERNAL on
	 * out-of-memory (reported on d). Runs check first. */
	int (*emit)(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out);
} zsp_backend;

/* The table, NULL-name-terminated, and a row by name (NULL: no such backend). */
extern const zsp_backend zsp_backends[];
const zsp_backend *zsp_backend_find(const char *name);

#endif
