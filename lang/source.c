/* source.c: policy text with a line table, and byte offset -> line:column. */
#include "lang/source.h"

#include <string.h>

zsp_source *zsp_source_new(zsp_arena *a, const char *path, const char *text, size_t len)
{
	zsp_source *s = zsp_arena_alloc(a, sizeof(*s));
	if (!s)
		return NULL;
	s->path = zsp_arena_strdup(a, path);
	const char *slash = strrchr(path, '/');
	s->dir = slash ? zsp_arena_strndup(a, path, slash == path ? 1 : (size_t)(slash - path))
		       : zsp_arena_strdup(a, ".");
	s->text = zsp_arena_strndup(a, text, len);
	s->len = len;
	s->included_from = (zsp_loc){ 0 };
	s->builtin = false;
	size_t n = 1;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	s->line_starts = zsp_arena_calloc(a, n, sizeof(uint32_t));
	if (!s->path || !s->dir || !s->text || !s->line_starts)
		return NULL;
	s->nlines = 0;
	s->line_starts[s->nlines++] = 0;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n')
			s->line_starts[s->nlines++] = (uint32_t)(i + 1);
	return s;
}

static size_t line_index(const zsp_source *s, uint32_t off)
{
	size_t lo = 0, hi = s->nlines;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->line_starts[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

void zsp_source_position(const zsp_source *s, uint32_t off, unsigned *line, unsigned *col)
{
	if (off > s->len)
		off = (uint32_t)s->len;
	size_t li = line_index(s, off);
	unsigned c = 1;
	for (uint32_t i = s->line_starts[li]; i < off; i++)
		if (((unsigned char)s->text[i] & 0xC0) != 0x80)
			c++;
	*line = (unsigned)li + 1;
	*col = c;
}

const char *zsp_source_line(const zsp_source *s, uint32_t off, size_t *len, uint32_t *line_begin)
{
	if (off > s->len)
		off = (uint32_t)s->len;
	size_t li = line_index(s, off);
	uint32_t b = s->line_starts[li];
	uint32_t e = b;
	while (e < s->len && s->text[e] != '\n')
		e++;
	if (e > b && s->text[e - 1] == '\r')
		e--;
	*len = e - b;
	*line_begin = b;
	return s->text + b;
}
