/* names.c: an index of a built-in table's command names (names.h). The oracle looks up every
 * word of a command in the wrapper, shell and file tables: a scan with strcasecmp per entry
 * was a third of a terminal decision. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "compiler/names.h"

static unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c | 32 : c;
}

bool zsp_names_build(zsp_names *ix, const void *first, size_t n, size_t stride)
{
	memset(ix, 0, sizeof(*ix));
	if (n > ZSP_NAMES_MAX)
		return false;
	ix->n = n;
	for (size_t k = 0; k < n; k++) {
		ix->name[k] = *(const char *const *)(const void *)((const char *)first + k * stride);
		ix->len[k] = strlen(ix->name[k]);
	}
	/* prepended from the last, so that each list is in table order: the first match wins */
	for (size_t k = n; k-- > 0;) {
		unsigned char b = fold((unsigned char)ix->name[k][0]);
		ix->next[k] = ix->head[b];
		ix->head[b] = (unsigned char)(k + 1);
	}
	return true;
}

long zsp_names_find(const zsp_names *ix, const char *word)
{
	const char *slash = strrchr(word, '/'), *base = slash ? slash + 1 : word;
	size_t len = strlen(base);
	for (unsigned k = ix->head[fold((unsigned char)base[0])]; k; k = ix->next[k - 1])
		if (ix->len[k - 1] == len && strcasecmp(ix->name[k - 1], base) == 0)
			return (long)k - 1;
	return -1;
}
