/* oracle-bench.c: how many decisions per second the oracle makes on one core, and how long each
 * takes (p50/p90/p99/max), for terminal commands and for read/write/exec paths. See bench/README.md. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "compiler/oracle.h"
#include "compiler/shell.h"

#define CALIBRATE_NS 200000000ull /* warm-up and rate estimate before each run */

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("oracle-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- corpora ---------------------------------------------------------------------------- */

struct corpus {
	char **req;   /* request text as a host sends it: KIND "ARG" */
	char **raw;   /* the argument itself (the baseline parses this for terminal) */
	size_t n, cap;
};

static void corpus_add(struct corpus *c, const char *kind, const char *arg)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		c->req = xrealloc(c->req, c->cap * sizeof(*c->req));
		c->raw = xrealloc(c->raw, c->cap * sizeof(*c->raw));
	}
	size_t len = strlen(arg), k = strlen(kind);
	char *q = xrealloc(NULL, k + 4 * len + 4), *o = q;
	memcpy(o, kind, k);
	o += k;
	*o++ = ' ';
	*o++ = '"';
	for (const unsigned char *s = (const unsigned char *)arg; *s; s++) {
		if (*s == '"' || *s == '\\') {
			*o++ = '\\';
			*o++ = (char)*s;
		} else if (*s == '\t') {
			*o++ = '\\';
			*o++ = 't';
		} else if (*s < 0x20 || *s == 0x7f) {
			o += sprintf(o, "\\x%02X", *s);
		} else {
			*o++ = (char)*s;
		}
	}
	*o++ = '"';
	*o = '\0';
	c->req[c->n] = q;
	c->raw[c->n] = strdup(arg);
	if (!c->raw[c->n])
		die("out of memory");
	c->n++;
}

static void load_commands(struct corpus *c, const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f)
		die("cannot read %s: %s", file, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n > 0)
			corpus_add(c, "terminal", line);
	}
	free(line);
	fclose(f);
	if (c->n == 0)
		die("%s holds no command", file);
}

/* Deterministic mix of places an agent touches: its workspace (relative and absolute, with
 * . and ..), home and its secrets, system directories, temp files. */
static void make_paths(struct corpus *c, const char *workspace)
{
	static const char *const roots[] = {
		"${WS}", "${WS}/src", "${WS}/target/debug", "${WS}/node_modules/.bin", "${WS}/.git",
		"src", "./tests/fixtures", "../sibling-project", "~", "~/.ssh", "~/.aws", "~/.cache/pip",
		"~/.cargo/registry/src", "~/.config", "~/projects/other/../notes", "/home/alice",
		"/usr/bin", "/usr/lib/x86_64-linux-gnu", "/usr/share/doc", "/etc", "/etc/ssl/certs",
		"/tmp", "/tmp/build-1234", "/var/tmp", "/var/log", "/proc/self", "/dev", "/opt/homebrew/bin",
		"/root", "/srv/www",
	};
	static const char *const leaves[] = {
		"", "main.rs", "lib.rs", "Cargo.toml", "package.json", ".env", "config", "hooks/pre-commit",
		"id_ed25519", "id_rsa.pub", "credentials", "known_hosts", "passwd", "shadow", "git",
		"python3", "libc.so.6", "server.pem", "out/app.o", "a/b/c/d/e/f.txt", "tsc", "status",
		"null", "urandom", ".zed/settings.json", "notes.md", "x/../y/./z.txt",
	};
	static const char *const kinds[] = { "read", "write", "exec" };
	size_t nroots = sizeof(roots) / sizeof(roots[0]), nleaves = sizeof(leaves) / sizeof(leaves[0]);
	char path[PATH_MAX * 2];
	unsigned seed = 42;
	for (size_t r = 0; r < nroots; r++) {
		for (size_t l = 0; l < nleaves; l++) {
			const char *root = roots[r];
			char prefix[PATH_MAX];
			if (strncmp(root, "${WS}", 5) == 0)
				snprintf(prefix, sizeof(prefix), "%s%s", workspace, root + 5);
			else
				snprintf(prefix, sizeof(prefix), "%s", root);
			snprintf(path, sizeof(path), "%s%s%s", prefix, *leaves[l] ? "/" : "", leaves[l]);
			seed = seed * 1103515245u + 12345u;
			corpus_add(c, kinds[(seed >> 16) % 3], path);
		}
	}
}

/* ---- measuring -------------------------------------------------------------------------- */

enum what { DECIDE, SH_PARSE, REQ_PARSE };

struct stats {
	size_t n;
	double seconds, per_s, mean_us, p50, p90, p99, max;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One step as a host pays it through zsp_session_decide: the arena reset, the work. */
static zsp_arena *step_arena;

static void one(zsp_oracle *o, enum what w, const struct corpus *c, size_t i, unsigned *counts)
{
	if (!step_arena && !(step_arena = zsp_arena_new()))
		die("out of memory");
	zsp_arena *a = step_arena;
	zsp_arena_reset(a);
	zsp_ir_request req;
	zsp_verdict v;
	zsp_sh_result sh;
	char err[256];
	switch (w) {
	case DECIDE:
		if (zsp_request_parse(a, c->req[i], &req, err, sizeof(err)) != 0)
			die("bad request %s: %s", c->req[i], err);
		if (zsp_oracle_decide(o, a, &req, false, &v) != 0)
			die("out of memory");
		if (counts)
			counts[v.decision]++;
		break;
	case SH_PARSE:
		if (zsp_sh_parse(a, c->raw[i], &sh) != 0)
			die("out of memory");
		break;
	case REQ_PARSE:
		if (zsp_request_parse(a, c->req[i], &req, err, sizeof(err)) != 0)
			die("bad request %s: %s", c->req[i], err);
		break;
	}
}

static double pct(const uint64_t *sorted, size_t n, double p)
{
	size_t k = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)sorted[k] / 1e3;
}

static size_t slowest; /* --slowest K: list the K requests with the highest mean time */
static size_t repeats = 1; /* -r R: R runs of each group, the one with the median rate reported */

static void print_slowest(const struct corpus *c, const uint64_t *sum, const size_t *count)
{
	bool *shown = calloc(c->n, sizeof(*shown));
	if (!shown)
		die("out of memory");
	for (size_t k = 0; k < slowest && k < c->n; k++) {
		size_t worst = SIZE_MAX;
		double worst_us = -1;
		for (size_t i = 0; i < c->n; i++) {
			double us = count[i] ? (double)sum[i] / (double)count[i] / 1e3 : 0;
			if (!shown[i] && us > worst_us) {
				worst = i;
				worst_us = us;
			}
		}
		shown[worst] = true;
		printf("    %8.2f us  %s\n", worst_us, c->req[worst]);
	}
	free(shown);
}

/* Warm-up (which also estimates the rate), then n timed steps cycling through the corpus;
 * n == 0 runs for about `seconds`. */
static struct stats run_once(zsp_oracle *o, enum what w, const struct corpus *c, size_t n, double seconds)
{
	uint64_t t0 = now_ns();
	size_t warm = 0;
	while (now_ns() - t0 < CALIBRATE_NS || warm < c->n)
		one(o, w, c, warm++ % c->n, NULL);
	if (n == 0) {
		double rate = (double)warm / ((double)(now_ns() - t0) / 1e9);
		n = (size_t)(rate * seconds);
		if (n < c->n)
			n = c->n;
	}
	uint64_t *lat = xrealloc(NULL, n * sizeof(*lat));
	memset(lat, 0, n * sizeof(*lat)); /* first-touch page faults stay out of the loop */
	uint64_t start = now_ns();
	for (size_t i = 0; i < n; i++) {
		uint64_t a = now_ns();
		one(o, w, c, i % c->n, NULL);
		lat[i] = now_ns() - a;
	}
	uint64_t total = now_ns() - start;
	if (slowest && w == DECIDE) {
		uint64_t *per = calloc(c->n, sizeof(*per));
		size_t *count = calloc(c->n, sizeof(*count));
		if (!per || !count)
			die("out of memory");
		for (size_t i = 0; i < n; i++) {
			per[i % c->n] += lat[i];
			count[i % c->n]++;
		}
		print_slowest(c, per, count);
		free(per);
		free(count);
	}
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += lat[i];
	qsort(lat, n, sizeof(*lat), cmp_u64);
	struct stats s = {
		.n = n,
		.seconds = (double)total / 1e9,
		.per_s = (double)n / ((double)total / 1e9),
		.mean_us = (double)sum / (double)n / 1e3,
		.p50 = pct(lat, n, 0.50),
		.p90 = pct(lat, n, 0.90),
		.p99 = pct(lat, n, 0.99),
		.max = (double)lat[n - 1] / 1e3,
	};
	free(lat);
	return s;
}

static int cmp_rate(const void *a, const void *b)
{
	double x = ((const struct stats *)a)->per_s, y = ((const struct stats *)b)->per_s;
	return x < y ? -1 : x > y;
}

/* A shared machine makes single runs noisy: the median of `repeats` runs by rate. */
static struct stats run(zsp_oracle *o, enum what w, const struct corpus *c, size_t n, double seconds)
{
	struct stats *all = xrealloc(NULL, repeats * sizeof(*all));
	for (size_t r = 0; r < repeats; r++)
		all[r] = run_once(o, w, c, n, seconds);
	qsort(all, repeats, sizeof(*all), cmp_rate);
	struct stats s = all[repeats / 2];
	free(all);
	return s;
}

static void print_row(const char *name, const struct stats *s)
{
	printf("%-30s %9zu %12.0f %8.2f %8.2f %8.2f %8.2f %9.1f\n", name, s->n, s->per_s, s->mean_us,
	       s->p50, s->p90, s->p99, s->max);
}

static void print_mix(const char *name, zsp_oracle *o, const struct corpus *c)
{
	unsigned counts[8] = { 0 };
	for (size_t i = 0; i < c->n; i++)
		one(o, DECIDE, c, i, counts);
	printf("  %s: %zu requests: %u allow, %u ask, %u deny\n", name, c->n, counts[ZSP_ALLOW],
	       counts[ZSP_ASK], counts[ZSP_DENY]);
}

static void verdict_line(const char *what, double have, double target)
{
	printf("target: %s at least %.0f/s: %s (%.0f/s)\n", what, target, have >= target ? "met" : "MISSED",
	       have);
}

/* ---- main ------------------------------------------------------------------------------- */

static void usage(void)
{
	fputs("usage: oracle-bench [-p POLICY.zsp] [-c COMMANDS.txt] [-n N] [-t SECONDS] [-r RUNS]\n"
	      "                    [-w WORKSPACE] [--symlinks on|off|both] [--only terminal|path]\n"
	      "                    [--slowest K]\n"
	      "  -n N        decisions per run (default: as many as fit in SECONDS, default 2)\n"
	      "  -r RUNS     runs per group; the run with the median rate is shown (default 1)\n"
	      "  --symlinks  path requests resolve symlinks (on, like zspc), judge as written (off),\n"
	      "              or both (default)\n"
	      "  --only      run one group (for a profiler)\n"
	      "  --slowest K list the K requests of each run with the highest mean time\n", stderr);
	exit(64);
}

static const char *pin_cpu0(void)
{
	static char msg[128];
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) == 0)
		return "pinned to CPU 0 (sched_setaffinity)";
	snprintf(msg, sizeof(msg), "NOT pinned: sched_setaffinity: %s", strerror(errno));
	return msg;
}

int main(int argc, char **argv)
{
	const char *policy = "bench/terminal-50.zsp", *commands = "bench/commands.txt";
	const char *symlinks = "both", *only = NULL;
	char cwd[PATH_MAX];
	const char *workspace = getcwd(cwd, sizeof(cwd)) ? cwd : "/";
	size_t n = 0;
	double seconds = 2.0;
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!val)
			usage();
		if (strcmp(opt, "-p") == 0)
			policy = val;
		else if (strcmp(opt, "-c") == 0)
			commands = val;
		else if (strcmp(opt, "-n") == 0)
			n = strtoul(val, NULL, 10);
		else if (strcmp(opt, "-r") == 0)
			repeats = strtoul(val, NULL, 10);
		else if (strcmp(opt, "-t") == 0)
			seconds = strtod(val, NULL);
		else if (strcmp(opt, "-w") == 0)
			workspace = val;
		else if (strcmp(opt, "--symlinks") == 0)
			symlinks = val;
		else if (strcmp(opt, "--only") == 0)
			only = val;
		else if (strcmp(opt, "--slowest") == 0)
			slowest = strtoul(val, NULL, 10);
		else
			usage();
		i++;
	}
	bool sym_on = strcmp(symlinks, "on") == 0 || strcmp(symlinks, "both") == 0;
	bool sym_off = strcmp(symlinks, "off") == 0 || strcmp(symlinks, "both") == 0;
	bool do_term = !only || strcmp(only, "terminal") == 0, do_path = !only || strcmp(only, "path") == 0;
	if ((!sym_on && !sym_off) || (!do_term && !do_path) || repeats == 0)
		usage();
	if (workspace[0] != '/')
		die("the workspace must be an absolute path: %s", workspace);

	const char *home = getenv("HOME");
	if (!home || home[0] != '/')
		home = "/root";
	zsp_compiler *cc = zsp_compiler_new();
	zsp_policy_set *set = NULL;
	if (!cc || zsp_compiler_define(cc, "WORKSPACE", workspace) != ZSP_OK ||
	    zsp_compiler_define(cc, "HOME", home) != ZSP_OK || zsp_compiler_define(cc, "TMPDIR", "/tmp") != ZSP_OK)
		die("cannot set up the compiler");
	if (zsp_compile_file(cc, policy, &set) != ZSP_OK)
		die("%s does not compile: %u errors (zspc --check says which)", policy, zsp_compiler_errors(cc));
	zsp_compiler_free(cc);
	const zsp_ir *ir = zsp_policy_set_ir(set);
	if (ir->npolicies != 1)
		die("%s must define exactly one policy", policy);
	const zsp_ir_policy *p = &ir->policies[0];

	struct corpus cmds = { 0 }, paths = { 0 };
	load_commands(&cmds, commands);
	make_paths(&paths, workspace);

	size_t nterm = 0;
	for (size_t i = 0; i < p->ntools; i++)
		if (strcmp(p->tools[i].name, "terminal") == 0)
			nterm = p->tools[i].nrules;
	const char *pinned = pin_cpu0();
	printf("oracle-bench: policy %s (`%s`: %zu terminal rules, %zu fs rules after normalization)\n",
	       policy, p->name, nterm, p->nfs);
	printf("  workspace %s, home %s; %s\n", workspace, home, pinned);
	printf("  each step: zsp_arena_reset + the work (as zsp_session_decide does); latency from two clock_gettime\n");
	printf("  each row: the median by rate of %zu run%s\n", repeats, repeats == 1 ? "" : "s");

	zsp_oracle_env env_on = { .workspace = workspace, .home = home, .resolve_symlinks = true },
		       env_off = { .workspace = workspace, .home = home };
	zsp_oracle *o_on = zsp_oracle_new(p, &env_on), *o_off = zsp_oracle_new(p, &env_off);
	if (!o_on || !o_off)
		die("out of memory");
	if (do_term)
		print_mix(commands, o_on, &cmds);
	if (do_path && sym_on)
		print_mix("paths (symlinks resolved)", o_on, &paths);
	if (do_path && sym_off)
		print_mix("paths (as written)", o_off, &paths);

	printf("\n%-30s %9s %12s %8s %8s %8s %8s %9s\n", "run", "N", "decisions/s", "mean us", "p50 us",
	       "p90 us", "p99 us", "max us");
	struct stats term = { 0 }, sh = { 0 }, pon = { 0 }, poff = { 0 }, rq = { 0 };
	if (do_term) {
		term = run(o_on, DECIDE, &cmds, n, seconds);
		print_row("terminal", &term);
		sh = run(o_on, SH_PARSE, &cmds, n, seconds);
		print_row("  baseline: zsp_sh_parse", &sh);
	}
	if (do_path && sym_on) {
		pon = run(o_on, DECIDE, &paths, n, seconds);
		print_row("path, symlinks resolved", &pon);
	}
	if (do_path && sym_off) {
		poff = run(o_off, DECIDE, &paths, n, seconds);
		print_row("path, as written", &poff);
	}
	if (do_path) {
		rq = run(o_on, REQ_PARSE, &paths, n, seconds);
		print_row("  baseline: zsp_request_parse", &rq);
	}

	printf("\nratios (mean time per step / baseline mean, comparable across machines):\n");
	if (do_term)
		printf("  terminal / zsp_sh_parse:                %6.2fx\n", term.mean_us / sh.mean_us);
	if (do_path && sym_on)
		printf("  path, symlinks / zsp_request_parse:     %6.2fx\n", pon.mean_us / rq.mean_us);
	if (do_path && sym_off)
		printf("  path, as written / zsp_request_parse:   %6.2fx\n", poff.mean_us / rq.mean_us);
	printf("\n");
	/* issue 15's figures: 500,000 terminal and 1,000,000 as-written path decisions a second */
	if (do_term)
		verdict_line("terminal", term.per_s, 500000);
	if (do_path && sym_on)
		verdict_line("path (symlinks resolved)", pon.per_s, 1000000);
	if (do_path && sym_off)
		verdict_line("path (as written)", poff.per_s, 1000000);

	zsp_oracle_free(o_on);
	zsp_oracle_free(o_off);
	zsp_policy_set_free(set);
	for (size_t i = 0; i < cmds.n; i++)
		free(cmds.req[i]), free(cmds.raw[i]);
	for (size_t i = 0; i < paths.n; i++)
		free(paths.req[i]), free(paths.raw[i]);
	free(cmds.req);
	free(cmds.raw);
	free(paths.req);
	free(paths.raw);
	return 0;
}
