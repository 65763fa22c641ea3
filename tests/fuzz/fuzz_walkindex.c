/* fuzz_walkindex.c: a libFuzzer target for the reader of the walk's index (runtime/walkindex.c),
 * a file the next run trusts only after checking it. An input whose first byte is 0 is read as
 * a whole file; any other is a payload, sealed with a valid header first (so that the fuzzer
 * gets past the checksum into the records). A parse that succeeds must give directories sorted
 * and unique, paths "" or "/...", entry names that are names (no '/', no NUL, not . or ..) and
 * a known type; each directory is found again by the lookup's binary search. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/walkindex.h"
#include "tests/fuzz/fuzz.h"

static int dir_cmp(const void *a, const void *b)
{
	return strcmp(((const zsp_walkindex_dir *)a)->rel, ((const zsp_walkindex_dir *)b)->rel);
}

static void check(const zsp_walkindex_data *d)
{
	for (size_t i = 0; i < d->ndirs; i++) {
		const zsp_walkindex_dir *w = &d->dirs[i];
		if ((w->rel[0] && w->rel[0] != '/') || (i && strcmp(d->dirs[i - 1].rel, w->rel) >= 0))
			abort();
		if (bsearch(w, d->dirs, d->ndirs, sizeof(*w), dir_cmp) != w)
			abort();
		for (size_t j = 0; j < w->nents; j++) {
			const char *n = w->ents[j].name;
			if (!n[0] || strchr(n, '/') || strcmp(n, ".") == 0 || strcmp(n, "..") == 0 ||
			    w->ents[j].type == DT_UNKNOWN)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char scope[32] = { 1, 2, 3 };
	unsigned char *file;
	size_t len;
	if (size && data[0] == 0) {
		len = size - 1;
		file = malloc(len + 1);
		if (!file)
			return 0;
		memcpy(file, data + 1, len);
	} else {
		size_t plen = size ? size - 1 : 0;
		len = ZSP_WALKINDEX_HEADER + plen;
		file = malloc(len);
		if (!file)
			return 0;
		memcpy(file + ZSP_WALKINDEX_HEADER, size ? data + 1 : data, plen);
		zsp_walkindex_seal(file, scope, 1000, 0, file + ZSP_WALKINDEX_HEADER, plen);
	}
	zsp_walkindex_data d;
	const char *why = NULL;
	if (zsp_walkindex_parse(file, len, scope, 1000, &d, &why)) {
		check(&d);
		zsp_walkindex_data_free(&d);
	} else if (!why) {
		abort();
	}
	free(file);
	return 0;
}
