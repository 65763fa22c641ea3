/* zspc.h: what the parts of the zspc program share: the parsed command line. Each mode is one
 * file of zspc/ (query.c, test.c, emit.c, import.c, grant.c); main.c reads the options. */
#ifndef ZSPC_H
#define ZSPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/oracle.h"
#include "runtime/cli.h"

#define ZSPC_EXIT_NO_DECISION 3   /* --query: no decision could be made */

struct zspc_opts {
	zsp_cli_compile cc;      /* -I -W -D --strict */
	const char *out;
	const char *request;     /* --query */
	const char *batch;       /* --batch FILE or - */
	const char *policy;
	const char *workspace;
	const char *shell;       /* --shell: what terminal commands run with (NULL: /bin/sh) */
	const char *emit;        /* --emit FORMAT */
	const char *wsl_distribution, *wsl_user, *wsl_cd;   /* --emit wsl */
	const char *const *command;  /* after `FILE.zsp --` for --emit sandbox-exec and wsl */
	size_t ncommand;
	bool explain, json, nul, resolve_symlinks, coverage;
	double coverage_min;
	/* --query/--batch with grants: any of these opens the store */
	const char *thread, *project, *state_dir, *runtime_dir;
	bool record;
};

/* A compiler with the command line's options and the given built-in values (NULL: none). */
zsp_compiler *zspc_compiler(const struct zspc_opts *o, const zsp_builtin_params *builtins);

struct zsp_ir_policy;
/* The machine the oracle judges for p: the workspace and home p was compiled with (main.c). */
zsp_oracle_env zspc_oracle_env(const struct zsp_ir_policy *p, bool resolve_symlinks);
/* Compiles file with such a compiler and prints the summary line: for modes that lower nothing. */
int zspc_compile(const struct zspc_opts *o, const zsp_builtin_params *builtins, const char *file,
		 zsp_policy_set **set);

int zspc_query(const struct zspc_opts *o, const char *file);       /* query.c */
struct zsp_verdict;
/* query.c: the --explain lines of a verdict (also --test's failures). */
void zspc_print_explain(FILE *f, const struct zsp_ir_policy *p, const struct zsp_verdict *v,
			const char *indent);
int zspc_test(const struct zspc_opts *o, const char *file);        /* test.c */
int zspc_import(const struct zspc_opts *o, const char *file);      /* import.c */
int zspc_emit(const struct zspc_opts *o, const char *file);        /* emit.c: ir and the backends */
int zspc_verify(const struct zspc_opts *o, const char *file);      /* emit.c: runs zsp-run --verify */
struct zsp_backend;
struct zsp_backend_input;
struct zsp_policy_set;
/* emit.c: lowers a compiled set with backend b and writes the result (in: all but the policy). */
int zspc_emit_lower(const struct zspc_opts *o, const struct zsp_backend *b, zsp_compiler *c,
		    const struct zsp_policy_set *set, struct zsp_backend_input *in);
/* emit_wsl.c: --emit wsl, whose paths are translated before the policy is compiled. */
int zspc_emit_wsl(const struct zspc_opts *o, const struct zsp_backend *b, const char *file);
int zspc_grant_main(int argc, char **argv);                        /* grant.c: grant and audit */
int zspc_cache_main(int argc, char **argv);                        /* cache.c: zspc cache */

/* A DURATION (30m, 8h, 7d, 2w: now + direction * it) or a TIME (@UNIX, YYYY-MM-DD,
 * YYYY-MM-DDTHH:MM[:SS][Z], UTC) as unix seconds; -1 if it is neither (grant.c). */
int zspc_parse_time(const char *s, int direction, int64_t now, int64_t *out);

#endif
