/* builtin.c: the built-in terminal rules (doc/facts.md §zed): Zed's five `rm` regexes, and a
 * structural check of every simple command that looks through wrappers, sh -c scripts and find. */
#include "config.h"

#include "compiler/builtin.h"
#include "compiler/files.h"
#include "compiler/names.h"
#include "compiler/regex.h"
#include "compiler/zsp.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <strings.h>

#define NESTED_MAX 8  /* sh -c, eval, env -S, su -c, watch scripts inside one another */

enum target { T_NONE, T_ROOT, T_HOME, T_CWD, T_PARENT };

static const struct {
	const char *rule, *message;
} rules[] = {
	[T_ROOT] = { "rm-root", "deletes the root directory" },
	[T_HOME] = { "rm-home", "deletes the home directory" },
	[T_CWD] = { "rm-cwd", "deletes the current directory" },
	[T_PARENT] = { "rm-parent", "deletes a parent of the current or home directory" },
};

/* Zed's regexes, [0] command position, [1] anywhere: compiled (and JIT-compiled) once per
 * process and shared, since compiled code is read-only; match data is per call. */
typedef struct regex_cache {
	pcre2_match_data *md[2];
} regex_cache;

static pcre2_code *rm_code[2];
static pcre2_match_context *rm_limits;
static pthread_once_t rm_once = PTHREAD_ONCE_INIT;

typedef struct bctx {
	zsp_arena *a;
	regex_cache *rx;
	zsp_builtin_hit *hit;
	const zsp_builtin_env *env;
	const char *what;   /* the simple command being judged */
	unsigned depth;     /* scripts entered so far */
	bool has_pos;       /* $0, $1, ..., $@ are known (sh -c, set --) */
	bool xargs;         /* inside xargs: words read from stdin are added to the command */
	const char **pos;   /* $0 first */
	size_t npos;
	size_t steps;       /* what is left of the budget (bytes of words looked at) */
	const char **vars;  /* shell variables the text set: "NAME=value", the latest last */
	size_t nvars;
	const char **dirs;  /* where the command may be: the workspace, then where cd went */
	size_t ndirs;
	bool lost;          /* a cd went somewhere unknown: relative cd targets are unknown */
	bool nowhere;       /* a wrapper of this command changed its directory (env -C, sudo -D) */
	bool rerooted;      /* a wrapper of this command changed its root (chroot) */
	const zsp_sh_result *sh; /* the parse of the text being checked */
	const char **fnargs;/* the text defines a function: any of its words may be a function's
			     * positional parameter (NULL: it defines none) */
	size_t nfnargs;
} bctx;

static int set_hit(bctx *c, const char *rule, const char *message)
{
	c->hit->rule = rule;
	c->hit->message = message;
	c->hit->what = c->what;
	return 1;
}

/* ---- Zed's regexes on the text ---- */

/* Zed's FLAGS, TRAILING_FLAGS and the five targets as one alternation with a named group each. */
#define RM_FLAGS "(?:--[a-zA-Z0-9][-a-zA-Z0-9_]*(?:=[^\\s]*)?\\s+|-[a-zA-Z]+\\s+)*"
#define RM_TRAIL "(?:\\s+--[a-zA-Z0-9][-a-zA-Z0-9_]*(?:=[^\\s]*)?|\\s+-[a-zA-Z]+)*\\s*$"
#define RM_TARGET                                                                        \
	"(?:--\\s+)?(?:(?<root>/\\*?)|(?<home>~/?\\*?|(?:\\$HOME|\\$\\{HOME\\})/?\\*?)|" \
	"(?<cwd>\\./?\\*?)|(?<parent>\\.\\./?\\*?))"
/* Zed's own form: `rm` anywhere after a word boundary. Used on text that does not parse. */
#define RM_ANYWHERE "\\brm\\s+" RM_FLAGS RM_TARGET RM_TRAIL
/* On text that parses, `rm` only where a command starts (after an optional path and simple
 * wrappers), so `echo rm -rf /` and `git rm -r .` stay legal; the structural check does the rest. */
#define RM_WORD "(?:[^\\s;&|(){}`'\"]*/)?"
#define RM_WRAPPER                                                                        \
	RM_WORD "(?:sudo|doas|env|nice|nohup|time|command|exec|xargs|busybox|nocorrect|"  \
		"builtin|noglob|stdbuf|ionice|timeout|setsid)"                             \
		"(?:\\s+(?:-\\S*|[A-Za-z_][A-Za-z0-9_]*=\\S*|\\d\\S*))*\\s+"
#define RM_COMMAND \
	"(?:^|[;&|(){}\\n`!]|\\$\\()\\s*(?:" RM_WRAPPER ")*" RM_WORD "rm\\s+" RM_FLAGS RM_TARGET RM_TRAIL

static void compile_rm_regexes(void)
{
	uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C | PCRE2_MATCH_INVALID_UTF |
			PCRE2_CASELESS;
	int err;
	PCRE2_SIZE off;
	for (int k = 0; k < 2; k++) {
		rm_code[k] = pcre2_compile((PCRE2_SPTR)(k ? RM_ANYWHERE : RM_COMMAND),
					   PCRE2_ZERO_TERMINATED, opts, &err, &off, NULL);
		if (rm_code[k])
			(void)pcre2_jit_compile(rm_code[k], PCRE2_JIT_COMPLETE);
	}
	rm_limits = pcre2_match_context_create(NULL);
	if (rm_limits)
		pcre2_set_match_limit(rm_limits, ZSP_REGEX_MATCH_LIMIT);
}

static int check_regex(bctx *c, const char *text, bool anywhere)
{
	static const char *const groups[] = { [T_ROOT] = "root", [T_HOME] = "home", [T_CWD] = "cwd",
					      [T_PARENT] = "parent" };
	pcre2_code **re = &rm_code[anywhere];
	pcre2_match_data **md = &c->rx->md[anywhere];
	int rc, found = T_NONE;

	/* the patterns are fixed: only allocation can fail */
	if (pthread_once(&rm_once, compile_rm_regexes) != 0 || !*re || !rm_limits)
		return -1;
	if (!*md && !(*md = pcre2_match_data_create_from_pattern(*re, NULL)))
		return -1;
	rc = pcre2_match(*re, (PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED, 0, 0, *md, rm_limits);
	if (rc == PCRE2_ERROR_NOMEMORY)
		return -1;
	if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
		/* The search gave up (match limit). On text that parsed, the structural check of
		 * each command decides; on text that did not, nothing else looks: fail closed. */
		if (!anywhere)
			return 0;
		c->what = text;
		return set_hit(c, "rm-unchecked", "cannot be checked for a catastrophic rm");
	}
	if (rc > 0) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(*md);

		for (int t = T_ROOT; t <= T_PARENT && found == T_NONE; t++) {
			int n = pcre2_substring_number_from_name(*re, (PCRE2_SPTR)groups[t]);

			if (n > 0 && ov[2 * n] != PCRE2_UNSET)
				found = t;
		}
	}
	if (found == T_NONE)
		return 0;
	c->what = text;
	return set_hit(c, rules[found].rule, rules[found].message);
}

/* ---- words ---- */

/* The last path component of word: what a command name is compared by. */
static const char *base_name(const char *word)
{
	const char *slash = strrchr(word, '/');

	return slash ? slash + 1 : word;
}

/* Case-insensitive comparison of a base name with name. The first bytes are compared first,
 * folded as strcasecmp folds ASCII: the tables are scanned per word, and most names differ
 * there. */
static bool base_is(const char *base, const char *name)
{
	return (base[0] | 32) == (name[0] | 32) && strcasecmp(base, name) == 0;
}

static bool name_is(const char *word, const char *name)
{
	return base_is(base_name(word), name);
}

static bool name_start(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
}

/* NAME=value, NAME+=value, NAME[SUBSCRIPT]=value, NAME[SUBSCRIPT]+=value: bash takes each of
 * them for an assignment before the command word. */
static bool is_assignment(const char *w)
{
	if (!name_start(*w))
		return false;
	while (name_start(*w) || (*w >= '0' && *w <= '9'))
		w++;
	if (*w == '[') {
		w = strchr(w, ']');
		if (!w)
			return false;
		w++;
	}
	if (*w == '+')
		w++;
	return *w == '=';
}

/* Case-insensitive `$NAME` or `${NAME}` at the start of w, followed by the end or `/`; returns
 * the length matched or 0. */
static size_t param_prefix(const char *w, const char *name)
{
	size_t n = strlen(name);

	if (w[0] != '$')
		return 0;
	if (strncasecmp(w + 1, name, n) == 0 && (w[1 + n] == '\0' || w[1 + n] == '/'))
		return 1 + n;
	if (w[1] == '{' && strncasecmp(w + 2, name, n) == 0 && w[2 + n] == '}' &&
	    (w[3 + n] == '\0' || w[3 + n] == '/'))
		return 3 + n;
	return 0;
}

/* A glob made only of wildcards (`*`, `?`, `[...]`, extglob groups), after at most one leading
 * dot (when dot is set): it can stand for every entry of its directory (`.*` for every dot
 * entry, and `..` itself on shells that match it). Quoting is not known here: a quoted `*` is
 * taken for a wildcard too, which only ever makes more operands dangerous. */
static bool total_glob(const char *p, size_t n, bool dot)
{
	size_t i = dot && n > 0 && p[0] == '.' ? 1 : 0;
	bool wild = false;

	while (i < n) {
		if (i + 1 < n && p[i + 1] == '(' && strchr("@!+*?", p[i])) {
			size_t depth = 0, j = i + 1;

			for (; j < n; j++) {
				depth += p[j] == '(' ? 1 : p[j] == ')' ? (size_t)-1 : 0;
				if (depth == 0)
					break;
			}
			if (j >= n)
				return false;
			i = j + 1;
		} else if (p[i] == '*' || p[i] == '?') {
			i++;
		} else if (p[i] == '[') {
			size_t j = i + 1;

			if (j < n && (p[j] == '!' || p[j] == '^'))
				j++;
			if (j < n && p[j] == ']')
				j++;
			while (j < n && p[j] != ']')
				j++;
			if (j >= n)
				return false;
			i = j + 1;
		} else {
			return false;
		}
		wild = true;
	}
	return wild;
}

static bool has_glob(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] == '*' || p[i] == '?' || p[i] == '[')
			return true;
	return false;
}

/* The components of a lexically normal absolute path: does the pattern path `pat` (components
 * that may be globs) name `dir` or one of its ancestors? 2 dir itself, 1 a strict ancestor, 0
 * neither. */
static int names_dir(zsp_arena *a, const char *pat, const char *dir)
{
	const char *p = pat, *d = dir;

	for (;;) {
		while (*p == '/')
			p++;
		while (*d == '/')
			d++;
		if (!*p)
			return *d ? 1 : 2;
		if (!*d)
			return 0;
		size_t pn = strcspn(p, "/"), dn = strcspn(d, "/");

		if (has_glob(p, pn)) {
			char *pp = zsp_arena_strndup(a, p, pn), *dd = zsp_arena_strndup(a, d, dn);

			if (!pp || !dd || fnmatch(pp, dd, 0) != 0)
				return 0;
		} else if (pn != dn || memcmp(p, d, pn) != 0) {
			return 0;
		}
		p += pn;
		d += dn;
	}
}

/* The machine the command runs on, when the caller knows it. */
static const zsp_builtin_env no_env;

typedef struct comp {
	const char *p;
	size_t n;
	unsigned char kind; /* 1 opaque (holds `$` or a backquote), 2 a total glob, 0 other */
} comp;

/* What an rm operand names after lexical normalization: `/`, `~` (also `$HOME`, `~user`, the
 * home directory's path), `.` (also `$PWD`, `~+`, `$(pwd)`, the workspace's path), or an
 * ancestor of `~` or `.`. Trailing components that are total globs name the same tree.
 * `/proc/PID/root` is `/` and `/proc/PID/cwd` the current directory (of the requester for
 * `self`; of another process, a directory as dangerous). A `..` that pops a component holding
 * `$` or a backquote makes the operand unknown. A relative path is made absolute against each
 * of dirs (the workspace, and the directories `cd` went to). */
static int classify(zsp_arena *a, const zsp_builtin_env *env, const char *const *dirs,
		    size_t ndirs, const char *w, enum target *out)
{
	enum target anchor = T_CWD;
	const char *p = w;
	size_t n, skip, depth = 0, climb = 0, len = strlen(w);
	comp *stack;

	*out = T_NONE;
	if (!*w)
		return 0;
	if (*w == '/') {
		anchor = T_ROOT;
	} else if (w[0] == '~' && w[1] == '+' && (w[2] == '\0' || w[2] == '/')) {
		p = w + 2;
	} else if (w[0] == '~' && w[1] != '-') {
		anchor = T_HOME;
		p = w + strcspn(w, "/");
	} else if ((skip = param_prefix(w, "HOME")) != 0) {
		anchor = T_HOME;
		p = w + skip;
	} else if ((skip = param_prefix(w, "PWD")) != 0) {
		p = w + skip;
	} else if (strncmp(w, "$(pwd)", 6) == 0 && (w[6] == '\0' || w[6] == '/')) {
		p = w + 6;
	} else if (strncmp(w, "`pwd`", 5) == 0 && (w[5] == '\0' || w[5] == '/')) {
		p = w + 5;
	}
	stack = zsp_arena_alloc(a, (len / 2 + 2) * sizeof *stack);
	if (!stack)
		return -1;
	while (*p) {
		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (depth > 0 && stack[depth - 1].kind == 1)
				return 0;
			if (depth > 0)
				depth--;
			else if (anchor == T_CWD || anchor == T_HOME)
				climb++;
		} else if (anchor == T_ROOT && climb == 0 && depth == 2 &&
			   stack[0].n == 4 && memcmp(stack[0].p, "proc", 4) == 0 &&
			   ((n == 4 && memcmp(p, "root", 4) == 0) || (n == 3 && memcmp(p, "cwd", 3) == 0))) {
			/* /proc/PID/root is that process's /, /proc/PID/cwd its current directory */
			depth = 0;
			anchor = p[0] == 'r' ? T_ROOT : T_CWD;
		} else {
			bool opaque = memchr(p, '$', n) || memchr(p, '`', n) || (p == w && *p == '~');

			stack[depth++] = (comp){ p, n, opaque ? 1 : total_glob(p, n, true) ? 2 : 0 };
		}
		p += n;
	}
	while (depth > 0 && stack[depth - 1].kind == 2)
		depth--;
	if (depth == 0) {
		*out = climb > 0 ? T_PARENT : anchor;
		return 0;
	}
	/* Not one of the spellings: compare the path with the home and current directories, the
	 * path made absolute against each directory the command may be in */
	size_t nbases = anchor == T_CWD ? ndirs : 1;
	for (size_t b = 0; b < nbases && *out == T_NONE; b++) {
		const char *base = anchor == T_ROOT ? "" : anchor == T_HOME ? env->home : dirs[b];
		if (!base)
			continue;
		size_t blen = strlen(base);
		for (size_t k = 0; k < climb; k++) {
			while (blen > 0 && base[blen - 1] != '/')
				blen--;
			if (blen > 0)
				blen--;
		}
		char *path = zsp_arena_alloc(a, blen + len + 2);
		if (!path)
			return -1;
		char *q = path + blen;
		memcpy(path, base, blen);
		for (size_t k = 0; k < depth; k++) {
			if (stack[k].kind == 1)
				return 0;
			*q++ = '/';
			memcpy(q, stack[k].p, stack[k].n);
			q += stack[k].n;
		}
		*q = '\0';
		int h = env->home ? names_dir(a, path, env->home) : 0;
		int d = env->cwd ? names_dir(a, path, env->cwd) : 0;
		*out = h == 2 ? T_HOME : d == 2 ? T_CWD : (h || d) ? T_PARENT : T_NONE;
	}
	return 0;
}

/* ---- brace expansion, bounded ---- */

/* Every word of a check costs steps (its length): the budget bounds the work whatever the
 * input, and a check that runs out of it fails closed. */
#define STEPS_MAX (4u << 20)

static int out_of_steps(bctx *c)
{
	return set_hit(c, "rm-unchecked", "is too complex to check for a catastrophic command");
}

static int spend(bctx *c, size_t n)
{
	if (c->steps < n + 1)
		return out_of_steps(c);
	c->steps -= n + 1;
	return 0;
}

/* `x..y` or `x..y..incr` with x and y both integers or both single characters. */
static bool is_sequence(const char *p, size_t n, long *from, long *to, long *step, bool *chars)
{
	char buf[64], *e1, *e2, *e3;

	if (n == 0 || n >= sizeof buf)
		return false;
	memcpy(buf, p, n);
	buf[n] = '\0';
	*step = 1;
	if (n >= 4 && buf[1] == '.' && buf[2] == '.' && (n == 4 || (buf[4] == '.' && buf[5] == '.'))) {
		*chars = true;
		*from = (unsigned char)buf[0];
		*to = (unsigned char)buf[3];
		if (n == 4)
			return true;
		*step = strtol(buf + 6, &e3, 10);
		return *e3 == '\0' && buf[6] != '\0';
	}
	*chars = false;
	*from = strtol(buf, &e1, 10);
	if (e1 == buf || e1[0] != '.' || e1[1] != '.')
		return false;
	*to = strtol(e1 + 2, &e2, 10);
	if (e2 == e1 + 2)
		return false;
	if (*e2 == '\0')
		return true;
	if (e2[0] != '.' || e2[1] != '.')
		return false;
	*step = strtol(e2 + 2, &e3, 10);
	return *e3 == '\0' && e3 != e2 + 2;
}

/* The first brace expression of w (a `{` with a comma at its own level, or a sequence), found
 * in one pass: *open is its `{`, *close its `}`. 1 found, 0 none, -1 out of memory. */
static int find_brace(zsp_arena *a, const char *w, size_t len, size_t *open, size_t *close)
{
	size_t *stack = zsp_arena_alloc(a, (len + 1) * sizeof *stack), depth = 0;
	bool *comma = zsp_arena_calloc(a, len + 1, sizeof *comma);
	bool found = false;

	if (!stack || !comma)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (w[i] == '{' && !(i > 0 && w[i - 1] == '$')) {
			stack[depth++] = i;
		} else if (w[i] == ',' && depth > 0) {
			comma[stack[depth - 1]] = true;
		} else if (w[i] == '}' && depth > 0) {
			size_t o = stack[--depth];
			long f, t, st;
			bool ch;

			if ((comma[o] || is_sequence(w + o + 1, i - o - 1, &f, &t, &st, &ch)) &&
			    (!found || o < *open)) {
				*open = o;
				*close = i;
				found = true;
			}
		}
	}
	return found;
}

typedef int (*word_fn)(bctx *c, const char *word, void *arg);

/* Calls fn on each word of w's brace expansion, in bash's order, until it returns non-zero;
 * within the step budget (out of steps: a hit). 1 stopped, 0 done, -1 out of memory. */
static int expand_braces(bctx *c, const char *w, word_fn fn, void *arg)
{
	size_t len = strlen(w), open = 0, close = 0;
	int rc;

	if ((rc = spend(c, len)) != 0)
		return rc;
	if ((rc = find_brace(c->a, w, len, &open, &close)) <= 0)
		return rc < 0 ? -1 : fn(c, w, arg);
	long from, to, step;
	bool chars;
	/* a comma makes a list, even where the text could read as a sequence (`{/..,}`) */
	if (!memchr(w + open + 1, ',', close - open - 1) &&
	    is_sequence(w + open + 1, close - open - 1, &from, &to, &step, &chars)) {
		step = step < 0 ? -step : step ? step : 1;
		for (long v = from;; v += from <= to ? step : -step) {
			char *word = chars ? zsp_arena_printf(c->a, "%.*s%c%s", (int)open, w, (char)v, w + close + 1)
					   : zsp_arena_printf(c->a, "%.*s%ld%s", (int)open, w, v, w + close + 1);

			if (!word)
				return -1;
			if ((rc = expand_braces(c, word, fn, arg)) != 0)
				return rc;
			if ((from <= to && v > to - step) || (from > to && v < to + step))
				return 0;
		}
	}
	size_t depth = 0, alt = open + 1;
	for (size_t k = open + 1; k <= close; k++) {
		depth += w[k] == '{' ? 1 : w[k] == '}' ? (size_t)-1 : 0;
		if (!((depth == 0 && w[k] == ',') || k == close))
			continue;
		char *word = zsp_arena_printf(c->a, "%.*s%.*s%s", (int)open, w, (int)(k - alt), w + alt,
					      w + close + 1);

		if (!word)
			return -1;
		if ((rc = expand_braces(c, word, fn, arg)) != 0)
			return rc;
		alt = k + 1;
	}
	return 0;
}

static int classify_one(bctx *c, const char *word, void *arg)
{
	enum target *out = arg;

	if (classify(c->a, c->env, c->dirs, c->ndirs, word, out) < 0)
		return -1;
	return *out != T_NONE ? 2 : 0;
}

/* classify over the brace expansion of w. 0 done (*out says), 1 a hit (out of steps), -1 oom. */
static int classify_word(bctx *c, const char *w, enum target *out)
{
	int rc = expand_braces(c, w, classify_one, out);

	return rc == 2 ? 0 : rc;
}

/* ---- getopt-style options of wrappers ---- */

typedef struct opts {
	bool seen[128];
	const char *val[128];
	bool unknown;  /* a long option the grammar does not know: it may have taken the next word */
} opts;

/* Scans options from argv[i] until the first operand or after `--` (these tools stop at their
 * command). req: short options taking an argument; optional: ones taking only an attached
 * argument; longs: "name=x" (takes an argument, recorded as -x) or "name:x" (a flag). */
static size_t scan_opts(const char **argv, size_t argc, size_t i, const char *req,
			const char *optional, const char *const *longs, opts *o)
{
	for (; i < argc; i++) {
		const char *w = argv[i];

		if (strcmp(w, "--") == 0)
			return i + 1;
		if (w[0] != '-' || w[1] == '\0')
			return i;
		if (w[1] == '-') {
			size_t n = strcspn(w + 2, "=");
			bool known = false;

			for (const char *const *l = longs; l && *l && !known; l++) {
				size_t ln = strlen(*l) - 2;
				unsigned char x = (unsigned char)(*l)[ln + 1];

				if (ln != n || strncmp(*l, w + 2, n) != 0)
					continue;
				known = true;
				o->seen[x & 127] = true;
				if ((*l)[ln] == '=')
					o->val[x & 127] = w[2 + n] ? w + 3 + n : i + 1 < argc ? argv[++i] : NULL;
			}
			o->unknown |= !known && !w[2 + n];
			continue;
		}
		for (size_t j = 1; w[j]; j++) {
			unsigned char ch = (unsigned char)w[j];

			if (ch >= 128)
				break;
			o->seen[ch] = true;
			if (strchr(req, ch)) {
				o->val[ch] = w[j + 1] ? w + j + 1 : i + 1 < argc ? argv[++i] : NULL;
				break;
			}
			if (strchr(optional, ch)) {
				o->val[ch] = w + j + 1;
				break;
			}
		}
	}
	return i;
}

/* What a wrapper does with the words after its options. */
enum wkind {
	W_PLAIN,     /* runs them as a command */
	W_SUDO,      /* sudo: -e edits files; -s, -i without a command start a shell */
	W_ENV,       /* env: -S splits a string into the command */
	W_COMMAND,   /* command: -v, -V only look the name up */
	W_WATCH,     /* watch: joins them into a script for sh -c, unless -x */
	W_FLOCK,     /* flock FILE -c SCRIPT, or flock FILE COMMAND... */
	W_NOCMD_P,   /* -p (and -P, -u): acts on running processes, no command */
	W_XARGS,     /* xargs: adds words read from stdin to the command */
	W_MULTI,     /* busybox, toybox: the applet named by the next word */
	W_COREUTILS, /* coreutils --coreutils-prog=NAME ARGS... */
	W_SCRIPT,    /* script -c SCRIPT; without it a shell reading stdin */
	W_SG,        /* sg [-] GROUP [-c] SCRIPT; without it a shell reading stdin */
	W_CAPSH,     /* capsh ... -- ARGS: bash ARGS */
	W_SHELL_ONLY,/* doas, chroot: without a command, a shell reading stdin (doas -s too) */
};

/* The wrapper table: commands that run (some of) the rest of their words as a command, with
 * their option grammars. operands: words between the options and the command (timeout's
 * DURATION, chroot's NEWROOT, flock's FILE, taskset's MASK, chrt's PRIORITY). Options are read
 * again after the operands (setarch ARCH -R COMMAND). */
#define L(...) ((const char *const[]){ __VA_ARGS__, NULL })
static const struct wrapper {
	const char *name, *req, *optional;
	const char *const *longs;
	unsigned operands;
	enum wkind kind;
} wrappers[] = {
	{ "sudo", "ugCDhprtUTR", "", L("user=u", "group=g", "close-from=C", "chdir=D", "host=h",
					"prompt=p", "role=r", "type=t", "other-user=U",
					"command-timeout=T", "chroot=R", "edit:e", "shell:s",
					"login:i"), 0, W_SUDO },
	{ "doas", "uC", "", NULL, 0, W_SHELL_ONLY },
	{ "env", "uSCP", "", L("unset=u", "split-string=S", "chdir=C", "ignore-environment:i",
			       "null:0", "block-signal=b", "default-signal=d", "ignore-signal=g"), 0,
	  W_ENV },
	{ "nice", "n", "", L("adjustment=n"), 0, W_PLAIN },
	{ "nohup", "", "", NULL, 0, W_PLAIN },
	{ "timeout", "sk", "", L("signal=s", "kill-after=k", "preserve-status:p", "foreground:f",
				 "verbose:v"), 1, W_PLAIN },
	{ "time", "fo", "", L("format=f", "output=o", "append:a", "portability:p", "verbose:v"), 0,
	  W_PLAIN },
	{ "command", "", "", NULL, 0, W_COMMAND },
	{ "exec", "a", "", NULL, 0, W_PLAIN },
	{ "coproc", "", "", NULL, 0, W_PLAIN },
	{ "parallel", "jSaEIdnNLlXC", "", L("jobs=j", "sshlogin=S", "arg-file=a", "eof=E",
					   "delimiter=d", "max-args=n", "max-lines=L",
					   "colsep=C", "joblog=J", "results=R", "tmpdir=T",
					   "workdir=W", "basefile=B", "null:0", "keep-order:k",
					   "pipe:p", "dry-run:D", "verbose:v", "ungroup:u"), 0, W_XARGS },
	{ "xargs", "InPLsdEa", "ile", L("arg-file=a", "delimiter=d", "max-args=n", "max-procs=P",
					"max-chars=s", "process-slot-var=X", "max-lines=L",
					"replace=I", "eof=E", "null:0", "no-run-if-empty:r",
					"verbose:t", "interactive:p", "open-tty:o", "exit:x",
					"show-limits:S"), 0, W_XARGS },
	{ "stdbuf", "ioe", "", L("input=i", "output=o", "error=e"), 0, W_PLAIN },
	{ "ionice", "cnpPu", "", L("class=c", "classdata=n", "pid=p", "pgid=P", "uid=u",
				   "ignore:t"), 0, W_NOCMD_P },
	{ "chroot", "", "", L("userspec=u", "groups=g", "skip-chdir:s"), 1, W_SHELL_ONLY },
	{ "busybox", "", "", NULL, 0, W_MULTI },
	{ "toybox", "", "", NULL, 0, W_MULTI },
	{ "coreutils", "", "", L("coreutils-prog=P", "coreutils-prog-shebang=B"), 0, W_COREUTILS },
	{ "nocorrect", "", "", NULL, 0, W_PLAIN },
	{ "builtin", "", "", NULL, 0, W_PLAIN },
	{ "noglob", "", "", NULL, 0, W_PLAIN },
	{ "setsid", "", "", L("ctty:c", "fork:f", "wait:w"), 0, W_PLAIN },
	{ "unbuffer", "", "", NULL, 0, W_PLAIN },
	{ "fakeroot", "lsi", "", L("lib=l", "faked=f", "unknown-is-real:u"), 0, W_PLAIN },
	{ "fakechroot", "lsc", "", L("lib=l", "config-dir=c", "environment=e"), 0, W_PLAIN },
	{ "pkexec", "", "", L("user=u", "disable-internal-agent:d", "keep-cwd:k"), 0, W_PLAIN },
	{ "taskset", "", "", L("pid:p", "cpu-list:c", "all-tasks:a"), 1, W_NOCMD_P },
	{ "chrt", "TPD", "", L("sched-runtime=T", "sched-period=P", "sched-deadline=D", "pid:p",
			       "all-tasks:a", "max:m", "reset-on-fork:R", "verbose:v", "batch:b",
			       "deadline:d", "fifo:f", "idle:i", "other:o", "rr:r", "ext:e"), 1,
	  W_NOCMD_P },
	{ "watch", "nq", "d", L("interval=n", "equexit=q", "exec:x", "differences:d",
				"chgexit:g", "errexit:e", "beep:b", "color:c", "no-color:C",
				"no-title:t", "no-wrap:w", "precise:p", "no-rerun:r"), 0, W_WATCH },
	{ "flock", "wEc", "", L("timeout=w", "wait=w", "conflict-exit-code=E", "command=c",
				"shared:s", "exclusive:x", "unlock:u", "nonblock:n", "close:o",
				"no-fork:F", "verbose:v"), 1, W_FLOCK },
	{ "strace", "abeEIoOpPsSuUX", "", L("output=o", "attach=p", "user=u", "env=E",
					    "string-limit=s", "trace-path=P", "summary-sort-by=S",
					    "columns=a", "detach-on=b", "const-print-style=X",
					    "trace=e", "signal=e", "status=e", "quiet=e", "decode-fds=e",
					    "follow-forks:f", "output-separately:F", "summary:c",
					    "summary-only:c", "timestamps=e", "instruction-pointer:i",
					    "stack-trace:k", "no-abbrev:v", "syscall-times=e",
					    "kill-on-exit:K", "seccomp-bpf:n"), 0, W_PLAIN },
	{ "ltrace", "aADeFlnopsuwx", "", L("output=o", "library=l", "indent=n", "align=a",
					  "demangle:C"), 0, W_PLAIN },
	{ "valgrind", "", "", NULL, 0, W_PLAIN },
	{ "nsenter", "tSGN", "muinpUCTrw", L("target=t", "setuid=S", "setgid=G", "all:a",
					      "preserve-credentials:P", "no-fork:F", "follow-context:Z",
					      "env:e", "join-cgroup:c", "mount:m", "uts:u", "ipc:i",
					      "net:n", "pid:p", "user:U", "cgroup:C", "time:T",
					      "root:r", "wd:w", "wdns=W", "user-parent:X"), 0,
	  W_PLAIN },
	{ "unshare", "RwSGl", "muinpUCT", L("root=R", "wd=w", "setuid=S", "setgid=G",
					    "load-interp=l", "fork:f", "map-root-user:r",
					    "map-current-user:c", "map-user=M", "map-group=N",
					    "map-users=M", "map-groups=N", "map-auto:a", "kill-child:k",
					    "mount-proc:K", "propagation=p", "setgroups=s",
					    "keep-caps:C", "monotonic=o", "boottime=b", "mount:m",
					    "uts:u", "ipc:i", "net:n", "pid:p", "user:U", "cgroup:C",
					    "time:T"), 0, W_PLAIN },
	{ "setpriv", "", "", L("reuid=u", "regid=g", "groups=G", "inh-caps=i", "ambient-caps=a",
			       "bounding-set=b", "securebits=s", "selinux-label=S",
			       "apparmor-profile=A", "landlock-access=L", "landlock-rule=R",
			       "pdeathsig=P", "ruid=u", "euid=u", "rgid=g", "egid=g", "init-groups:I",
			       "keep-groups:k", "clear-groups:c", "no-new-privs:n", "reset-env:e",
			       "dump:d"), 0, W_PLAIN },
	{ "systemd-run", "upEMHs", "", L("unit=u", "property=p", "setenv=E", "machine=M",
					 "host=H", "uid=U", "gid=G", "nice=n", "slice=s",
					 "description=D", "working-directory=w", "service-type=t",
					 "on-calendar=c", "on-active=a", "on-boot=b", "on-startup=S",
					 "on-unit-active=A", "on-unit-inactive=i", "timer-property=T",
					 "path-property=x", "socket-property=y", "user:1", "system:2",
					 "scope:3", "pty:4", "pipe:5", "quiet:q", "wait:W",
					 "collect:6", "same-dir:7", "shell:8", "remain-after-exit:r",
					 "no-block:9", "send-sighup:0", "expand-environment=e",
					 "no-ask-password:N"), 0, W_PLAIN },
	{ "firejail", "", "", NULL, 0, W_PLAIN },
	{ "eatmydata", "", "", NULL, 0, W_PLAIN },
	{ "nocache", "", "", NULL, 0, W_PLAIN },
	{ "catchsegv", "", "", NULL, 0, W_PLAIN },
	{ "proxychains", "f", "", NULL, 0, W_PLAIN },
	{ "proxychains4", "f", "", NULL, 0, W_PLAIN },
	{ "torsocks", "upaP", "", L("user=u", "pass=p", "address=a", "port=P"), 0, W_PLAIN },
	{ "faketime", "", "", L("exclude-monotonic:x", "date-prog=D"), 1, W_PLAIN },
	{ "numactl", "CNmipw", "", L("physcpubind=C", "cpunodebind=N", "membind=m",
				     "interleave=i", "preferred=p", "weighted-interleave=w",
				     "localalloc:l", "all:a"), 0, W_PLAIN },
	{ "xvfb-run", "nsfepwl", "", L("server-num=n", "server-args=s", "auth-file=f",
				       "error-file=e", "xauth-protocol=p", "wait=w",
				       "auto-servernum:a", "auto-display:d"), 0, W_PLAIN },
	{ "dbus-run-session", "", "", L("config-file=c", "dbus-daemon=d"), 0, W_PLAIN },
	{ "setarch", "", "", L("addr-no-randomize:R", "fdpic-funcptrs:F", "mmap-page-zero:Z",
			       "addr-compat-layout:L", "read-implies-exec:X", "32bit:B",
			       "short-inode:I", "whole-seconds:S", "sticky-timeouts:T",
			       "3gb:3", "4gb:4", "uname-2.6:u", "verbose:v"), 1, W_PLAIN },
	{ "linux32", "", "", NULL, 0, W_PLAIN },
	{ "linux64", "", "", NULL, 0, W_PLAIN },
	{ "tini", "psel", "", NULL, 0, W_PLAIN },
	{ "dumb-init", "r", "", L("rewrite=r", "single-child:c", "verbose:v"), 0, W_PLAIN },
	{ "chronic", "", "", NULL, 0, W_PLAIN },
	{ "ifne", "", "", NULL, 0, W_PLAIN },
	{ "run-one", "", "", NULL, 0, W_PLAIN },
	{ "script", "cEIOBTm", "t", L("command=c", "echo=E", "log-in=I", "log-out=O", "log-io=B",
				      "log-timing=T", "logging-format=m", "output-limit=o",
				      "append:a", "flush:f", "force:F", "quiet:q",
				      "return:e", "timing=t"), 0, W_SCRIPT },
	{ "sg", "", "", NULL, 0, W_SG },
	{ "capsh", "", "", NULL, 0, W_CAPSH },
};
#undef L

/* The shells a command can name: the oracle's own and the ones it does not model, which still
 * take -c SCRIPT. */
static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash",
				      "posh", "fish", "csh", "tcsh", "rbash", "ksh93", "lksh",
				      "oksh", "pdksh", "hush", "bosh", "elvish", "nu", "xonsh", "rc",
				      "es" };

/* Both tables are looked up for most words of a command: indexed once */
_Static_assert(sizeof(wrappers) / sizeof(wrappers[0]) <= ZSP_NAMES_MAX, "wrappers: too many to index");
_Static_assert(sizeof(shells) / sizeof(shells[0]) <= ZSP_NAMES_MAX, "shells: too many to index");
static zsp_names wrapper_names, shell_names;
static bool names_ok;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void index_names(void)
{
	names_ok = zsp_names_build(&wrapper_names, &wrappers[0].name,
				   sizeof(wrappers) / sizeof(wrappers[0]), sizeof(wrappers[0])) &&
		   zsp_names_build(&shell_names, shells, sizeof(shells) / sizeof(shells[0]),
				   sizeof(shells[0]));
}

/* The index, or NULL if pthread_once failed: then the tables are scanned (a lookup that
 * missed a wrapper would let the command after it pass unseen). */
static const zsp_names *names_of(const zsp_names *ix)
{
	return pthread_once(&names_once, index_names) == 0 && names_ok ? ix : NULL;
}

static const struct wrapper *find_wrapper(const char *w)
{
	const zsp_names *ix = names_of(&wrapper_names);
	if (ix) {
		long k = zsp_names_find(ix, w);
		return k < 0 ? NULL : &wrappers[k];
	}
	for (size_t k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++)
		if (name_is(w, wrappers[k].name))
			return &wrappers[k];
	return NULL;
}

static bool is_shell(const char *w)
{
	const zsp_names *ix = names_of(&shell_names);
	if (ix)
		return zsp_names_find(ix, w) >= 0;
	for (size_t k = 0; k < sizeof(shells) / sizeof(shells[0]); k++)
		if (name_is(w, shells[k]))
			return true;
	return false;
}

/* Scans the wrapper's options, its operands and its options again. */
static size_t wrapper_args(const struct wrapper *wr, const char **argv, size_t argc, size_t i,
			   opts *o)
{
	i = scan_opts(argv, argc, i, wr->req, wr->optional, wr->longs, o);
	if (wr->operands == 0 || i >= argc)
		return i;
	return scan_opts(argv, argc, i + wr->operands, wr->req, wr->optional, wr->longs, o);
}

/* ---- the structural check ---- */

static int check_words(bctx *c, const char **argv, size_t argc);
static int check_text(bctx *c, const char *text, const zsp_sh_result *sh);

/* Enters a script (sh -c, eval, env -S, su -c, watch), with new positional parameters when pos
 * is not NULL. */
static int check_script(bctx *c, const char *script, const char **pos, size_t npos)
{
	bctx sub = *c;
	int rc;

	if (c->depth >= NESTED_MAX) {
		c->what = script;
		return set_hit(c, "nested-shell",
			       "shell scripts nested more than 8 deep cannot be checked");
	}
	if ((rc = spend(c, strlen(script))) != 0)
		return rc;
	sub.depth++;
	if (pos) {
		sub.has_pos = true;
		sub.pos = pos;
		sub.npos = npos;
	}
	rc = check_text(&sub, script, NULL);
	c->steps = sub.steps;
	return rc;
}

/* argv[0..argc) joined by spaces; each word single-quoted when quote is set. */
static char *join_words(zsp_arena *a, const char *head, const char **argv, size_t argc, bool quote)
{
	size_t len = strlen(head) + 1;
	char *s, *p;

	for (size_t i = 0; i < argc; i++)
		len += 4 * strlen(argv[i]) + 3;
	s = p = zsp_arena_alloc(a, len);
	if (!s)
		return NULL;
	p = stpcpy(p, head);
	for (size_t i = 0; i < argc; i++) {
		if (p != s)
			*p++ = ' ';
		if (!quote) {
			p = stpcpy(p, argv[i]);
			continue;
		}
		*p++ = '\'';
		for (const char *q = argv[i]; *q; q++) {
			if (*q == '\'')
				p = stpcpy(p, "'\\''");
			else
				*p++ = *q;
		}
		*p++ = '\'';
	}
	*p = '\0';
	return s;
}

static bool positional_word(const char *w);

/* Is the rm recursive (-r, -R, --recursive before `--`)? */
static bool rm_recursive(const char **args, size_t n)
{
	for (size_t k = 0; k < n && strcmp(args[k], "--") != 0; k++) {
		const char *w = args[k];

		if (!strcmp(w, "--recursive") || (w[0] == '-' && w[1] != '-' && strpbrk(w, "rR")))
			return true;
	}
	return false;
}

static int check_rm(bctx *c, const char **args, size_t n)
{
	bool operands_only = false;

	/* xargs adds the words it reads: what a recursive rm deletes is not in the text */
	if (c->xargs && rm_recursive(args, n))
		return set_hit(c, "rm-unknown",
			       "deletes recursively what xargs reads from stdin, which cannot be checked");
	for (size_t k = 0; k < n; k++) {
		enum target t;
		int rc;

		if (!operands_only && strcmp(args[k], "--") == 0) {
			operands_only = true;
			continue;
		}
		if (!operands_only && args[k][0] == '-' && args[k][1])
			continue;
		if ((rc = classify_word(c, args[k], &t)) != 0)
			return rc;
		if (t != T_NONE)
			return set_hit(c, rules[t].rule, rules[t].message);
		/* where substitutions are judged, their result is any word: `/` as well */
		if (c->env->unknown_rm && strpbrk(args[k], "$`") && rm_recursive(args, n))
			return set_hit(c, "rm-unknown",
				       "deletes recursively a word whose value is unknown, which cannot be checked");
		/* inside a function, $1 may be any word a call passes: try each */
		for (size_t f = 0; f < c->nfnargs && positional_word(args[k]); f++) {
			const char *rest = args[k] + strcspn(args[k], "/");
			char *word = zsp_arena_printf(c->a, "%s%s", c->fnargs[f], rest);

			if (!word)
				return -1;
			if ((rc = classify_word(c, word, &t)) != 0)
				return rc;
			if (t != T_NONE)
				return set_hit(c, rules[t].rule, rules[t].message);
		}
	}
	return 0;
}

/* Index of the command that argv runs once assignments and plain wrappers are skipped. */
static size_t command_index(const char **argv, size_t argc)
{
	size_t i = 0;

	for (;;) {
		const struct wrapper *wr;
		opts o = { 0 };

		while (i < argc && is_assignment(argv[i]))
			i++;
		if (i >= argc || !(wr = find_wrapper(argv[i])) || wr->kind == W_WATCH ||
		    wr->kind == W_FLOCK || wr->kind == W_COREUTILS || wr->kind == W_SCRIPT ||
		    wr->kind == W_SG || wr->kind == W_CAPSH)
			return i;
		i = wrapper_args(wr, argv, argc, i + 1, &o);
	}
}

/* A word `rm` or `unlink` in a script (the script of find -exec sh -c '...'). */
static bool script_deletes(const char *s)
{
	for (const char *p = s; *p; p++) {
		size_t n = strncasecmp(p, "rm", 2) == 0 ? 2 : strncasecmp(p, "unlink", 6) == 0 ? 6 : 0;

		if (n && (p == s || strchr(" \t\n;&|(`/", p[-1])) && (!p[n] || strchr(" \t\n;&|)`", p[n])))
			return true;
	}
	return false;
}

/* Does the command of find -exec/-execdir/-ok delete what it is given? */
static bool exec_deletes(const char **argv, size_t argc)
{
	size_t i = command_index(argv, argc);

	if (i >= argc)
		return false;
	if (name_is(argv[i], "rm") || name_is(argv[i], "unlink") || name_is(argv[i], "shred"))
		return true;
	if (is_shell(argv[i]))
		for (size_t k = i + 1; k < argc; k++)
			if (script_deletes(argv[k]))
				return true;
	return false;
}

/* 1 if the find test narrows what is deleted, 0 if its pattern matches everything, -1 if it is
 * not a narrowing test. */
static int find_narrows(const char *test, const char *arg)
{
	static const char *const tests[] = { "-name", "-iname", "-path", "-ipath", "-wholename",
					     "-iwholename", "-lname", "-ilname", "-samefile", "-inum" };

	if (!strcmp(test, "-regex") || !strcmp(test, "-iregex"))
		return strspn(arg, ".*+?^$()|\\") != strlen(arg);
	for (size_t k = 0; k < sizeof(tests) / sizeof(tests[0]); k++)
		if (!strcmp(test, tests[k]))
			return *arg && !total_glob(arg, strlen(arg), false) &&
			       strspn(arg, "*/?") != strlen(arg);
	return -1;
}

/* find with a start that is /, ~, ., .. or above, deleting (-delete, -exec rm) where no
 * narrowing -name/-path/... test comes before the action: find evaluates its expression in
 * order for each file, so `find / -delete -name x` deletes everything. An -o, a `,` or a
 * negated group voids the narrowing. The commands of -exec are checked like any other. */
static int check_find(bctx *c, const char **argv, size_t argc)
{
	static const char *cwd[] = { "." };
	bool dangerous = false, unnarrowed_delete = false, narrowed = false, untrusted = false,
	     negate = false, unknown_start = false;
	const char **starts;
	size_t i = 1, start;

	while (i < argc) {
		const char *w = argv[i];

		if (!strcmp(w, "-H") || !strcmp(w, "-L") || !strcmp(w, "-P") ||
		    (w[0] == '-' && w[1] == 'O' && w[2] >= '0' && w[2] <= '9'))
			i++;
		else if (!strcmp(w, "-D"))
			i += 2;
		else if (!strcmp(w, "--"))
			i++;
		else
			break;
	}
	start = i;
	while (i < argc && argv[i][0] != '-' && strcmp(argv[i], "(") && strcmp(argv[i], "!") &&
	       strcmp(argv[i], ","))
		i++;
	starts = i > start ? argv + start : cwd; /* no start point means `.` */
	for (size_t k = 0; k < (i > start ? i - start : 1) && !dangerous; k++) {
		enum target t;
		int rc;

		if ((rc = classify_word(c, starts[k], &t)) != 0)
			return rc;
		dangerous = t != T_NONE;
		unknown_start |= c->env->unknown_rm && strpbrk(starts[k], "$`");
	}
	for (; i < argc; i++) {
		const char *w = argv[i];
		int narrows;

		if (!strcmp(w, "-delete")) {
			unnarrowed_delete |= !narrowed || untrusted;
		} else if (!strcmp(w, "-exec") || !strcmp(w, "-execdir") || !strcmp(w, "-ok") ||
			   !strcmp(w, "-okdir")) {
			size_t j = i + 1;
			int rc;

			while (j < argc && strcmp(argv[j], ";") && strcmp(argv[j], "+"))
				j++;
			rc = check_words(c, argv + i + 1, j - i - 1);
			if (rc)
				return rc;
			if (exec_deletes(argv + i + 1, j - i - 1))
				unnarrowed_delete |= !narrowed || untrusted;
			i = j;
		} else if (!strcmp(w, "-o") || !strcmp(w, "-or") || !strcmp(w, ",")) {
			untrusted = true;
		} else if (!strcmp(w, "!") || !strcmp(w, "-not")) {
			negate = true;
			continue;
		} else if (!strcmp(w, "(")) {
			untrusted |= negate;
		} else if (!strcmp(w, "-empty")) {
			narrowed |= !negate;
		} else if (i + 1 < argc && (narrows = find_narrows(w, argv[i + 1])) >= 0) {
			narrowed |= !negate && narrows;
			i++;
		}
		negate = false;
	}
	if (dangerous && unnarrowed_delete)
		return set_hit(c, "find-delete-root",
			       "find deletes everything under the root, home, current or parent directory");
	/* where substitutions are judged, as for rm: an unknown start point may be `/` */
	if (unknown_start && unnarrowed_delete)
		return set_hit(c, "rm-unknown",
			       "find deletes everything under a start point whose value is unknown");
	return 0;
}

/* Scans the options of sh/bash/...: clustered (-lc, -ec), -o/-O take a word. Returns the index
 * of the first operand; *command tells whether -c was given, *stdin_flag whether -s was. */
static size_t shell_operands(const char **argv, size_t argc, bool *command, bool *stdin_flag)
{
	size_t i = 1;

	*command = *stdin_flag = false;
	while (i < argc) {
		const char *w = argv[i];
		bool takes = false;

		if (!strcmp(w, "--") || !strcmp(w, "-"))
			return i + 1;
		if ((w[0] != '-' && w[0] != '+') || !w[1])
			break;
		if (w[0] == '-' && w[1] == '-') {
			*command |= !strcmp(w, "--command");
			i += !strcmp(w, "--rcfile") || !strcmp(w, "--init-file") ? 2 : 1;
			continue;
		}
		for (size_t j = 1; w[j]; j++) {
			*command |= w[0] == '-' && w[j] == 'c';
			*stdin_flag |= w[0] == '-' && w[j] == 's';
			takes |= w[j] == 'o' || w[j] == 'O';
		}
		i += takes ? 2 : 1;
	}
	return i;
}

/* sh -c SCRIPT [NAME [ARG...]] */
static int check_shell(bctx *c, const char **argv, size_t argc)
{
	bool command, stdin_flag;
	size_t i = shell_operands(argv, argc, &command, &stdin_flag);

	if (!command || i >= argc)
		return 0;
	return check_script(c, argv[i], argv + i + 1, argc - i - 1);
}

/* A file operand that is the standard input (or a process substitution's pipe). */
static bool names_stdin(const char *w)
{
	return !strcmp(w, "-") || !strcmp(w, "/dev/stdin") || !strncmp(w, "/dev/fd/", 8) ||
	       (!strncmp(w, "/proc/", 6) && strstr(w, "/fd/")) || !strncmp(w, "<(", 2);
}

/* su/runuser: is -c (--command) given anywhere? */
static bool su_has_command(const char **argv, size_t argc)
{
	for (size_t i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *w = argv[i];

		if (!strncmp(w, "--command", 9) || (w[0] == '-' && w[1] != '-' && strchr(w, 'c')))
			return true;
		if (!strcmp(w, "-s") || !strcmp(w, "-g") || !strcmp(w, "-G") || !strcmp(w, "-w") ||
		    !strcmp(w, "--shell") || !strcmp(w, "--group") || !strcmp(w, "--supp-group"))
			i++;
	}
	return false;
}

/* A command that reads a script from stdin: `... | sh`, `bash -s`, `bash /dev/stdin`,
 * `source /dev/stdin`, `| su`, `| sudo -s`, `| sg root`, `| script -q`, `| chroot /`. */
static bool reads_script_from_stdin(const char **argv, size_t argc)
{
	size_t i = 0;

	for (;;) {
		const struct wrapper *wr;
		opts o = { 0 };
		size_t j;

		while (i < argc && is_assignment(argv[i]))
			i++;
		if (i >= argc)
			return false;
		if (is_shell(argv[i])) {
			bool command, stdin_flag;

			j = shell_operands(argv + i, argc - i, &command, &stdin_flag);
			return !command && (stdin_flag || i + j >= argc || names_stdin(argv[i + j]));
		}
		if (name_is(argv[i], "source") || name_is(argv[i], "."))
			return i + 1 < argc && names_stdin(argv[i + 1]);
		if (name_is(argv[i], "su") || name_is(argv[i], "runuser"))
			return !su_has_command(argv + i, argc - i) &&
			       !(name_is(argv[i], "runuser") && i + 1 < argc && !strcmp(argv[i + 1], "-u"));
		if (!(wr = find_wrapper(argv[i])))
			return false;
		j = wrapper_args(wr, argv, argc, i + 1, &o);
		switch (wr->kind) {
		case W_SUDO:
			if (o.seen['e'])
				return false;
			if ((o.seen['s'] || o.seen['i']) && j >= argc)
				return true;
			break;
		case W_SHELL_ONLY:
			if (j >= argc || o.seen['s'])
				return true;
			break;
		case W_SCRIPT:
			return !o.val['c'];
		case W_SG:
			return argc - i <= 2 + (size_t)(i + 1 < argc && !strcmp(argv[i + 1], "-"));
		case W_WATCH: case W_FLOCK: case W_COREUTILS: case W_CAPSH:
			return false;
		default:
			break;
		}
		i = j;
	}
}

/* The words of a here-string or of what echo and printf print, with the escapes printf and
 * dash's echo decode (\n \t \\ \xHH \0NNN \NNN): a copy, or NULL on out-of-memory. */
static char *decode_escapes(zsp_arena *a, const char *s)
{
	char *out = zsp_arena_alloc(a, strlen(s) + 1), *q = out;

	if (!out)
		return NULL;
	while (*s) {
		if (*s != '\\' || !s[1]) {
			*q++ = *s++;
			continue;
		}
		s++;
		char e = *s++;
		unsigned v = 0;
		int k;

		switch (e) {
		case 'n': *q++ = '\n'; break;
		case 't': *q++ = '\t'; break;
		case 'r': *q++ = '\r'; break;
		case 'a': *q++ = '\a'; break;
		case 'b': *q++ = '\b'; break;
		case 'f': *q++ = '\f'; break;
		case 'v': *q++ = '\v'; break;
		case 'e': case 'E': *q++ = 033; break;
		case 'x':
			for (k = 0; k < 2 && strchr("0123456789abcdefABCDEF", *s) && *s; k++, s++)
				v = 16 * v + (unsigned)(*s <= '9' ? *s - '0' : (*s | 32) - 'a' + 10);
			*q++ = k ? (char)v : 'x';
			break;
		default:
			if (e >= '0' && e <= '7') {
				v = (unsigned)(e - '0');
				for (k = 0; k < 3 && *s >= '0' && *s <= '7'; k++, s++)
					v = 8 * v + (unsigned)(*s - '0');
				*q++ = (char)v;
			} else {
				*q++ = e;
			}
		}
	}
	*q = '\0';
	return out;
}

/* Checks a script as written and with its escapes decoded. */
static int check_script_decoded(bctx *c, const char *script)
{
	int rc = check_script(c, script, NULL, 0);
	char *dec;

	if (rc || !strchr(script, '\\'))
		return rc;
	if (!(dec = decode_escapes(c->a, script)))
		return -1;
	return check_script(c, dec, NULL, 0);
}

/* The here-string words (`<<< WORD`), the lines of the text, and all of it after the first
 * line with backslash-newlines joined (a here-document body), checked as scripts. */
static int check_here_scripts(bctx *c, const char *text)
{
	unsigned budget = 16; /* each here-string parses the rest of its line */
	const char *nl = strchr(text, '\n');
	int rc;

	for (const char *p = text; (p = strstr(p, "<<<")) != NULL && budget > 0; p += 3, budget--) {
		char *rest = zsp_arena_strndup(c->a, p + 3, strcspn(p + 3, "\n"));
		zsp_sh_result r;

		if (!rest || zsp_sh_parse(c->a, rest, &r) != ZSP_OK)
			return -1;
		if (r.ncmds == 0 || r.cmds[0].kind != ZSP_SH_COMMAND || r.cmds[0].argc == 0)
			continue;
		if ((rc = check_script_decoded(c, r.cmds[0].argv[0])) != 0)
			return rc;
	}
	if (nl) {
		char *body = zsp_arena_strdup(c->a, nl + 1), *q = body;

		if (!body)
			return -1;
		for (const char *p = nl + 1; *p; p++) {
			if (p[0] == '\\' && p[1] == '\n')
				p++;
			else
				*q++ = *p;
		}
		*q = '\0';
		if ((rc = check_script(c, body, NULL, 0)) != 0)
			return rc;
	}
	for (const char *p = nl; p; p = strchr(p + 1, '\n')) {
		const char *end = strchr(p + 1, '\n');
		char *line = zsp_arena_strndup(c->a, p + 1, end ? (size_t)(end - p - 1) : strlen(p + 1));

		if (!line)
			return -1;
		if ((rc = check_script(c, line, NULL, 0)) != 0)
			return rc;
	}
	return 0;
}

/* `echo 'rm -rf /' | sh`, `sh <<< '...'`, `sh <<EOF`: when some command of the input reads a
 * script from stdin (the parse keeps no pipeline or here-document structure), the words echo
 * and printf print (escapes decoded too), here-strings and the lines of the text are checked
 * as scripts. */
static int check_stdin_scripts(bctx *c, const char *text, const zsp_sh_result *sh)
{
	bool piped = false;
	int rc;

	for (size_t k = 0; k < sh->ncmds && !piped; k++)
		piped = sh->cmds[k].kind == ZSP_SH_COMMAND &&
			reads_script_from_stdin(sh->cmds[k].argv, sh->cmds[k].argc);
	if (piped && (rc = check_here_scripts(c, text)) != 0)
		return rc;
	for (size_t k = 0; k < sh->ncmds && piped; k++) {
		const zsp_sh_cmd *cmd = &sh->cmds[k];
		size_t i = cmd->kind == ZSP_SH_COMMAND ? command_index(cmd->argv, cmd->argc) : cmd->argc;
		bool echo;
		char *script;

		if (i >= cmd->argc || !((echo = name_is(cmd->argv[i], "echo")) || name_is(cmd->argv[i], "printf")))
			continue;
		i++;
		while (echo && i < cmd->argc && cmd->argv[i][0] == '-' && cmd->argv[i][1] &&
		       strspn(cmd->argv[i] + 1, "neE") == strlen(cmd->argv[i] + 1))
			i++;
		script = join_words(c->a, "", cmd->argv + i, cmd->argc - i, false);
		if (!script)
			return -1;
		c->what = cmd->text;
		if ((rc = check_script_decoded(c, script)) != 0)
			return rc;
	}
	return 0;
}

/* su [options] [-] [USER [ARG...]] with -c CMD anywhere (su permutes its options). */
static int check_su(bctx *c, const char **argv, size_t argc)
{
	for (size_t i = 1; i < argc; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "--"))
			break;
		if (!strncmp(w, "--command=", 10))
			return check_script(c, w + 10, NULL, 0);
		if (!strcmp(w, "--command") || (w[0] == '-' && w[1] != '-' && strchr(w, 'c'))) {
			const char *cl = strchr(w, 'c');

			if (w[1] != '-' && cl[1])
				return check_script(c, cl + 1, NULL, 0);
			return i + 1 < argc ? check_script(c, argv[i + 1], NULL, 0) : 0;
		}
		if (!strcmp(w, "-s") || !strcmp(w, "-g") || !strcmp(w, "-G") || !strcmp(w, "-w") ||
		    !strcmp(w, "--shell") || !strcmp(w, "--group") || !strcmp(w, "--supp-group"))
			i++;
	}
	return 0;
}

static bool positional_word(const char *w)
{
	return w[0] == '$' && ((w[1] >= '0' && w[1] <= '9') || w[1] == '@' || w[1] == '*' ||
			       (w[1] == '{' && ((w[2] >= '0' && w[2] <= '9') || w[2] == '@' || w[2] == '*')));
}

/* $0..$9, ${N}, $@, $* replaced by the known positional parameters (unset ones by ""). */
static int expand_positional(bctx *c, const char ***argv, size_t *argc)
{
	size_t n = 0;
	const char **out;
	bool any = false;

	for (size_t i = 0; i < *argc; i++) {
		n += (*argv)[i][0] == '$' ? c->npos + 1 : 1;
		any |= positional_word((*argv)[i]);
	}
	if (!any)
		return 0;
	out = zsp_arena_calloc(c->a, n + 1, sizeof *out);
	if (!out)
		return -1;
	n = 0;
	for (size_t i = 0; i < *argc; i++) {
		const char *w = (*argv)[i], *rest = NULL;
		size_t k = 0;

		if (!strcmp(w, "$@") || !strcmp(w, "$*") || !strcmp(w, "${@}") || !strcmp(w, "${*}")) {
			for (size_t p = 1; p < c->npos; p++)
				out[n++] = c->pos[p];
			continue;
		}
		if (w[0] == '$' && w[1] >= '0' && w[1] <= '9') {
			k = (size_t)(w[1] - '0');
			rest = w + 2;
		} else if (w[0] == '$' && w[1] == '{' && w[2] >= '0' && w[2] <= '9') {
			const char *p = w + 2;

			while (*p >= '0' && *p <= '9' && k < 1000)
				k = 10 * k + (size_t)(*p++ - '0');
			if (*p == '}')
				rest = p + 1;
		}
		if (rest) {
			out[n] = zsp_arena_printf(c->a, "%s%s", k < c->npos ? c->pos[k] : "", rest);
			if (!out[n++])
				return -1;
		} else {
			out[n++] = w;
		}
	}
	*argv = out;
	*argc = n;
	return 0;
}

/* `set -- ARGS` (or `set ARGS`, after options): the positional parameters from here on. */
static void set_positional(bctx *c, const char **argv, size_t argc)
{
	size_t i = 1;

	for (; i < argc; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "--") || !strcmp(w, "-")) {
			i++;
			break;
		}
		if (w[0] != '-' && w[0] != '+')
			break;
		if (strchr(w, 'o'))
			i++;
	}
	if (i > argc || (i == argc && strcmp(argv[argc - 1], "--") && strcmp(argv[argc - 1], "-")))
		return;
	const char **pos = zsp_arena_calloc(c->a, argc - i + 2, sizeof *pos);
	if (!pos)
		return; /* keeps the old ones; the next allocation fails the check */
	pos[0] = c->npos > 0 ? c->pos[0] : "sh";
	for (size_t k = i; k < argc; k++)
		pos[k - i + 1] = argv[k];
	c->pos = pos;
	c->npos = argc - i + 1;
	c->has_pos = true;
}

static int collect_word(bctx *c, const char *word, void *arg)
{
	struct words { const char **v; size_t n, cap; } *ws = arg;

	if (ws->n + 1 >= ws->cap) {
		const char **nv = zsp_arena_grow(c->a, ws->v, ws->n, &ws->cap, sizeof *nv);

		if (!nv)
			return -1;
		ws->v = nv;
	}
	ws->v[ws->n++] = word;
	return 0;
}

/* The command word w has a brace expression (`{rm,-rf,/}`): its words replace it. 0 done (argv
 * replaced), 1 a hit (out of steps), -1 oom. */
static int splice_braces(bctx *c, const char ***argv, size_t *argc, size_t i)
{
	struct words { const char **v; size_t n, cap; } ws = { NULL, 0, 0 };
	int rc = expand_braces(c, (*argv)[i], collect_word, &ws);

	if (rc)
		return rc;
	const char **out = zsp_arena_calloc(c->a, *argc + ws.n + 1, sizeof *out);
	if (!out)
		return -1;
	memcpy(out, *argv, i * sizeof *out);
	memcpy(out + i, ws.v, ws.n * sizeof *out);
	memcpy(out + i + ws.n, *argv + i + 1, (*argc - i - 1) * sizeof *out);
	*argv = out;
	*argc += ws.n - 1;
	return 0;
}

/* The value the text gave variable name (n bytes), or NULL. */
static const char *var_value(const bctx *c, const char *name, size_t n)
{
	for (size_t k = c->nvars; k-- > 0;)
		if (strncmp(c->vars[k], name, n) == 0 && c->vars[k][n] == '=')
			return c->vars[k] + n + 1;
	return NULL;
}

/* `$NAME` and `${NAME}` at the start of a word, for a variable the text set (`X=/; rm -rf
 * $X`), replaced by its value. A value holding `$` stays unknown to the checks after. */
static int expand_vars(bctx *c, const char ***argv, size_t argc)
{
	const char **out = NULL;

	for (size_t i = 0; i < argc && c->nvars; i++) {
		const char *w = (*argv)[i], *name = w + 1, *rest, *val;
		size_t n;

		if (w[0] != '$')
			continue;
		name += w[1] == '{';
		for (n = 0; name_start(name[n]) || (n && name[n] >= '0' && name[n] <= '9'); n++)
			;
		rest = name + n;
		if (n == 0 || (w[1] == '{' && *rest++ != '}') || !(val = var_value(c, name, n)))
			continue;
		if (!out) {
			if (!(out = zsp_arena_calloc(c->a, argc + 1, sizeof *out)))
				return -1;
			memcpy(out, *argv, argc * sizeof *out);
		}
		if (!(out[i] = zsp_arena_printf(c->a, "%s%s", val, rest)))
			return -1;
	}
	if (out)
		*argv = out;
	return 0;
}

/* A command of assignments only (`X=/`), or export, declare, local, readonly, typeset with
 * them: the variables set, for the commands after it. `X+=v` appends to a known value. */
static int set_vars(bctx *c, const char **argv, size_t argc)
{
	size_t i = 0;

	if (argc > 0 && (name_is(argv[0], "export") || name_is(argv[0], "declare") ||
			 name_is(argv[0], "local") || name_is(argv[0], "readonly") ||
			 name_is(argv[0], "typeset")))
		i = 1;
	for (size_t k = i; k < argc; k++)
		if (!is_assignment(argv[k]) && !(i && argv[k][0] == '-'))
			return 0;
	for (; i < argc; i++) {
		const char *w = argv[i], *eq = strchr(w, '=');
		size_t n = strcspn(w, "[+=");
		char *v;

		if (!eq || w[n] == '[')
			continue;
		if (w[n] == '+') {
			const char *old = var_value(c, w, n);

			v = zsp_arena_printf(c->a, "%.*s=%s%s", (int)n, w, old ? old : "", eq + 1);
		} else {
			v = zsp_arena_strdup(c->a, w);
		}
		const char **nv = zsp_arena_calloc(c->a, c->nvars + 2, sizeof *nv);
		if (!v || !nv)
			return -1;
		if (c->nvars)
			memcpy(nv, c->vars, c->nvars * sizeof *nv);
		nv[c->nvars] = v;
		c->vars = nv;
		c->nvars++;
	}
	return 0;
}

#define DIRS_MAX 16

/* `cd DIR`, `pushd DIR`: DIR made absolute (lexically, as cd does without -P) becomes one more
 * directory the commands after it may be in. */
static int change_dir(bctx *c, const char **argv, size_t argc)
{
	const char *w = argc > 1 ? argv[argc - 1] : "~", *base;
	char *path, *q;

	if (argc > 1 && w[0] == '-' && w[1])
		w = "~"; /* cd -L / -P alone */
	if (!strcmp(w, "-") || strpbrk(w, "$`*?[") || c->ndirs >= DIRS_MAX) {
		c->lost = true;
		return 0;
	}
	if (w[0] == '/')
		base = "";
	else if (w[0] == '~' && (w[1] == '\0' || w[1] == '/'))
		base = c->env->home, w++;
	else
		base = c->lost ? NULL : c->dirs[c->ndirs - 1];
	if (!base) {
		c->lost = true;
		return 0;
	}
	path = zsp_arena_alloc(c->a, strlen(base) + strlen(w) + 2);
	if (!path)
		return -1;
	q = stpcpy(path, base);
	for (const char *p = w; *p;) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (q > path && q[-1] != '/')
				q--;
			if (q > path)
				q--;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			*q++ = '/';
			memcpy(q, p, n);
			q += n;
		}
		p += n;
	}
	*q = '\0';
	const char **nd = zsp_arena_calloc(c->a, c->ndirs + 2, sizeof *nd);
	if (!nd)
		return -1;
	memcpy(nd, c->dirs, c->ndirs * sizeof *nd);
	nd[c->ndirs++] = *path ? path : "/";
	c->dirs = nd;
	c->lost = false;
	return 0;
}

/* ---- the files commands read and write, for the oracle ---- */

static int report_one(bctx *c, const char *word, void *arg)
{
	zsp_file_use f = *(const zsp_file_use *)arg;

	f.word = c->rerooted ? NULL : word;
	return c->env->file(c->env->file_arg, &f) < 0 ? -1 : 0;
}

/* A file the command names: each word of its brace expansion (a zsp_files_fn). */
static int report_file(void *arg, const char *word, unsigned access, bool tree)
{
	bctx *c = arg;
	zsp_file_use f = { NULL, access, tree, c->dirs, c->lost || c->nowhere ? 0 : c->ndirs,
			       c->what };

	return expand_braces(c, word, report_one, &f);
}


/* The files a command of the table names. Under xargs, also the ones it reads from stdin,
 * which the text does not show; the words echo and printf print in the text (`echo F | xargs
 * cat`) are judged as its operands too. */
static int report_files(bctx *c, const char **argv, size_t argc)
{
	int rc;

	if (!c->xargs)
		return zsp_files_of(argv, argc, report_file, c);
	zsp_file_use f = { NULL, ZSP_FILE_READ | ZSP_FILE_WRITE, true, c->dirs, 0, c->what };
	if (c->env->file(c->env->file_arg, &f) < 0)
		return -1;
	for (size_t k = 0; c->sh && k < c->sh->ncmds; k++) {
		const zsp_sh_cmd *e = &c->sh->cmds[k];
		size_t i = e->kind == ZSP_SH_COMMAND ? command_index(e->argv, e->argc) : e->argc;

		if (i >= e->argc || !(name_is(e->argv[i], "echo") || name_is(e->argv[i], "printf")))
			continue;
		if ((rc = spend(c, argc + e->argc)) != 0)
			return rc;
		const char **nv = zsp_arena_calloc(c->a, argc + e->argc + 1, sizeof *nv);
		if (!nv)
			return -1;
		memcpy(nv, argv, argc * sizeof *nv);
		memcpy(nv + argc, e->argv + i + 1, (e->argc - i - 1) * sizeof *nv);
		if ((rc = zsp_files_of(nv, argc + e->argc - i - 1, report_file, c)) != 0)
			return rc;
	}
	return zsp_files_of(argv, argc, report_file, c);
}

/* Does the wrapper run its command in another directory (env -C, sudo -D, unshare -w, ...)? */
static bool changes_dir(const struct wrapper *wr, const opts *o)
{
	return (wr->kind == W_ENV && o->val['C']) || (wr->kind == W_SUDO && o->val['D']) ||
	       ((!strcmp(wr->name, "unshare") || !strcmp(wr->name, "systemd-run")) && o->val['w']) ||
	       (!strcmp(wr->name, "nsenter") && (o->seen['w'] || o->seen['r'])) ||
	       (!strcmp(wr->name, "systemd-run") && o->seen['7']);
}

static int check_words(bctx *c, const char **argv, size_t argc)
{
	size_t i = 0;
	bool saved = c->xargs, saved_nowhere = c->nowhere, saved_rerooted = c->rerooted;
	int rc;

	if ((rc = spend(c, argc)) != 0)
		return rc;
	if (expand_vars(c, &argv, argc) < 0 || (c->has_pos && expand_positional(c, &argv, &argc) < 0))
		return -1;
	for (;;) {
		const struct wrapper *wr;
		const char *w;
		opts o = { 0 };
		size_t start;

		while (i < argc && is_assignment(argv[i]))
			i++;
		if (i >= argc)
			break;
		if (strchr(argv[i], '{')) {
			const char *before = argv[i];
			size_t n = argc;

			if ((rc = splice_braces(c, &argv, &argc, i)) != 0)
				break;
			if (argc != n || strcmp(argv[i], before) != 0)
				continue; /* the words it expands to: assignments, wrappers, ... */
		}
		w = argv[i];
		if (c->env->file && zsp_files_known(w) && (rc = report_files(c, argv + i, argc - i)) != 0)
			break;
		if (name_is(w, "rm")) {
			rc = check_rm(c, argv + i + 1, argc - i - 1);
			break;
		}
		if (name_is(w, "find")) {
			rc = check_find(c, argv + i, argc - i);
			break;
		}
		if (is_shell(w)) {
			rc = check_shell(c, argv + i, argc - i);
			break;
		}
		if (name_is(w, "su")) {
			rc = check_su(c, argv + i, argc - i);
			break;
		}
		if (name_is(w, "runuser")) {
			/* runuser -u USER COMMAND..., or su's form with -c */
			if ((rc = check_su(c, argv + i, argc - i)) != 0)
				break;
			i = scan_opts(argv, argc, i + 1, "ugGcsw", "", NULL, &o);
			if (!o.seen['u'])
				break;
			continue;
		}
		if (name_is(w, "eval")) {
			char *s = join_words(c->a, "", argv + i + 1, argc - i - 1, false);

			rc = s ? check_script(c, s, NULL, 0) : -1;
			break;
		}
		if (name_is(w, "trap")) {
			/* trap [--] ACTION SIGNAL...: ACTION runs later (-p, -l only print) */
			size_t k = i + 1 + (i + 1 < argc && !strcmp(argv[i + 1], "--"));

			if (k < argc && (argv[k][0] != '-' || k > i + 1))
				rc = check_script(c, argv[k], NULL, 0);
			break;
		}
		if (name_is(w, "alias")) {
			/* alias NAME=VALUE: VALUE runs where NAME is a command word later */
			for (size_t k = i + 1; k < argc && rc == 0; k++)
				if (strchr(argv[k], '='))
					rc = check_script(c, strchr(argv[k], '=') + 1, NULL, 0);
			break;
		}
		if (!(wr = find_wrapper(w)))
			break;
		start = i + 1;
		i = wrapper_args(wr, argv, argc, start, &o);
		c->nowhere |= changes_dir(wr, &o);
		c->rerooted |= !strcmp(wr->name, "chroot") || (!strcmp(wr->name, "unshare") && o.val['R']);
		if (o.unknown && i < argc) {
			/* a long option the grammar does not know may have taken the word read as
			 * the command: check the other reading too */
			const char **nv = zsp_arena_calloc(c->a, argc - i + 1, sizeof *nv);

			if (!nv) {
				rc = -1;
				break;
			}
			nv[0] = w;
			memcpy(nv + 1, argv + i + 1, (argc - i - 1) * sizeof *nv);
			if ((rc = check_words(c, nv, argc - i)) != 0)
				break;
		}
		switch (wr->kind) {
		case W_PLAIN:
		case W_SHELL_ONLY:
			break;
		case W_XARGS:
			c->xargs = true;
			/* xargs -a FILE reads its words from FILE */
			if (c->env->file && o.val['a'] && (rc = report_file(c, o.val['a'], ZSP_FILE_READ, false)) != 0)
				goto done;
			break;
		case W_SUDO:
			if (o.seen['e']) {
				/* sudoedit: operands are files it reads and writes */
				for (size_t k = i; k < argc && c->env->file && rc == 0; k++)
					rc = report_file(c, argv[k], ZSP_FILE_READ | ZSP_FILE_WRITE, false);
				goto done;
			}
			break;
		case W_ENV:
			while (i < argc && !strcmp(argv[i], "-"))
				i++;
			if (o.val['S']) {
				char *s = join_words(c->a, o.val['S'], argv + i, argc - i, true);

				rc = s ? check_script(c, s, NULL, 0) : -1;
				goto done;
			}
			break;
		case W_COMMAND:
			if (o.seen['v'] || o.seen['V'])
				goto done; /* only looks the name up */
			break;
		case W_NOCMD_P:
			if (o.seen['p'] || o.seen['P'] || o.seen['u'] || (wr->operands && o.seen['m']))
				goto done; /* acts on running processes */
			break;
		case W_WATCH:
			if (!o.seen['x']) {
				char *s = join_words(c->a, "", argv + i, argc - i, false);

				rc = s ? check_script(c, s, NULL, 0) : -1;
				goto done;
			}
			break;
		case W_FLOCK:
			if (!o.val['c'] && i + 1 < argc &&
			    (!strcmp(argv[i + 1], "-c") || !strcmp(argv[i + 1], "--command")))
				o.val['c'] = i + 2 < argc ? argv[i + 2] : NULL;
			if (o.val['c']) {
				rc = check_script(c, o.val['c'], NULL, 0);
				goto done;
			}
			break;
		case W_MULTI:
			if (i < argc && !strcmp(argv[i], "--install"))
				goto done;
			break;
		case W_COREUTILS:
			/* coreutils --coreutils-prog=NAME ARGS: NAME runs with ARGS (only the first
			 * word is coreutils' own) */
			if (start < argc && !strncmp(argv[start], "--coreutils-prog", 16)) {
				const char *eq = strchr(argv[start], '='), *prog = eq ? eq + 1 : NULL;

				i = start + 1;
				if (!eq && i < argc)
					prog = argv[i++];
				if (prog) {
					const char **nv = zsp_arena_calloc(c->a, argc - i + 2, sizeof *nv);

					if (!nv) {
						rc = -1;
						goto done;
					}
					nv[0] = prog;
					memcpy(nv + 1, argv + i, (argc - i) * sizeof *nv);
					argc = argc - i + 1;
					argv = nv;
					i = 0;
				}
				continue;
			}
			goto done;
		case W_SCRIPT:
			if (o.val['c'])
				rc = check_script(c, o.val['c'], NULL, 0);
			goto done;
		case W_SG:
			/* sg [-] GROUP [-c] COMMAND: COMMAND is a script for /bin/sh -c */
			i = start + (start < argc && !strcmp(argv[start], "-"));
			i += i < argc; /* GROUP */
			i += i < argc && !strcmp(argv[i], "-c");
			if (i < argc) {
				char *s = join_words(c->a, "", argv + i, argc - i, false);

				rc = s ? check_script(c, s, NULL, 0) : -1;
			}
			goto done;
		case W_CAPSH:
			/* capsh ... -- ARGS runs bash ARGS */
			for (size_t k = start; k < argc; k++)
				if (!strcmp(argv[k], "--")) {
					const char **nv = zsp_arena_calloc(c->a, argc - k + 1, sizeof *nv);

					if (!nv) {
						rc = -1;
						goto done;
					}
					nv[0] = "bash";
					memcpy(nv + 1, argv + k + 1, (argc - k - 1) * sizeof *nv);
					rc = check_shell(c, nv, argc - k);
					goto done;
				}
			goto done;
		}
	}
done:
	c->xargs = saved;
	c->nowhere = saved_nowhere;
	c->rerooted = saved_rerooted;
	return rc;
}

/* Text that does not parse: Zed's regexes with `rm` anywhere, on the whole text and on each
 * segment between separators (as written and with its quotes removed), and the structural
 * check on each segment that parses on its own. */
static int check_segments(bctx *c, const char *text)
{
	int rc = check_regex(c, text, true);

	for (const char *p = text; rc == 0 && *p;) {
		size_t n = strcspn(p, ";&|\n(){}`");

		/* an extglob group `!(..)` stays in its segment */
		while (p[n] == '(' && n > 0 && strchr("@!+*?", p[n - 1])) {
			size_t close = strcspn(p + n, ")");

			n += close + (p[n + close] == ')');
			n += strcspn(p + n, ";&|\n(){}`");
		}
		char *seg, *bare, *q;
		zsp_sh_result r;

		if (n == 0) {
			p++;
			continue;
		}
		if ((rc = spend(c, n)) != 0)
			break;
		seg = zsp_arena_strndup(c->a, p, n);
		bare = zsp_arena_strndup(c->a, p, n);
		if (!seg || !bare)
			return -1;
		q = bare;
		for (const char *s = seg; *s; s++)
			if (*s != '\'' && *s != '"' && *s != '\\')
				*q++ = *s;
		*q = '\0';
		/* the splitter reads no extglob: a group `!(..)` may match anything, so `*` */
		q = seg;
		for (const char *s = seg; *s; s++) {
			if (strchr("@!+*?", *s) && s[1] == '(') {
				s += 1 + strcspn(s + 1, ")");
				*q++ = '*';
				if (!*s)
					break;
			} else {
				*q++ = *s;
			}
		}
		*q = '\0';
		if ((rc = check_regex(c, seg, true)) != 0 || (rc = check_regex(c, bare, true)) != 0)
			break;
		if (zsp_sh_parse(c->a, seg, &r) != ZSP_OK)
			return -1;
		for (size_t k = 0; k < r.ncmds && rc == 0; k++)
			if (r.cmds[k].kind == ZSP_SH_COMMAND) {
				c->what = r.cmds[k].text;
				rc = check_words(c, r.cmds[k].argv, r.cmds[k].argc);
			}
		p += n;
	}
	return rc;
}

/* The text (Zed's regexes) and each simple command of its parse, substitutions included. */
static int check_text(bctx *c, const char *text, const zsp_sh_result *sh)
{
	zsp_sh_result own;
	int rc;

	if (!sh) {
		if (zsp_sh_parse(c->a, text, &own) != ZSP_OK)
			return -1;
		sh = &own;
	}
	c->sh = sh;
	rc = sh->finding == ZSP_SH_UNSUPPORTED ? check_segments(c, text) : check_regex(c, text, false);
	for (size_t k = 0; k < sh->ncmds && rc == 0; k++) {
		const zsp_sh_cmd *cmd = &sh->cmds[k];
		const char **argv = cmd->argv;
		size_t argc = cmd->argc, i;

		if (cmd->kind == ZSP_SH_REDIRECT && c->env->file && argc == 2) {
			/* `< f` reads, `> f`, `>> f`, `&> f`, `N> f` write, `<> f` both */
			unsigned acc = (strchr(argv[0], '<') ? ZSP_FILE_READ : 0) |
				       (strchr(argv[0], '>') ? ZSP_FILE_WRITE : 0);

			c->what = cmd->text;
			rc = report_file(c, argv[1], acc, false);
			continue;
		}
		if (cmd->kind != ZSP_SH_COMMAND)
			continue;
		c->what = cmd->text;
		rc = check_words(c, argv, argc);
		if (rc == 0 && set_vars(c, argv, argc) < 0)
			return -1;
		i = command_index(argv, argc);
		if (rc == 0 && i < argc && (name_is(argv[i], "cd") || name_is(argv[i], "pushd")) &&
		    change_dir(c, argv + i, argc - i) < 0)
			return -1;
		if (rc == 0 && i < argc && name_is(argv[i], "set")) {
			if (c->has_pos && expand_positional(c, &argv, &argc) < 0)
				return -1;
			set_positional(c, argv + i, argc - i);
		}
	}
	return rc ? rc : check_stdin_scripts(c, text, sh);
}

int zsp_builtin_check(zsp_arena *a, const char *raw, const zsp_sh_result *sh,
		      const zsp_builtin_env *env, zsp_builtin_hit *hit, bool *matched)
{
	static const char *const top[] = { "sh" };
	regex_cache rx = { { NULL, NULL } };
	/* the command runs as `sh -c COMMAND`: $0 is the shell, and there are no other
	 * positional parameters */
	bctx c = { .a = a, .rx = &rx, .hit = hit, .env = env ? env : &no_env, .what = raw,
		   .has_pos = true, .pos = (const char **)top, .npos = 1, .steps = STEPS_MAX };
	const char *start[] = { c.env->cwd };

	c.dirs = start;
	c.ndirs = 1;
	c.lost = !c.env->cwd;
	if (strstr(raw, "()") || strstr(raw, "function")) {
		/* a function's $1, $@ are what its calls pass: unknown here, and any word of the
		 * text is a candidate (the parse keeps no function structure) */
		zsp_sh_result own;
		const zsp_sh_result *all = sh;

		if (!all) {
			if (zsp_sh_parse(a, raw, &own) != ZSP_OK)
				return ZSP_EINTERNAL;
			all = &own;
		}
		size_t n = 0;
		for (size_t k = 0; k < all->ncmds; k++)
			n += all->cmds[k].argc;
		c.fnargs = zsp_arena_calloc(a, n + 2, sizeof *c.fnargs);
		if (!c.fnargs)
			return ZSP_EINTERNAL;
		c.fnargs[c.nfnargs++] = ""; /* a call that passes fewer */
		for (size_t k = 0; k < all->ncmds; k++)
			for (size_t j = 0; j < all->cmds[k].argc; j++)
				c.fnargs[c.nfnargs++] = all->cmds[k].argv[j];
		c.has_pos = false;
	}
	int rc;

	memset(hit, 0, sizeof *hit);
	*matched = false;
	if (!raw)
		return ZSP_OK;
	rc = check_text(&c, raw, sh); /* >0 a rule matches, 0 none does, -1 out of memory */
	for (int k = 0; k < 2; k++)
		pcre2_match_data_free(rx.md[k]);
	if (rc < 0)
		return ZSP_EINTERNAL;
	*matched = rc > 0;
	return ZSP_OK;
}

/* ---- what user deny and ask rules see ---- */

#define UNWRAP_STAGES 64    /* wrappers stripped from one command */
#define UNWRAP_TEXTS 4096   /* texts for one request */

typedef struct uctx {
	zsp_arena *a;
	const char **v;
	size_t n, cap;
	bool complete;
} uctx;

static int unwrap_add(uctx *u, const char *text)
{
	if (u->n >= UNWRAP_TEXTS) {
		u->complete = false;
		return 0;
	}
	if (u->n + 1 >= u->cap) {
		const char **nv = zsp_arena_grow(u->a, u->v, u->n, &u->cap, sizeof *nv);

		if (!nv)
			return -1;
		u->v = nv;
	}
	u->v[u->n++] = text;
	return 0;
}

static int unwrap_words(uctx *u, const char **argv, size_t argc, unsigned depth);

/* The commands of a script a command runs (sh -c, eval, env -S, su -c, watch, ...). */
static int unwrap_script(uctx *u, const char *script, unsigned depth)
{
	zsp_sh_result r;
	int rc = 0;

	if (depth >= NESTED_MAX) {
		u->complete = false;
		return 0;
	}
	if (zsp_sh_parse(u->a, script, &r) != ZSP_OK || unwrap_add(u, script) < 0)
		return -1;
	for (size_t k = 0; k < r.ncmds && rc == 0; k++)
		if (r.cmds[k].kind == ZSP_SH_COMMAND && (rc = unwrap_add(u, r.cmds[k].text)) == 0)
			rc = unwrap_words(u, r.cmds[k].argv, r.cmds[k].argc, depth + 1);
	return rc;
}

static int unwrap_words(uctx *u, const char **argv, size_t argc, unsigned depth)
{
	size_t i = 0, stages = 0;
	bool command, stdin_flag;

	for (;;) {
		const struct wrapper *wr;
		const char *w, *t;
		opts o = { 0 };
		size_t start, j;

		while (i < argc && is_assignment(argv[i]))
			i++;
		if (i >= argc)
			return 0;
		if (strchr(argv[i], '{')) {
			/* `{rm,x}` runs `rm x`: the words of the expansion replace the word */
			zsp_builtin_hit hit;
			bctx b = { .a = u->a, .hit = &hit, .env = &no_env, .steps = STEPS_MAX };
			const char *before = argv[i];
			size_t n = argc;
			int rc = splice_braces(&b, &argv, &argc, i);

			if (rc < 0)
				return -1;
			if (rc > 0) {
				u->complete = false;
				return 0;
			}
			if (argc != n || strcmp(argv[i], before) != 0) {
				const char *joined = join_words(u->a, "", argv + i, argc - i, false);

				if (!joined || unwrap_add(u, joined) < 0)
					return -1;
				continue;
			}
		}
		if (i > 0) {
			if (++stages > UNWRAP_STAGES) {
				u->complete = false;
				return 0;
			}
			/* as the parse writes a command: unquoted words joined by one space */
			if (!(t = join_words(u->a, "", argv + i, argc - i, false)) || unwrap_add(u, t) < 0)
				return -1;
		}
		w = argv[i];
		if (is_shell(w)) {
			j = i + shell_operands(argv + i, argc - i, &command, &stdin_flag);
			return command && j < argc ? unwrap_script(u, argv[j], depth) : 0;
		}
		if (name_is(w, "eval")) {
			char *s = join_words(u->a, "", argv + i + 1, argc - i - 1, false);

			return s ? unwrap_script(u, s, depth) : -1;
		}
		if (name_is(w, "trap")) {
			j = i + 1 + (i + 1 < argc && !strcmp(argv[i + 1], "--"));
			return j < argc && (argv[j][0] != '-' || j > i + 1) ? unwrap_script(u, argv[j], depth) : 0;
		}
		if (name_is(w, "alias")) {
			for (j = i + 1; j < argc; j++)
				if (strchr(argv[j], '=') && unwrap_script(u, strchr(argv[j], '=') + 1, depth) < 0)
					return -1;
			return 0;
		}
		if (name_is(w, "su") || name_is(w, "runuser")) {
			for (j = i + 1; j < argc; j++) {
				if (!strncmp(argv[j], "--command=", 10))
					return unwrap_script(u, argv[j] + 10, depth);
				if ((!strcmp(argv[j], "-c") || !strcmp(argv[j], "--command")) && j + 1 < argc)
					return unwrap_script(u, argv[j + 1], depth);
			}
			if (!name_is(w, "runuser"))
				return 0;
			i = scan_opts(argv, argc, i + 1, "ugGcsw", "", NULL, &o);
			if (!o.seen['u'])
				return 0;
			continue;
		}
		if (!(wr = find_wrapper(w)))
			return 0;
		start = i + 1;
		i = wrapper_args(wr, argv, argc, start, &o);
		switch (wr->kind) {
		case W_SUDO:
			if (o.seen['e'])
				return 0;
			break;
		case W_ENV:
			while (i < argc && !strcmp(argv[i], "-"))
				i++;
			if (o.val['S']) {
				char *s = join_words(u->a, o.val['S'], argv + i, argc - i, true);

				return s ? unwrap_script(u, s, depth) : -1;
			}
			break;
		case W_COMMAND:
			if (o.seen['v'] || o.seen['V'])
				return 0;
			break;
		case W_NOCMD_P:
			if (o.seen['p'] || o.seen['P'] || o.seen['u'])
				return 0;
			break;
		case W_WATCH:
		case W_SG:
			if (wr->kind == W_SG) {
				i = start + (start < argc && !strcmp(argv[start], "-"));
				i += i < argc;
				i += i < argc && !strcmp(argv[i], "-c");
			} else if (o.seen['x']) {
				break;
			}
			if (i < argc) {
				char *s = join_words(u->a, "", argv + i, argc - i, false);

				return s ? unwrap_script(u, s, depth) : -1;
			}
			return 0;
		case W_FLOCK:
		case W_SCRIPT:
			if (o.val['c'])
				return unwrap_script(u, o.val['c'], depth);
			if (wr->kind == W_SCRIPT)
				return 0;
			break;
		case W_COREUTILS:
		case W_CAPSH:
			return 0;
		default:
			break;
		}
	}
}

int zsp_builtin_unwrap(zsp_arena *a, const zsp_sh_result *sh, const char ***texts, size_t *n,
		       bool *complete)
{
	uctx u = { .a = a, .complete = true };

	for (size_t k = 0; k < sh->ncmds; k++) {
		const zsp_sh_cmd *cmd = &sh->cmds[k];

		if (cmd->kind == ZSP_SH_COMMAND &&
		    unwrap_words(&u, cmd->argv, cmd->argc, 0) < 0)
			return ZSP_EINTERNAL;
	}
	*texts = u.v;
	*n = u.n;
	*complete = u.complete;
	return ZSP_OK;
}
