/* builtin.h: the built-in terminal rules no policy can lift: recursive deletion of /, ~, $HOME,
 * ., .. and their spellings, looked for through wrappers, sh -c scripts and substitutions. */
#ifndef ZSP_BUILTIN_H
#define ZSP_BUILTIN_H

#include <stdbool.h>

#include "lang/arena.h"
#include "compiler/shell.h"

typedef struct zsp_builtin_hit {
	const char *rule;     /* stable id: "rm-root", "rm-home", "rm-cwd", "rm-parent",
			       * "find-delete-root", "nested-shell" (scripts nested > 8 deep: fails closed),
			       * "rm-unknown" (xargs feeds a recursive rm), "rm-unchecked" (too
			       * much work to check: fails closed) */
	const char *what;     /* the offending command text (arena or input string) */
	const char *message;  /* for people: "deletes the root directory" */
} zsp_builtin_hit;

/* A file a command of the files table (compiler/files.h) reads or writes, as the walk of
 * zsp_builtin_check sees it: through wrappers, scripts, variables the text set and positional
 * parameters, each word of a brace expansion apart, redirections included. */
typedef struct zsp_file_use {
	const char *word;         /* the operand; NULL when the text does not show it (xargs
				   * adds words read from stdin) */
	unsigned access;          /* ZSP_FILE_READ, ZSP_FILE_WRITE, ZSP_FILE_VISIBLE */
	bool tree;                /* the whole tree below it */
	const char *const *dirs;  /* where a relative word is: each directory the command may be
				   * in (the workspace, then where `cd` went); ndirs 0: unknown */
	size_t ndirs;
	const char *what;         /* the simple command (or redirection) naming it */
} zsp_file_use;

/* The machine the command runs on: absolute, lexically normal paths, or NULL when unknown. An
 * operand naming one of them (or an ancestor) counts as `~`, `.` (or `..`) does. */
typedef struct zsp_builtin_env {
	const char *home;  /* the requester's home directory */
	const char *cwd;   /* the directory the command starts in (the workspace) */
	/* When set, called for every file the walk finds (0 go on, -1 out of memory): the
	 * oracle judges them by the fs rules (doc/oracle.md "File rules for commands"). */
	int (*file)(void *arg, const zsp_file_use *f);
	void *file_arg;
	bool unknown_rm;   /* `substitutions judged;`: a recursive rm of a word whose value is not
			    * known (holds `$` or a backquote after variables) is rm-unknown */
} zsp_builtin_env;

/* Checks the raw command and every command of its parse (sh: may be NULL when the caller has
 * none; raw is then parsed here). The raw text meets Zed's regexes with `rm` in command
 * position, or anywhere when it does not parse. Returns an enum zsp_status (zsp.h): ZSP_OK, with
 * *matched true and *hit filled when a built-in rule matches, false when none does; or
 * ZSP_EINTERNAL on out-of-memory (*matched false: callers fail closed). */
int zsp_builtin_check(zsp_arena *a, const char *raw, const zsp_sh_result *sh,
		      const zsp_builtin_env *env, zsp_builtin_hit *hit, bool *matched);

/* What user deny and ask rules see besides the command and its entries: each simple command
 * with its assignments and wrappers stripped, one wrapper at a time (`FOO=1 sudo env rm x`:
 * `sudo env rm x`, `env rm x`, `rm x`), and the scripts it runs (sh -c, eval, su -c, env -S,
 * watch, flock -c, script -c, sg) with each of their commands, likewise. Allow rules never see
 * these (doc/oracle.md). *texts (arena) gets *n texts; *complete is false when a command has
 * more than 64 wrappers, scripts nest deeper than 8 or there are more than 4096 texts (the
 * caller fails closed). Returns ZSP_OK or ZSP_EINTERNAL on out-of-memory. */
int zsp_builtin_unwrap(zsp_arena *a, const zsp_sh_result *sh, const char ***texts, size_t *n,
		       bool *complete);

#endif
