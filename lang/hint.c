/* hint.c: edit distance (optimal string alignment: a swap of two letters counts one) for
 * suggestions. Words are short; anything over 64 bytes is not worth suggesting for. */
#include "lang/hint.h"

#include <ctype.h>
#include <string.h>

#define HINT_MAX 64

static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[HINT_MAX + 1][HINT_MAX + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

const char *zsp_closest(const char *word, const char *const *cands, size_t n)
{
	size_t lw = strlen(word);
	if (lw == 0 || lw > HINT_MAX)
		return NULL;
	size_t limit = lw <= 4 ? 1 : 2;
	const char *best = NULL;
	size_t best_d = limit + 1;
	for (size_t i = 0; i < n; i++) {
		if (strlen(cands[i]) > HINT_MAX)
			continue;
		size_t dd = distance(word, cands[i]);
		if (dd < best_d && dd > 0) {
			best_d = dd;
			best = cands[i];
		}
	}
	return best;
}
