/* sh_split.c: prints how compiler/shell.c splits a script, for tests/shell-diff.sh (not
 * installed). `sh_split FILE` reads the whole file as one command; `sh_split -t FILE` times
 * zsp_sh_parse on each line of FILE instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/shell.h"
#include "compiler/zsp.h"

static const char *finding_name(zsp_sh_finding f)
{
	return f == ZSP_SH_CLEAN ? "clean" : f == ZSP_SH_SUBSTITUTION ? "substitution" : "unsupported";
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0, got;
	char *s = malloc(cap + 1);

	if (!f || !s) {
		perror(path);
		exit(2);
	}
	while ((got = fread(s + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap && !(s = realloc(s, (cap *= 2) + 1))) {
			perror("realloc");
			exit(2);
		}
	}
	fclose(f);
	s[n] = '\0';
	*len = n;
	return s;
}

/* The command's name: its first word after assignments and after bash's `time [-p]`, a
 * reserved word the splitter keeps in the text (the built-in rules unwrap it). */
static const char *command_name(const zsp_sh_cmd *c)
{
	size_t i = c->nassign;

	if (i < c->argc && strcmp(c->argv[i], "time") == 0)
		i++;
	if (i < c->argc && strcmp(c->argv[i], "-p") == 0 && i > c->nassign)
		i++;
	return i < c->argc ? c->argv[i] : "";
}

/* one line per entry: kind, depth, the command's name */
static int split(const char *path)
{
	size_t len;
	char *s = slurp(path, &len);
	zsp_arena *a = zsp_arena_new();
	zsp_sh_result r;

	if (!a || zsp_sh_parse_n(a, s, len, &r) != ZSP_OK)
		return 2;
	printf("%s\t%s\n", finding_name(r.finding), r.why ? r.why : "");
	for (size_t i = 0; i < r.ncmds; i++) {
		const zsp_sh_cmd *c = &r.cmds[i];

		if (c->kind == ZSP_SH_REDIRECT)
			printf("redirect\t%u\t%s\n", c->depth, c->argv[1]);
		else
			printf("command\t%u\t%s\n", c->depth, command_name(c));
	}
	zsp_arena_free(a);
	free(s);
	return 0;
}

static int timing(const char *path)
{
	size_t len;
	char *s = slurp(path, &len), *line = s, *end;

	for (; *line; line = end + 1) {
		struct timespec t0, t1;
		zsp_arena *a = zsp_arena_new();
		zsp_sh_result r;

		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		else
			*end = '\0';
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (!a || zsp_sh_parse(a, line, &r) != ZSP_OK)
			return 2;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("%9.1f us  %6zu bytes  %-12s %-28.28s %.40s\n",
		       (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3,
		       (size_t)(end - line), finding_name(r.finding), r.why ? r.why : "", line);
		zsp_arena_free(a);
		if (end == s + len)
			break;
	}
	free(s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "-t") == 0)
		return timing(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: sh_split FILE | sh_split -t FILE\n");
		return 2;
	}
	return split(argv[1]);
}
