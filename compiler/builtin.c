/* builtin.c: the built-in terminal rules (doc/facts.md §zed): Zed's five `rm` regexes, and a
 * structural check of every simple command that looks through wrappers, sh -c scripts and find. */
#include "config.h"

#include "compiler/builtin.h"
#include "compiler/regex.h"
#include "compiler/zsp.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
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
	const char *what;   /* the simple command being judged */
	unsigned depth;     /* scripts entered so far */
	bool has_pos;       /* inside sh -c: $0, $1, ..., $@ are known */
	const char **pos;   /* $0 first */
	size_t npos;
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

/* Case-insensitive comparison of the last path component of word with name. */
static bool name_is(const char *word, const char *name)
{
	const char *slash = strrchr(word, '/');

	return strcasecmp(slash ? slash + 1 : word, name) == 0;
}

static bool is_assignment(const char *w)
{
	if (!((*w >= 'A' && *w <= 'Z') || (*w >= 'a' && *w <= 'z') || *w == '_'))
		return false;
	while ((*w >= 'A' && *w <= 'Z') || (*w >= 'a' && *w <= 'z') || (*w >= '0' && *w <= '9') ||
	       *w == '_')
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

static bool star_only(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != '*')
			return false;
	return n > 0;
}

/* What an rm operand names after lexical normalization: `/`, `~` (also `$HOME`, `~user`), `.`
 * (also `$PWD`, `~+`, `$(pwd)`), or an ancestor of `~` or `.`. Trailing `*` components name
 * the same tree. A `..` that pops a component holding `$` or a backquote makes it unknown. */
static int classify(zsp_arena *a, const char *w, enum target *out)
{
	enum target anchor = T_CWD;
	const char *p = w;
	size_t n, skip, depth = 0, climb = 0, len = strlen(w);
	unsigned char *stack; /* per component: 1 opaque, 2 all stars, 0 other */

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
	stack = zsp_arena_alloc(a, len / 2 + 2);
	if (!stack)
		return -1;
	while (*p) {
		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (depth > 0 && stack[depth - 1] == 1)
				return 0;
			if (depth > 0)
				depth--;
			else if (anchor != T_ROOT)
				climb++;
		} else {
			bool opaque = memchr(p, '$', n) || memchr(p, '`', n) || (p == w && *p == '~');

			stack[depth++] = opaque ? 1 : star_only(p, n) ? 2 : 0;
		}
		p += n;
	}
	while (depth > 0 && stack[depth - 1] == 2)
		depth--;
	if (depth == 0)
		*out = climb > 0 ? T_PARENT : anchor;
	return 0;
}

/* classify over the brace expansion of w ({a,b} alternatives, nested; no ranges), stopping at
 * the first word that names a target; *budget bounds the words tried. */
static int classify_braces(zsp_arena *a, const char *w, enum target *out, unsigned *budget)
{
	*out = T_NONE;
	for (size_t i = 0; w[i]; i++) {
		size_t j, depth = 1, commas = 0;

		if (w[i] != '{' || (i > 0 && w[i - 1] == '$'))
			continue;
		for (j = i + 1; w[j] && depth; j++) {
			depth += w[j] == '{' ? 1 : w[j] == '}' ? (size_t)-1 : 0;
			commas += depth == 1 && w[j] == ',';
		}
		if (depth || !commas)
			continue;
		/* w[i] is `{`, w[j - 1] its `}`: try each top-level alternative */
		for (size_t k = i + 1, alt = k; k < j; k++) {
			char *word;

			depth += w[k] == '{' ? 1 : w[k] == '}' ? (size_t)-1 : 0;
			if (!((depth == 0 && w[k] == ',') || k == j - 1))
				continue;
			if (*budget == 0)
				return 0;
			(*budget)--;
			word = zsp_arena_printf(a, "%.*s%.*s%s", (int)i, w, (int)(k - alt), w + alt, w + j);
			if (!word || classify_braces(a, word, out, budget) < 0)
				return -1;
			if (*out != T_NONE)
				return 0;
			alt = k + 1;
		}
		return 0;
	}
	return classify(a, w, out);
}

static int classify_word(zsp_arena *a, const char *w, enum target *out)
{
	unsigned budget = 256;

	return classify_braces(a, w, out, &budget);
}

/* ---- getopt-style options of wrappers ---- */

typedef struct opts {
	bool seen[128];
	const char *val[128];
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

			for (const char *const *l = longs; l && *l; l++) {
				size_t ln = strlen(*l) - 2;
				unsigned char x = (unsigned char)(*l)[ln + 1];

				if (ln != n || strncmp(*l, w + 2, n) != 0)
					continue;
				o->seen[x & 127] = true;
				if ((*l)[ln] == '=')
					o->val[x & 127] = w[2 + n] ? w + 3 + n : i + 1 < argc ? argv[++i] : NULL;
				break;
			}
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

enum wkind { W_PLAIN, W_SUDO, W_ENV, W_COMMAND, W_WATCH, W_FLOCK, W_NOCMD_P };

static const char *const sudo_longs[] = { "user=u", "group=g", "close-from=C", "chdir=D", "host=h",
					  "prompt=p", "role=r", "type=t", "other-user=U",
					  "command-timeout=T", "chroot=R", "edit:e", NULL };
static const char *const env_longs[] = { "unset=u", "split-string=S", "chdir=C", NULL };
static const char *const nice_longs[] = { "adjustment=n", NULL };
static const char *const timeout_longs[] = { "signal=s", "kill-after=k", NULL };
static const char *const time_longs[] = { "format=f", "output=o", NULL };
static const char *const xargs_longs[] = { "arg-file=a", "delimiter=d", "max-args=n", "max-procs=P",
					   "max-chars=s", "process-slot-var=X", NULL };
static const char *const stdbuf_longs[] = { "input=i", "output=o", "error=e", NULL };
static const char *const ionice_longs[] = { "class=c", "classdata=n", "pid=p", "pgid=P", "uid=u",
					    NULL };
static const char *const chroot_longs[] = { "userspec=u", "groups=g", NULL };
static const char *const watch_longs[] = { "interval=n", "exec:x", NULL };
static const char *const flock_longs[] = { "timeout=w", "wait=w", "conflict-exit-code=E",
					   "command=c", NULL };
static const char *const fakeroot_longs[] = { "lib=l", "faked=f", NULL };
static const char *const pkexec_longs[] = { "user=u", NULL };

/* Commands that run the rest of their words as a command. operands: words between the options
 * and the command (timeout's DURATION, chroot's NEWROOT, flock's FILE, taskset's MASK). */
static const struct wrapper {
	const char *name, *req, *optional;
	const char *const *longs;
	unsigned operands;
	enum wkind kind;
} wrappers[] = {
	{ "sudo", "ugCDhprtUTR", "", sudo_longs, 0, W_SUDO },
	{ "doas", "uC", "", NULL, 0, W_PLAIN },
	{ "env", "uSCP", "", env_longs, 0, W_ENV },
	{ "nice", "n", "", nice_longs, 0, W_PLAIN },
	{ "nohup", "", "", NULL, 0, W_PLAIN },
	{ "timeout", "sk", "", timeout_longs, 1, W_PLAIN },
	{ "time", "fo", "", time_longs, 0, W_PLAIN },
	{ "command", "", "", NULL, 0, W_COMMAND },
	{ "exec", "a", "", NULL, 0, W_PLAIN },
	{ "xargs", "InPLsdEa", "ile", xargs_longs, 0, W_PLAIN },
	{ "stdbuf", "ioe", "", stdbuf_longs, 0, W_PLAIN },
	{ "ionice", "cnpPu", "", ionice_longs, 0, W_NOCMD_P },
	{ "chroot", "", "", chroot_longs, 1, W_PLAIN },
	{ "busybox", "", "", NULL, 0, W_PLAIN },
	{ "nocorrect", "", "", NULL, 0, W_PLAIN },
	{ "builtin", "", "", NULL, 0, W_PLAIN },
	{ "noglob", "", "", NULL, 0, W_PLAIN },
	{ "setsid", "", "", NULL, 0, W_PLAIN },
	{ "unbuffer", "", "", NULL, 0, W_PLAIN },
	{ "fakeroot", "lsi", "", fakeroot_longs, 0, W_PLAIN },
	{ "pkexec", "", "", pkexec_longs, 0, W_PLAIN },
	{ "taskset", "", "", NULL, 1, W_NOCMD_P },
	{ "watch", "n", "d", watch_longs, 0, W_WATCH },
	{ "flock", "wEc", "", flock_longs, 1, W_FLOCK },
};

static const struct wrapper *find_wrapper(const char *w)
{
	for (size_t k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++)
		if (name_is(w, wrappers[k].name))
			return &wrappers[k];
	return NULL;
}

static bool is_shell(const char *w)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh",
					      "yash", "posh", "fish" };

	for (size_t k = 0; k < sizeof(shells) / sizeof(shells[0]); k++)
		if (name_is(w, shells[k]))
			return true;
	return false;
}

/* ---- the structural check ---- */

static int check_words(bctx *c, const char **argv, size_t argc);
static int check_text(bctx *c, const char *text, const zsp_sh_result *sh);

/* Enters a script (sh -c, eval, env -S, su -c, watch), with new positional parameters when pos
 * is not NULL. */
static int check_script(bctx *c, const char *script, const char **pos, size_t npos)
{
	bctx sub = *c;

	if (c->depth >= NESTED_MAX) {
		c->what = script;
		return set_hit(c, "nested-shell",
			       "shell scripts nested more than 8 deep cannot be checked");
	}
	sub.depth++;
	if (pos) {
		sub.has_pos = true;
		sub.pos = pos;
		sub.npos = npos;
	}
	return check_text(&sub, script, NULL);
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

static int check_rm(bctx *c, const char **args, size_t n)
{
	bool operands_only = false;

	for (size_t k = 0; k < n; k++) {
		enum target t;

		if (!operands_only && strcmp(args[k], "--") == 0) {
			operands_only = true;
			continue;
		}
		if (!operands_only && args[k][0] == '-' && args[k][1])
			continue;
		if (classify_word(c->a, args[k], &t) < 0)
			return -1;
		if (t != T_NONE)
			return set_hit(c, rules[t].rule, rules[t].message);
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
		    wr->kind == W_FLOCK)
			return i;
		i = scan_opts(argv, argc, i + 1, wr->req, wr->optional, wr->longs, &o) + wr->operands;
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
	if (name_is(argv[i], "rm") || name_is(argv[i], "unlink"))
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
		return strcmp(arg, ".*") != 0 && strcmp(arg, ".*.*") != 0;
	for (size_t k = 0; k < sizeof(tests) / sizeof(tests[0]); k++)
		if (!strcmp(test, tests[k]))
			return !star_only(arg, strlen(arg));
	return -1;
}

/* find with a start that is /, ~, ., .. or above, deleting (-delete, -exec rm) with no
 * narrowing -name/-path/... test (an -o, or a negated group, voids the narrowing). The commands
 * of -exec are checked like any other. */
static int check_find(bctx *c, const char **argv, size_t argc)
{
	static const char *cwd[] = { "." };
	bool dangerous = false, deletes = false, narrowed = false, untrusted = false, negate = false;
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

		if (classify_word(c->a, starts[k], &t) < 0)
			return -1;
		dangerous = t != T_NONE;
	}
	for (; i < argc; i++) {
		const char *w = argv[i];
		int narrows;

		if (!strcmp(w, "-delete")) {
			deletes = true;
		} else if (!strcmp(w, "-exec") || !strcmp(w, "-execdir") || !strcmp(w, "-ok") ||
			   !strcmp(w, "-okdir")) {
			size_t j = i + 1;
			int rc;

			while (j < argc && strcmp(argv[j], ";") && strcmp(argv[j], "+"))
				j++;
			rc = check_words(c, argv + i + 1, j - i - 1);
			if (rc)
				return rc;
			deletes |= exec_deletes(argv + i + 1, j - i - 1);
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
	if (dangerous && deletes && (!narrowed || untrusted))
		return set_hit(c, "find-delete-root",
			       "find deletes everything under the root, home, current or parent directory");
	return 0;
}

/* Scans the options of sh/bash/...: clustered (-lc, -ec), -o/-O take a word. Returns the index
 * of the first operand; *command tells whether -c was given. */
static size_t shell_operands(const char **argv, size_t argc, bool *command)
{
	size_t i = 1;

	*command = false;
	while (i < argc) {
		const char *w = argv[i];
		bool takes = false;

		if (!strcmp(w, "--") || !strcmp(w, "-"))
			return i + 1;
		if ((w[0] != '-' && w[0] != '+') || !w[1])
			break;
		if (w[0] == '-' && w[1] == '-') {
			i += !strcmp(w, "--rcfile") || !strcmp(w, "--init-file") ? 2 : 1;
			continue;
		}
		for (size_t j = 1; w[j]; j++) {
			*command |= w[0] == '-' && w[j] == 'c';
			takes |= w[j] == 'o' || w[j] == 'O';
		}
		i += takes ? 2 : 1;
	}
	return i;
}

/* sh -c SCRIPT [NAME [ARG...]] */
static int check_shell(bctx *c, const char **argv, size_t argc)
{
	bool command;
	size_t i = shell_operands(argv, argc, &command);

	if (!command || i >= argc)
		return 0;
	return check_script(c, argv[i], argv + i + 1, argc - i - 1);
}

/* A shell that reads its script from stdin: `... | sh`, `bash -s`. */
static bool reads_script_from_stdin(const char **argv, size_t argc)
{
	size_t i = command_index(argv, argc);
	bool command;

	if (i >= argc || !is_shell(argv[i]))
		return false;
	argv += i;
	argc -= i;
	return shell_operands(argv, argc, &command) >= argc && !command;
}

/* The here-string words (`<<< WORD`) and the lines of text, checked as scripts. */
static int check_here_scripts(bctx *c, const char *text)
{
	unsigned budget = 16; /* each here-string parses the rest of its line */

	for (const char *p = text; (p = strstr(p, "<<<")) != NULL && budget > 0; p += 3, budget--) {
		char *rest = zsp_arena_strndup(c->a, p + 3, strcspn(p + 3, "\n"));
		zsp_sh_result r;
		int rc;

		if (!rest || zsp_sh_parse(c->a, rest, &r) != ZSP_OK)
			return -1;
		if (r.ncmds == 0 || r.cmds[0].kind != ZSP_SH_COMMAND || r.cmds[0].argc == 0)
			continue;
		rc = check_script(c, r.cmds[0].argv[0], NULL, 0);
		if (rc)
			return rc;
	}
	for (const char *p = strchr(text, '\n'); p; p = strchr(p + 1, '\n')) {
		const char *end = strchr(p + 1, '\n');
		char *line = zsp_arena_strndup(c->a, p + 1, end ? (size_t)(end - p - 1) : strlen(p + 1));
		int rc;

		if (!line)
			return -1;
		rc = check_script(c, line, NULL, 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* `echo 'rm -rf /' | sh`, `sh <<< '...'`, `sh <<EOF`: when some command of the input is a shell
 * reading its script from stdin (the parse keeps no pipeline or here-document structure), the
 * words echo and printf print, here-strings and the lines of the text are checked as scripts. */
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
		for (char *p = script; (p = strstr(p, "\\n")) != NULL;)
			memcpy(p, " \n", 2); /* printf's and echo -e's \n: a command separator */
		c->what = cmd->text;
		rc = check_script(c, script, NULL, 0);
		if (rc)
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

/* $0..$9, ${N}, $@, $* replaced by the parameters of the enclosing sh -c (unset ones by ""). */
static int expand_positional(bctx *c, const char ***argv, size_t *argc)
{
	size_t n = 0;
	const char **out;

	for (size_t i = 0; i < *argc; i++)
		n += (*argv)[i][0] == '$' ? c->npos + 1 : 1;
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

static int check_words(bctx *c, const char **argv, size_t argc)
{
	size_t i = 0;

	if (c->has_pos && expand_positional(c, &argv, &argc) < 0)
		return -1;
	for (;;) {
		const struct wrapper *wr;
		const char *w;
		opts o = { 0 };

		while (i < argc && is_assignment(argv[i]))
			i++;
		if (i >= argc)
			return 0;
		w = argv[i];
		if (name_is(w, "rm"))
			return check_rm(c, argv + i + 1, argc - i - 1);
		if (name_is(w, "find"))
			return check_find(c, argv + i, argc - i);
		if (is_shell(w))
			return check_shell(c, argv + i, argc - i);
		if (name_is(w, "su"))
			return check_su(c, argv + i, argc - i);
		if (name_is(w, "runuser")) {
			/* runuser -u USER COMMAND..., or su's form with -c */
			int rc = check_su(c, argv + i, argc - i);

			if (rc)
				return rc;
			i = scan_opts(argv, argc, i + 1, "ugGcsw", "", NULL, &o);
			if (!o.seen['u'])
				return 0;
			continue;
		}
		if (name_is(w, "eval")) {
			char *s = join_words(c->a, "", argv + i + 1, argc - i - 1, false);

			return s ? check_script(c, s, NULL, 0) : -1;
		}
		if (!(wr = find_wrapper(w)))
			return 0;
		i = scan_opts(argv, argc, i + 1, wr->req, wr->optional, wr->longs, &o);
		switch (wr->kind) {
		case W_PLAIN:
			break;
		case W_SUDO:
			if (o.seen['e'])
				return 0; /* sudoedit: operands are files */
			break;
		case W_ENV:
			while (i < argc && !strcmp(argv[i], "-"))
				i++;
			if (o.val['S']) {
				char *s = join_words(c->a, o.val['S'], argv + i, argc - i, true);

				return s ? check_script(c, s, NULL, 0) : -1;
			}
			break;
		case W_COMMAND:
			if (o.seen['v'] || o.seen['V'])
				return 0; /* only looks the name up */
			break;
		case W_NOCMD_P:
			if (o.seen['p'] || o.seen['P'] || o.seen['u'])
				return 0; /* acts on running processes */
			break;
		case W_WATCH:
			if (!o.seen['x']) {
				char *s = join_words(c->a, "", argv + i, argc - i, false);

				return s ? check_script(c, s, NULL, 0) : -1;
			}
			break;
		case W_FLOCK:
			if (!o.val['c'] && i + 1 < argc &&
			    (!strcmp(argv[i + 1], "-c") || !strcmp(argv[i + 1], "--command")))
				o.val['c'] = i + 2 < argc ? argv[i + 2] : NULL;
			if (o.val['c'])
				return check_script(c, o.val['c'], NULL, 0);
			break;
		}
		i += wr->operands;
	}
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
	rc = check_regex(c, text, sh->finding == ZSP_SH_UNSUPPORTED);
	for (size_t k = 0; k < sh->ncmds && rc == 0; k++) {
		const zsp_sh_cmd *cmd = &sh->cmds[k];

		if (cmd->kind != ZSP_SH_COMMAND)
			continue;
		c->what = cmd->text;
		rc = check_words(c, cmd->argv, cmd->argc);
	}
	return rc ? rc : check_stdin_scripts(c, text, sh);
}

int zsp_builtin_check(zsp_arena *a, const char *raw, const zsp_sh_result *sh, zsp_builtin_hit *hit,
		      bool *matched)
{
	regex_cache rx = { { NULL, NULL } };
	bctx c = { .a = a, .rx = &rx, .hit = hit, .what = raw };
	int rc;

	memset(hit, 0, sizeof *hit);
	*matched = false;
	if (!raw)
		return ZSP_OK;
	rc = check_text(&c, raw, sh); /* 1 a rule matches, 0 none does, -1 out of memory */
	for (int k = 0; k < 2; k++)
		pcre2_match_data_free(rx.md[k]);
	if (rc < 0)
		return ZSP_EINTERNAL;
	*matched = rc > 0;
	return ZSP_OK;
}
