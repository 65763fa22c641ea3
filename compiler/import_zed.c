/* import_zed.c: a strict, bounded JSONC reader and the mapping of Zed's tool_permissions to .zsp.
 * The whole input is parsed into a tree first, then mapped; every error names an input position. */
#include "config.h"

#include "compiler/import_zed.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/arena.h"
#include "lang/buf.h"
#include "compiler/regex.h"
#include "compiler/zsp.h"

#define JSON_MAX_SIZE (16u << 20)
#define JSON_MAX_DEPTH 64u

enum jkind { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jval jval;
struct jval {
	enum jkind kind;
	uint32_t off;      /* where the value starts in the input */
	bool b;            /* J_BOOL */
	const char *s;     /* J_STR: decoded, may hold NUL bytes; J_NUM: its text */
	size_t n;
	jval *first;       /* J_ARR items, J_OBJ members, in input order */
	jval *next;
	const char *key;   /* as an object member: its decoded key */
	size_t klen;
	uint32_t key_off;
};

/* Parser and mapper state: the input, the arena that owns the tree, the first error. */
struct jp {
	const char *t;
	size_t len, pos;
	zsp_arena *a;
	unsigned depth;
	bool failed, oom;
	size_t err_off;
	char msg[512];
};

__attribute__((format(printf, 3, 4))) static void *jfail(struct jp *p, size_t off,
							  const char *fmt, ...)
{
	if (p->failed)
		return NULL;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
	va_end(ap);
	p->failed = true;
	p->err_off = off;
	return NULL;
}

static void *joom(struct jp *p)
{
	p->oom = true;
	return jfail(p, 0, "out of memory");
}

/* 1-based line and column (in characters, like zsp's diagnostics) of byte `off`. */
static void position(const struct jp *p, size_t off, unsigned *line, unsigned *col)
{
	unsigned l = 1, c = 1;
	for (size_t i = 0; i < off && i < p->len; i++) {
		unsigned char ch = (unsigned char)p->t[i];
		if (ch == '\n')
			l++, c = 1;
		else if ((ch & 0xC0) != 0x80)
			c++;
	}
	*line = l;
	*col = c;
}

/* Offset of the first byte that is not part of well-formed UTF-8, or len. */
static size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		unsigned c = s[i];
		size_t n;
		unsigned lo = 0x80, hi = 0xBF;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			n = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 2;
			if (c == 0xE0)
				lo = 0xA0; /* overlong */
			if (c == 0xED)
				hi = 0x9F; /* surrogates */
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 3;
			if (c == 0xF0)
				lo = 0x90;
			if (c == 0xF4)
				hi = 0x8F; /* above U+10FFFF */
		} else {
			return i;
		}
		if (len - i <= n)
			return i;
		if (s[i + 1] < lo || s[i + 1] > hi)
			return i;
		for (size_t k = 2; k <= n; k++)
			if ((s[i + k] & 0xC0) != 0x80)
				return i;
		i += n + 1;
	}
	return len;
}

/* Skips whitespace and comments. False (with the error set) on an unterminated comment. */
static bool skip_space(struct jp *p)
{
	while (p->pos < p->len) {
		char c = p->t[p->pos];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			p->pos++;
		} else if (c == '/' && p->pos + 1 < p->len && p->t[p->pos + 1] == '/') {
			while (p->pos < p->len && p->t[p->pos] != '\n')
				p->pos++;
		} else if (c == '/' && p->pos + 1 < p->len && p->t[p->pos + 1] == '*') {
			size_t start = p->pos;
			p->pos += 2;
			while (p->pos + 1 < p->len && !(p->t[p->pos] == '*' && p->t[p->pos + 1] == '/'))
				p->pos++;
			if (p->pos + 1 >= p->len) {
				jfail(p, start, "unterminated /* comment");
				return false;
			}
			p->pos += 2;
		} else {
			return true;
		}
	}
	return true;
}

static jval *new_val(struct jp *p, enum jkind kind, size_t off)
{
	jval *v = zsp_arena_alloc(p->a, sizeof(*v));
	if (!v)
		return joom(p);
	v->kind = kind;
	v->off = (uint32_t)off;
	return v;
}

/* The character at `off` for a message: `x` for printable ASCII, a byte value otherwise. */
static const char *show_char(const struct jp *p, size_t off, char buf[16])
{
	unsigned char c = (unsigned char)p->t[off];
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, 16, "`%c`", c);
	else
		snprintf(buf, 16, "byte 0x%02X", c);
	return buf;
}

static int hex4(const char *s)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xC0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xE0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		o[2] = (char)(0x80 | (c & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
	o[3] = (char)(0x80 | (c & 0x3F));
	return 4;
}

/* A \uXXXX escape at `at` (the backslash); false if there is none. */
static bool u_escape(const struct jp *p, size_t at, size_t end, int *v)
{
	if (at + 6 > end || p->t[at] != '\\' || p->t[at + 1] != 'u')
		return false;
	*v = hex4(p->t + at + 2);
	return *v >= 0;
}

/* A string at p->pos (on its opening quote). Escapes never make it longer, so the decoded text
 * fits in a buffer of the raw length. */
static bool parse_string(struct jp *p, const char **s, size_t *n)
{
	size_t open = p->pos, end = open + 1;
	while (end < p->len && p->t[end] != '"') {
		unsigned char c = (unsigned char)p->t[end];
		if (c == '\\') {
			end += 2;
		} else if (c == '\n') {
			jfail(p, open, "unterminated string");
			return false;
		} else if (c < 0x20) {
			jfail(p, end, "control character 0x%02X in a string; write it as \\u%04X", c, c);
			return false;
		} else {
			end++;
		}
	}
	if (end >= p->len) {
		jfail(p, open, "unterminated string");
		return false;
	}
	char *o = zsp_arena_alloc(p->a, end - open);
	if (!o) {
		joom(p);
		return false;
	}
	size_t k = 0;
	for (size_t i = open + 1; i < end;) {
		if (p->t[i] != '\\') {
			o[k++] = p->t[i++];
			continue;
		}
		char e = p->t[i + 1], buf[32];
		const char *simple = strchr("\"\\/bfnrt", e);
		if (e && simple) {
			o[k++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
			i += 2;
			continue;
		}
		int hi, lo;
		if (e != 'u') {
			unsigned char b = (unsigned char)e;
			if (b > 0x20 && b < 0x7f)
				snprintf(buf, sizeof(buf), "`\\%c`", b);
			else
				snprintf(buf, sizeof(buf), "`\\` before byte 0x%02X", b);
			jfail(p, i, "unknown escape %s in a string; JSON's are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",
			      buf);
			return false;
		}
		if (!u_escape(p, i, end, &hi)) {
			jfail(p, i, "\\u needs four hex digits");
			return false;
		}
		uint32_t c = (uint32_t)hi;
		if (hi >= 0xDC00 && hi <= 0xDFFF) {
			jfail(p, i, "lone low surrogate \\u%04X", hi);
			return false;
		}
		if (hi >= 0xD800 && hi <= 0xDBFF) {
			if (!u_escape(p, i + 6, end, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
				jfail(p, i, "lone high surrogate \\u%04X; it must be followed by a low one (\\uDC00 to \\uDFFF)",
				      hi);
				return false;
			}
			c = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
			i += 6;
		}
		k += put_utf8(o + k, c);
		i += 6;
	}
	o[k] = '\0';
	*s = o;
	*n = k;
	p->pos = end + 1;
	return true;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static jval *parse_number(struct jp *p)
{
	size_t start = p->pos, i = p->pos;
	if (p->t[i] == '-')
		i++;
	if (i < p->len && p->t[i] == '0') {
		if (++i < p->len && is_digit(p->t[i]))
			return jfail(p, start, "invalid number: a leading zero");
	} else if (i < p->len && is_digit(p->t[i])) {
		while (i < p->len && is_digit(p->t[i]))
			i++;
	} else {
		return jfail(p, start, "invalid number");
	}
	if (i < p->len && p->t[i] == '.') {
		if (++i >= p->len || !is_digit(p->t[i]))
			return jfail(p, start, "invalid number: digits must follow `.`");
		while (i < p->len && is_digit(p->t[i]))
			i++;
	}
	if (i < p->len && (p->t[i] == 'e' || p->t[i] == 'E')) {
		i++;
		if (i < p->len && (p->t[i] == '+' || p->t[i] == '-'))
			i++;
		if (i >= p->len || !is_digit(p->t[i]))
			return jfail(p, start, "invalid number: digits must follow the exponent");
		while (i < p->len && is_digit(p->t[i]))
			i++;
	}
	jval *v = new_val(p, J_NUM, start);
	if (v) {
		v->s = p->t + start;
		v->n = i - start;
	}
	p->pos = i;
	return v;
}

static bool is_word(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static jval *parse_word(struct jp *p)
{
	size_t start = p->pos, i = p->pos;
	while (i < p->len && is_word(p->t[i]))
		i++;
	size_t n = i - start;
	jval *v = NULL;
	if (n == 4 && memcmp(p->t + start, "true", 4) == 0) {
		if ((v = new_val(p, J_BOOL, start)))
			v->b = true;
	} else if (n == 5 && memcmp(p->t + start, "false", 5) == 0) {
		v = new_val(p, J_BOOL, start);
	} else if (n == 4 && memcmp(p->t + start, "null", 4) == 0) {
		v = new_val(p, J_NULL, start);
	} else {
		return jfail(p, start, "unknown word `%.*s`; JSON's are true, false and null",
			     (int)(n > 32 ? 32 : n), p->t + start);
	}
	p->pos = i;
	return v;
}

static jval *parse_value(struct jp *p);

/* Appends to a list kept with a tail pointer. */
static void append(jval ***tail, jval *v)
{
	**tail = v;
	*tail = &v->next;
}

static jval *parse_container(struct jp *p, bool object)
{
	size_t open = p->pos;
	const char *what = object ? "object" : "array";
	char close = object ? '}' : ']';
	if (++p->depth > JSON_MAX_DEPTH)
		return jfail(p, open, "arrays and objects nest deeper than %u levels", JSON_MAX_DEPTH);
	jval *v = new_val(p, object ? J_OBJ : J_ARR, open);
	if (!v)
		return NULL;
	jval **tail = &v->first;
	p->pos++;
	for (;;) {
		if (!skip_space(p))
			return NULL;
		if (p->pos >= p->len)
			return jfail(p, open, "unterminated %s", what);
		if (p->t[p->pos] == close)
			break;
		const char *key = NULL;
		size_t klen = 0, key_off = p->pos;
		char buf[16];
		if (object) {
			if (p->t[p->pos] != '"')
				return jfail(p, p->pos, "expected a string key or `}`, found %s",
					     show_char(p, p->pos, buf));
			if (!parse_string(p, &key, &klen) || !skip_space(p))
				return NULL;
			if (p->pos >= p->len)
				return jfail(p, open, "unterminated object");
			if (p->t[p->pos] != ':')
				return jfail(p, p->pos, "expected `:` after the key, found %s",
					     show_char(p, p->pos, buf));
			p->pos++;
		}
		jval *item = parse_value(p);
		if (!item)
			return NULL;
		item->key = key;
		item->klen = klen;
		item->key_off = (uint32_t)key_off;
		append(&tail, item);
		if (!skip_space(p))
			return NULL;
		if (p->pos >= p->len)
			return jfail(p, open, "unterminated %s", what);
		if (p->t[p->pos] == ',') {
			p->pos++; /* a trailing comma before the close is allowed (JSONC) */
			continue;
		}
		if (p->t[p->pos] != close)
			return jfail(p, p->pos, "expected `,` or `%c` in the %s, found %s", close, what,
				     show_char(p, p->pos, buf));
	}
	p->pos++;
	p->depth--;
	return v;
}

static jval *parse_value(struct jp *p)
{
	if (!skip_space(p))
		return NULL;
	if (p->pos >= p->len)
		return jfail(p, p->pos, "expected a value, found the end of the input");
	char c = p->t[p->pos], buf[16];
	if (c == '{' || c == '[')
		return parse_container(p, c == '{');
	if (c == '"') {
		jval *v = new_val(p, J_STR, p->pos);
		if (v && !parse_string(p, &v->s, &v->n))
			return NULL;
		return v;
	}
	if (c == '-' || is_digit(c))
		return parse_number(p);
	if (is_word(c))
		return parse_word(p);
	return jfail(p, p->pos, "expected a value, found %s", show_char(p, p->pos, buf));
}

static jval *parse_document(struct jp *p)
{
	if (p->len > JSON_MAX_SIZE)
		return jfail(p, 0, "the input is larger than 16 MiB");
	size_t bad = utf8_invalid_at((const unsigned char *)p->t, p->len);
	if (bad < p->len)
		return jfail(p, bad, "invalid UTF-8");
	if (p->len >= 3 && memcmp(p->t, "\xEF\xBB\xBF", 3) == 0)
		p->pos = 3; /* a byte-order mark, as some editors write */
	jval *v = parse_value(p);
	if (!v || !skip_space(p))
		return NULL;
	if (p->pos < p->len)
		return jfail(p, p->pos, "unexpected text after the JSON value");
	return v;
}

/* ---- output ---- */

static bool is_ctrl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* A control character as a regex (and zsp string) escape: \n \t \r or \xHH. */
static void out_ctrl(zsp_buf *o, unsigned char c)
{
	if (c == '\n')
		zsp_buf_puts(o, "\\n");
	else if (c == '\t')
		zsp_buf_puts(o, "\\t");
	else if (c == '\r')
		zsp_buf_puts(o, "\\r");
	else
		zsp_buf_printf(o, "\\x%02X", c);
}

/* Text for a `#` comment: one line, control characters escaped, in double quotes when `quote`. */
static void out_comment_text(zsp_buf *o, const char *s, size_t n, bool quote)
{
	if (quote)
		zsp_buf_puts(o, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (is_ctrl(c))
			out_ctrl(o, c);
		else if (quote && (c == '"' || c == '\\'))
			zsp_buf_printf(o, "\\%c", c);
		else
			zsp_buf_add(o, s + i, 1);
	}
	if (quote)
		zsp_buf_puts(o, "\"");
}

/* ---- regex literals ---- */

/* The body of a zsp regex literal for `pat`: an unescaped `/` becomes `\/`, a control character
 * its escape (a `\` before one only quoted it). */
static void out_regex_body(zsp_buf *o, const char *pat, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)pat[i];
		if (c == '\\' && i + 1 < n) {
			unsigned char d = (unsigned char)pat[++i];
			if (is_ctrl(d)) {
				out_ctrl(o, d);
			} else {
				zsp_buf_add(o, "\\", 1);
				zsp_buf_add(o, pat + i, 1);
			}
		} else if (c == '/') {
			zsp_buf_puts(o, "\\/");
		} else if (is_ctrl(c)) {
			out_ctrl(o, c);
		} else {
			zsp_buf_add(o, pat + i, 1);
		}
	}
}

/* What zsp's lexer (lang/lexer.l) makes of a literal body: `\/` outside a class is `/`. The result
 * is what `zspc` compiles, so it is what gets validated. `r` has room for n + 1 bytes. */
static void lex_regex_body(const char *l, size_t n, char *r)
{
	size_t k = 0;
	bool cls = false;
	for (size_t i = 0; i < n; i++) {
		if (l[i] == '\\' && i + 1 < n) {
			if (!cls && l[i + 1] == '/') {
				r[k++] = '/';
			} else {
				r[k++] = '\\';
				r[k++] = l[i + 1];
			}
			i++;
		} else if (!cls && l[i] == '[') {
			r[k++] = '[';
			if (i + 1 < n && l[i + 1] == '^')
				r[k++] = l[++i];
			if (i + 1 < n && l[i + 1] == ']')
				r[k++] = l[++i];
			cls = true;
		} else {
			if (cls && l[i] == ']')
				cls = false;
			r[k++] = l[i];
		}
	}
	r[k] = '\0';
}

/* A construct PCRE2 accepts but Rust's regex crate (Zed's engine) rejects, or NULL. Zed denies a
 * tool with such a pattern, so the import must too. */
static const char *rust_rejects(const char *s, size_t n)
{
	bool cls = false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			char e = s[++i];
			if ((e >= '1' && e <= '9') || e == 'g' || e == 'k')
				return "a backreference";
			if (e == 'Q')
				return "\\Q...\\E quoting";
			continue;
		}
		if (cls) {
			cls = s[i] != ']';
			continue;
		}
		if (s[i] == '[') {
			cls = true;
			if (i + 1 < n && s[i + 1] == '^')
				i++;
			if (i + 1 < n && s[i + 1] == ']')
				i++;
			continue;
		}
		if (s[i] != '(' || i + 1 >= n)
			continue;
		const char *g = s + i + 1;
		size_t left = n - i - 1;
		if (g[0] == '*')
			return "a PCRE verb (*...)";
		if (g[0] != '?' || left < 2)
			continue;
		if (g[1] == '=' || g[1] == '!' || (left >= 3 && g[1] == '<' && (g[2] == '=' || g[2] == '!')))
			return "look-around";
		if (g[1] == '>' || g[1] == '|')
			return "an atomic or branch-reset group";
		if (g[1] == 'R' || is_digit(g[1]) || g[1] == '+' || g[1] == '&' ||
		    (left >= 3 && g[1] == 'P' && (g[2] == '=' || g[2] == '>')))
			return "a backreference or recursion";
		if (g[1] == 'C' || g[1] == '#')
			return "a PCRE-only group";
	}
	return NULL;
}

/* Does the pattern turn on extended mode ((?x) in any group's flags)? */
static bool has_x_flag(const char *s, size_t n)
{
	for (size_t i = 0; i + 2 < n; i++) {
		if (s[i] != '(' || s[i + 1] != '?')
			continue;
		for (size_t j = i + 2; j < n && s[j] != ')' && s[j] != ':'; j++) {
			if (s[j] == 'x')
				return true;
			if (!((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z') || s[j] == '-' ||
			      s[j] == '^'))
				break;
		}
	}
	return false;
}

/* ---- mapping ---- */

enum decision { D_UNSET, D_ALLOW, D_DENY, D_ASK };

static const char *const decision_word[] = { "", "allow", "deny", "ask" };

static const char *const rule_lists[] = { "always_allow", "always_deny", "always_confirm" };
static const enum decision rule_decisions[] = { D_ALLOW, D_DENY, D_ASK };
#define NLISTS (sizeof(rule_lists) / sizeof(rule_lists[0]))

struct rule {
	enum decision d;
	const char *list; /* always_allow, ... */
	size_t index;
	const jval *pattern;
	bool case_sensitive;
};

static bool key_is(const jval *m, const char *key)
{
	return m->klen == strlen(key) && memcmp(m->key, key, m->klen) == 0;
}

static bool has_key(const jval *obj, const char *key)
{
	for (const jval *m = obj->first; m; m = m->next)
		if (key_is(m, key))
			return true;
	return false;
}

static const char *kind_name(enum jkind k)
{
	static const char *const names[] = { "null", "a boolean", "a number", "a string",
					     "an array", "an object" };
	return names[k];
}

static void fail_duplicate(struct jp *p, const jval *first, const jval *dup)
{
	unsigned l, c;
	position(p, first->key_off, &l, &c);
	zsp_buf k = { 0 };
	out_comment_text(&k, dup->key, dup->klen, true);
	jfail(p, dup->key_off,
	      "duplicate key %s (first at %u:%u); Zed would use the last one, zspc refuses to guess",
	      k.data ? k.data : "", l, c);
	zsp_buf_free(&k);
}

/* The member `key` of obj, or NULL when it is absent or null. A second member with that key is
 * an error: Zed would take the last one, and a reviewer reading the first would be misled. */
static const jval *member(struct jp *p, const jval *obj, const char *key)
{
	const jval *found = NULL;
	for (const jval *m = obj->first; m; m = m->next) {
		if (!key_is(m, key))
			continue;
		if (found) {
			fail_duplicate(p, found, m);
			return NULL;
		}
		found = m;
	}
	return found && found->kind == J_NULL ? NULL : found;
}

static int cmp_members(const void *a, const void *b)
{
	const jval *x = *(const jval *const *)a, *y = *(const jval *const *)b;
	int c = memcmp(x->key, y->key, x->klen < y->klen ? x->klen : y->klen);
	if (c)
		return c;
	if (x->klen != y->klen)
		return x->klen < y->klen ? -1 : 1;
	return x->key_off < y->key_off ? -1 : x->key_off > y->key_off;
}

/* Every key of obj at most once (objects whose keys are all read). The earliest repetition in
 * the input is reported; sorting keeps a huge object at n log n. */
static bool unique_keys(struct jp *p, const jval *obj)
{
	size_t n = 0;
	for (const jval *m = obj->first; m; m = m->next)
		n++;
	if (n < 2)
		return true;
	const jval **v = malloc(n * sizeof(*v));
	if (!v) {
		joom(p);
		return false;
	}
	size_t i = 0;
	for (const jval *m = obj->first; m; m = m->next)
		v[i++] = m;
	qsort(v, n, sizeof(*v), cmp_members);
	const jval *first = NULL, *dup = NULL;
	for (i = 1; i < n; i++) {
		bool same = v[i]->klen == v[i - 1]->klen &&
			    memcmp(v[i]->key, v[i - 1]->key, v[i]->klen) == 0;
		/* in a run of equal keys, sorted by offset, the run's second is its first repetition */
		bool run_second = same && (i < 2 || v[i - 2]->klen != v[i]->klen ||
					   memcmp(v[i - 2]->key, v[i]->key, v[i]->klen) != 0);
		if (run_second && (!dup || v[i]->key_off < dup->key_off)) {
			first = v[i - 1];
			dup = v[i];
		}
	}
	free(v);
	if (dup)
		fail_duplicate(p, first, dup);
	return !dup;
}

static bool expect_kind(struct jp *p, const jval *v, enum jkind kind, const char *what)
{
	if (v->kind == kind)
		return true;
	jfail(p, v->off, "%s must be %s, not %s", what, kind_name(kind), kind_name(v->kind));
	return false;
}

/* "allow" | "deny" | "confirm" (and zsp's word "ask" for confirm). */
static enum decision read_decision(struct jp *p, const jval *v, const char *what)
{
	if (!v || !expect_kind(p, v, J_STR, what))
		return D_UNSET;
	if (v->n == 5 && memcmp(v->s, "allow", 5) == 0)
		return D_ALLOW;
	if (v->n == 4 && memcmp(v->s, "deny", 4) == 0)
		return D_DENY;
	if ((v->n == 7 && memcmp(v->s, "confirm", 7) == 0) || (v->n == 3 && memcmp(v->s, "ask", 3) == 0))
		return D_ASK;
	zsp_buf t = { 0 };
	out_comment_text(&t, v->s, v->n, true);
	jfail(p, v->off, "%s is %s; Zed's modes are \"allow\", \"deny\" and \"confirm\"", what,
	      t.data ? t.data : "");
	zsp_buf_free(&t);
	return D_UNSET;
}

/* "# ignored: unknown key "k" in WHERE (L:C)", so that nothing is dropped out of sight. */
static void note_unknown(struct jp *p, zsp_buf *o, const char *indent, const jval *m,
			 const char *where)
{
	unsigned l, c;
	position(p, m->key_off, &l, &c);
	zsp_buf_printf(o, "%s# ignored: unknown key ", indent);
	out_comment_text(o, m->key, m->klen, true);
	zsp_buf_printf(o, " in %s (%u:%u)\n", where, l, c);
}

static bool known_tool_key(const jval *m)
{
	if (key_is(m, "default"))
		return true;
	for (size_t i = 0; i < NLISTS; i++)
		if (key_is(m, rule_lists[i]))
			return true;
	return false;
}

/* One rule item: {"pattern": "...", "case_sensitive": bool} or a bare pattern string. */
static bool read_rule(struct jp *p, const jval *item, struct rule *r, zsp_buf *notes)
{
	if (item->kind == J_STR) {
		r->pattern = item;
		return true;
	}
	char where[64];
	snprintf(where, sizeof(where), "%s[%zu]", r->list, r->index);
	if (item->kind != J_OBJ) {
		jfail(p, item->off, "%s must be an object {\"pattern\": ...} or a pattern string, not %s",
		      where, kind_name(item->kind));
		return false;
	}
	if (!unique_keys(p, item))
		return false;
	for (const jval *m = item->first; m; m = m->next)
		if (!key_is(m, "pattern") && !key_is(m, "case_sensitive"))
			note_unknown(p, notes, "    ", m, where);
	const jval *pat = member(p, item, "pattern");
	const jval *cs = member(p, item, "case_sensitive");
	if (!pat) {
		jfail(p, item->off, "%s has no \"pattern\"", where);
		return false;
	}
	if (!expect_kind(p, pat, J_STR, "\"pattern\"") ||
	    (cs && !expect_kind(p, cs, J_BOOL, "\"case_sensitive\"")))
		return false;
	r->pattern = pat;
	r->case_sensitive = cs && cs->b;
	return true;
}

/* The tool's rules in input order (lists in key order, items in list order). */
static struct rule *read_rules(struct jp *p, const jval *tool, size_t *count, zsp_buf *notes)
{
	size_t n = 0;
	for (const jval *m = tool->first; m; m = m->next)
		if (m->kind == J_ARR)
			for (const jval *it = m->first; it; it = it->next)
				n++;
	struct rule *rules = zsp_arena_calloc(p->a, n ? n : 1, sizeof(*rules));
	if (!rules)
		return joom(p);
	*count = 0;
	for (const jval *m = tool->first; m; m = m->next) {
		for (size_t l = 0; l < NLISTS; l++) {
			if (!key_is(m, rule_lists[l]) || m->kind == J_NULL)
				continue;
			char what[32];
			snprintf(what, sizeof(what), "\"%s\"", rule_lists[l]);
			if (!expect_kind(p, m, J_ARR, what))
				return NULL;
			size_t index = 0;
			for (const jval *it = m->first; it; it = it->next) {
				struct rule *r = &rules[(*count)++];
				r->d = rule_decisions[l];
				r->list = rule_lists[l];
				r->index = index++;
				if (!read_rule(p, it, r, notes))
					return NULL;
			}
		}
	}
	return rules;
}

/* Why Zed refuses the pattern, which makes it deny the whole tool, or NULL. `lit` receives the
 * regex literal body; what zsp's lexer makes of it is what gets validated. */
static const char *pattern_problem(struct jp *p, const struct rule *r, zsp_buf *lit, char *msg,
				   size_t msgsize)
{
	const jval *v = r->pattern;
	if (v->n == 0)
		return "is empty";
	out_regex_body(lit, v->s, v->n);
	char *compiled = lit->oom ? NULL : zsp_arena_alloc(p->a, lit->len + 1);
	if (!compiled) {
		joom(p);
		return NULL;
	}
	lex_regex_body(lit->data, lit->len, compiled);
	char emsg[256];
	size_t off;
	if (!zsp_regex_check(compiled, r->case_sensitive, emsg, sizeof(emsg), &off)) {
		snprintf(msg, msgsize, "is invalid: %s", emsg);
		return msg;
	}
	const char *rust = rust_rejects(v->s, v->n);
	if (rust) {
		snprintf(msg, msgsize, "uses %s, which Zed's regex engine (Rust's regex crate) rejects",
			 rust);
		return msg;
	}
	if ((lit->len != v->n || memcmp(lit->data, v->s, v->n) != 0) && has_x_flag(v->s, v->n))
		return "sets the x flag and holds a `/` or a control character: no zsp regex literal "
		       "can say the same";
	return NULL;
}

/* The tool name as a zsp string literal. */
static void out_zsp_string(zsp_buf *o, const char *s, size_t n)
{
	zsp_buf_puts(o, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			zsp_buf_printf(o, "\\%c", c);
		else if (is_ctrl(c))
			out_ctrl(o, c);
		else
			zsp_buf_add(o, s + i, 1);
	}
	zsp_buf_puts(o, "\"");
}

static void emit_rule_ref(struct jp *p, zsp_buf *o, const struct rule *r)
{
	unsigned l, c;
	position(p, r->pattern->off, &l, &c);
	zsp_buf_printf(o, "%s[%zu] (%u:%u) ", r->list, r->index, l, c);
	out_comment_text(o, r->pattern->s, r->pattern->n, true);
}

static void emit_tool(struct jp *p, zsp_buf *o, const jval *tool)
{
	unsigned l, c;
	position(p, tool->key_off, &l, &c);
	if (tool->klen == 0 || memchr(tool->key, '\0', tool->klen)) {
		zsp_buf_puts(o, "  # ignored: tool ");
		out_comment_text(o, tool->key, tool->klen, true);
		zsp_buf_printf(o, " (%u:%u): no tool has an empty name or a NUL in it\n", l, c);
		return;
	}
	if (!expect_kind(p, tool, J_OBJ, "a tool's settings") || !unique_keys(p, tool))
		return;
	zsp_buf notes = { 0 }, body = { 0 };
	for (const jval *m = tool->first; m; m = m->next)
		if (!known_tool_key(m))
			note_unknown(p, &notes, "    ", m, "this tool");
	enum decision def = read_decision(p, member(p, tool, "default"), "the tool's \"default\"");
	size_t n = 0;
	struct rule *rules = p->failed ? NULL : read_rules(p, tool, &n, &notes);
	size_t bad = 0;
	bool mcp = tool->klen > 4 && memcmp(tool->key, "mcp:", 4) == 0;
	for (size_t i = 0; rules && i < n && !p->failed; i++) {
		zsp_buf lit = { 0 };
		char msg[384];
		const char *why = pattern_problem(p, &rules[i], &lit, msg, sizeof(msg));
		if (why) {
			if (!bad)
				body.len = 0; /* the tool is denied: drop the rules written so far */
			zsp_buf_puts(&body, "    # ");
			emit_rule_ref(p, &body, &rules[i]);
			zsp_buf_printf(&body, " %s\n", why);
			bad++;
		} else if (!bad && mcp) {
			zsp_buf_puts(&body, "    # Zed decides MCP tools by their default alone; not imported: ");
			emit_rule_ref(p, &body, &rules[i]);
			zsp_buf_puts(&body, "\n");
		} else if (!bad) {
			zsp_buf_printf(&body, "    %s /", decision_word[rules[i].d]);
			zsp_buf_add(&body, lit.data, lit.len);
			zsp_buf_puts(&body, rules[i].case_sensitive ? "/c;\n" : "/;\n");
		}
		zsp_buf_free(&lit);
	}
	if (!p->failed) {
		zsp_buf_puts(o, "  tool ");
		out_zsp_string(o, tool->key, tool->klen);
		if (!notes.len && !body.len && !def && !bad) {
			zsp_buf_puts(o, " { }\n");
		} else {
			zsp_buf_puts(o, " {\n");
			zsp_buf_add(o, notes.data, notes.len);
			if (bad) {
				zsp_buf_add(o, body.data, body.len);
				zsp_buf_puts(o, "    # Zed denies a tool when one of its patterns is invalid or empty");
				if (def)
					zsp_buf_printf(o, "; not imported: default %s", decision_word[def]);
				if (n > bad)
					zsp_buf_printf(o, "%s%zu other rule%s", def ? ", " : "; not imported: ",
						   n - bad, n - bad == 1 ? "" : "s");
				zsp_buf_puts(o, "\n");
				zsp_buf_puts(o, "    default deny;\n");
			} else {
				if (def)
					zsp_buf_printf(o, "    default %s;\n", decision_word[def]);
				zsp_buf_add(o, body.data, body.len);
			}
			zsp_buf_puts(o, "  }\n");
		}
	}
	o->oom |= notes.oom || body.oom;
	zsp_buf_free(&notes);
	zsp_buf_free(&body);
}

/* "# other settings, not imported: a, b.c" for the parts of a settings file that are not tool
 * permissions (the reviewer sees they were left out). */
static void note_other(zsp_buf *list, const char *prefix, const jval *obj, const char *keep)
{
	for (const jval *m = obj->first; m; m = m->next) {
		if (key_is(m, keep))
			continue;
		zsp_buf_puts(list, list->len ? ", " : "");
		zsp_buf_puts(list, prefix);
		out_comment_text(list, m->key, m->klen, false);
	}
}

static void map_settings(struct jp *p, zsp_buf *o, const jval *root, const char *source)
{
	if (root->kind != J_OBJ) {
		jfail(p, root->off, "expected an object: Zed's settings, or their agent.tool_permissions");
		return;
	}
	const jval *tp = root;
	zsp_buf other = { 0 };
	if (has_key(root, "agent")) {
		const jval *agent = member(p, root, "agent");
		note_other(&other, "", root, "agent");
		tp = NULL;
		if (agent && expect_kind(p, agent, J_OBJ, "\"agent\"")) {
			tp = member(p, agent, "tool_permissions");
			note_other(&other, "agent.", agent, "tool_permissions");
		}
	} else if (has_key(root, "tool_permissions")) {
		tp = member(p, root, "tool_permissions");
		note_other(&other, "", root, "tool_permissions");
	}
	if (tp && (!expect_kind(p, tp, J_OBJ, "\"tool_permissions\"") || !unique_keys(p, tp)))
		tp = NULL;
	enum decision def = tp ? read_decision(p, member(p, tp, "default"), "\"default\"") : D_UNSET;
	const jval *tools = tp ? member(p, tp, "tools") : NULL;
	if (tools && (!expect_kind(p, tools, J_OBJ, "\"tools\"") || !unique_keys(p, tools)))
		tools = NULL;
	if (!p->failed) {
		zsp_buf_puts(o, "# imported from ");
		out_comment_text(o, source, strlen(source), false);
		zsp_buf_puts(o, " by zspc --import zed\n");
		if (other.len) {
			zsp_buf_puts(o, "# other settings, not imported: ");
			zsp_buf_add(o, other.data, other.len);
			zsp_buf_puts(o, "\n");
		}
		zsp_buf_puts(o, "zsp 1;\n\npolicy \"zed\" {\n");
		if (def)
			zsp_buf_printf(o, "  default %s;\n", decision_word[def]);
		else
			zsp_buf_puts(o, "  default ask; # not set: Zed's default is \"confirm\"\n");
		for (const jval *m = tp ? tp->first : NULL; m; m = m->next)
			if (!key_is(m, "default") && !key_is(m, "tools"))
				note_unknown(p, o, "  ", m, "tool_permissions");
		for (const jval *t = tools ? tools->first : NULL; t && !p->failed; t = t->next)
			emit_tool(p, o, t);
		zsp_buf_puts(o, "}\n");
	}
	o->oom |= other.oom;
	zsp_buf_free(&other);
}

int zsp_import_zed(const char *json, size_t len, const char *source_name, char **out, char *err,
		   size_t errsize)
{
	*out = NULL;
	if (err && errsize)
		err[0] = '\0';
	struct jp p = { .t = json, .len = len };
	zsp_buf o = { 0 };
	p.a = zsp_arena_new();
	if (!p.a) {
		if (err && errsize)
			snprintf(err, errsize, "out of memory");
		return ZSP_EINTERNAL;
	}
	const jval *root = parse_document(&p);
	if (root)
		map_settings(&p, &o, root, source_name ? source_name : "(input)");
	int rc = ZSP_OK;
	if (p.oom || o.oom) {
		rc = ZSP_EINTERNAL;
		if (err && errsize)
			snprintf(err, errsize, "out of memory");
	} else if (p.failed) {
		rc = ZSP_EPOLICY;
		unsigned l, c;
		position(&p, p.err_off, &l, &c);
		if (err && errsize)
			snprintf(err, errsize, "%u:%u: %s", l, c, p.msg);
	}
	if (rc == ZSP_OK)
		*out = zsp_buf_take(&o, NULL);
	else
		zsp_buf_free(&o);
	zsp_arena_free(p.a);
	return rc;
}
