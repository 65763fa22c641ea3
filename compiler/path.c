/* path.c: lexical normalization of path patterns and a glob matcher without exponential blowup.
 * Matching walks components, then characters, each level with the classic star-backtrack loop. */
#include "compiler/path.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A malformed UTF-8 byte b decodes to NOT_A_CHAR + b, so it never equals a real code point. */
#define NOT_A_CHAR 0x110000u
/* Class probe used when only validating: above every decoded value. */
#define NO_PROBE UINT32_MAX

static bool fail(zsp_path_error *err, const char *msg, const char *hint, size_t off, size_t len)
{
	if (err) {
		err->msg = msg;
		err->hint = hint;
		err->off = off;
		err->len = len;
	}
	return false;
}

static char *fail_null(zsp_path_error *err, const char *msg, const char *hint, size_t off,
		       size_t len)
{
	fail(err, msg, hint, off, len);
	return NULL;
}

static char *oom(zsp_path_error *err)
{
	return fail_null(err, "out of memory", NULL, 0, 0);
}

/* Decodes one character of s[0..n), n >= 1; a malformed byte counts as one character. */
static size_t utf8_decode(const char *str, size_t n, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2, c = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3, c = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		goto bad;
	}
	if (len > n)
		goto bad;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		goto bad;
	*cp = c;
	return len;
bad:
	*cp = NOT_A_CHAR + s[0];
	return 1;
}

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static bool is_meta(char c)
{
	return c == '*' || c == '?' || c == '[';
}

static bool is_globstar(const char *c, size_t n)
{
	return n == 2 && c[0] == '*' && c[1] == '*';
}

struct class_scan {
	size_t end;	/* index just after the closing `]` */
	bool hit;	/* the probe is in the class, negation applied */
	const char *msg, *hint;
	size_t off, len;
};

static bool class_fail(struct class_scan *cs, const char *msg, const char *hint, size_t off,
		       size_t len)
{
	cs->msg = msg;
	cs->hint = hint;
	cs->off = off;
	cs->len = len;
	return false;
}

static const char unterminated_class_hint[] =
	"close the class with `]` before the next `/`, or write `\\[` for a literal `[`";

/* Reads one class member character at p[*j], honouring `\` escapes. */
static bool class_char(const char *p, size_t n, size_t open, size_t *j, uint32_t *cp,
		       struct class_scan *cs)
{
	size_t i = *j;

	if (p[i] == '\\') {
		if (i + 1 >= n)
			return class_fail(cs, "unterminated `[` in glob", unterminated_class_hint,
					  open, 1);
		if (p[i + 1] == '/')
			return class_fail(cs, "`\\/`: a `/` cannot be escaped",
					  "`/` always separates path components", i, 2);
		i++;
	}
	*j = i + utf8_decode(p + i, n - i, cp);
	return true;
}

/* Parses the class opening at p[open] == '[' within p[0..n) and tests probe against it.
 * Both the validator and the matcher use this, so they cannot disagree on syntax. */
static bool class_scan(const char *p, size_t n, size_t open, uint32_t probe,
		       struct class_scan *cs)
{
	size_t j = open + 1;
	bool negate = false, in = false;

	if (j < n && p[j] == '!') {
		negate = true;
		j++;
	} else if (j < n && p[j] == '^') {
		return class_fail(cs, "`[^` does not negate a glob class",
				  "write `[!...]` to negate a class, or `[\\^...]` for a literal `^`",
				  j, 1);
	}
	if (j < n && p[j] == ']')
		return class_fail(cs, "empty `[]` class in glob",
				  "a class needs at least one character; a literal `]` in a class is written `\\]`",
				  open, j + 1 - open);
	for (;;) {
		size_t start = j;
		uint32_t lo, hi;

		if (j >= n || p[j] == '/')
			return class_fail(cs, "unterminated `[` in glob", unterminated_class_hint,
					  open, 1);
		if (p[j] == ']')
			break;
		if (!class_char(p, n, open, &j, &lo, cs))
			return false;
		hi = lo;
		if (j + 1 < n && p[j] == '-' && p[j + 1] != ']' && p[j + 1] != '/') {
			j++;
			if (!class_char(p, n, open, &j, &hi, cs))
				return false;
			if (hi < lo)
				return class_fail(cs, "reversed range in `[...]` class",
						  "a range `a-z` must not end before it starts",
						  start, j - start);
		}
		if (probe >= lo && probe <= hi)
			in = true;
	}
	cs->end = j + 1;
	cs->hit = in != negate;
	return true;
}

static bool has_param_n(const char *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (p[i] == '$' && p[i + 1] == '{')
			return true;
	}
	return false;
}

static bool has_meta_n(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\')
			i++;
		else if (is_meta(p[i]))
			return true;
	}
	return false;
}

bool zsp_glob_has_meta(const char *pattern)
{
	return has_meta_n(pattern, strlen(pattern));
}

bool zsp_path_unescape_buf(const char *pattern, char *out, size_t size)
{
	size_t k = 0;
	for (const char *c = pattern; *c; c++) {
		if (*c == '\\' && c[1])
			c++;
		if (k + 1 >= size)
			return false;
		out[k++] = *c;
	}
	if (size)
		out[k] = 0;
	return size > 0;
}

char *zsp_path_unescape(zsp_arena *a, const char *pattern)
{
	size_t n = strlen(pattern) + 1;
	char *out = zsp_arena_alloc(a, n);
	if (out)
		zsp_path_unescape_buf(pattern, out, n);
	return out;
}

bool zsp_glob_check(const char *p, zsp_path_error *err)
{
	size_t n = strlen(p), comp = 0;

	for (size_t i = 0; i < n;) {
		if (p[i] == '/') {
			comp = ++i;
		} else if (p[i] == '\\') {
			if (i + 1 == n)
				return fail(err, "trailing `\\` escapes nothing",
					    "write `\\\\` for a literal backslash", i, 1);
			if (p[i + 1] == '/')
				return fail(err, "`\\/`: a `/` cannot be escaped",
					    "`/` always separates path components", i, 2);
			i += 2;
		} else if (p[i] == '*') {
			size_t run = 0;

			while (i + run < n && p[i + run] == '*')
				run++;
			/* a third `*` also fails the test on p[i + 2] */
			if (run > 1 && (i != comp || (i + 2 < n && p[i + 2] != '/')))
				return fail(err, "`**` must be a whole path component",
					    "use `*` to match within one component, or put `**` alone between slashes",
					    i, run);
			i += run;
		} else if (p[i] == '[') {
			struct class_scan cs;

			if (!class_scan(p, n, i, NO_PROBE, &cs))
				return fail(err, cs.msg, cs.hint, cs.off, cs.len);
			i = cs.end;
		} else {
			i++;
		}
	}
	return true;
}

static bool valid_name(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool alpha = (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
			     s[i] == '_';

		if (!alpha && (i == 0 || s[i] < '0' || s[i] > '9'))
			return false;
	}
	return n > 0;
}

/* Validates the `${NAME}` at in[i]; *end is set just after its `}`. */
static bool check_param(zsp_arena *a, const char *in, size_t i, size_t *end,
			zsp_path_error *err)
{
	size_t j = i + 2;

	while (in[j] && in[j] != '}' && in[j] != '/')
		j++;
	if (in[j] != '}')
		return fail(err, "unterminated `${`: missing `}`",
			    "write a parameter as `${NAME}`", i, j - i);
	if (j == i + 2)
		return fail(err, "empty parameter name `${}`",
			    "write a parameter as `${NAME}`, e.g. `${WORKSPACE}`", i, 3);
	if (!valid_name(in + i + 2, j - i - 2)) {
		const char *msg = zsp_arena_printf(a, "invalid parameter name `%.*s`",
						   (int)(j - i - 2), in + i + 2);

		return fail(err, msg ? msg : "invalid parameter name",
			    "a parameter name is a letter or `_` followed by letters, digits or `_`",
			    i + 2, j - i - 2);
	}
	*end = j + 1;
	return true;
}

/* Character-level checks: control characters, parameters, and (for literal paths) globs. */
static bool scan_chars(zsp_arena *a, const char *in, size_t n, bool glob, zsp_path_error *err)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];

		if (is_control(c)) {
			const char *msg = zsp_arena_printf(a, "control character 0x%02x in path", c);

			return fail(err, msg ? msg : "control character in path", NULL, i, 1);
		}
		if (c == '\\' && glob) {
			if (in[i + 1] == '$' && in[i + 2] == '{')
				return fail(err, "a parameter reference cannot be escaped",
					    "`${NAME}` always stands for the parameter's value", i, 2);
			if (in[i + 1] && !is_control((unsigned char)in[i + 1]))
				i++;
		} else if (c == '$' && in[i + 1] == '{') {
			size_t end;

			if (!check_param(a, in, i, &end, err))
				return false;
			i = end - 1;
		} else if (!glob && is_meta((char)c)) {
			return fail(err, "glob characters are not allowed in this path",
				    "this path is used literally: remove `*`, `?` and `[`", i, 1);
		}
	}
	return true;
}

/* Copies one raw component, dropping escapes that change nothing; class bodies stay verbatim.
 * The escape before `{` stays so that `$\{` cannot turn into a parameter reference. */
static size_t canon_component(char *dst, const char *src, size_t n, bool glob)
{
	size_t o = 0;

	if (!glob) {
		memcpy(dst, src, n);
		return n;
	}
	for (size_t j = 0; j < n;) {
		struct class_scan cs;

		if (src[j] == '[' && class_scan(src, n, j, NO_PROBE, &cs)) {
			memcpy(dst + o, src + j, cs.end - j);
			o += cs.end - j;
			j = cs.end;
		} else if (src[j] == '\\' && j + 1 < n) {
			char e = src[j + 1];

			if (is_meta(e) || e == '\\' || e == '{')
				dst[o++] = '\\';
			dst[o++] = e;
			j += 2;
		} else {
			dst[o++] = src[j++];
		}
	}
	return o;
}

enum anchor { ANCHOR_ROOT, ANCHOR_PARAM, ANCHOR_RELATIVE };

/* Literal paths (ZSP_PATH_NO_GLOB) are not offered the `**` anchor, which they would refuse. */
static char *relative_error(zsp_arena *a, const char *in, size_t first_len, bool glob,
			    zsp_path_error *err)
{
	const char *anchors = glob ? "`/`, `~`, `${WORKSPACE}/` or `**/`" : "`/`, `~` or `${WORKSPACE}/`";
	const char *name = in, *hint = "say where the path starts, e.g. `/...`, `~/...` or `${WORKSPACE}/...`";
	const char *msg = zsp_arena_printf(a, "relative path `%s`: anchor it with %s", in, anchors);

	while (name[0] == '.' && name[1] == '/') {
		name++;
		while (name[0] == '/')
			name++;
	}
	if (name[0] && strcmp(name, ".") != 0 && strncmp(name, "..", 2) != 0) {
		const char *h = glob ?
			zsp_arena_printf(a, "write `${WORKSPACE}/%s` for a path in the workspace, or `**/%s` to match it at any depth",
					 name, name) :
			zsp_arena_printf(a, "write `${WORKSPACE}/%s` for a path in the workspace", name);

		if (h)
			hint = h;
	}
	return fail_null(err, msg ? msg : "relative path: anchor it with `/`, `~` or `${WORKSPACE}/`",
			 hint, 0, first_len);
}

/* Removes the last component of out[base..*olen) for a `..` at in[off]. */
static bool pop_component(zsp_arena *a, char *out, size_t base, size_t *olen, enum anchor kind,
			  const char *anchor, size_t off, zsp_path_error *err)
{
	size_t p = *olen;

	if (p == base) {
		const char *msg;

		if (kind == ANCHOR_ROOT)
			return true;
		if (kind == ANCHOR_RELATIVE)
			return fail(err, "`..` would climb above the start of this relative path",
				    "a relative path cannot leave the directory it is relative to",
				    off, 2);
		msg = zsp_arena_printf(a, "`..` would climb above `%s`", anchor);
		return fail(err, msg ? msg : "`..` would climb above the parameter",
			    "a path that starts with a parameter stays below it; use an absolute path instead",
			    off, 2);
	}
	while (out[p - 1] != '/')
		p--;
	if (has_meta_n(out + p, *olen - p)) {
		const char *msg = zsp_arena_printf(a, "`..` cannot remove the glob component `%.*s`",
						   (int)(*olen - p), out + p);

		return fail(err, msg ? msg : "`..` cannot remove a glob component",
			    "a glob matches directories at different places; remove the `..`", off, 2);
	}
	if (has_param_n(out + p, *olen - p)) {
		const char *msg = zsp_arena_printf(a, "`..` cannot remove the component `%.*s`",
						   (int)(*olen - p), out + p);

		return fail(err, msg ? msg : "`..` cannot remove a component holding a parameter",
			    "a parameter's value is unknown until the policy is used; remove the `..`",
			    off, 2);
	}
	*olen = p - 1;
	return true;
}

char *zsp_path_normalize(zsp_arena *a, const char *in, unsigned flags, zsp_path_error *err)
{
	bool glob = !(flags & ZSP_PATH_NO_GLOB);
	size_t n = strlen(in), first_len, pos = 0, olen = 0, base;
	enum anchor kind;
	const char *anchor = NULL;
	char *out;

	if (n == 0)
		return fail_null(err, "empty path",
				 "a path starts with `/`, `~`, `${NAME}` or `**`", 0, 0);
	if (!scan_chars(a, in, n, glob, err))
		return NULL;
	if (glob && !zsp_glob_check(in, err))
		return NULL;
	first_len = strcspn(in, "/");
	/* Worst case adds `${HOME}` for `~` and one `/`; canonicalization never grows a component. */
	out = zsp_arena_alloc(a, n + 16);
	if (!out)
		return oom(err);

	if (in[0] == '/') {
		kind = ANCHOR_ROOT;
	} else if (in[0] == '~') {
		if (first_len != 1) {
			const char *msg = zsp_arena_printf(a,
				"`%.*s`: `~user` paths are not supported; use `${HOME}`",
				(int)first_len, in);

			return fail_null(err, msg ? msg : "`~user` paths are not supported; use `${HOME}`",
					 "`~` alone is your home directory; write another user's home as an absolute path",
					 0, first_len);
		}
		kind = ANCHOR_PARAM;
		anchor = "~";
		memcpy(out, "${HOME}", 7);
		olen = 7;
		pos = 1;
	} else if (in[0] == '$' && in[1] == '{') {
		if (strcspn(in, "}") + 1 != first_len) {
			const char *msg = zsp_arena_printf(a,
				"`%.*s` is not an anchor: a leading parameter must be a whole path component",
				(int)first_len, in);

			return fail_null(err, msg ? msg : "a leading parameter must be a whole path component",
					 "put a `/` right after the `}`, or start the path with `/` or `**/`",
					 0, first_len);
		}
		kind = ANCHOR_PARAM;
		anchor = zsp_arena_strndup(a, in, first_len);
		if (!anchor)
			return oom(err);
		memcpy(out, in, first_len);
		olen = first_len;
		pos = first_len;
	} else if (glob && is_globstar(in, first_len)) {
		kind = ANCHOR_RELATIVE;
	} else if (flags & ZSP_PATH_ALLOW_RELATIVE) {
		kind = ANCHOR_RELATIVE;
	} else {
		return relative_error(a, in, first_len, glob, err);
	}

	/* Every kept component is written as `/` + text; a relative result skips the first `/`. */
	base = olen;
	while (pos < n) {
		size_t start = pos, cstart = olen, clen;

		if (in[pos] == '/') {
			pos++;
			continue;
		}
		while (pos < n && in[pos] != '/')
			pos++;
		out[olen++] = '/';
		clen = canon_component(out + olen, in + start, pos - start, glob);
		olen += clen;
		if (clen == 1 && out[cstart + 1] == '.') {
			olen = cstart;
		} else if (clen == 2 && out[cstart + 1] == '.' && out[cstart + 2] == '.') {
			olen = cstart;
			if (!pop_component(a, out, base, &olen, kind, anchor, start, err))
				return NULL;
		}
	}
	out[olen] = '\0';

	if (kind == ANCHOR_ROOT && olen == 0)
		return strcpy(out, "/");
	if (kind != ANCHOR_RELATIVE)
		return out;
	if (olen == 0)
		return fail_null(err, "relative path is empty after normalization",
				 "name a file or directory below the starting point, e.g. `.git`", 0, n);
	if (out[1] == '$' && out[2] == '{')
		return fail_null(err, "relative path would start with a parameter after `..`",
				 "remove the `..`, or start the path with `${NAME}/`", 0, n);
	if (out[1] == '~') {
		if (!glob)
			return fail_null(err, "relative path would start with `~`",
					 "remove the `..` in front of it", 0, n);
		/* keep a literal leading `~` from reading as the home directory next time */
		out[0] = '\\';
		return out;
	}
	return out + 1;
}

/* Finds the component at or after s[i]; false at the end of s. */
static bool component_at(const char *s, size_t i, size_t *start, size_t *len)
{
	size_t j;

	while (s[i] == '/')
		i++;
	if (!s[i])
		return false;
	for (j = i; s[j] && s[j] != '/'; j++)
		;
	*start = i;
	*len = j - i;
	return true;
}

/* Matches the one-character atom at p[*pi] against the character at t[*ti]; advances both on
 * success and leaves them alone on failure. */
static bool atom_match(const char *p, size_t pn, size_t *pi, const char *t, size_t tn,
		       size_t *ti)
{
	uint32_t tc, pc;
	size_t tlen = utf8_decode(t + *ti, tn - *ti, &tc), plen, i = *pi;

	if (p[i] == '?') {
		*pi = i + 1;
		*ti += tlen;
		return true;
	}
	if (p[i] == '[') {
		struct class_scan cs;

		if (class_scan(p, pn, i, tc, &cs)) {
			if (!cs.hit)
				return false;
			*pi = cs.end;
			*ti += tlen;
			return true;
		}
		/* an unvalidated malformed class reads as a literal `[` */
	}
	if (p[i] == '\\' && i + 1 < pn)
		i++;
	plen = utf8_decode(p + i, pn - i, &pc);
	if (plen != tlen || memcmp(p + i, t + *ti, plen) != 0)
		return false;
	*pi = i + plen;
	*ti += tlen;
	return true;
}

/* One component: `*` backtracks only to the latest `*`, which is enough because every other
 * atom matches exactly one character. O(pn * tn). */
static bool component_match(const char *p, size_t pn, const char *t, size_t tn)
{
	size_t pi = 0, ti = 0, star_p = SIZE_MAX, star_t = 0;

	while (ti < tn) {
		uint32_t c;

		if (pi < pn && p[pi] == '*') {
			star_p = ++pi;
			star_t = ti;
			continue;
		}
		if (pi < pn && atom_match(p, pn, &pi, t, tn, &ti))
			continue;
		if (star_p == SIZE_MAX)
			return false;
		star_t += utf8_decode(t + star_t, tn - star_t, &c);
		ti = star_t;
		pi = star_p;
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

bool zsp_glob_match_component(const char *pattern, const char *name, size_t n)
{
	return component_match(pattern, strlen(pattern), name, n);
}

/* The same walk one level up: `**` is the star and each other component matches exactly one. */
bool zsp_glob_match(const char *pattern, const char *path)
{
	size_t p = 0, t = 0, star_p = SIZE_MAX, star_t = 0, ps, pl, ts, tl;
	bool any_depth = pattern[0] != '/' && component_at(pattern, 0, &ps, &pl) &&
			 is_globstar(pattern + ps, pl);

	if (pattern[0] == '/' ? path[0] != '/' : !any_depth && path[0] == '/')
		return false;
	while (component_at(path, t, &ts, &tl)) {
		bool have_p = component_at(pattern, p, &ps, &pl);

		if (have_p && is_globstar(pattern + ps, pl)) {
			star_p = p = ps + pl;
			star_t = t;
			continue;
		}
		if (have_p && component_match(pattern + ps, pl, path + ts, tl)) {
			p = ps + pl;
			t = ts + tl;
			continue;
		}
		if (star_p == SIZE_MAX)
			return false;
		component_at(path, star_t, &ts, &tl);
		star_t = t = ts + tl;
		p = star_p;
	}
	while (component_at(pattern, p, &ps, &pl)) {
		if (!is_globstar(pattern + ps, pl))
			return false;
		p = ps + pl;
	}
	return true;
}

bool zsp_path_is_prefix(const char *parent, const char *child)
{
	size_t n = strlen(parent);

	if (n == 0)
		return false;
	if (n == 1 && parent[0] == '/')
		return child[0] == '/';
	return strncmp(parent, child, n) == 0 && (child[n] == '\0' || child[n] == '/');
}

size_t zsp_path_depth(const char *path)
{
	size_t depth = 0, i = 0, start, len;

	while (component_at(path, i, &start, &len)) {
		depth++;
		i = start + len;
	}
	return depth;
}

char *zsp_path_join(zsp_arena *a, const char *root, const char *rel)
{
	size_t rn = strlen(root);

	while (*rel == '/')
		rel++;
	if (!*rel)
		return zsp_arena_strdup(a, root);
	size_t sep = rn && root[rn - 1] != '/', ln = strlen(rel);
	char *p = zsp_arena_alloc(a, rn + sep + ln + 1);
	if (p) {
		memcpy(p, root, rn);
		p[rn] = '/';
		memcpy(p + rn + sep, rel, ln + 1);
	}
	return p;
}

/* Lexically normalizes an absolute path into out ("/a//b/./c/../d" -> "/a/b/d"); false if it
 * is not absolute or too long. ".." at the root stays at the root. */
bool zsp_path_lexical(const char *in, char *out, size_t outlen)
{
	size_t n = 0;

	if (!in || in[0] != '/' || outlen < 2)
		return false;
	out[n++] = '/';
	for (const char *p = in; *p;) {
		while (*p == '/')
			p++;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t len = (size_t)(e - p);
		if (len == 0 || (len == 1 && p[0] == '.')) {
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 1 && out[n - 1] != '/')
				n--;
			if (n > 1)
				n--;
		} else {
			if (n > 1)
				out[n++] = '/';
			if (n + len + 1 > outlen)
				return false;
			memcpy(out + n, p, len);
			n += len;
			if (n + 1 >= outlen)
				return false;
		}
		p = e;
	}
	out[n] = '\0';
	return true;
}

/* ---- overlap of two patterns, for the files of commands ---- */

enum { TOK_LIT, TOK_ANY, TOK_STAR };

typedef struct tok {
	unsigned char type, ch;
} tok;

/* The tokens of one component (n bytes): a class is any character (which only ever finds more
 * overlap); escapes, in a rule pattern, quote the next character. NULL when out of memory. */
static tok *tokens(const char *p, size_t n, bool escapes, size_t *count)
{
	tok *t = malloc((n + 1) * sizeof(*t));
	size_t k = 0;

	if (!t)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (escapes && p[i] == '\\' && i + 1 < n) {
			t[k++] = (tok){ TOK_LIT, (unsigned char)p[++i] };
		} else if (p[i] == '*') {
			t[k++] = (tok){ TOK_STAR, 0 };
		} else if (p[i] == '?') {
			t[k++] = (tok){ TOK_ANY, 0 };
		} else if (p[i] == '[') {
			size_t j = i + 1;

			j += j < n && (p[j] == '!' || p[j] == '^');
			j += j < n && p[j] == ']';
			while (j < n && p[j] != ']')
				j += escapes && p[j] == '\\' ? 2 : 1;
			if (j < n) {
				t[k++] = (tok){ TOK_ANY, 0 };
				i = j;
			} else {
				t[k++] = (tok){ TOK_LIT, '[' };
			}
		} else {
			t[k++] = (tok){ TOK_LIT, (unsigned char)p[i] };
		}
	}
	*count = k;
	return t;
}

/* Can one name match both component patterns? Searches the product of the two patterns'
 * positions (each visited once). true also when out of memory or too large (fail closed). */
static bool component_overlap(const char *a, size_t an, const char *b, size_t bn)
{
	size_t la = 0, lb = 0;
	tok *ta = tokens(a, an, false, &la), *tb = tokens(b, bn, true, &lb);
	size_t states = (la + 1) * (lb + 1);
	unsigned char *seen = ta && tb && states <= (1u << 22) ? calloc(states, 1) : NULL;
	size_t *stack = seen ? malloc(2 * states * sizeof(*stack) + 2 * sizeof(*stack)) : NULL;
	bool found = !stack;
	size_t top = 0;

	if (stack) {
		stack[top++] = 0;
		seen[0] = 1;
	}
	while (!found && top > 0) {
		size_t s = stack[--top], x = s / (lb + 1), y = s % (lb + 1);
		size_t next[4], nn = 0;

		if (x == la && y == lb) {
			found = true;
			break;
		}
		bool sa = x < la && ta[x].type == TOK_STAR, sb = y < lb && tb[y].type == TOK_STAR;
		if (sa)
			next[nn++] = (x + 1) * (lb + 1) + y;       /* the star matches nothing more */
		if (sa && y < lb && !sb)
			next[nn++] = x * (lb + 1) + y + 1;         /* it eats b's character */
		if (sb)
			next[nn++] = x * (lb + 1) + y + 1;
		if (sb && x < la && !sa)
			next[nn++] = (x + 1) * (lb + 1) + y;
		if (x < la && y < lb && !sa && !sb &&
		    (ta[x].type == TOK_ANY || tb[y].type == TOK_ANY || ta[x].ch == tb[y].ch))
			next[nn++] = (x + 1) * (lb + 1) + y + 1;
		for (size_t k = 0; k < nn; k++)
			if (!seen[next[k]]) {
				seen[next[k]] = 1;
				stack[top++] = next[k];
			}
	}
	free(ta);
	free(tb);
	free(seen);
	free(stack);
	return found;
}

typedef struct comps {
	const char **p;
	size_t *n;
	size_t count;
} comps;

static bool split_comps(const char *s, comps *c)
{
	size_t max = 1;

	for (const char *q = s; *q; q++)
		max += *q == '/';
	c->p = malloc(max * sizeof(*c->p));
	c->n = malloc(max * sizeof(*c->n));
	c->count = 0;
	if (!c->p || !c->n)
		return false;
	for (const char *q = s; *q;) {
		while (*q == '/')
			q++;
		if (!*q)
			break;
		size_t len = strcspn(q, "/");
		c->p[c->count] = q;
		c->n[c->count++] = len;
		q += len;
	}
	return true;
}

static bool comp_globstar(const comps *c, size_t i)
{
	return c->n[i] == 2 && c->p[i][0] == '*' && c->p[i][1] == '*';
}

bool zsp_glob_overlap(const char *word, const char *rule, bool tree, bool visible)
{
	comps w = { 0 }, r = { 0 };
	bool found = false;

	if (!split_comps(word, &w) || !split_comps(rule, &r)) {
		found = true; /* out of memory: fail closed */
		goto out;
	}
	size_t n = w.count, m = r.count, states = (n + 1) * (m + 1);
	unsigned char *seen = calloc(states, 1);
	size_t *stack = seen ? malloc(2 * states * sizeof(*stack) + 2 * sizeof(*stack)) : NULL, top = 0;

	found = !stack;
	if (stack) {
		stack[top++] = 0;
		seen[0] = 1;
	}
	while (!found && top > 0) {
		size_t s = stack[--top], i = s / (m + 1), j = s % (m + 1), next[2], nn = 0;

		if (j == m) {
			found = true; /* the rule covers the path the word names (or one below it) */
			break;
		}
		if (i == n && tree) {
			/* the rest of the rule lies below the word: reached unless it is hidden and
			 * the tree skips hidden entries */
			bool hidden = false;

			for (size_t k = j; k < m && visible && !hidden; k++)
				hidden = r.p[k][0] == '.';
			if (!hidden) {
				found = true;
				break;
			}
		}
		if (comp_globstar(&r, j)) {
			next[nn++] = i * (m + 1) + j + 1;
			if (i < n)
				next[nn++] = (i + 1) * (m + 1) + j;
		} else if (i < n && comp_globstar(&w, i)) {
			next[nn++] = (i + 1) * (m + 1) + j;
			next[nn++] = i * (m + 1) + j + 1;
		} else if (i < n && component_overlap(w.p[i], w.n[i], r.p[j], r.n[j])) {
			next[nn++] = (i + 1) * (m + 1) + j + 1;
		}
		for (size_t k = 0; k < nn; k++)
			if (!seen[next[k]]) {
				seen[next[k]] = 1;
				stack[top++] = next[k];
			}
	}
	free(seen);
	free(stack);
out:
	free(w.p);
	free(w.n);
	free(r.p);
	free(r.n);
	return found;
}
