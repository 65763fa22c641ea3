/* sbpl.c: a normalized policy -> a Seatbelt profile. Allows come first and restrictions last, each
 * region cut (require-not) by the more specific rules inside it, so the order never decides. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/sbpl.h"
#include "compiler/oracle.h"
#include "compiler/path.h"
#include "compiler/textesc.h"
#include "compiler/zsp.h"
#include "lang/buf.h"

#define COMMENT_MAX 160 /* bytes of a rule's source text quoted in its comment */
#define POINTER_MAX 4096 /* bytes of a .git or commondir file: one path and a newline */

enum strength { S_READ = 1, S_WRITE = 2, S_PROTECT = 3, S_DENY = 4 };

typedef struct item {
	const zsp_ir_fs_rule *r;
	const char *path;        /* canonical; a literal's escapes removed; may hold ${NAME} */
	bool glob;
	bool symbolic;           /* holds an unresolved ${NAME} */
	int strength;
	size_t depth;
	const char *regex;       /* glob: its matches and everything below them; NULL if it cannot be written */
	const char *match_regex; /* glob: its matches only */
	bool approx;             /* glob: regex widened over an unresolved parameter */
	const char *via;         /* a protection found through a .git file: how (its comment) */
} item;

typedef struct ctx {
	const zsp_ir_policy *p;
	const char *source;
	zsp_diag *d;
	zsp_arena *a;
	zsp_buf out;
	item *lit, *glob;
	size_t nlit, nglob, lit_cap;
	const char **params;
	size_t nparams, params_cap;
	const char **unlinked;   /* literals already given a file-write-unlink deny (heap) */
	size_t nunlinked, unlinked_cap;
	bool oom;
} ctx;

/* ---- output ------------------------------------------------------------------------------ */

/* An SBPL string literal. */
static void put_string(zsp_buf *b, const char *s, size_t n)
{
	zsp_buf_puts(b, "\"");
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			zsp_buf_puts(b, "\\");
		zsp_buf_add(b, s + i, 1);
	}
	zsp_buf_puts(b, "\"");
}

/* ---- parameters and paths ---------------------------------------------------------------- */

static void note_param(ctx *c, const char *name, size_t n)
{
	for (size_t i = 0; i < c->nparams; i++)
		if (strlen(c->params[i]) == n && memcmp(c->params[i], name, n) == 0)
			return;
	const char *owned = NULL;
	for (size_t i = 0; i < c->p->nparams; i++)
		if (strlen(c->p->params[i].name) == n && memcmp(c->p->params[i].name, name, n) == 0)
			owned = c->p->params[i].name;
	if (!owned)
		return;
	if (!zsp_array_reserve(&c->params, &c->params_cap, c->nparams + 1, sizeof(*c->params))) {
		c->oom = true;
		return;
	}
	size_t at = c->nparams++;
	while (at > 0 && strcmp(c->params[at - 1], owned) > 0) {
		c->params[at] = c->params[at - 1];
		at--;
	}
	c->params[at] = owned;
}

/* A path as an SBPL expression: "..." when concrete, (param "N") for a parameter alone, else
 * (string-append ...) of the pieces. */
static void put_path(ctx *c, zsp_buf *b, const char *path)
{
	const char *s = path;
	int pieces = 0;
	for (const char *t = s; *t;) {
		const char *q = strstr(t, "${");
		const char *e = q ? strchr(q, '}') : NULL;
		if (!q || !e) {
			pieces++;
			break;
		}
		pieces += (q > t) + 1;
		t = e + 1;
	}
	if (pieces > 1)
		zsp_buf_puts(b, "(string-append");
	while (*s) {
		const char *q = strstr(s, "${");
		const char *e = q ? strchr(q, '}') : NULL;
		if (!q || !e) {
			if (pieces > 1)
				zsp_buf_puts(b, " ");
			put_string(b, s, strlen(s));
			break;
		}
		if (q > s) {
			if (pieces > 1)
				zsp_buf_puts(b, " ");
			put_string(b, s, (size_t)(q - s));
		}
		if (pieces > 1)
			zsp_buf_puts(b, " ");
		zsp_buf_puts(b, "(param ");
		put_string(b, q + 2, (size_t)(e - q - 2));
		zsp_buf_puts(b, ")");
		note_param(c, q + 2, (size_t)(e - q - 2));
		s = e + 1;
	}
	if (pieces > 1)
		zsp_buf_puts(b, ")");
}

char *zsp_sbpl_canonical(const char *path)
{
	static const char *const moved[] = { "/tmp", "/var", "/etc" };
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
		size_t n = strlen(moved[i]);
		if (strncmp(path, moved[i], n) == 0 && (path[n] == '/' || path[n] == '\0')) {
			char *out = malloc(strlen(path) + sizeof("/private"));
			if (out)
				sprintf(out, "/private%s", path);
			return out;
		}
	}
	return strdup(path);
}

static char *canonical_in(ctx *c, const char *path)
{
	char *m = zsp_sbpl_canonical(path);
	char *s = m ? zsp_arena_strdup(c->a, m) : NULL;
	free(m);
	if (!s)
		c->oom = true;
	return s;
}

/* A literal rule's path without the glob escapes the IR keeps (`\*` -> `*`). */
static char *unescape(ctx *c, const char *path)
{
	char *s = zsp_arena_strdup(c->a, path);
	if (!s) {
		c->oom = true;
		return NULL;
	}
	char *o = s;
	for (const char *i = path; *i; i++) {
		if (*i == '\\' && i[1])
			i++;
		*o++ = *i;
	}
	*o = '\0';
	return s;
}

static bool is_concrete(const char *path)
{
	return strstr(path, "${") == NULL;
}

/* "/" is an ancestor of every path, parameters included (their values are absolute); other
 * relations are known only where the text says so. */
static bool known_ancestor(const char *a, const char *b)
{
	if (strcmp(a, b) == 0)
		return false;
	if (strcmp(a, "/") == 0)
		return true;
	return zsp_path_is_prefix(a, b);
}

/* ---- glob -> regex ----------------------------------------------------------------------- */

static void put_regex_char(zsp_buf *b, char ch)
{
	if (strchr(".^$*+?()[]{}|\\", ch))
		zsp_buf_puts(b, "\\");
	if (ch == '"')
		zsp_buf_puts(b, "\\");
	zsp_buf_add(b, &ch, 1);
}

static void put_class_char(zsp_buf *m, char ch)
{
	if (ch == '\\' || ch == '"')
		zsp_buf_puts(m, "\\");
	zsp_buf_add(m, &ch, 1);
}

/* A class `[...]` starting at g (after `[`); returns the position after `]`. Written so that
 * POSIX and PCRE engines read it alike: `]` first, `^` and `-` last, `\` doubled; never `/`. */
static const char *put_class(zsp_buf *b, const char *g)
{
	bool neg = *g == '!';
	if (neg)
		g++;
	zsp_buf m = { 0 };
	bool close = false, caret = false, dash = false, ranges = false;
	size_t nitems = 0;
	char single = 0;
	while (*g && *g != ']') {
		char lo = *g++;
		if (lo == '\\' && *g)
			lo = *g++;
		if (*g == '-' && g[1] && g[1] != ']') {
			g++;
			char hi = *g++;
			if (hi == '\\' && *g)
				hi = *g++;
			put_class_char(&m, lo);
			zsp_buf_puts(&m, "-");
			put_class_char(&m, hi);
			ranges = true;
			nitems++;
			continue;
		}
		nitems++;
		single = lo;
		if (lo == ']')
			close = true;
		else if (lo == '^')
			caret = true;
		else if (lo == '-')
			dash = true;
		else if (lo != '/')
			put_class_char(&m, lo);
	}
	if (*g == ']')
		g++;
	if (!neg && nitems == 1 && !ranges) {
		if (single == '/')
			zsp_buf_puts(b, "$^"); /* a class never matches `/`: this component matches nothing */
		else
			put_regex_char(b, single);
	} else {
		zsp_buf_puts(b, neg ? "[^/" : "[");
		if (close)
			zsp_buf_puts(b, "]");
		if (m.data)
			zsp_buf_puts(b, m.data);
		if (caret)
			zsp_buf_puts(b, "^");
		if (dash)
			zsp_buf_puts(b, "-");
		zsp_buf_puts(b, "]");
	}
	if (m.oom)
		b->oom = true;
	zsp_buf_free(&m);
	return g;
}

/* One component of a glob, or a run of them without `**`, as regex. */
static void put_glob_text(zsp_buf *b, const char *g, size_t n)
{
	const char *end = g + n;
	while (g < end) {
		if (*g == '\\' && g + 1 < end) {
			put_regex_char(b, g[1]);
			g += 2;
		} else if (*g == '*') {
			zsp_buf_puts(b, "[^/]*");
			g++;
		} else if (*g == '?') {
			zsp_buf_puts(b, "[^/]");
			g++;
		} else if (*g == '[') {
			g = put_class(b, g + 1);
		} else {
			put_regex_char(b, *g++);
		}
	}
}

/* The regex of a concrete glob: `^...` then `(/.*)?$` (below included) or `$` (matches only).
 * below_root, when not NULL, restricts a pattern that starts with `**` (any depth) to what lies strictly below it. */
static char *glob_regex(ctx *c, const char *g, const char *below_root, bool below)
{
	zsp_buf b = { 0 };
	zsp_buf_puts(&b, "^");
	bool first = true;
	if (strncmp(g, "**/", 3) == 0) {
		if (below_root && strcmp(below_root, "/") != 0)
			for (const char *r = below_root; *r; r++)
				put_regex_char(&b, *r);
		zsp_buf_puts(&b, below_root ? "/(.*/)?" : "(.*/)?");
		g += 3;
	} else if (*g == '/') {
		g++;
		first = false;
	}
	while (*g) {
		const char *e = strchr(g, '/');
		size_t n = e ? (size_t)(e - g) : strlen(g);
		if (n == 2 && g[0] == '*' && g[1] == '*') {
			zsp_buf_puts(&b, e ? "(/.*)?" : "");
			if (!e)
				below = true; /* a trailing `**` already covers what is below */
		} else {
			if (!first)
				zsp_buf_puts(&b, "/");
			put_glob_text(&b, g, n);
		}
		first = false;
		g += n;
		if (*g == '/')
			g++;
	}
	zsp_buf_puts(&b, below ? "(/.*)?$" : "$");
	char *s = b.oom ? NULL : zsp_arena_strdup(c->a, b.data ? b.data : "^/$");
	zsp_buf_free(&b);
	if (!s)
		c->oom = true;
	return s;
}

/* The directories of a glob before its first component with a glob character ("/" at least);
 * NULL for a `**` pattern. */
static char *glob_lit_prefix(ctx *c, const char *g)
{
	if (*g != '/')
		return NULL;
	size_t cut = 1;
	for (size_t i = 1; g[i];) {
		size_t j = i;
		bool meta = false;
		while (g[j] && g[j] != '/') {
			if (strchr("*?[\\", g[j]))
				meta = true;
			j++;
		}
		if (meta || !g[j])
			break;
		cut = j;
		i = j + 1;
	}
	char *s = zsp_arena_strndup(c->a, g, cut);
	if (!s)
		c->oom = true;
	return s;
}

/* The regex of glob item G restricted to its matches strictly below the concrete directory x,
 * or NULL when that cannot be said (or no match can lie there). */
static const char *glob_regex_below(ctx *c, const item *g, const char *x)
{
	if (!g->regex || g->approx || strstr(x, "${"))
		return NULL;
	if (strcmp(x, "/") == 0)
		return g->regex;
	if (strncmp(g->path, "**/", 3) == 0)
		return glob_regex(c, g->path, x, true);
	char *lit = glob_lit_prefix(c, g->path);
	if (lit && zsp_path_is_prefix(x, lit))
		return g->regex;
	return NULL;
}

/* ---- collecting the rules ---------------------------------------------------------------- */

static int path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
		if (x != y) {
			if (!x || !y)
				return x ? 1 : -1;
			if (x == '/' || y == '/')
				return x == '/' ? -1 : 1;
			return x < y ? -1 : 1;
		}
		if (!x)
			return 0;
	}
}

static int item_cmp(const void *pa, const void *pb)
{
	const item *a = pa, *b = pb;
	bool sa = a->path[0] != '/', sb = b->path[0] != '/';
	if (sa != sb)
		return sa ? 1 : -1;
	int k = path_cmp(a->path, b->path);
	if (k)
		return k;
	if (a->strength != b->strength)
		return a->strength > b->strength ? -1 : 1; /* the stronger first: it stays */
	return a->r < b->r ? -1 : a->r > b->r;
}

static const char *param_name_in(ctx *c, const char *path)
{
	const char *q = strstr(path, "${");
	const char *e = q ? strchr(q, '}') : NULL;
	return e ? zsp_arena_strndup(c->a, q + 2, (size_t)(e - q - 2)) : "?";
}

static void collect(ctx *c)
{
	const zsp_ir_policy *p = c->p;
	c->lit_cap = p->nfs + 1;
	c->lit = zsp_arena_calloc(c->a, c->lit_cap, sizeof(item));
	c->glob = zsp_arena_calloc(c->a, p->nfs + 1, sizeof(item));
	if (!c->lit || !c->glob) {
		c->oom = true;
		return;
	}
	for (size_t i = 0; i < p->nfs && !c->oom; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (r->cache)
			continue;   /* no directory of its own to give (check_caches): the host's stays as the
				     * other rules have it, never writable for the cache's sake */
		item it = { .r = r, .glob = r->glob };
		it.strength = r->access == ZSP_ACCESS_DENY ? S_DENY :
			      r->protect ? S_PROTECT :
			      r->access == ZSP_ACCESS_WRITE ? S_WRITE : S_READ;
		it.path = canonical_in(c, r->path);
		if (!it.path)
			return;
		it.symbolic = strstr(it.path, "${") != NULL;
		if (!r->glob) {
			if (!(it.path = unescape(c, it.path)))
				return;
			it.depth = zsp_path_depth(it.path);
			c->lit[c->nlit++] = it;
			continue;
		}
		if (!it.symbolic) {
			it.regex = glob_regex(c, it.path, NULL, true);
			it.match_regex = glob_regex(c, it.path, NULL, false);
		} else if (it.strength == S_DENY || it.strength == S_PROTECT) {
			/* restrictive: widen it over the parameter (any prefix) rather than drop it */
			const char *tail = strrchr(it.path, '}') + 1;
			while (strncmp(tail, "/**/", 4) == 0)
				tail += 3;
			char *wide = zsp_arena_printf(c->a, "**%s", tail);
			if (!wide) {
				c->oom = true;
				return;
			}
			it.regex = glob_regex(c, *tail == '/' ? wide : "**/*", NULL, true);
			it.match_regex = glob_regex(c, *tail == '/' ? wide : "**/*", NULL, false);
			it.approx = true;
			zsp_diag_warning(c->d, ZSP_W_UNENFORCED, r->loc,
					 "on macOS, a glob below an unresolved parameter cannot be written as a regex: `%s` is enforced wherever its part after ${%s} matches, not only below ${%s} (give it with -D)",
					 r->path, param_name_in(c, r->path), param_name_in(c, r->path));
		} else {
			zsp_diag_warning(c->d, ZSP_W_UNENFORCED, r->loc,
					 "on macOS, a glob below an unresolved parameter cannot be written as a regex: `%s` grants nothing (give ${%s} with -D)",
					 r->path, param_name_in(c, r->path));
		}
		c->glob[c->nglob++] = it;
	}
}

static void sort_literals(ctx *c)
{
	if (c->oom)
		return;
	qsort(c->lit, c->nlit, sizeof(item), item_cmp);
	/* canonicalization can make two rules name one path: the stronger stays */
	size_t k = 0;
	for (size_t i = 0; i < c->nlit; i++)
		if (k == 0 || strcmp(c->lit[k - 1].path, c->lit[i].path) != 0)
			c->lit[k++] = c->lit[i];
	c->nlit = k;
	for (size_t i = 0; i < c->nlit; i++)
		c->lit[i].depth = zsp_path_depth(c->lit[i].path);
}

/* ---- .git files: worktrees and submodules -------------------------------------------------- */

/* A `.git` file ("gitdir: PATH") sends git to a repository elsewhere, with its hooks and config
 * there (and, for a worktree, in the common directory its `commondir` names). The protected
 * `.git/...` names hold there too: the pointers are read here, on the machine that emits the
 * profile, as the Linux backend reads them at launch. */

/* The strength of what decides at concrete path among the literal rules so far (the nearest at
 * or above it) and the non-write globs matching it or a directory above it; 0: nothing does. */
static int strength_at(ctx *c, const char *path)
{
	int lit = 0;
	size_t best = 0;
	for (size_t i = 0; i < c->nlit; i++) {
		const item *it = &c->lit[i];
		if (strcmp(it->path, path) != 0 && !known_ancestor(it->path, path))
			continue;
		size_t d = zsp_path_depth(it->path);
		if (!lit || d > best || (d == best && it->strength > lit)) {
			best = d;
			lit = it->strength;
		}
	}
	int glob = 0;
	char *pre = zsp_arena_strdup(c->a, path);
	if (!pre) {
		c->oom = true;
		return S_DENY;
	}
	for (size_t g = 0; g < c->nglob; g++) {
		const item *it = &c->glob[g];
		if (it->strength == S_WRITE || !it->regex || it->approx || it->strength <= glob)
			continue;
		for (size_t end = 1, len = strlen(path); end <= len; end++) {
			if (end != len && path[end] != '/')
				continue;
			memcpy(pre, path, end);
			pre[end] = '\0';
			if (zsp_glob_match(it->path, pre)) {
				glob = it->strength;
				break;
			}
		}
	}
	return glob > lit ? glob : lit;
}

/* Protects path as rule r would, where the policy lets the sandbox write it: anywhere else a
 * protection changes nothing, and inside a deny it would cut the deny. */
static void protect_found(ctx *c, const zsp_ir_fs_rule *r, const char *path, const char *via)
{
	if (c->oom || strength_at(c, path) != S_WRITE)
		return;
	if (c->nlit == c->lit_cap) {
		item *grown = zsp_arena_calloc(c->a, c->lit_cap * 2, sizeof(item));
		if (!grown) {
			c->oom = true;
			return;
		}
		memcpy(grown, c->lit, c->nlit * sizeof(item));
		c->lit = grown;
		c->lit_cap *= 2;
	}
	c->lit[c->nlit++] = (item){ .r = r, .path = path, .strength = S_PROTECT, .via = via };
}

/* One line of a small regular file, its trailing white space removed, read without following
 * a symlink or waiting on a FIFO. NULL with *why set when it is no such file; *missing when it
 * does not exist. */
static char *read_pointer(ctx *c, const char *path, const char **why, bool *missing)
{
	*missing = false;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*missing = errno == ENOENT;
		*why = errno == ELOOP ? "it is a symbolic link" : strerror(errno);
		return NULL;
	}
	char buf[POINTER_MAX + 1];
	struct stat st;
	ssize_t n = 0;
	*why = NULL;
	if (fstat(fd, &st) != 0)
		*why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		*why = "it is not a regular file";
	else if (st.st_size > POINTER_MAX)
		*why = "it is too long for a path";
	else {
		while ((n = read(fd, buf, sizeof(buf))) < 0 && errno == EINTR)
			;
		if (n < 0)
			*why = strerror(errno);
		else if (n > POINTER_MAX)
			*why = "it is too long for a path";
	}
	close(fd);
	if (*why)
		return NULL;
	while (n > 0 && strchr(" \t\r\n", buf[n - 1]))
		n--;
	for (ssize_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 && buf[i] != '\t') {
			*why = "it holds more than one line or a control character";
			return NULL;
		}
	char *s = zsp_arena_strndup(c->a, buf, (size_t)n);
	if (!s)
		c->oom = true;
	return s;
}

/* A path a pointer file names: relative to dir unless absolute. As the profile spells it
 * (`..` removed lexically, canonical), and as it resolves on this machine now (NULL: it does not
 * exist here). The path to open, *fs unless NULL, keeps the `..`: git reads it so. */
static const char *pointed(ctx *c, const char *dir, const char *target, const char **fs,
			   const char **resolved)
{
	char *raw = target[0] == '/' ? zsp_arena_strdup(c->a, target)
				     : zsp_arena_printf(c->a, "%s/%s", strcmp(dir, "/") ? dir : "", target);
	char *lex = raw ? zsp_arena_calloc(c->a, strlen(raw) + 2, 1) : NULL;
	if (fs)
		*fs = raw;
	*resolved = NULL;
	if (!lex || !zsp_path_lexical(raw, lex, strlen(raw) + 2)) {
		c->oom = true;
		return NULL;
	}
	char *real = realpath(raw, NULL);
	if (real) {
		*resolved = canonical_in(c, real);
		free(real);
	}
	return canonical_in(c, lex);
}

/* A literal protected name in .git (`.git` itself or below it), under a concrete root. */
static bool git_name(const zsp_ir_fs_rule *r)
{
	return !r->glob && r->protect && r->root && is_concrete(r->root) &&
	       strncmp(r->protect, ".git", 4) == 0 && (!r->protect[4] || r->protect[4] == '/');
}

/* Seatbelt matches the path a symlink leads to: each name is protected as the pointer spells it
 * and as it resolves now. The spelled path's move-blocking keeps a symlink on the way from being
 * removed or renamed; one the sandbox can retarget leaves the resolved spelling behind. */
static void protect_names(ctx *c, const zsp_ir_fs_rule *first, const char *spelled,
			  const char *resolved, const char *pointer, const char *kind)
{
	for (int twice = 0; twice < 2; twice++) {
		const char *dir = twice ? resolved : spelled;
		if (!dir || (twice && strcmp(resolved, spelled) == 0))
			continue;
		const char *how = zsp_arena_printf(c->a, "through %s (%s: %s%s)", pointer, kind, dir,
						   twice ? ", as it resolves here" : "");
		for (size_t i = 0; i < c->p->nfs && how && !c->oom; i++) {
			const zsp_ir_fs_rule *r = &c->p->fs[i];
			if (!git_name(r) || strcmp(r->root, first->root) != 0)
				continue;
			const char *rest = unescape(c, r->protect + 4);
			const char *at = strcmp(dir, "/") == 0 && rest && *rest ? "" : dir;
			char *path = rest ? zsp_arena_printf(c->a, "%s%s", at, rest) : NULL;
			if (!path)
				c->oom = true;
			else
				protect_found(c, r, path, how);
		}
		if (!how)
			c->oom = true;
	}
}

/* Is a pointed-to directory denied to the sandbox, as spelled or resolved? Then git cannot use
 * it and there is nothing to protect. */
static bool hidden(ctx *c, const char *spelled, const char *resolved)
{
	return strength_at(c, spelled) == S_DENY || (resolved && strength_at(c, resolved) == S_DENY);
}

/* Is a pointed-to path one the profile can spell? */
static bool spellable(const char *s)
{
	return *s && !strstr(s, "${");
}

/* A pointer that cannot be followed: file stays read-only, and the names do not hold where git
 * may go through it (what, for people). */
static void pointer_warning(ctx *c, const zsp_ir_fs_rule *r, const char *file, const char *why,
			    const char *what)
{
	zsp_diag_warning(c->d, ZSP_W_UNENFORCED, r->loc,
			 "on macOS, `%s` is not followed (%s): the protected .git names do not hold in %s (the file itself stays read-only)",
			 file, why, what);
}

/* The .git file under the root of protect rule first (the first .git one there), if any. */
static void follow_gitfile(ctx *c, const zsp_ir_fs_rule *first)
{
	const char *root = unescape(c, first->root);
	char *dotgit = root ? zsp_arena_printf(c->a, "%s/.git", strcmp(root, "/") ? root : "") : NULL;
	char *spelled = dotgit ? canonical_in(c, dotgit) : NULL;
	if (!spelled) {
		c->oom = true;
		return;
	}
	struct stat st = { 0 };
	if (lstat(dotgit, &st) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return;
	} else if (S_ISDIR(st.st_mode)) {
		return; /* a repository here: the names hold as they are */
	}
	/* the pointer itself: rewritten, it would send git to hooks of the sandbox's making */
	protect_found(c, first, spelled, "the .git file, a pointer to the repository");
	if (S_ISLNK(st.st_mode)) {
		zsp_diag_warning(c->d, ZSP_W_UNENFORCED, first->loc,
				 "on macOS, `%s` is a symbolic link, not followed: Seatbelt sees the paths it leads to, where the protected .git names do not hold (the link itself stays read-only)",
				 spelled);
		return;
	}
	const char *why = NULL;
	bool missing;
	char *line = read_pointer(c, dotgit, &why, &missing);
	if (line && strncmp(line, "gitdir:", 7) != 0)
		why = "no `gitdir: PATH` line";
	if (!line || why) {
		if (!c->oom)
			pointer_warning(c, first, spelled, why, "the repository it points to");
		return;
	}
	const char *dir = line + 7 + strspn(line + 7, " \t");
	if (!spellable(dir)) {
		pointer_warning(c, first, spelled, "its path is empty or holds ${",
				"the repository it points to");
		return;
	}
	const char *fs, *resolved;
	const char *gitdir = pointed(c, root, dir, &fs, &resolved);
	if (!gitdir || hidden(c, gitdir, resolved))
		return;
	if (!resolved)
		zsp_diag_warning(c->d, ZSP_W_UNENFORCED, first->loc,
				 "on macOS, `%s` points to %s, which does not exist here: protected as spelled, a symbolic link made on the way would lead git elsewhere",
				 spelled, gitdir);
	protect_names(c, first, gitdir, resolved, spelled, "gitdir");
	/* a worktree's administrative files: commondir names where hooks and config live, gitdir
	 * the worktree (git worktree prune and repair follow it); commondir is protected wherever
	 * a repository is followed, since git reads one that appears */
	static const char *const admin[] = { "commondir", "gitdir" };
	for (int twice = 0; twice < 2; twice++) {
		const char *d = twice ? resolved : gitdir;
		if (!d || (twice && strcmp(d, gitdir) == 0))
			continue;
		const char *base = strrchr(d, '/');
		bool worktree = base - d >= 10 && strncmp(base - 10, "/worktrees", 10) == 0;
		for (size_t i = 0; i < (worktree ? 2u : 1u); i++) {
			char *path = zsp_arena_printf(c->a, "%s/%s", d, admin[i]);
			char *what = zsp_arena_printf(c->a, "the repository's %s file, a pointer (gitdir: %s)",
						      admin[i], gitdir);
			if (!path || !what)
				c->oom = true;
			else
				protect_found(c, first, path, what);
		}
	}
	char *commondir = zsp_arena_printf(c->a, "%s/commondir", fs);
	char *cspelled = zsp_arena_printf(c->a, "%s/commondir", gitdir);
	char *cdir = commondir && cspelled ? read_pointer(c, commondir, &why, &missing) : NULL;
	if (!cdir) {
		if (!missing && !c->oom)
			pointer_warning(c, first, cspelled, why, "the common directory it names");
		return;
	}
	if (!spellable(cdir)) {
		pointer_warning(c, first, cspelled, "its path is empty or holds ${",
				"the common directory it names");
		return;
	}
	const char *cresolved;
	const char *common = pointed(c, fs, cdir, NULL, &cresolved);
	if (!common || hidden(c, common, cresolved))
		return;
	protect_names(c, first, common, cresolved, cspelled, "common directory");
}

/* Each concrete writable root with a protected .git name, once. */
static void follow_gitfiles(ctx *c)
{
	for (size_t i = 0; i < c->p->nfs && !c->oom; i++) {
		const zsp_ir_fs_rule *r = &c->p->fs[i];
		if (!git_name(r))
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = git_name(&c->p->fs[j]) && strcmp(c->p->fs[j].root, r->root) == 0;
		if (!seen)
			follow_gitfile(c, r);
	}
}

/* ---- emitting ----------------------------------------------------------------------------- */

static void put_comment(ctx *c, const item *it, const char *what)
{
	const zsp_ir_fs_rule *r = it->r;
	char where[512];
	const char *loc = zsp_loc_string(where, sizeof(where), r->loc);
	const char *kw = r->protect ? "protect" : zsp_access_name(r->access);
	zsp_buf_puts(&c->out, "; ");
	zsp_buf_puts(&c->out, loc ? loc : "(built-in)");
	zsp_buf_printf(&c->out, "  %s ", kw);
	if (r->loc.src && r->loc.end > r->loc.begin && r->loc.end <= r->loc.src->len) {
		size_t n = r->loc.end - r->loc.begin;
		zsp_buf_add(&c->out, r->loc.src->text + r->loc.begin, n > COMMENT_MAX ? COMMENT_MAX : n);
		if (n > COMMENT_MAX)
			zsp_buf_puts(&c->out, "...");
	} else {
		zsp_buf_printf(&c->out, "\"%s\"", r->protect ? r->protect : r->path);
	}
	if (r->protect && r->root)
		zsp_buf_printf(&c->out, " under %s", r->root);
	if (r->policy && strcmp(r->policy, c->p->name) != 0)
		zsp_buf_printf(&c->out, " (policy \"%s\")", r->policy);
	if (what)
		zsp_buf_printf(&c->out, ": %s", what);
	zsp_buf_puts(&c->out, "\n");
}

/* The filter of a literal path: (subpath P), or for a protected name the literal, the subpath
 * and, when concrete, the regex, so a name that does not exist yet is covered however the
 * evaluator reads the path. */
static void put_literal_filters(ctx *c, zsp_buf *b, const item *it, const char *sep)
{
	if (it->strength == S_PROTECT) {
		zsp_buf_puts(b, "(literal ");
		put_path(c, b, it->path);
		zsp_buf_puts(b, ")");
		zsp_buf_puts(b, sep);
	}
	zsp_buf_puts(b, "(subpath ");
	put_path(c, b, it->path);
	zsp_buf_puts(b, ")");
	if (it->strength == S_PROTECT && is_concrete(it->path)) {
		zsp_buf_puts(b, sep);
		zsp_buf_puts(b, "(regex #\"");
		zsp_buf_puts(b, "^");
		for (const char *s = it->path; *s; s++)
			put_regex_char(b, *s);
		zsp_buf_puts(b, "(/.*)?$\")");
	}
}

typedef bool (*cut_pred)(const item *outer, const item *inner);

static bool cut_for_write(const item *o, const item *i)
{
	(void)o;
	return i->strength == S_READ; /* protected names get explicit denies after the allows */
}

static bool cut_for_deny(const item *o, const item *i)
{
	(void)o;
	return i->strength != S_DENY;
}

static bool cut_for_protect(const item *o, const item *i)
{
	(void)o;
	return i->strength == S_WRITE;
}

/* The region of literal item k: its subpath minus the nearest more specific literal rules that
 * pred selects, and minus the globs (gpred) that match below it. */
static void put_region(ctx *c, size_t k, cut_pred pred, bool (*gpred)(const item *), const char *indent)
{
	const item *it = &c->lit[k];
	zsp_buf cuts = { 0 };
	const char *stack[64] = { 0 };
	size_t depth = 0, ncuts = 0;
	for (size_t j = 0; j < c->nlit; j++) {
		const item *in = &c->lit[j];
		if (j == k || !known_ancestor(it->path, in->path) || !pred(it, in))
			continue;
		while (depth && !known_ancestor(stack[depth - 1], in->path))
			depth--;
		if (depth)
			continue; /* a cut above it already takes it out */
		char sep[80];
		snprintf(sep, sizeof(sep), ")\n%s\t(require-not ", indent);
		zsp_buf_printf(&cuts, "\n%s\t(require-not ", indent);
		put_literal_filters(c, &cuts, in, sep);
		zsp_buf_puts(&cuts, ")");
		ncuts++;
		if (depth < sizeof(stack) / sizeof(stack[0]))
			stack[depth++] = in->path;
	}
	for (size_t g = 0; gpred && g < c->nglob; g++) {
		if (!gpred(&c->glob[g]))
			continue;
		const char *re = glob_regex_below(c, &c->glob[g], it->path);
		if (!re)
			continue;
		zsp_buf_printf(&cuts, "\n%s\t(require-not (regex #\"%s\"))", indent, re);
		ncuts++;
	}
	if (cuts.oom)
		c->oom = true;
	if (!ncuts) {
		put_literal_filters(c, &c->out, it, " ");
	} else {
		zsp_buf_puts(&c->out, "(require-all ");
		if (it->strength == S_PROTECT) {
			zsp_buf_puts(&c->out, "(require-any ");
			put_literal_filters(c, &c->out, it, " ");
			zsp_buf_puts(&c->out, ")");
		} else {
			put_literal_filters(c, &c->out, it, " ");
		}
		zsp_buf_add(&c->out, cuts.data, cuts.len);
		zsp_buf_puts(&c->out, ")");
	}
	zsp_buf_free(&cuts);
}

static bool glob_not_deny(const item *g)
{
	return g->strength != S_DENY;
}

static bool glob_is_write(const item *g)
{
	return g->strength == S_WRITE;
}

/* Does glob g decide inside literal l where the oracle lets l decide? (l lies in or at a match
 * of g, deeper than it or as deep and stronger.) */
static bool literal_beats_glob(const item *g, const item *l)
{
	if (g->strength == l->strength || !g->regex || g->approx)
		return false;
	const char *path = l->path;
	size_t len = strlen(path), depth = 0;
	char scratch[4096];
	if (len >= sizeof(scratch))
		return false;
	long best = -1;
	for (size_t end = 1; end <= len; end++) {
		if (end != len && path[end] != '/')
			continue;
		depth++;
		memcpy(scratch, path, end);
		scratch[end] = '\0';
		if (zsp_glob_match(g->path, scratch))
			best = (long)depth;
	}
	return best >= 0 && ((long)l->depth > best || l->strength > g->strength);
}

/* Components of a glob without `**` (its matches all lie at that depth), else -1. */
static long glob_fixed_depth(const item *g)
{
	if (strncmp(g->path, "**/", 3) == 0 || strstr(g->path, "/**"))
		return -1;
	return (long)zsp_path_depth(g->path);
}

/* Is glob h more specific than the restrictive glob g wherever both match, and of another
 * effect? Known only for globs of fixed depth: the deeper wins, a tie goes to the stronger. */
static bool glob_beats_glob(ctx *c, const item *g, const item *h)
{
	if (h == g || !h->regex || h->approx || g->approx)
		return false;
	bool relevant = g->strength == S_DENY ? h->strength != S_DENY : h->strength == S_WRITE;
	long dg = glob_fixed_depth(g), dh = glob_fixed_depth(h);
	if (!relevant || dg < 0 || dh < 0 || !(dh > dg || (dh == dg && h->strength > g->strength)))
		return false;
	char *lg = glob_lit_prefix(c, g->path), *lh = glob_lit_prefix(c, h->path);
	return lg && lh && (zsp_path_is_prefix(lg, lh) || zsp_path_is_prefix(lh, lg)); /* may overlap */
}

/* A glob's rule: its regex minus the literal rules that are more specific inside its matches and,
 * for a restrictive one, minus the globs that beat it. */
static void put_glob_region(ctx *c, const item *g, const char *indent)
{
	bool restrictive = g->strength != S_WRITE;
	size_t ncuts = 0;
	for (size_t j = 0; j < c->nlit; j++)
		if (literal_beats_glob(g, &c->lit[j]))
			ncuts++;
	for (size_t j = 0; restrictive && j < c->nglob; j++)
		if (glob_beats_glob(c, g, &c->glob[j]))
			ncuts++;
	if (!ncuts) {
		zsp_buf_printf(&c->out, "(regex #\"%s\")", g->regex);
		return;
	}
	zsp_buf_printf(&c->out, "(require-all (regex #\"%s\")", g->regex);
	for (size_t j = 0; j < c->nlit; j++) {
		if (!literal_beats_glob(g, &c->lit[j]))
			continue;
		char sep[80];
		snprintf(sep, sizeof(sep), ")\n%s\t(require-not ", indent);
		zsp_buf_printf(&c->out, "\n%s\t(require-not ", indent);
		put_literal_filters(c, &c->out, &c->lit[j], sep);
		zsp_buf_puts(&c->out, ")");
	}
	for (size_t j = 0; restrictive && j < c->nglob; j++)
		if (glob_beats_glob(c, g, &c->glob[j]))
			zsp_buf_printf(&c->out, "\n%s\t(require-not (regex #\"%s\"))", indent, c->glob[j].regex);
	zsp_buf_puts(&c->out, ")");
}

/* Nearest literal rule above item k that the sandbox can know about, or NULL. */
static const item *nearest_ancestor(const ctx *c, size_t k)
{
	for (size_t j = k; j-- > 0;)
		if (known_ancestor(c->lit[j].path, c->lit[k].path))
			return &c->lit[j];
	return NULL;
}

static void emit_reads(ctx *c)
{
	zsp_buf_puts(&c->out, "\n;; Reads: `read` and `write` rules (a readable file can also be run)\n");
	bool any = false;
	for (size_t k = 0; k < c->nlit; k++) {
		const item *it = &c->lit[k];
		if (it->strength == S_DENY)
			continue;
		const item *up = nearest_ancestor(c, k);
		if (up && up->strength != S_DENY)
			continue; /* readable through the rule above, which no deny between cuts */
		put_comment(c, it, NULL);
		zsp_buf_puts(&c->out, "(allow file-read* process-exec ");
		put_literal_filters(c, &c->out, it, " ");
		zsp_buf_puts(&c->out, ")\n");
		any = true;
	}
	for (size_t g = 0; g < c->nglob; g++) {
		const item *it = &c->glob[g];
		if (it->strength == S_DENY || !it->regex || it->strength == S_PROTECT)
			continue;
		put_comment(c, it, NULL);
		zsp_buf_puts(&c->out, "(allow file-read* process-exec ");
		put_glob_region(c, it, "");
		zsp_buf_puts(&c->out, ")\n");
		any = true;
	}
	if (!any)
		zsp_buf_puts(&c->out, "; (none: nothing is readable but what the base allows)\n");
}

static void emit_writes(ctx *c)
{
	zsp_buf_puts(&c->out, "\n;; Writes: writable roots, minus the read-only rules inside them (protected names:\n;; explicit denies below)\n");
	bool any = false;
	for (size_t k = 0; k < c->nlit; k++) {
		if (c->lit[k].strength != S_WRITE)
			continue;
		put_comment(c, &c->lit[k], NULL);
		zsp_buf_puts(&c->out, "(allow file-write* ");
		put_region(c, k, cut_for_write, NULL, "");
		zsp_buf_puts(&c->out, ")\n");
		any = true;
	}
	for (size_t g = 0; g < c->nglob; g++) {
		const item *it = &c->glob[g];
		if (it->strength != S_WRITE || !it->regex)
			continue;
		put_comment(c, it, NULL);
		zsp_buf_puts(&c->out, "(allow file-write* ");
		put_glob_region(c, it, "");
		zsp_buf_puts(&c->out, ")\n");
		any = true;
	}
	if (!any)
		zsp_buf_puts(&c->out, "; (none: nothing is writable but what the base allows)\n");
}

static bool unlinked(ctx *c, const char *path)
{
	for (size_t i = 0; i < c->nunlinked; i++)
		if (strcmp(c->unlinked[i], path) == 0)
			return true;
	if (!zsp_array_reserve(&c->unlinked, &c->unlinked_cap, c->nunlinked + 1, sizeof(*c->unlinked))) {
		c->oom = true;
		return true;
	}
	c->unlinked[c->nunlinked++] = path;
	return false;
}

/* Move-blocking: the path and each of its ancestors cannot be unlinked or renamed, or the agent
 * renames a parent away and recreates the tree without the rule. A specific operation: a later
 * (allow file-write* ...) does not lift it. */
static void emit_unlink(ctx *c, const item *it)
{
	zsp_buf f = { 0 };
	const char *path = it->path;
	if (it->glob) {
		char *lit = glob_lit_prefix(c, path);
		path = lit ? lit : "";
	}
	for (size_t end = 1, len = strlen(path); end <= len; end++) {
		if (end != len && path[end] != '/')
			continue;
		char *pre = zsp_arena_strndup(c->a, path, end);
		if (!pre) {
			c->oom = true;
			break;
		}
		if (strcmp(pre, "/") == 0 || unlinked(c, pre))
			continue;
		zsp_buf_puts(&f, " (literal ");
		put_path(c, &f, pre);
		zsp_buf_puts(&f, ")");
	}
	if (it->glob && it->match_regex)
		zsp_buf_printf(&f, " (regex #\"%s\")", it->match_regex);
	if (f.oom)
		c->oom = true;
	if (f.len)
		zsp_buf_printf(&c->out, "(deny file-write-unlink%s)\n", f.data);
	zsp_buf_free(&f);
}

static void emit_restrictions(ctx *c)
{
	zsp_buf_puts(&c->out, "\n;; Hidden and read-only paths: after the allows, so they win where they apply;\n"
		     ";; each is cut by the more specific rules inside it, then move-blocked\n");
	bool any = false;
	for (size_t k = 0; k < c->nlit; k++) {
		const item *it = &c->lit[k];
		if (it->strength == S_DENY) {
			put_comment(c, it, NULL);
			zsp_buf_puts(&c->out, "(deny file-read* file-write* process-exec ");
			put_region(c, k, cut_for_deny, glob_not_deny, "");
		} else if (it->strength == S_PROTECT) {
			put_comment(c, it, it->via);
			zsp_buf_puts(&c->out, "(deny file-write* ");
			put_region(c, k, cut_for_protect, glob_is_write, "");
		} else {
			continue;
		}
		zsp_buf_puts(&c->out, ")\n");
		emit_unlink(c, it);
		any = true;
	}
	/* glob rules are taken as more specific than the literal ones (doc/sbpl.md): they come last */
	for (size_t g = 0; g < c->nglob; g++) {
		const item *it = &c->glob[g];
		if (!it->regex || it->strength == S_WRITE)
			continue;
		put_comment(c, it, it->strength == S_READ ? "read-only" : NULL);
		zsp_buf_puts(&c->out, it->strength == S_DENY ? "(deny file-read* file-write* process-exec " : "(deny file-write* ");
		put_glob_region(c, it, "");
		zsp_buf_puts(&c->out, ")\n");
		if (it->strength != S_READ)
			emit_unlink(c, it);
		any = true;
	}
	if (!any)
		zsp_buf_puts(&c->out, "; (none)\n");
}

/* ---- base, network, what cannot be enforced --------------------------------------------- */

static const char *const base_sysctls[] = {
	"hw.activecpu", "hw.logicalcpu", "hw.memsize", "hw.model", "hw.ncpu", "hw.pagesize",
	"hw.physicalcpu", "kern.argmax", "kern.hostname", "kern.maxproc", "kern.osrelease",
	"kern.osversion", "kern.version", "machdep.cpu.brand_string", "vm.loadavg",
};
static const char *const base_sysctl_prefixes[] = {
	"hw.optional.", "hw.perflevel", "kern.proc.pid.", "machdep.cpu.",
};
static const char *const base_services[] = {
	"com.apple.PowerManagement.control", "com.apple.cfprefsd.agent", "com.apple.cfprefsd.daemon",
	"com.apple.sysmond", "com.apple.system.opendirectoryd.libinfo",
};

/* The replica of a pty the sandbox opened (it holds the extension Seatbelt issues at the open
 * of /dev/ptmx), or, with require-not, any other /dev/ttysN: another session's terminal. */
#define TTYS_OWN(verb) "(" verb " file-read* file-write* (require-all (regex #\"^/dev/ttys[0-9]+$\") " \
	"(extension \"com.apple.sandbox.pty\")))"
#define TTYS_OTHERS "(deny file-read* file-write* (require-all (regex #\"^/dev/ttys[0-9]+$\") " \
	"(require-not (extension \"com.apple.sandbox.pty\"))))"

/* After every file rule, so that no `read "/"` or `write "/dev"` lets the command open the
 * terminal of another session (its keystrokes, its screen). */
static void emit_terminals(ctx *c)
{
	zsp_buf_puts(&c->out, "; another session's terminal, whatever the rules above read or write\n"
		     TTYS_OTHERS "\n");
}

static void emit_base(ctx *c)
{
	zsp_buf *b = &c->out;
	zsp_buf_puts(b, "\n;; Base: what ordinary tools need to run (doc/sbpl.md); programs run only from\n"
	       ";; readable paths (process-exec goes with file-read* below)\n");
	zsp_buf_puts(b, "(allow process-fork)\n");
	zsp_buf_puts(b, "(allow signal (target same-sandbox))\n");
	zsp_buf_puts(b, "(allow process-info* (target same-sandbox))\n");
	zsp_buf_puts(b, "; sysctls read by libc, Node's os.cpus(), ps, uname\n(allow sysctl-read");
	for (size_t i = 0; i < sizeof(base_sysctls) / sizeof(base_sysctls[0]); i++)
		zsp_buf_printf(b, "\n\t(sysctl-name \"%s\")", base_sysctls[i]);
	for (size_t i = 0; i < sizeof(base_sysctl_prefixes) / sizeof(base_sysctl_prefixes[0]); i++)
		zsp_buf_printf(b, "\n\t(sysctl-name-prefix \"%s\")", base_sysctl_prefixes[i]);
	zsp_buf_puts(b, ")\n");
	zsp_buf_puts(b, "; user and group lookups, preferences, power assertions, ps\n(allow mach-lookup");
	for (size_t i = 0; i < sizeof(base_services) / sizeof(base_services[0]); i++)
		zsp_buf_printf(b, "\n\t(global-name \"%s\")", base_services[i]);
	zsp_buf_puts(b, ")\n");
	/* the replicas of ptys the sandbox opened carry the extension Seatbelt issues at the open
	 * of /dev/ptmx; every other /dev/ttysN is another session's terminal (doc/sbpl.md) */
	zsp_buf_puts(b, "; terminals: a pty the sandbox opens itself (another session's /dev/ttysN: at the end)\n");
	zsp_buf_puts(b, "(allow pseudo-tty)\n");
	zsp_buf_puts(b, "(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\"))\n");
	zsp_buf_puts(b, TTYS_OWN("allow") "\n");
	zsp_buf_puts(b, "; the terminal the command was started on: its modes (stty), through the descriptor it holds\n");
	zsp_buf_puts(b, "(allow file-ioctl (regex #\"^/dev/ttys[0-9]+$\"))\n");
	zsp_buf_puts(b, "(allow file-read* file-write-data (literal \"/dev/null\"))\n");
	zsp_buf_puts(b, "(allow ipc-posix-sem)\n");
	zsp_buf_puts(b, "(allow user-preference-read)\n");
}

/* Seatbelt's (remote ip "HOST:PORT") takes `*` or `localhost` as the host. */
static const char *seatbelt_host(const char *h)
{
	if (strcmp(h, "*") == 0)
		return "*";
	if (strcmp(h, "localhost") == 0 || strcmp(h, "127.0.0.1") == 0 || strcmp(h, "[::1]") == 0)
		return "localhost";
	return NULL;
}

static const zsp_ir_param *find_param(const zsp_ir_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nparams; i++)
		if (strcmp(p->params[i].name, name) == 0)
			return &p->params[i];
	return NULL;
}

static void put_net_comment(ctx *c, zsp_loc loc, const char *text)
{
	char where[512];
	const char *l = zsp_loc_string(where, sizeof(where), loc);
	zsp_buf_printf(&c->out, "; %s  %s\n", l ? l : "(built-in)", text);
}

static void emit_network(ctx *c)
{
	const zsp_ir_policy *p = c->p;
	zsp_buf *b = &c->out;
	zsp_buf_printf(b, "\n;; Network: mode %s\n", zsp_net_mode_name(p->net_mode));
	if (p->net_mode == ZSP_NET_FULL) {
		zsp_buf_puts(b, "(allow network-outbound)\n(allow network-inbound)\n(allow network-bind)\n(allow system-socket)\n");
		for (size_t i = 0; i < p->nhosts; i++) {
			const zsp_ir_host *h = &p->hosts[i];
			const char *sh = seatbelt_host(h->host);
			if (h->decision != ZSP_DENY)
				continue;
			if (!sh) {
				zsp_diag_warning(c->d, ZSP_W_UNENFORCED, h->loc,
						 "on macOS, mode full cannot refuse `%s`: Seatbelt filters connections by address (`*` or `localhost`), not by host name",
						 h->host);
				continue;
			}
			char text[300], port[16];
			snprintf(port, sizeof(port), h->port ? "%u" : "*", h->port);
			snprintf(text, sizeof(text), "deny \"%s:%s\"", h->host, port);
			put_net_comment(c, h->loc, text);
			zsp_buf_printf(b, "(deny network-outbound (remote ip \"%s:%s\"))\n", sh, port);
		}
	} else if (p->net_mode == ZSP_NET_PROXY) {
		const zsp_ir_param *pp = find_param(p, "PROXY_PORT");
		const char *v = pp ? pp->value : NULL;
		char *end = NULL;
		long port = v ? strtol(v, &end, 10) : 0;
		if (!v || !*v || *end || port < 1 || port > 65535) {
			zsp_diag_warning(c->d, ZSP_W_UNENFORCED, p->loc,
					 "on macOS, mode proxy lets the sandbox reach only the proxy, whose port the policy does not give: declare `param PROXY_PORT;` and give it with -D PROXY_PORT=N (until then there is no network)");
			zsp_buf_puts(b, "; no proxy port (param PROXY_PORT): no network\n");
		} else {
			zsp_buf_printf(b, "; only the proxy on localhost:%ld (PROXY_PORT), which enforces the host rules\n", port);
			zsp_buf_printf(b, "(allow network-outbound (remote ip \"localhost:%ld\"))\n", port);
		}
		for (size_t i = 0; i < p->nhosts; i++)
			zsp_diag_warning(c->d, ZSP_W_UNENFORCED, p->hosts[i].loc,
					 "on macOS, Seatbelt filters connections by address, not by host name: `%s` is left to the proxy (PROXY_PORT)",
					 p->hosts[i].host);
	} else {
		zsp_buf_puts(b, "; none: no network rule, so (deny default) refuses every connection\n");
	}
	bool any_unix = false;
	for (int pass = 0; pass < 2; pass++) {
		zsp_decision want = pass == 0 ? ZSP_ALLOW : ZSP_DENY;
		for (size_t i = 0; i < p->nunix; i++) {
			const zsp_ir_unix *u = &p->unix_socks[i];
			if (u->decision != want)
				continue;
			if (!any_unix && want == ZSP_ALLOW && p->net_mode != ZSP_NET_FULL)
				zsp_buf_puts(b, "; unix sockets (creating one is allowed, connecting only where a rule says)\n"
				       "(allow system-socket (socket-domain AF_UNIX))\n");
			any_unix = true;
			char text[600];
			snprintf(text, sizeof(text), "%s unix \"%.500s\"", want == ZSP_ALLOW ? "allow" : "deny", u->path);
			put_net_comment(c, u->loc, text);
			char *cp = canonical_in(c, u->path);
			char *path = cp ? unescape(c, cp) : NULL;
			if (!path)
				return;
			zsp_buf_printf(b, "(%s network-outbound (remote unix-socket (path-literal ", want == ZSP_ALLOW ? "allow" : "deny");
			put_path(c, b, path);
			zsp_buf_puts(b, ")))\n");
		}
	}
}

/* Seatbelt can only allow or deny a path, never put another directory there: a cache and a
 * private /tmp stay the host's (the cache's place keeps the access the other rules give it). */
static void check_caches(ctx *c)
{
	const zsp_ir_policy *p = c->p;
	for (size_t i = 0; i < p->ncaches; i++)
		zsp_diag_warning(c->d, ZSP_W_UNENFORCED, p->caches[i].loc,
				 "on macOS, Seatbelt cannot give the sandbox a directory of its own: `cache %s` is "
				 "not enforced (the host's %s keeps the access the other rules give it; it is not "
				 "made writable)", p->caches[i].name, p->caches[i].parts[0].path);
	if (!p->tmp_private)
		return;
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (r->access == ZSP_ACCESS_WRITE && !r->glob && !r->cache &&
		    (zsp_path_is_prefix(r->path, "/tmp") || zsp_path_is_prefix(r->path, "/private/tmp"))) {
			zsp_diag_warning(c->d, ZSP_W_UNENFORCED, p->tmp_loc.src ? p->tmp_loc : r->loc,
					 "on macOS, the sandbox's /tmp is the host's: Seatbelt cannot give it one of "
					 "its own (`tmp private`), so what `%s` allows there is written in the host's "
					 "/private/tmp", r->path);
			return;
		}
	}
}

static void check_process(ctx *c)
{
	const zsp_ir_policy *p = c->p;
	for (size_t i = 0; i < p->nsyscalls; i++)
		zsp_diag_warning(c->d, ZSP_W_UNENFORCED, p->syscalls[i].loc,
				 "on macOS, Seatbelt has no system-call filter: `syscalls %s \"%s\"` is not enforced",
				 p->syscalls[i].action == ZSP_ALLOW ? "allow" : "deny", p->syscalls[i].name);
	for (int k = 0; k < ZSP_LIMIT_COUNT; k++)
		if (p->limits[k].set)
			zsp_diag_warning(c->d, ZSP_W_UNENFORCED, p->limits[k].loc,
					 "on macOS, sandbox-exec sets no resource limits: `limit %s` is not enforced",
					 zsp_limit_name((zsp_limit_kind)k));
	const zsp_ir_env *first = p->nenv_keep ? p->env_keep : p->nenv_unset ? p->env_unset :
				  p->nenv_set ? p->env_set : NULL;
	if (first || p->env_clear)
		zsp_diag_warning(c->d, ZSP_W_UNENFORCED, first ? first->loc : p->loc,
				 "on macOS, sandbox-exec passes the caller's environment on: the policy's `env` rules are not applied (run the command through env(1) to apply them)");
}

int zsp_sbpl_emit(const zsp_ir_policy *p, const char *source, zsp_diag *d, zsp_sbpl_profile *out)
{
	memset(out, 0, sizeof(*out));
	ctx c = { .p = p, .source = source, .d = d, .a = zsp_arena_new() };
	if (!c.a) {
		zsp_diag_error_noloc(d, "out of memory");
		return ZSP_EINTERNAL;
	}
	unsigned errors = d->errors;
	collect(&c);
	follow_gitfiles(&c);
	sort_literals(&c);
	zsp_buf_printf(&c.out, "; Seatbelt profile (SBPL) of policy \"%s\" from %s, by zspc %s.\n", p->name,
	     source ? source : "(unnamed)", zsp_version());
	zsp_buf_puts(&c.out, "; Run it with sandbox-exec -p PROFILE -DNAME=VALUE ... for each (param \"NAME\") it reads\n"
		    "; (canonical paths: /private/tmp, not /tmp). doc/sbpl.md explains each part.\n");
	zsp_buf_puts(&c.out, "(version 1)\n(deny default)\n");
	emit_base(&c);
	emit_reads(&c);
	emit_writes(&c);
	emit_restrictions(&c);
	emit_terminals(&c);
	emit_network(&c);
	check_caches(&c);
	check_process(&c);
	int rc = ZSP_EPOLICY;
	if (c.oom || c.out.oom) {
		zsp_diag_error_noloc(d, "out of memory");
		rc = ZSP_EINTERNAL;
	} else if (d->errors == errors) {
		out->text = c.out.data;
		out->len = c.out.len;
		out->params = c.params;
		out->nparams = c.nparams;
		free(c.unlinked);
		zsp_arena_free(c.a);
		return ZSP_OK;
	}
	zsp_buf_free(&c.out);
	free(c.params);
	free(c.unlinked);
	zsp_arena_free(c.a);
	return rc;
}

void zsp_sbpl_profile_free(zsp_sbpl_profile *prof)
{
	free(prof->text);
	free(prof->params);
	memset(prof, 0, sizeof(*prof));
}

/* ---- the backend table's rows ------------------------------------------------------------ */

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"

int zsp_sbpl_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out)
{
	zsp_sbpl_profile prof;
	int rc = zsp_sbpl_emit(in->p, in->source, d, &prof);
	if (rc != ZSP_OK)
		return rc;
	rc = d->errors ? ZSP_EPOLICY : ZSP_OK;
	if (rc == ZSP_OK)
		zsp_buf_add(out, prof.text, prof.len);
	zsp_sbpl_profile_free(&prof);
	return rc;
}

static void add_arg(zsp_buf *out, const char *arg)
{
	char *q = zsp_shell_quote(arg);
	if (!q) {
		out->oom = true;
		return;
	}
	zsp_buf_puts(out, q);
	zsp_buf_putc(out, '\n');
	free(q);
}

int zsp_sandbox_exec_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out)
{
	const zsp_ir_policy *p = in->p;
	zsp_sbpl_profile prof;
	int rc = zsp_sbpl_emit(p, in->source, d, &prof);
	if (rc != ZSP_OK)
		return rc;
	add_arg(out, SANDBOX_EXEC);
	add_arg(out, "-p");
	add_arg(out, prof.text);
	for (size_t i = 0; i < prof.nparams; i++) {
		const zsp_ir_param *par = NULL;
		for (size_t k = 0; k < p->nparams; k++)
			if (strcmp(p->params[k].name, prof.params[i]) == 0)
				par = &p->params[k];
		const char *v = par && par->builtin && in->machine
					? zsp_builtin_params_get(in->machine, prof.params[i]) : NULL;
		if (!v) {
			zsp_diag_error(d, par ? par->loc : p->loc,
				       "parameter %s has no value: give it with -D %s=VALUE", prof.params[i],
				       prof.params[i]);
			continue;
		}
		char *cv = v[0] == '/' ? zsp_sbpl_canonical(v) : strdup(v);
		char *def = NULL;
		if (!cv || asprintf(&def, "-D%s=%s", prof.params[i], cv) < 0)
			out->oom = true;
		else
			add_arg(out, def);
		free(cv);
		free(def);
	}
	add_arg(out, "--");
	for (size_t i = 0; i < in->ncommand; i++)
		add_arg(out, in->command[i]);
	zsp_sbpl_profile_free(&prof);
	if (out->oom) {
		zsp_diag_error_noloc(d, "out of memory");
		return ZSP_EINTERNAL;
	}
	return d->errors ? ZSP_EPOLICY : ZSP_OK;
}
