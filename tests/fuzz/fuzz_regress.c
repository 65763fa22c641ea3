/* fuzz_regress.c: replays tests/fuzz/corpus/ and tests/fuzz/crashers/ through the fuzz entry
 * point, so every input the fuzzer ever tripped on stays a test. Run by `make check`. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			fclose(f);
			fprintf(stderr, "fuzz_regress: out of memory\n");
			return -1;
		}
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		cap *= 2;
		uint8_t *nb = realloc(buf, cap);
		if (!nb)
			free(buf);
		buf = nb;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		perror(path);
		free(buf);
		return -1;
	}
	/* An exact-size copy, so that ASan catches reads past the end as the fuzzer would. */
	uint8_t *exact = malloc(n ? n : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of DIR, in name order (stable logs); returns the count or -1. */
static long run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		perror(dir);
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*nn));
			if (!nn)
				abort();
			names = nn;
		}
		if (!(names[n++] = strdup(e->d_name)))
			abort();
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	long ran = 0;
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(len);
		if (!path)
			abort();
		snprintf(path, len, "%s/%s", dir, names[i]);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path) != 0)
				failed = 1;
			else
				ran++;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return failed ? -1 : ran;
}

int main(int argc, char **argv)
{
	const char *srcdir = getenv("top_srcdir");
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: fuzz_regress [TOP_SRCDIR]\n"
				"  runs TOP_SRCDIR/tests/fuzz/{corpus,crashers}/* (default: $top_srcdir)\n");
		return 2;
	}
	if (argc == 2)
		srcdir = argv[1];
	if (!srcdir || !*srcdir)
		srcdir = ".";
#ifndef ZSP_FUZZ_DIRS
#define ZSP_FUZZ_DIRS "tests/fuzz/corpus", "tests/fuzz/crashers"
#endif
	static const char *const subdirs[] = { ZSP_FUZZ_DIRS };
	int status = 0;
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		size_t len = strlen(srcdir) + strlen(subdirs[i]) + 2;
		char *dir = malloc(len);
		if (!dir)
			return 99;
		snprintf(dir, len, "%s/%s", srcdir, subdirs[i]);
		long ran = run_dir(dir);
		if (ran < 0)
			status = 99;
		else
			printf("fuzz_regress: %ld inputs from %s: no crash\n", ran, dir);
		free(dir);
	}
	return status;
}
