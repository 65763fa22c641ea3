/* store-bench.c: `make bench-store`: grant lookup latency (p50/p99) and lookups per second with
 * 100,000 grants in the store, and the cost of opening it (quick_check included). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compiler/zsp.h"
#include "runtime/store.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Spreads every kind of grant, the 1% prefix ones too, over the 20 tools. */
static int tool_of(int i)
{
	return (i + i / 100) % 20;
}

int main(int argc, char **argv)
{
	int ngrants = argc > 1 ? atoi(argv[1]) : 100000;
	int nlookups = argc > 2 ? atoi(argv[2]) : 100000;
	char dir[] = "/tmp/zsp-store-bench.XXXXXX";
	char err[1024];
	if (!mkdtemp(dir))
		return 1;
	zsp_store_where w = { .state_dir = dir, .threads_in_memory = true };
	zsp_store *s;
	if (zsp_store_open(&w, &s, err, sizeof err) != ZSP_OK) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	/* 100k grants over 20 tools: exact commands, path subtrees, hosts, and 1% prefix regexes */
	char pat[128], tool[32];
	double t0 = now_us();
	for (int i = 0; i < ngrants; i++) {
		zsp_grant g = { .scope = i % 7 ? ZSP_GRANT_GLOBAL : ZSP_GRANT_PROJECT,
				.project = i % 7 ? NULL : "/src/p", .tool = tool,
				.decision = i % 50 ? ZSP_ANSWER_ALLOW : ZSP_ANSWER_DENY };
		snprintf(tool, sizeof tool, "tool%d", tool_of(i));
		switch (i % 100) {
		case 0:
			g.match = ZSP_MATCH_PREFIX;
			snprintf(pat, sizeof pat, "^cmd%d\\s+build(\\s|$)", i);
			break;
		case 1 ... 20:
			g.match = ZSP_MATCH_PATH;
			snprintf(pat, sizeof pat, "/home/u/src/p%d", i);
			break;
		case 21 ... 30:
			g.match = ZSP_MATCH_HOST;
			snprintf(pat, sizeof pat, "*.h%d.example.com", i);
			break;
		default:
			g.match = ZSP_MATCH_EXACT;
			snprintf(pat, sizeof pat, "cmd%d --flag value", i);
		}
		g.pattern = pat;
		if (zsp_store_add(s, &g, NULL, err, sizeof err) != ZSP_OK) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
	}
	double t_add = now_us() - t0;
	zsp_store_close(s);
	t0 = now_us();
	if (zsp_store_open(&w, &s, err, sizeof err) != ZSP_OK) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	double t_open = now_us() - t0;

	double *lat = malloc(sizeof *lat * (size_t)nlookups);
	int hits = 0;
	srand(1);
	t0 = now_us();
	for (int i = 0; i < nlookups; i++) {
		int k = rand() % ngrants;
		char arg[160];
		snprintf(tool, sizeof tool, "tool%d", tool_of(k));
		switch (i % 4) {
		case 0:
			snprintf(arg, sizeof arg, "cmd%d --flag value", k);
			break;
		case 1:
			snprintf(arg, sizeof arg, "/home/u/src/p%d/sub/file.c", k);
			break;
		case 2:
			snprintf(arg, sizeof arg, "https://api.h%d.example.com/v1", k);
			break;
		default:
			snprintf(arg, sizeof arg, "cmd%d build --release", k);
		}
		int d;
		bool found;
		double a = now_us();
		int rc = zsp_store_lookup(s, tool, arg, NULL, "/src/p", 1, &found, &d, NULL, err,
					  sizeof err);
		lat[i] = now_us() - a;
		if (rc != ZSP_OK) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		hits += found;
	}
	double total = now_us() - t0;
	qsort(lat, (size_t)nlookups, sizeof *lat, cmp_double);
	printf("store-bench: %d grants (added in %.1f s, %.0f adds/s), open with quick_check %.1f ms\n",
	       ngrants, t_add / 1e6, ngrants / (t_add / 1e6), t_open / 1e3);
	printf("lookups: %d (%d answered by a grant): p50 %.1f us, p99 %.1f us, max %.1f us; "
	       "%.0f lookups/s\n", nlookups, hits, lat[nlookups / 2], lat[nlookups * 99 / 100],
	       lat[nlookups - 1], nlookups / (total / 1e6));
	free(lat);
	zsp_store_close(s);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}
