/* gen-policy.c: writes a synthetic, valid .zsp policy with N fs rules for the benchmark.
 * Deterministic for a given N and seed; no rule is shadowed, duplicated or conflicting. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum access { READ, WRITE, DENY };

static const char *const verbs[] = { "read", "write", "deny" };

struct node {
	char *path;
	enum access access;
	unsigned depth;
	unsigned children;
};

static uint64_t rng_state;

/* splitmix64: small, fast and the same on every platform. */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static unsigned pick(unsigned n)
{
	return (unsigned)(rng() % n);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		fprintf(stderr, "gen-policy: out of memory\n");
		exit(70);
	}
	return p;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static const char *const dir_words[] = {
	"src", "lib", "build", "cache", "data", "docs", "vendor", "assets", "config", "tmp",
	"logs", "out", "pkg", "share", "tests", "tools", "web", "api", "models", "scripts",
};
#define NWORDS (sizeof(dir_words) / sizeof(dir_words[0]))

/* A child decision always differs from the parent's, so that no rule is -Wshadowed. Denied
 * subtrees are rarely re-opened, as in real policies. */
static enum access child_access(enum access parent)
{
	switch (parent) {
	case READ:
		return pick(4) ? WRITE : DENY;
	case WRITE:
		return pick(3) ? DENY : READ;
	default:
		return pick(2) ? READ : WRITE;
	}
}

/* A glob leaf below `parent`; `id` keeps every pattern distinct. */
static char *glob_child(const char *parent, unsigned long id)
{
	switch (pick(4)) {
	case 0:
		return xasprintf("%s/*.log%lu", parent, id);
	case 1:
		return xasprintf("%s/**/node_modules%lu", parent, id);
	case 2:
		return xasprintf("%s/cache-[0-9]%lu?", parent, id);
	default:
		return xasprintf("%s/*/secret%lu.*", parent, id);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: gen-policy N [SEED]\n"
			"  writes a valid policy with N fs rules and N/10 tool rules to stdout\n");
	exit(64);
}

static unsigned long parse_count(const char *s)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > 10000000)
		usage();
	return v;
}

/* The roots every tree hangs from: the file system, two parameters and the home directory. */
static const char *const roots[] = { "/srv", "${WORKSPACE}", "${DATA}", "~/projects" };
#define NROOTS (sizeof(roots) / sizeof(roots[0]))

static void emit_fs(unsigned long n)
{
	struct node *nodes = xmalloc((n + NROOTS) * sizeof(*nodes));
	size_t nnodes = 0;
	unsigned long made = 0, id = 0;

	printf("  fs {\n    read \"/\";\n");
	made++;
	/* "/srv" only inherits read "/": it is a tree root but not a rule of its own. */
	nodes[nnodes++] = (struct node){ xasprintf("%s", roots[0]), READ, 1, 0 };
	for (size_t r = 1; r < NROOTS && made < n; r++, made++) {
		nodes[nnodes++] = (struct node){ xasprintf("%s", roots[r]), WRITE, 1, 0 };
		printf("    write \"%s\";\n", roots[r]);
	}
	/* protect names: a fixed handful, as in examples/workspace.zsp. Each one is expanded under
	 * every writable root, so their count multiplies the work rather than adding to it. */
	static const char *const protects[] = {
		".git/hooks", ".git/config", ".gitmodules", ".bashrc", ".zshrc", ".profile",
		".mcp.json", ".vscode", ".idea", ".claude/commands", ".codex", ".agents",
	};
	unsigned long nprotect = n / 50;
	if (nprotect > sizeof(protects) / sizeof(protects[0]))
		nprotect = sizeof(protects) / sizeof(protects[0]);
	if (nprotect > n - made)
		nprotect = n - made;
	for (unsigned long i = 0; i < nprotect; i++, made++)
		printf("%s\"%s\"%s", i ? ", " : "    protect ", protects[i],
		       i + 1 == nprotect ? ";\n" : "");
	/* Anywhere-patterns: a few `**` deny rules. */
	for (unsigned long i = 0; i < n / 200 && made < n; i++, made++)
		printf("    deny \"**/.env.%lu\";\n", i);

	while (made < n) {
		/* Favour recent nodes a little: trees get deep, not only wide. */
		size_t pi = pick(3) ? nnodes - 1 - pick(nnodes < 64 ? (unsigned)nnodes : 64u)
				    : pick((unsigned)nnodes);
		if (nodes[pi].depth >= 9 || nodes[pi].children >= 40)
			pi = pick(NROOTS);
		enum access a = child_access(nodes[pi].access);
		/* Up to three paths per statement, all with the same verb and parent. */
		unsigned k = 1 + pick(3);
		printf("    %s ", verbs[a]);
		for (unsigned j = 0; j < k && made < n; j++, made++, id++) {
			struct node *p = &nodes[pi];
			char *path;
			int leaf = pick(8) == 0;
			if (leaf)
				path = glob_child(p->path, id);
			else
				path = xasprintf("%s/%s%lu", p->path, dir_words[pick(NWORDS)], id);
			printf("%s\"%s\"", j ? ", " : "", path);
			p->children++;
			if (leaf)
				free(path);
			else
				nodes[nnodes++] = (struct node){ path, a, p->depth + 1, 0 };
		}
		printf(";\n");
	}
	printf("  }\n");
	for (size_t i = 0; i < nnodes; i++)
		free(nodes[i].path);
	free(nodes);
}

static const char *const commands[] = { "cargo", "npm", "make", "git", "go", "python3", "pytest",
					"ls", "rg", "docker" };
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void emit_tools(unsigned long n)
{
	unsigned long nterm = n * 6 / 10, nfetch = n * 2 / 10, nedit = n - nterm - nfetch;
	printf("  tool \"terminal\" {\n    default ask;\n");
	for (unsigned long i = 0; i < nterm; i++) {
		const char *cmd = commands[pick(NCOMMANDS)];
		switch (pick(3)) {
		case 0:
			printf("    allow /^%s\\s+(check|test|build)%lu\\b/;\n", cmd, i);
			break;
		case 1:
			printf("    deny /^%s\\s+.*--force%lu/c;\n", cmd, i);
			break;
		default:
			printf("    ask /^%s\\s+[a-z-]+\\s+--target=t%lu$/i;\n", cmd, i);
		}
	}
	printf("  }\n  tool \"fetch\" {\n    default ask;\n");
	for (unsigned long i = 0; i < nfetch; i++)
		printf("    allow /^https:\\/\\/host%lu\\.example\\.(com|org)\\//;\n", i);
	printf("  }\n  tool \"edit_file\" {\n    default allow;\n");
	for (unsigned long i = 0; i < nedit; i++)
		printf("    %s path \"**/generated%lu/**\";\n", pick(2) ? "deny" : "ask", i);
	printf("  }\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3)
		usage();
	unsigned long n = parse_count(argv[1]);
	rng_state = argc == 3 ? parse_count(argv[2]) : 42;

	printf("# Generated by bench/gen-policy %lu: %lu fs rules, %lu tool rules.\n", n, n, n / 10);
	printf("zsp 1;\n\n");
	printf("policy \"bench-base\" {\n  default ask;\n  fs { write \"/var/tmp/bench\"; deny \"~/.ssh\"; }\n"
	       "  net { mode none; }\n}\n\n");
	printf("policy \"bench\" extends \"bench-base\" {\n");
	printf("  param WORKSPACE;\n  param DATA = \"/var/lib/bench\";\n"
	       "  param CACHE = \"${DATA}/cache\";\n  default ask;\n");
	emit_fs(n);
	printf("  net {\n    mode proxy;\n    allow \"*.crates.io:443\", \"github.com:*\";\n  }\n");
	printf("  process {\n    env clear;\n    env keep \"PATH\", \"LC_*\";\n"
	       "    env set \"XDG_CACHE_HOME\" = \"${CACHE}\";\n    limit nofile 4096;\n"
	       "    syscalls deny \"ptrace\", \"bpf\";\n  }\n");
	emit_tools(n / 10);
	printf("}\n");
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("gen-policy: stdout");
		return 74;
	}
	return 0;
}
