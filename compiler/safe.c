/* safe.c: the known-safe commands of `allow safe;`: a table of commands, each with the options
 * that make it run a program or write a file, and the few grammars (git, sed) a table cannot say. */
#include "config.h"

#include <fnmatch.h>
#include <stdbool.h>
#include <string.h>

#include "compiler/safe.h"
#include "compiler/zsp.h"

/* How an option is spelt: `--pre` also as `--pre=X` and abbreviated (`--pr`, as getopt_long
 * accepts); `-z` as a letter in any cluster (`-iz`); `-exec` as the whole word only (find). */
enum danger_kind { D_END = 0, D_LONG, D_SHORT, D_WORD };

typedef struct danger {
	enum danger_kind kind;
	const char *opt;
	const char *why;
} danger;

#define RUNS "runs a program"
#define WRITES "writes a file"
#define DELETES "deletes files"

static const danger find_dangers[] = {
	{ D_WORD, "-exec", RUNS },    { D_WORD, "-execdir", RUNS }, { D_WORD, "-ok", RUNS },
	{ D_WORD, "-okdir", RUNS },   { D_WORD, "-delete", DELETES }, { D_WORD, "-fls", WRITES },
	{ D_WORD, "-fprint", WRITES }, { D_WORD, "-fprint0", WRITES }, { D_WORD, "-fprintf", WRITES },
	{ D_END, NULL, NULL },
};
static const danger rg_dangers[] = {
	{ D_LONG, "--pre", RUNS }, { D_LONG, "--hostname-bin", RUNS },
	{ D_LONG, "--search-zip", "runs decompression programs" }, { D_SHORT, "-z", "runs decompression programs" },
	{ D_END, NULL, NULL },
};
static const danger base64_dangers[] = {
	{ D_LONG, "--output", WRITES }, { D_SHORT, "-o", WRITES }, { D_END, NULL, NULL },
};
static const danger sort_dangers[] = {
	{ D_LONG, "--output", WRITES }, { D_SHORT, "-o", WRITES },
	{ D_LONG, "--compress-program", RUNS }, { D_END, NULL, NULL },
};
/* after the subcommand; the options before it are checked by git_grammar */
static const danger git_dangers[] = {
	{ D_LONG, "--output", WRITES }, { D_LONG, "--ext-diff", RUNS },
	{ D_LONG, "--textconv", RUNS }, { D_LONG, "--exec", RUNS }, { D_END, NULL, NULL },
};

typedef const char *grammar_fn(zsp_arena *a, const zsp_sh_cmd *c, bool moved, unsigned depth);
static grammar_fn git_grammar, sed_grammar, uniq_grammar, shell_grammar;

typedef struct safe_cmd {
	const char *name;
	const danger *dangers;  /* NULL: no option makes it unsafe */
	grammar_fn *grammar;    /* what a list of options cannot say, or NULL */
	bool counts_words;      /* a glob or brace that adds words changes its meaning */
} safe_cmd;

/* Sorted by name. Codex's list (REFERENCE §F), with uniq's output operand closed, sort, and
 * a few readers added; `bash -lc` and zsh are left out (doc/oracle.md says why). */
static const safe_cmd table[] = {
	{ "base64", base64_dangers, NULL, false },
	{ "basename", NULL, NULL, false },
	{ "bash", NULL, shell_grammar, true },
	{ "cat", NULL, NULL, false },
	{ "cd", NULL, NULL, false },
	{ "cut", NULL, NULL, false },
	{ "dash", NULL, shell_grammar, true },
	{ "dirname", NULL, NULL, false },
	{ "du", NULL, NULL, false },
	{ "echo", NULL, NULL, false },
	{ "expr", NULL, NULL, false },
	{ "false", NULL, NULL, false },
	{ "find", find_dangers, NULL, false },
	{ "git", git_dangers, git_grammar, false },
	{ "grep", NULL, NULL, false },
	{ "head", NULL, NULL, false },
	{ "id", NULL, NULL, false },
	{ "ls", NULL, NULL, false },
	{ "nl", NULL, NULL, false },
	{ "numfmt", NULL, NULL, false },
	{ "paste", NULL, NULL, false },
	{ "pwd", NULL, NULL, false },
	{ "readlink", NULL, NULL, false },
	{ "realpath", NULL, NULL, false },
	{ "rev", NULL, NULL, false },
	{ "rg", rg_dangers, NULL, false },
	{ "sed", NULL, sed_grammar, true },
	{ "seq", NULL, NULL, false },
	{ "sh", NULL, shell_grammar, true },
	{ "sort", sort_dangers, NULL, false },
	{ "stat", NULL, NULL, false },
	{ "tac", NULL, NULL, false },
	{ "tail", NULL, NULL, false },
	{ "tr", NULL, NULL, false },
	{ "true", NULL, NULL, false },
	{ "uname", NULL, NULL, false },
	{ "uniq", NULL, uniq_grammar, true },
	{ "wc", NULL, NULL, false },
	{ "which", NULL, NULL, false },
	{ "whoami", NULL, NULL, false },
};

/* git's read-only subcommands, and the words `git branch` may have without creating,
 * renaming or deleting a branch */
static const char *const git_reads[] = { "status", "log", "diff", "show", "branch" };
static const char *const git_branch_lists[] = {
	"--list", "-l", "--show-current", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
};
/* the only options git may have before the subcommand: the others change what runs (-c,
 * --exec-path), which repository is read (-C, --git-dir) or start a pager (-p) */
static const char *const git_globals[] = { "--no-pager", "-P", "--no-optional-locks" };

/* `sh -c` scripts inside `sh -c` scripts: deeper than this is not looked into */
#define SAFE_MAX_DEPTH 4

#define COUNT(x) (sizeof(x) / sizeof((x)[0]))

/* What a judgement says when the arena is full: not NULL, so a failed printf never reads as
 * safe; judge_all turns it into ZSP_EINTERNAL. */
static const char out_of_memory[] = "out of memory";
#define SAY(a, ...) or_oom(zsp_arena_printf(a, __VA_ARGS__))

static const char *or_oom(const char *s)
{
	return s ? s : out_of_memory;
}

static bool in_list(const char *w, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(w, list[i]) == 0)
			return true;
	return false;
}

static const safe_cmd *find_cmd(const char *name)
{
	size_t lo = 0, hi = COUNT(table);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(name, table[mid].name);
		if (c == 0)
			return &table[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Does word w spell option d? */
static bool spells(const char *w, const danger *d)
{
	switch (d->kind) {
	case D_LONG: {
		if (w[0] != '-' || w[1] != '-' || !w[2])
			return false;
		size_t n = strcspn(w + 2, "=");
		/* the whole name, or an abbreviation of it */
		return strncmp(w + 2, d->opt + 2, n) == 0;
	}
	case D_SHORT:
		return w[0] == '-' && w[1] != '-' && strchr(w + 1, d->opt[1]) != NULL;
	case D_WORD:
		return strcmp(w, d->opt) == 0;
	case D_END:
		break;
	}
	return false;
}

/* Could the shell expand w into an option of cmd (or into more words than it has)? The split
 * does not say which words were quoted, so a quoted `'*'` counts as a glob too. An expansion
 * of `x*` starts with `x`, so only a glob starting with a glob character or `-` can be an
 * option; a brace can be anything its parts say. */
static bool may_expand_badly(const char *w, const safe_cmd *s)
{
	size_t lit = strcspn(w, "*?[");
	bool glob = w[lit] != '\0', brace = strchr(w, '{') != NULL;
	if (!glob && !brace)
		return false;
	if (s->counts_words || brace)
		return true;
	if (lit > 0 && w[0] != '-')
		return false;
	bool only_words = true;
	for (const danger *d = s->dangers; d->kind; d++)
		only_words &= d->kind == D_WORD;
	if (!only_words)
		return true;
	/* find's options are whole words: the glob matters only if it matches one */
	for (const danger *d = s->dangers; d->kind; d++)
		if (fnmatch(w, d->opt, 0) == 0)
			return true;
	return false;
}

static const char *judge_cmd(zsp_arena *a, const zsp_sh_cmd *c, bool moved, unsigned depth)
{
	if (c->kind != ZSP_SH_COMMAND)
		return "a redirection to a file";
	if (c->nassign)
		return "an assignment (it changes what the command does, or what runs after it)";
	if (c->argc == 0)
		return "an empty command";
	for (size_t k = 0; k < c->argc; k++)
		if (strpbrk(c->argv[k], "$`\xff"))
			return "a word whose value is not known";
	const safe_cmd *s = find_cmd(c->argv[0]);
	if (!s)
		return SAY(a, "`%s` is not a known-safe command", c->argv[0]);
	if (s->dangers || s->counts_words) {
		for (size_t k = 1; k < c->argc; k++) {
			const char *w = c->argv[k];
			if (may_expand_badly(w, s))
				return SAY(a, "`%s` may expand to an option of %s", w, s->name);
			for (const danger *d = s->dangers; d && d->kind; d++)
				if (spells(w, d))
					return SAY(a, "`%s %s`: %s %s", s->name, w, d->opt, d->why);
		}
	}
	return s->grammar ? s->grammar(a, c, moved, depth) : NULL;
}

static const char *git_grammar(zsp_arena *a, const zsp_sh_cmd *c, bool moved, unsigned depth)
{
	(void)depth;
	size_t k = 1;
	for (; k < c->argc && c->argv[k][0] == '-'; k++)
		if (!in_list(c->argv[k], git_globals, COUNT(git_globals)))
			return SAY(a, "git option `%s` before the subcommand", c->argv[k]);
	if (k == c->argc)
		return "git without a subcommand";
	const char *sub = c->argv[k];
	if (!in_list(sub, git_reads, COUNT(git_reads)))
		return SAY(a, "`git %s` is not one of the read-only subcommands", sub);
	if (moved)
		return "git after `cd` reads another repository's configuration, which can run programs";
	if (strcmp(sub, "branch") != 0)
		return NULL;
	for (k++; k < c->argc; k++)
		if (!in_list(c->argv[k], git_branch_lists, COUNT(git_branch_lists)) &&
		    strncmp(c->argv[k], "--format=", 9) != 0)
			return SAY(a, "`git branch %s` may change branches", c->argv[k]);
	return NULL;
}

/* `sed -n Np` or `sed -n M,Np`, with at most one file: sed scripts can write (w) and run (e) */
static const char *sed_grammar(zsp_arena *a, const zsp_sh_cmd *c, bool moved, unsigned depth)
{
	(void)a, (void)moved, (void)depth;
	if (c->argc < 3 || c->argc > 4 || strcmp(c->argv[1], "-n") != 0)
		return "sed other than `sed -n Np` or `sed -n M,Np` (scripts can write and run programs)";
	const char *s = c->argv[2];
	size_t n = strspn(s, "0123456789");
	if (n && s[n] == ',') {
		size_t m = strspn(s + n + 1, "0123456789");
		n = m ? n + 1 + m : 0;
	}
	if (!n || strcmp(s + n, "p") != 0)
		return "sed other than `sed -n Np` or `sed -n M,Np` (scripts can write and run programs)";
	if (c->argc == 4 && c->argv[3][0] == '-')
		return "sed with an option after its script";
	return NULL;
}

/* uniq INPUT OUTPUT writes OUTPUT: at most one operand */
static const char *uniq_grammar(zsp_arena *a, const zsp_sh_cmd *c, bool moved, unsigned depth)
{
	(void)a, (void)moved, (void)depth;
	size_t operands = 0;
	bool options = true;
	for (size_t k = 1; k < c->argc; k++) {
		const char *w = c->argv[k];
		if (options && strcmp(w, "--") == 0)
			options = false;
		else if (!options || w[0] != '-' || !w[1])
			operands++;
	}
	return operands > 1 ? "uniq with a second operand, which it writes" : NULL;
}

static int judge_all(zsp_arena *a, const zsp_sh_result *sh, bool moved, unsigned depth,
		     const char **why);

/* `sh -c SCRIPT`, `bash -c`, `dash -c`: safe when the script parses cleanly and every command
 * in it is (a redirection in it is an entry, and unsafe). `-lc` is not: a login shell reads
 * startup files the sandbox may have written. */
static const char *shell_grammar(zsp_arena *a, const zsp_sh_cmd *c, bool moved, unsigned depth)
{
	if (c->argc != 3 || strcmp(c->argv[1], "-c") != 0)
		return SAY(a, "`%s` other than `%s -c SCRIPT`", c->argv[0], c->argv[0]);
	if (depth >= SAFE_MAX_DEPTH)
		return "shell scripts nested too deep";
	zsp_sh_result inner;
	if (zsp_sh_parse(a, c->argv[2], &inner) != ZSP_OK)
		return out_of_memory;
	if (inner.finding != ZSP_SH_CLEAN)
		return SAY(a, "the script of `%s -c` has %s", c->argv[0], inner.why);
	if (inner.ncmds == 0)
		return NULL;
	const char **why = zsp_arena_calloc(a, inner.ncmds, sizeof(*why));
	if (!why || judge_all(a, &inner, moved, depth + 1, why) != ZSP_OK)
		return out_of_memory;
	for (size_t i = 0; i < inner.ncmds; i++)
		if (why[i])
			return SAY(a, "the script of `%s -c` runs `%s`: %s", c->argv[0],
						inner.cmds[i].text, why[i]);
	return NULL;
}

static int judge_all(zsp_arena *a, const zsp_sh_result *sh, bool moved, unsigned depth,
		     const char **why)
{
	for (size_t i = 0; i < sh->ncmds && !moved; i++)
		moved = sh->cmds[i].kind == ZSP_SH_COMMAND && sh->cmds[i].argc > sh->cmds[i].nassign &&
			strcmp(sh->cmds[i].argv[sh->cmds[i].nassign], "cd") == 0;
	for (size_t i = 0; i < sh->ncmds; i++) {
		why[i] = judge_cmd(a, &sh->cmds[i], moved, depth);
		if (why[i] == out_of_memory)
			return ZSP_EINTERNAL;
	}
	return ZSP_OK;
}

int zsp_safe_judge(zsp_arena *a, const zsp_sh_result *sh, const char ***why)
{
	*why = zsp_arena_calloc(a, sh->ncmds + 1, sizeof(**why));
	if (!*why)
		return ZSP_EINTERNAL;
	return judge_all(a, sh, false, 0, *why);
}

/* ---- probes for lints ---------------------------------------------------------------------- */

static int add_probe(const char ***texts, const char ***whys, size_t *n, size_t cap,
		     const char *text, const char *why)
{
	if (!text || !why || *n >= cap)
		return ZSP_EINTERNAL;
	(*texts)[*n] = text;
	(*whys)[*n] = why;
	(*n)++;
	return ZSP_OK;
}

/* "CMD OPT", "CMD OPT=x" (long), "CMD x OPT": what a prefix regex lets through */
static int probe_option(zsp_arena *a, const char *cmd, const danger *d, const char ***texts,
			const char ***whys, size_t *n, size_t cap)
{
	const char *why = zsp_arena_printf(a, "%s %s", d->opt, d->why);
	const char *forms[3] = {
		zsp_arena_printf(a, "%s %s", cmd, d->opt),
		d->kind == D_LONG ? zsp_arena_printf(a, "%s %s=x", cmd, d->opt)
				  : zsp_arena_printf(a, "%s %s x", cmd, d->opt),
		zsp_arena_printf(a, "%s x %s", cmd, d->opt),
	};
	for (size_t i = 0; i < 3; i++)
		if (add_probe(texts, whys, n, cap, forms[i], why) != ZSP_OK)
			return ZSP_EINTERNAL;
	return ZSP_OK;
}

int zsp_safe_probes(zsp_arena *a, const char ***texts, const char ***whys, size_t *n)
{
	size_t cap = 512;
	*n = 0;
	*texts = zsp_arena_calloc(a, cap, sizeof(**texts));
	*whys = zsp_arena_calloc(a, cap, sizeof(**whys));
	if (!*texts || !*whys)
		return ZSP_EINTERNAL;
	for (size_t i = 0; i < COUNT(table); i++) {
		const safe_cmd *s = &table[i];
		if (!s->dangers)
			continue;
		/* git's dangerous options are diff and log options */
		static const char *const git_probed[] = { "log", "diff", "show" };
		bool git = strcmp(s->name, "git") == 0;
		for (size_t j = 0; j < (git ? COUNT(git_probed) : 1); j++) {
			const char *cmd = git ? zsp_arena_printf(a, "git %s", git_probed[j]) : s->name;
			if (!cmd)
				return ZSP_EINTERNAL;
			for (const danger *d = s->dangers; d->kind; d++)
				if (probe_option(a, cmd, d, texts, whys, n, cap) != ZSP_OK)
					return ZSP_EINTERNAL;
		}
	}
	/* options before git's subcommand, and cargo's, which the table does not list */
	static const char *const extra[][2] = {
		{ "git -c core.pager=x log", "git -c sets configuration that runs programs" },
		{ "git -c core.fsmonitor=x status", "git -c sets configuration that runs programs" },
		{ "git -C /x status", "git -C reads another repository's configuration" },
		{ "cargo test --config build.rustc-wrapper=x", "cargo --config runs programs" },
		{ "cargo build --config build.rustc-wrapper=x", "cargo --config runs programs" },
		{ "cargo check --config build.rustc-wrapper=x", "cargo --config runs programs" },
	};
	for (size_t i = 0; i < COUNT(extra); i++)
		if (add_probe(texts, whys, n, cap, extra[i][0], extra[i][1]) != ZSP_OK)
			return ZSP_EINTERNAL;
	return ZSP_OK;
}
