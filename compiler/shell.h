/* shell.h: splits a terminal command the way the oracle judges it (doc/facts.md §zed): a flat list
 * of simple commands and redirect entries, with every substitution and unparsable construct found. */
#ifndef ZSP_SHELL_H
#define ZSP_SHELL_H

#include <stdbool.h>
#include <stddef.h>

#include "lang/arena.h"

#define ZSP_SH_MAX_INPUT (64u << 10)  /* longer commands are unsupported, and still split */
#define ZSP_SH_MAX_SPLIT (1u << 20)   /* longer ones are not split at all */
#define ZSP_SH_STEPS_PER_BYTE 16u     /* the parser's budget (plus ZSP_SH_STEPS_BASE): past it, */
#define ZSP_SH_STEPS_BASE 4096u       /* the command is unsupported (ZSP_SH_WHY_BUDGET) */
#define ZSP_SH_WHY_BUDGET "budget"    /* zsp_sh_result.why of a parse past its budget */
#define ZSP_SH_MAX_DEPTH 32           /* nesting of (), {}, $(), if, ... */

typedef enum zsp_sh_kind {
	ZSP_SH_COMMAND,   /* a simple command: words, env prefix assignments included */
	ZSP_SH_REDIRECT,  /* a redirect entry: "> /etc/passwd", "2>> log", "< secrets" */
} zsp_sh_kind;

typedef struct zsp_sh_cmd {
	zsp_sh_kind kind;
	/* What rules match against: words unquoted and joined by one space
	 * (`'rm' -rf '/'` -> "rm -rf /"; "PAGER=x git log" keeps its prefix). For a redirect: the
	 * operator as written, fd number included, a space, the unquoted target ("2> /tmp/x").
	 * Substitutions stay as written in both ("echo $(id)"). */
	const char *text;
	const char **argv;  /* unquoted words, NULL-terminated; assignments first; a redirect
			     * has two: the operator as written and the target */
	size_t argc;
	size_t nassign;     /* leading NAME=value words */
	unsigned depth;     /* 0 at top level; +1 inside each $(...), `...`, <(...), >(...) */
	size_t offset;      /* byte offset of the command's first word (a redirect: of its fd
			     * number or operator) in the input */
} zsp_sh_cmd;

typedef enum zsp_sh_finding {
	ZSP_SH_CLEAN = 0,
	ZSP_SH_SUBSTITUTION,  /* $VAR ${..} $1 $? $$ $@ $(..) `..` $((..)) ((..)) <(..) >(..), unquoted here-doc with $ */
	ZSP_SH_UNSUPPORTED,   /* input that does not parse, or that the parser does not handle */
} zsp_sh_finding;

typedef struct zsp_sh_result {
	zsp_sh_finding finding;  /* the first one found; UNSUPPORTED wins over SUBSTITUTION */
	const char *why;         /* static text naming it: "command substitution $(...)",
				  * "unterminated ' quote"; NULL when CLEAN */
	size_t where;            /* byte offset of it in the input */
	zsp_sh_cmd *cmds;        /* in source order, nested commands after the command holding them */
	size_t ncmds;
} zsp_sh_result;

/* Parses cmd (NUL-terminated). Commands inside substitutions are parsed and listed too (the
 * built-in rules look into them), even though the finding marks the input. Redirects to
 * /dev/null and fd copies (2>&1, >&2, <&0, N>&-) make no entry, nor do here-documents and
 * here-strings (input, not files). Compound commands (if, while, for, case, { }, ( ), function
 * bodies) are flattened into their simple commands; [[ ... ]] is one command of its words;
 * ((...)) and for ((...)) make no entry. The order is the source order; a command comes before
 * the commands nested in its words, its redirect entries after those. The substitutions of an
 * unquoted here-document body are parsed and listed like those of a word.
 *
 * UNSUPPORTED is either a parse error, after which cmds holds what was read before it (a
 * command cut short keeps its complete words), or a construct read but not modelled exactly
 * (coproc, trap, alias, extglob, subscripts that builtins evaluate, arithmetic on variables,
 * unusual here-document delimiters, input over ZSP_SH_MAX_INPUT, ...), after which parsing goes
 * on and cmds holds every command of the input. The work is bounded by ZSP_SH_STEPS_PER_BYTE
 * steps per byte (exceeded: UNSUPPORTED "budget"), nesting by ZSP_SH_MAX_DEPTH; input over
 * ZSP_SH_MAX_SPLIT is not split. Returns an enum zsp_status (zsp.h): ZSP_OK (an unsupported
 * command is a finding, not an error), or ZSP_EINTERNAL on out-of-memory. Never reads past the
 * NUL. */
int zsp_sh_parse(zsp_arena *a, const char *cmd, zsp_sh_result *out);

/* The same for len bytes at cmd: a NUL among them is UNSUPPORTED ("NUL byte in the command"),
 * and the text before it (what execve would pass to the shell) is split. */
int zsp_sh_parse_n(zsp_arena *a, const char *cmd, size_t len, zsp_sh_result *out);

#endif
