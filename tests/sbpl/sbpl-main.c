/* sbpl-main.c: the sbpl-eval command: decide one operation under an SBPL profile, or one per
 * line of stdin with --batch. Prints allow or deny; exit 0 allow, 1 deny, 2 errors. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sbpl/sbpl-eval.h"

#define MAX_PARAMS 256

static const char usage[] =
	"usage: sbpl-eval [-D NAME=VALUE]... [--explain] [--extension CLASS]... PROFILE.sb OPERATION [TARGET]\n"
	"       sbpl-eval [-D NAME=VALUE]... [--explain] --batch PROFILE.sb <LINES\n"
	"LINES are `OPERATION TARGET`; the answer to each is printed on its own line\n"
	"(`error: ...` for a bad line). TARGET is a path, HOST:PORT or a name.\n"
	"--extension CLASS: the process holds a sandbox extension of CLASS for TARGET\n"
	"(com.apple.sandbox.pty: TARGET is the replica of a pty it opened itself).\n";

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += r;
		if (n > SBPL_MAX_INPUT)
			break;
		if (n == cap) {
			char *b = realloc(buf, cap * 2);
			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
	}
	if (ferror(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

static void print_verdict(const struct sbpl_verdict *v, bool explain)
{
	if (explain && v->line)
		printf("%s %u:%u\n", v->allow ? "allow" : "deny", v->line, v->col);
	else if (explain)
		printf("%s default\n", v->allow ? "allow" : "deny");
	else
		printf("%s\n", v->allow ? "allow" : "deny");
}

/* One `OPERATION TARGET` line; the target is the rest of the line (paths may hold spaces). */
static int batch_line(const sbpl_profile *p, char *line, bool explain)
{
	line[strcspn(line, "\n")] = 0;
	char *op = line + strspn(line, " \t");
	char *sp = op + strcspn(op, " \t");
	char *target = sp;
	if (*sp) {
		*sp = 0;
		target = sp + 1 + strspn(sp + 1, " \t");
	}
	struct sbpl_verdict v;
	char err[512];
	if (sbpl_decide(p, op, *target ? target : NULL, &v, err, sizeof(err)) != 0) {
		printf("error: %s\n", err);
		return 2;
	}
	print_verdict(&v, explain);
	return 0;
}

static int run_batch(const sbpl_profile *p, bool explain)
{
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	while (getline(&line, &cap, stdin) > 0) {
		if (batch_line(p, line, explain) != 0)
			rc = 2;
		fflush(stdout);
	}
	free(line);
	return rc;
}

int main(int argc, char **argv)
{
	struct sbpl_param params[MAX_PARAMS];
	size_t nparams = 0;
	bool batch = false, explain = false;
	const char *exts[MAX_PARAMS];
	size_t nexts = 0;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *d = !strcmp(argv[i], "-D") && i + 1 < argc ? argv[++i]
				: !strncmp(argv[i], "-D", 2)              ? argv[i] + 2
									  : NULL;
		if (!strcmp(argv[i], "--batch")) {
			batch = true;
		} else if (!strcmp(argv[i], "--explain")) {
			explain = true;
		} else if (!strcmp(argv[i], "--extension") && i + 1 < argc && nexts < MAX_PARAMS) {
			exts[nexts++] = argv[++i];
		} else if (!strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (d && strchr(d, '=') && d[0] != '=' && nparams < MAX_PARAMS) {
			char *eq = strchr(d, '=');
			*eq = 0;
			params[nparams++] = (struct sbpl_param){ d, eq + 1 };
		} else {
			fprintf(stderr, "sbpl-eval: bad option `%s`\n%s", argv[i], usage);
			return 2;
		}
	}
	if (batch ? argc - i != 1 : argc - i < 2 || argc - i > 3) {
		fputs(usage, stderr);
		return 2;
	}
	size_t len;
	char *text = slurp(argv[i], &len);
	if (!text) {
		fprintf(stderr, "sbpl-eval: %s: %s\n", argv[i], strerror(errno ? errno : ENOMEM));
		return 2;
	}
	char err[512];
	sbpl_profile *p = sbpl_parse(text, len, params, nparams, err, sizeof(err));
	free(text);
	if (!p) {
		fprintf(stderr, "%s:%s\n", argv[i], err);
		return 2;
	}
	int rc;
	if (batch) {
		rc = run_batch(p, explain);
	} else {
		struct sbpl_verdict v;
		rc = sbpl_decide_ext(p, argv[i + 1], i + 2 < argc ? argv[i + 2] : NULL, exts, nexts, &v, err,
				     sizeof(err));
		if (rc != 0)
			fprintf(stderr, "sbpl-eval: %s\n", err);
		else
			print_verdict(&v, explain);
		rc = rc != 0 ? 2 : v.allow ? 0 : 1;
	}
	sbpl_free(p);
	return rc;
}
