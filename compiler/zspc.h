/* zspc.h: what the parts of the zspc program share: parsed options, and helpers to build a
 * compiler from them and to write output files. Not part of libzsp. */
#ifndef ZSPC_H
#define ZSPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zsp.h"

struct zspc_opts {
	const char **includes, **warnings, **define_names, **define_values;
	size_t nincludes, nwarnings, ndefines;
	const char *datadir;
	const char *out;
	const char *request;     /* --query */
	const char *batch;       /* --batch FILE or - */
	const char *policy;
	const char *workspace;
	const char *emit;        /* --emit FORMAT */
	const char *wsl_distribution, *wsl_user, *wsl_cd;   /* --emit wsl */
	const char *const *command;  /* after `FILE.zsp --` for --emit sandbox-exec and wsl */
	size_t ncommand;
	bool explain, json, nul, strict, resolve_symlinks, coverage;
	double coverage_min;
	/* --query/--batch with grants (runtime/store.h): any of these opens the store */
	const char *thread, *project, *state_dir, *runtime_dir;
	bool record;
};

void to_stderr(void *ctx, const char *text, size_t len);
int usage_error(const char *fmt, const char *arg) __attribute__((format(printf, 1, 0)));
int zspc_write_output(const char *out, const char *data, size_t len);
/* A compiler with the command line's -I, -W and -D, plus extra definitions (which -D overrides). */
zsp_compiler *zspc_compiler(const struct zspc_opts *o, const char *const *names,
			    const char *const *values, size_t n);
/* Compiles file with such a compiler; diagnostics go to stderr. */
int zspc_compile(const struct zspc_opts *o, const char *const *names, const char *const *values,
		 size_t n, const char *file, zsp_policy_set **set);

struct zsp_ir;
struct zsp_ir_policy;
/* The policy named NAME, or the set's only one; NULL after saying why on stderr. */
const struct zsp_ir_policy *zspc_choose_policy(const struct zsp_ir *ir, const char *name);

int zspc_query(const struct zspc_opts *o, const char *file);
int zspc_test(const struct zspc_opts *o, const char *file);
int zspc_import(const struct zspc_opts *o, const char *file);
int zspc_emit_linux(const struct zspc_opts *o, const char *file);
/* --emit sbpl and --emit sandbox-exec (compiler/zspc_sbpl.c) */
int zspc_emit_sbpl(const struct zspc_opts *o, const char *file);
/* --emit wsl (compiler/zspc_wsl.c) */
int zspc_emit_wsl(const struct zspc_opts *o, const char *file);
/* Runs zsp-run --verify (next to zspc, else the installed one); does not return on success. */
int zspc_verify(const struct zspc_opts *o, const char *file);
/* A diagnostics engine for the backends, with the command line's -W options and --strict. */
struct zsp_diag;
void zspc_backend_diag(const struct zspc_opts *o, struct zsp_diag *d);

/* zspc grant ... and zspc audit (compiler/zspc_grant.c): argv[0] is `grant` or `audit`. */
int zspc_grant_main(int argc, char **argv);
struct zsp_store;
/* Opens the grant store (NULL dirs: the XDG defaults); 74 after saying why on stderr. */
int zspc_store_open(const char *state_dir, const char *runtime_dir, struct zsp_store **out);
/* A DURATION (30m, 8h, 7d, 2w: now + direction * it) or a TIME (@UNIX, YYYY-MM-DD,
 * YYYY-MM-DDTHH:MM[:SS][Z], UTC) as unix seconds; -1 if it is neither. */
int zspc_parse_time(const char *s, int direction, int64_t now, int64_t *out);

#endif
