/* lex.h: state shared by the flex scanner and the bison parser of one source file.
 * Everything lives here or in the arena: no globals, so several files can be parsed at once. */
#ifndef ZSP_LEX_H
#define ZSP_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lang/arena.h"
#include "lang/source.h"

struct zsp_diag;
struct zsp_ast_file;

/* Bison location: a byte span in the current source. */
typedef struct zsp_span {
	uint32_t begin, end;
} zsp_span;

struct zsp_lex {
	zsp_arena *arena;
	const zsp_source *src;
	struct zsp_diag *diag;
	struct zsp_ast_file *file;
	uint32_t off;        /* scanner position */
	uint32_t tok_begin;  /* start of a multi-rule token (string, regex) */
	char *buf;           /* string/regex accumulator (malloc'd, freed by the parser driver) */
	size_t len, cap;
	bool raw;            /* the current string used no escape */
	uint32_t cut_at;     /* 1 + where an unterminated string or regex ended; 0 if none */
	bool oom;
	void *scanner;
};

#endif
