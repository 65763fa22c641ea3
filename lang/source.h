/* source.h: a loaded policy file and locations inside it.
 * Locations are byte spans; line and column are computed only when a diagnostic needs them. */
#ifndef ZSP_SOURCE_H
#define ZSP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lang/arena.h"

#define ZSP_SOURCE_MAX (16u << 20) /* bytes; larger files are refused */

typedef struct zsp_source zsp_source;

typedef struct zsp_loc {
	const zsp_source *src;
	uint32_t begin, end; /* byte offsets, end exclusive */
} zsp_loc;

struct zsp_source {
	const char *path;       /* as shown in diagnostics */
	const char *dir;        /* directory for relative includes */
	const char *text;       /* NUL-terminated copy of the file */
	size_t len;
	uint32_t *line_starts;  /* offset of each line's first byte */
	size_t nlines;
	zsp_loc included_from;  /* src == NULL for a file named on the command line */
	bool builtin;           /* compiled into the program: what it includes is built in too */
};

/* Builds a source over text (copied into the arena). NULL on out-of-memory. */
zsp_source *zsp_source_new(zsp_arena *a, const char *path, const char *text, size_t len);

/* 1-based line and column (in code points; a tab counts one) of a byte offset. */
void zsp_source_position(const zsp_source *s, uint32_t off, unsigned *line, unsigned *col);

/* The line holding off, without its newline. */
const char *zsp_source_line(const zsp_source *s, uint32_t off, size_t *len, uint32_t *line_begin);

static inline zsp_loc zsp_loc_span(zsp_loc a, zsp_loc b)
{
	zsp_loc l = a;
	if (b.src == a.src && b.end > l.end)
		l.end = b.end;
	return l;
}

#endif
