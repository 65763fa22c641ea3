/* shell.c: splits a terminal command into simple commands and redirect entries (doc/facts.md §zed)
 * with a hand-written recursive-descent parser for the bash subset agents type. */
#include "compiler/shell.h"
#include "compiler/zsp.h"

#include <string.h>

/* Here-documents opened on one line, read after its newline. */
#define MAX_HEREDOCS 32

enum {
	W_ASSIGN = 1,  /* NAME=( starts an array assignment */
	W_REGEX = 2,   /* right side of =~ in [[ ]]: ( ) | < > are literal */
	W_DELIM = 4,   /* here-document delimiter: $ and ` are literal */
};

typedef enum { NONE, DONE, ERR } status;

typedef struct heredoc {
	const char *delim;
	size_t len, where;
	bool quoted, strip_tabs;
} heredoc;

typedef struct parser {
	zsp_arena *a;
	const char *s;
	size_t n, pos;
	zsp_sh_result *out;
	size_t cap;           /* of out->cmds */
	char *buf;            /* word scratch, a stack: nested words sit above the outer one */
	size_t top, bufcap;
	unsigned depth;       /* substitution depth of the commands being parsed */
	unsigned nest;        /* every recursive construct, bounded by ZSP_SH_MAX_DEPTH */
	unsigned in_bt;       /* inside `...`: an unescaped backquote closes it */
	unsigned in_body;     /* inside a substitution of an unquoted here-document body */
	size_t steps, budget; /* work done and allowed: proportional to the input's length */
	bool failed, oom;
	heredoc hd[MAX_HEREDOCS];
	size_t nhd;
} parser;

typedef struct word {
	const char *text;  /* unquoted, in the arena */
	size_t start;
	bool quoted;       /* any quoting or escaping appeared */
} word;

typedef struct cmdb {
	const char **argv;
	size_t argc, cap, nassign, offset;
} cmdb;

typedef struct redirs {
	zsp_sh_cmd *v;
	size_t n, cap;
} redirs;

static bool parse_list(parser *p, size_t *count);
static status parse_command(parser *p);
static bool read_dq(parser *p, bool literal);
static bool read_dollar(parser *p, bool in_dq);
static bool read_backtick(parser *p);
static bool read_nested_backtick(parser *p);
static bool read_word(parser *p, unsigned flags, word *w);

static const char *const closers[] = { "}", "then", "elif", "else", "fi", "do", "done", "esac" };
static const char *const closer_why[] = {
	"unexpected '}'", "unexpected 'then'", "unexpected 'elif'", "unexpected 'else'",
	"unexpected 'fi'", "unexpected 'do'", "unexpected 'done'", "unexpected 'esac'",
};

/* ---- characters ---- */

static char at(const parser *p, size_t i)
{
	return i < p->n ? p->s[i] : '\0';
}

static char cur(const parser *p)
{
	return at(p, p->pos);
}

static bool eof(const parser *p)
{
	return p->pos >= p->n;
}

static bool is_meta(char c)
{
	return c == '\0' || strchr(" \t\n;&|<>()", c) != NULL;
}

/* ends a word or a reserved word */
static bool is_delim(const parser *p, char c)
{
	return is_meta(c) || (c == '`' && p->in_bt);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_name_start(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_name_char(char c)
{
	return is_name_start(c) || is_digit(c);
}

static bool procsub_at(const parser *p)
{
	char c = cur(p);

	return (c == '<' || c == '>') && at(p, p->pos + 1) == '(';
}

/* the unquoted word w stands at pos, followed by a delimiter */
static bool word_at(const parser *p, const char *w)
{
	size_t len = strlen(w);

	return p->n - p->pos >= len && memcmp(p->s + p->pos, w, len) == 0 &&
	       is_delim(p, at(p, p->pos + len));
}

static int closer_at(const parser *p)
{
	for (size_t i = 0; i < sizeof closers / sizeof *closers; i++)
		if (word_at(p, closers[i]))
			return (int)i;
	return -1;
}

/* length of a NAME=, NAME+= or NAME[...]= prefix of s[i..end), else 0 */
static size_t assign_len(const parser *p, size_t i, size_t end)
{
	size_t j = i;

	if (j >= end || !is_name_start(p->s[j]))
		return 0;
	while (j < end && is_name_char(p->s[j]))
		j++;
	if (j < end && p->s[j] == '[') {
		while (j < end && p->s[j] != ']')
			j++;
		if (j++ >= end)
			return 0;
	}
	if (j < end && p->s[j] == '+')
		j++;
	return j < end && p->s[j] == '=' ? j + 1 - i : 0;
}

/* ---- findings ---- */

/* A construct the parser reads but does not model exactly (its effect on what runs is not
 * known): the input is unsupported, and parsing goes on so that what follows is listed. */
static void unmodeled(parser *p, const char *why, size_t where)
{
	if (p->out->finding != ZSP_SH_UNSUPPORTED) {
		p->out->finding = ZSP_SH_UNSUPPORTED;
		p->out->why = why;
		p->out->where = where;
	}
}

static bool fail(parser *p, const char *why, size_t where)
{
	if (!p->failed) {
		p->failed = true;
		unmodeled(p, why, where);
	}
	return false;
}

/* counts n steps of work; past the budget the input is unsupported ("budget") */
static bool tick(parser *p, size_t n)
{
	p->steps += n;
	if (p->steps > p->budget)
		return fail(p, ZSP_SH_WHY_BUDGET, p->pos);
	return !p->failed;
}

static bool oom(parser *p)
{
	p->oom = true;
	return fail(p, "out of memory", p->pos);
}

static void found(parser *p, const char *why, size_t where)
{
	if (p->out->finding == ZSP_SH_CLEAN) {
		p->out->finding = ZSP_SH_SUBSTITUTION;
		p->out->why = why;
		p->out->where = where;
	}
}

static bool unexpected(parser *p)
{
	static const struct {
		const char *tok, *why;
	} toks[] = {
		{ ";;&", "';;&' outside a case item" }, { ";;", "';;' outside a case item" },
		{ ";&", "';&' outside a case item" },   { "&&", "'&&' without a command before it" },
		{ "||", "'||' without a command before it" },
		{ "|&", "'|&' without a command before it" },
		{ "|", "'|' without a command before it" },
		{ ";", "unexpected ';'" },  { "&", "unexpected '&'" },  { ")", "unexpected ')'" },
		{ "(", "unexpected '('" },  { "`", "unexpected '`'" },  { "<", "unexpected '<'" },
		{ ">", "unexpected '>'" },
	};
	int c = closer_at(p);

	if (c >= 0)
		return fail(p, closer_why[c], p->pos);
	for (size_t i = 0; i < sizeof toks / sizeof *toks; i++) {
		size_t len = strlen(toks[i].tok);

		if (p->n - p->pos >= len && memcmp(p->s + p->pos, toks[i].tok, len) == 0)
			return fail(p, toks[i].why, p->pos);
	}
	return fail(p, "unexpected word", p->pos);
}

static bool enter(parser *p, size_t where)
{
	if (++p->nest > ZSP_SH_MAX_DEPTH)
		return fail(p, "nested deeper than 32 levels", where);
	return true;
}

static void leave(parser *p)
{
	p->nest--;
}

/* Arithmetic in s[from..to) that reads a variable or a subscript: bash evaluates a variable's
 * value as arithmetic in turn and expands subscripts, so `x='a[$(cmd)]'; ((x))` runs cmd.
 * Names inside numbers (0x1f, 16#ff) do not count. */
static void check_arith(parser *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		char c = p->s[i], prev = i > from ? p->s[i - 1] : ' ';

		if (c == '[' || (is_name_start(c) && !is_name_char(prev) && prev != '#')) {
			unmodeled(p, "arithmetic on a variable or a subscript (bash evaluates its value)", from);
			return;
		}
	}
}

/* the same for an operand of let, already unquoted */
static void check_arith_word(parser *p, const char *w, size_t where)
{
	for (size_t i = 0; w[i]; i++) {
		char prev = i ? w[i - 1] : ' ';

		if (w[i] == '[' || (is_name_start(w[i]) && !is_name_char(prev) && prev != '#')) {
			unmodeled(p, "arithmetic on a variable or a subscript (bash evaluates its value)", where);
			return;
		}
	}
}

/* ${...} in s[from..to): a subscript other than digits, @ or *, a substring offset that is not
 * a number, and ${!ref} are arithmetic or indirection bash evaluates. */
static void check_param(parser *p, size_t from, size_t to)
{
	size_t i = from + 2;

	if (i < to && p->s[i] == '!') {
		unmodeled(p, "indirect expansion ${!...}", from);
		return;
	}
	if (i < to && p->s[i] == '#')
		i++;
	while (i < to && is_name_char(p->s[i]))
		i++;
	if (i < to && p->s[i] == '[') {
		size_t j = i + 1;

		while (j < to && (is_digit(p->s[j]) || p->s[j] == '@' || p->s[j] == '*'))
			j++;
		if (j == i + 1 || j >= to || p->s[j] != ']') {
			unmodeled(p, "array subscript in ${...} (bash evaluates it)", from);
			return;
		}
		i = j + 1;
	}
	if (i + 1 < to && p->s[i] == ':' && !strchr("-=?+", p->s[i + 1])) {
		size_t j = i + 1;

		while (j < to && (is_digit(p->s[j]) || strchr(" :-", p->s[j])))
			j++;
		if (j < to)
			unmodeled(p, "substring offset in ${...} that is not a number", from);
	}
}

/* ---- output ---- */

static void put(parser *p, char c)
{
	if (p->top < p->bufcap)
		p->buf[p->top++] = c;
	else
		fail(p, "word too long", p->pos);
}

static void put_n(parser *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(p, s[i]);
}

/* copies the source text of a substitution into the word, as written */
static bool put_raw(parser *p, size_t from)
{
	if (!p->failed)
		put_n(p, p->s + from, p->pos - from);
	return !p->failed;
}

static void push_entry(parser *p, size_t at, const zsp_sh_cmd *c)
{
	zsp_sh_result *o = p->out;

	if (o->ncmds == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		zsp_sh_cmd *v = zsp_arena_calloc(p->a, cap, sizeof *v);

		if (!v) {
			oom(p);
			return;
		}
		if (o->ncmds)
			memcpy(v, o->cmds, o->ncmds * sizeof *v);
		o->cmds = v;
		p->cap = cap;
	}
	p->steps += o->ncmds - at;  /* counted: the next tick() stops a parse over its budget */
	memmove(o->cmds + at + 1, o->cmds + at, (o->ncmds - at) * sizeof *o->cmds);
	o->cmds[at] = *c;
	o->ncmds++;
}

static void cb_push(parser *p, cmdb *b, const char *w, size_t offset)
{
	if (b->argc + 1 >= b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 8;
		const char **v = zsp_arena_calloc(p->a, cap, sizeof *v);

		if (!v) {
			oom(p);
			return;
		}
		if (b->argc)
			memcpy(v, b->argv, b->argc * sizeof *v);
		b->argv = v;
		b->cap = cap;
	}
	if (!b->argc)
		b->offset = offset;
	b->argv[b->argc++] = w;
}

/* inserts the command at `first`, before the nested commands its words produced */
static void emit_command(parser *p, const cmdb *b, size_t first)
{
	zsp_sh_cmd c = { ZSP_SH_COMMAND, NULL, b->argv, b->argc, b->nassign, p->depth, b->offset };
	size_t len = 0;
	char *t;

	if (!b->argc || p->oom)
		return;
	for (size_t i = 0; i < b->argc; i++)
		len += strlen(b->argv[i]) + 1;
	t = zsp_arena_alloc(p->a, len);
	if (!t) {
		oom(p);
		return;
	}
	c.text = t;
	for (size_t i = 0; i < b->argc; i++) {
		size_t l = strlen(b->argv[i]);

		memcpy(t, b->argv[i], l);
		t += l;
		*t++ = ' ';
	}
	t[-1] = '\0';
	push_entry(p, first, &c);
}

static void emit_redirs(parser *p, const redirs *r)
{
	for (size_t i = 0; i < r->n && !p->oom; i++)
		push_entry(p, p->out->ncmds, &r->v[i]);
}

/* ---- here-documents ---- */

/* The end of the logical line at ls and whether it is one: an unquoted body joins a line that
 * ends in an unescaped backslash to the next before it looks for the delimiter, as bash does. */
static size_t body_line(parser *p, const heredoc *h, size_t ls, bool *joined)
{
	size_t k = ls;

	while (k < p->n && p->s[k] != '\n' && tick(p, 1)) {
		if (p->s[k] == '\\' && !h->quoted && k + 1 < p->n) {
			*joined |= p->s[k + 1] == '\n';
			k++;
		}
		k++;
	}
	return k;
}

/* Is the logical line s[ls..le) the delimiter? Joined lines are compared without their
 * backslash-newlines; <<- strips the leading tabs of the logical line. */
static bool is_delim_line(parser *p, const heredoc *h, size_t ls, size_t le)
{
	size_t mark = p->top, k = ls;
	bool same;

	while (h->strip_tabs && k < le && (p->s[k] == '\t' ||
					   (p->s[k] == '\\' && k + 1 < le && p->s[k + 1] == '\n')))
		k += p->s[k] == '\t' ? 1 : 2;
	for (; k < le; k++) {
		if (p->s[k] == '\\' && !h->quoted && k + 1 < le && p->s[k + 1] == '\n')
			k++;
		else
			put(p, p->s[k]);
	}
	same = p->top - mark == h->len && memcmp(p->buf + mark, h->delim, h->len) == 0;
	p->top = mark;
	return same;
}

/* The expansions of an unquoted body s[from..to), read as inside double quotes: the commands
 * of its substitutions are listed like those of a word. */
static void body_expansions(parser *p, size_t from, size_t to, bool joined)
{
	size_t n = p->n, mark = p->top, subs = p->out->ncmds;

	p->n = to;
	p->pos = from;
	p->in_body++;
	while (!eof(p) && tick(p, 1)) {
		char c = cur(p), d = at(p, p->pos + 1);

		if (c == '\\') {
			p->pos += 2;
		} else if (c == '`' || (c == '$' && d && (is_name_char(d) || strchr("{([?$!#@*-", d)))) {
			found(p, "expansion in an unquoted here-document", p->pos);
			if (c == '`')
				read_backtick(p);
			else
				read_dollar(p, true);
		} else {
			p->pos++;
		}
	}
	/* a substitution over joined lines is read from the raw text: in quotes inside it, a
	 * backslash-newline bash has removed would still be there */
	if (joined && p->out->ncmds != subs)
		unmodeled(p, "backslash-newline in a here-document with a command substitution", from);
	p->in_body--;
	p->top = mark;
	p->n = n;
}

/* reads the bodies of the here-documents opened on the line just ended */
static bool read_heredocs(parser *p)
{
	heredoc hd[MAX_HEREDOCS];
	size_t nhd = p->nhd;

	memcpy(hd, p->hd, nhd * sizeof *hd);
	p->nhd = 0;
	for (size_t i = 0; i < nhd && !p->failed; i++) {
		const heredoc *h = &hd[i];
		size_t body = p->pos, ls, le;
		bool joined = false;

		for (;;) {
			if (eof(p))
				return fail(p, "here-document without its delimiter line", h->where);
			ls = p->pos;
			le = body_line(p, h, ls, &joined);
			if (p->failed)
				return false;
			p->pos = le < p->n ? le + 1 : le;
			if (is_delim_line(p, h, ls, le))
				break;
		}
		if (!h->quoted) {
			size_t after = p->pos;

			body_expansions(p, body, ls, joined);
			p->pos = after;
		}
	}
	return !p->failed;
}

static bool eat_newline(parser *p)
{
	p->pos++;
	return read_heredocs(p);
}

/* blanks, line continuations and comments; called only where a word may start */
static void skip_blanks(parser *p)
{
	for (;;) {
		char c = cur(p);

		if (!tick(p, 1))
			return;
		if (c == ' ' || c == '\t')
			p->pos++;
		else if (c == '\\' && at(p, p->pos + 1) == '\n')
			p->pos += 2;
		else if (c == '#' && !eof(p))
			while (!eof(p) && cur(p) != '\n' && !(cur(p) == '`' && p->in_bt))
				p->pos++;
		else
			return;
	}
}

static bool skip_newlines(parser *p)
{
	for (;;) {
		skip_blanks(p);
		if (cur(p) != '\n')
			return !p->failed;
		if (!eat_newline(p))
			return false;
	}
}

/* ---- words ---- */

static bool read_single(parser *p)
{
	size_t open = p->pos++;

	while (!eof(p) && cur(p) != '\'' && tick(p, 1)) {
		if (cur(p) == '`' && p->in_bt)
			return fail(p, "backquote inside quotes inside `...`", p->pos);
		put(p, p->s[p->pos++]);
	}
	if (eof(p))
		return fail(p, "unterminated ' quote", open);
	p->pos++;
	return !p->failed;
}

static void put_utf8(parser *p, unsigned long v)
{
	if (v < 0x80) {
		put(p, (char)v);
	} else if (v < 0x800) {
		put(p, (char)(0xc0 | v >> 6));
		put(p, (char)(0x80 | (v & 0x3f)));
	} else if (v < 0x10000) {
		put(p, (char)(0xe0 | v >> 12));
		put(p, (char)(0x80 | (v >> 6 & 0x3f)));
		put(p, (char)(0x80 | (v & 0x3f)));
	} else if (v <= 0x10ffff) {
		put(p, (char)(0xf0 | v >> 18));
		put(p, (char)(0x80 | (v >> 12 & 0x3f)));
		put(p, (char)(0x80 | (v >> 6 & 0x3f)));
		put(p, (char)(0x80 | (v & 0x3f)));
	}
}

static int digit_value(char c, unsigned base)
{
	int v = is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
					c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;

	return v < (int)base ? v : -1;
}

/* $'...': ANSI-C escapes decoded as bash does, including the cut at a NUL byte */
static bool read_ansi(parser *p)
{
	size_t open = p->pos;
	bool cut = false;

	p->pos += 2;
	for (;;) {
		unsigned long v = 0;
		unsigned base = 16, max = 0, digits = 0;
		bool utf8 = false;
		char c, e;

		if (!tick(p, 1))
			return false;
		if (eof(p))
			return fail(p, "unterminated $' quote", open);
		c = cur(p);
		if (c == '\'') {
			p->pos++;
			return !p->failed;
		}
		if (c == '`' && p->in_bt)
			return fail(p, "backquote inside quotes inside `...`", p->pos);
		if (c != '\\' || p->pos + 1 >= p->n) {
			if (!cut)
				put(p, c);
			p->pos++;
			continue;
		}
		e = p->s[p->pos + 1];
		p->pos += 2;
		switch (e) {
		case 'a': v = 7; break;
		case 'b': v = 8; break;
		case 'e': case 'E': v = 27; break;
		case 'f': v = 12; break;
		case 'n': v = 10; break;
		case 'r': v = 13; break;
		case 't': v = 9; break;
		case 'v': v = 11; break;
		case '\\': case '\'': case '"': case '?': v = (unsigned char)e; break;
		case 'c':
			if (eof(p))
				continue;
			v = (unsigned char)p->s[p->pos++] & 0x1f;
			break;
		case 'x': max = 2; break;
		case 'u': max = 4; utf8 = true; break;
		case 'U': max = 8; utf8 = true; break;
		default:
			if (e >= '0' && e <= '7') {
				base = 8;
				max = 3;
				p->pos--;
				break;
			}
			if (!cut) {
				put(p, '\\');
				put(p, e);
			}
			continue;
		}
		for (; digits < max && digit_value(cur(p), base) >= 0; digits++)
			v = v * base + (unsigned)digit_value(p->s[p->pos++], base);
		if (max && !digits) {
			if (!cut) {
				put(p, '\\');
				put(p, e);
			}
			continue;
		}
		if (v == 0)
			cut = true;
		else if (!cut && utf8)
			put_utf8(p, v);
		else if (!cut)
			put(p, (char)(v & 0xff));
	}
}

static bool read_dq(parser *p, bool literal)
{
	size_t open = p->pos++;

	while (tick(p, 1)) {
		char c, next;

		if (eof(p))
			return fail(p, "unterminated \" quote", open);
		c = cur(p);
		next = at(p, p->pos + 1);
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c == '\\' && next == '\n') {
			p->pos += 2;
		} else if (c == '\\' && next && strchr("$`\"\\", next)) {
			if (next == '`' && p->in_bt) {
				read_nested_backtick(p);
				continue;
			}
			put(p, next);
			p->pos += 2;
		} else if (c == '$' && !literal) {
			read_dollar(p, true);
		} else if (c == '`' && !literal) {
			if (p->in_bt)
				return fail(p, "nested backquotes", p->pos);
			read_backtick(p);
		} else {
			put(p, c);
			p->pos++;
		}
	}
	return !p->failed;
}

/* Where a closing `)` at depth 0 ends s[i..]: 1 if followed by `)` (arithmetic), 0 if not (a
 * subshell after all, as bash decides), -1 if there is none (or the budget ran out). */
static int arith_probe(parser *p, size_t i)
{
	unsigned depth = 0;

	while (i < p->n) {
		char c = p->s[i];

		if (!tick(p, 1))
			return -1;
		if (c == '\\') {
			i += 2;
			continue;
		}
		if (c == '\'' || c == '"') {
			for (i++; i < p->n && p->s[i] != c; i++)
				if (c == '"' && p->s[i] == '\\')
					i++;
			i++;
			continue;
		}
		if (c == '(')
			depth++;
		else if (c == ')' && depth)
			depth--;
		else if (c == ')')
			return at(p, i + 1) == ')' ? 1 : 0;
		i++;
	}
	return -1;
}

/* Skips to the `close` matching an already consumed opener, parsing the substitutions inside
 * (their commands are listed) but keeping nothing in the word. */
static bool scan_balanced(parser *p, char open_c, char close_c, bool in_dq, size_t open,
			  const char *unterminated)
{
	size_t mark = p->top;
	unsigned depth = 0;

	while (tick(p, 1)) {
		char c;

		if (eof(p)) {
			fail(p, unterminated, open);
			break;
		}
		c = cur(p);
		if (c == close_c && depth == 0) {
			p->pos++;
			break;
		}
		if (c == '\\') {
			p->pos += p->pos + 1 < p->n ? 2 : 1;
		} else if (c == '\'' && !in_dq) {
			read_single(p);
		} else if (c == '"') {
			read_dq(p, false);
		} else if (c == '$') {
			read_dollar(p, in_dq);
		} else if (c == '`') {
			if (p->in_bt)
				fail(p, "nested backquotes", p->pos);
			else
				read_backtick(p);
		} else {
			depth += c == open_c;
			depth -= c == close_c;
			p->pos++;
		}
	}
	p->top = mark;
	return !p->failed;
}

/* ${...}, $[...], $((...)), ((...)): scanned, not parsed; `twice` wants a second `)` */
static bool scan_form(parser *p, char open_c, char close_c, size_t open, bool in_dq, bool twice,
		      const char *unterminated)
{
	if (enter(p, open) && scan_balanced(p, open_c, close_c, in_dq, open, unterminated) &&
	    twice) {
		if (cur(p) == ')')
			p->pos++;
		else
			fail(p, "malformed ((...)) arithmetic", open);
	}
	leave(p);
	return !p->failed;
}

/* the commands of $(...), `...`, <(...), >(...), one level deeper */
static bool subparse(parser *p, char closer, size_t open, const char *unterminated)
{
	size_t count = 0;

	if (enter(p, open)) {
		p->depth++;
		if (parse_list(p, &count)) {
			if (!eof(p) && cur(p) == closer)
				p->pos++;
			else if (eof(p))
				fail(p, unterminated, open);
			else
				unexpected(p);
		}
		p->depth--;
	}
	leave(p);
	return !p->failed;
}

/* Parses t[0..n), the text of a nested `...`, with a parser of its own; its commands
 * are listed one level below the current one, at offset `where`. */
static void parse_nested(parser *p, const char *t, size_t n, size_t where)
{
	zsp_sh_result sub;
	parser q = { 0 };
	size_t count = 0;

	memset(&sub, 0, sizeof sub);
	q.a = p->a;
	q.s = t;
	q.n = n;
	q.out = &sub;
	q.nest = p->nest + 1;
	q.in_bt = 1;  /* the text of a `...`: a \` in it nests once more */
	q.budget = ZSP_SH_STEPS_BASE + ZSP_SH_STEPS_PER_BYTE * n;
	q.bufcap = n + 16;
	q.buf = zsp_arena_alloc(p->a, q.bufcap);
	if (!q.buf) {
		oom(p);
		return;
	}
	if (q.nest > ZSP_SH_MAX_DEPTH) {
		fail(p, "nested deeper than 32 levels", where);
		return;
	}
	if (parse_list(&q, &count) && !eof(&q))
		unexpected(&q);
	if (q.oom) {
		oom(p);
		return;
	}
	p->steps += q.steps;
	for (size_t i = 0; i < sub.ncmds; i++) {
		zsp_sh_cmd c = sub.cmds[i];

		c.depth += p->depth + 1;
		c.offset = where;
		push_entry(p, p->out->ncmds, &c);
	}
}

/* \`...\` inside `...`: bash removes one level of \\ \` \$ escapes from the outer text and
 * reads what is left as a substitution of its own. That text is parsed apart (its commands are
 * listed); the input is unsupported. */
static bool read_nested_backtick(parser *p)
{
	size_t open = p->pos, i = open + 2, mark = p->top;
	const char *t;
	bool esc = false;

	unmodeled(p, "nested backquotes", open);
	for (;;) {
		char u[2];
		size_t nu = 0;

		if (i >= p->n || p->s[i] == '`')
			fail(p, "unterminated nested backquotes", open);
		if (!tick(p, 1)) {
			p->top = mark;
			return false;
		}
		if (p->s[i] == '\\' && i + 1 < p->n && strchr("\\`$", p->s[i + 1])) {
			u[nu++] = p->s[i + 1];
			i += 2;
		} else if (p->s[i] == '\\' && i + 1 < p->n) {
			u[nu++] = '\\';
			u[nu++] = p->s[i + 1];
			i += 2;
		} else {
			u[nu++] = p->s[i++];
		}
		for (size_t k = 0; k < nu; k++) {
			if (esc)
				esc = false;
			else if (u[k] == '\\')
				esc = true;
			else if (u[k] == '`')
				goto closed;
			put(p, u[k]);
		}
	}
closed:
	/* the text is built on the word stack (it is no longer than the input it came from) and
	 * copied out at its size: many nested substitutions cost their length, not the input's */
	t = p->failed ? NULL : zsp_arena_strndup(p->a, p->buf + mark, p->top - mark);
	p->top = mark;
	if (p->failed)
		return false;
	if (!t)
		return oom(p);
	p->pos = i;
	parse_nested(p, t, strlen(t), open);
	return put_raw(p, open);
}

static bool read_backtick(parser *p)
{
	size_t open = p->pos++;

	found(p, "command substitution `...`", open);
	p->in_bt++;
	subparse(p, '`', open, "unterminated `...` substitution");
	p->in_bt--;
	return put_raw(p, open);
}

static bool read_procsub(parser *p)
{
	size_t open = p->pos;

	found(p, cur(p) == '<' ? "process substitution <(...)" : "process substitution >(...)", open);
	p->pos += 2;
	subparse(p, ')', open, "unterminated process substitution");
	return put_raw(p, open);
}

static const char *special_why(char c)
{
	switch (c) {
	case '?': return "special parameter $?";
	case '$': return "special parameter $$";
	case '!': return "special parameter $!";
	case '#': return "special parameter $#";
	case '@': return "special parameter $@";
	case '*': return "special parameter $*";
	default: return "special parameter $-";
	}
}

static bool read_dollar(parser *p, bool in_dq)
{
	static const char *const positional[] = {
		"positional parameter $0", "positional parameter $1", "positional parameter $2",
		"positional parameter $3", "positional parameter $4", "positional parameter $5",
		"positional parameter $6", "positional parameter $7", "positional parameter $8",
		"positional parameter $9",
	};
	size_t open = p->pos;
	char c = at(p, open + 1);

	if (!in_dq && c == '\'')
		return read_ansi(p);
	if (!in_dq && c == '"') {
		p->pos++;
		return read_dq(p, false);
	}
	if (c == '(' && at(p, open + 2) == '(') {
		int k = arith_probe(p, open + 3);

		if (k < 0)
			return fail(p, "unterminated $((...)) arithmetic", open);
		if (k > 0) {
			found(p, "arithmetic expansion $((...))", open);
			p->pos += 3;
			if (!scan_form(p, '(', ')', open, false, true, "unterminated $((...)) arithmetic"))
				return false;
			check_arith(p, open + 3, p->pos - 2);
			return put_raw(p, open);
		}
	}
	if (c == '(') {
		found(p, "command substitution $(...)", open);
		p->pos += 2;
		subparse(p, ')', open, "unterminated $(...) substitution");
		return put_raw(p, open);
	}
	if (c == '{' || c == '[') {
		found(p, c == '{' ? "parameter expansion ${...}" : "arithmetic expansion $[...]", open);
		p->pos += 2;
		if (!scan_form(p, c, c == '{' ? '}' : ']', open, in_dq, false,
			       c == '{' ? "unterminated ${...}" : "unterminated $[...]"))
			return false;
		if (c == '{')
			check_param(p, open, p->pos - 1);
		else
			check_arith(p, open + 2, p->pos - 1);
		return put_raw(p, open);
	}
	if (is_name_start(c)) {
		found(p, "variable expansion $NAME", open);
		for (p->pos++; is_name_char(cur(p)); p->pos++)
			;
		return put_raw(p, open);
	}
	if (is_digit(c) || (c && strchr("?$!#@*-", c))) {
		found(p, is_digit(c) ? positional[c - '0'] : special_why(c), open);
		p->pos += 2;
		return put_raw(p, open);
	}
	put(p, '$');
	p->pos++;
	return !p->failed;
}

/* NAME=(a b c): kept as written with the elements unquoted and single-spaced */
static bool read_array(parser *p)
{
	size_t open = p->pos;
	bool first = true;
	word w;

	if (enter(p, open)) {
		put(p, '(');
		p->pos++;
	}
	while (!p->failed) {
		char c;

		skip_blanks(p);
		c = cur(p);
		if (eof(p)) {
			fail(p, "unterminated array assignment", open);
		} else if (c == ')') {
			put(p, ')');
			p->pos++;
			break;
		} else if (c == '\n') {
			eat_newline(p);
		} else if (is_delim(p, c) && !procsub_at(p)) {
			unexpected(p);
		} else if (read_word(p, 0, &w)) {
			if (!first)
				put(p, ' ');
			put_n(p, w.text, strlen(w.text));
			first = false;
		}
	}
	leave(p);
	return !p->failed;
}

/* @(..) !(..) +(..) *(..) ?(..): an extglob pattern under `shopt -s extglob`, a syntax error
 * without it. Kept in the word as written, and unsupported. */
static bool read_extglob(parser *p)
{
	size_t open = p->pos;
	unsigned depth = 0;

	unmodeled(p, "extglob pattern", open - 1);
	while (tick(p, 1)) {
		char c = cur(p);

		if (eof(p))
			return fail(p, "unterminated extglob pattern", open);
		if (c == '`' && p->in_bt)
			return fail(p, "unterminated extglob pattern", open);
		if (c == '\\' && p->pos + 1 < p->n)
			put(p, p->s[p->pos++]);
		depth += c == '(';
		depth -= c == ')';
		put(p, p->s[p->pos++]);
		if (!depth)
			break;
	}
	return !p->failed;
}

/* Reads one word at pos (not at a delimiter) into w->text, unquoted; substitutions stay as
 * written and their commands are listed. */
static bool read_word(parser *p, unsigned flags, word *w)
{
	size_t mark = p->top;
	unsigned rdepth = 0;

	w->start = p->pos;
	w->quoted = false;
	w->text = NULL;
	while (!eof(p) && tick(p, 1)) {
		size_t here = p->pos;
		char c = p->s[here], next = at(p, here + 1);

		if (c == '`' && p->in_bt)
			break;
		/* before the regex's literal < and (: bash runs <(..) even right of =~ */
		if ((c == '<' || c == '>') && next == '(' && !(flags & W_DELIM)) {
			read_procsub(p);
			continue;
		}
		if ((flags & W_REGEX) &&
		    (c == '(' || (c == ')' && rdepth) || c == '|' || c == '<' || c == '>' ||
		     ((c == ' ' || c == '\t') && rdepth))) {
			rdepth += c == '(';
			rdepth -= c == ')';
			put(p, c);
			p->pos++;
			continue;
		}
		if (c == '(' && (flags & W_ASSIGN) && here > w->start &&
		    assign_len(p, w->start, here) == here - w->start) {
			read_array(p);
			continue;
		}
		if (c == '(' && here > w->start && strchr("@!+*?", p->s[here - 1]) &&
		    !(flags & W_DELIM)) {
			read_extglob(p);
			continue;
		}
		if (is_meta(c))
			break;
		switch (c) {
		case '\\':
			if (next == '\n') {
				p->pos += 2;
				continue;
			}
			w->quoted = true;
			if (here + 1 >= p->n) {
				put(p, '\\');
				p->pos++;
			} else if (next == '`' && p->in_bt) {
				read_nested_backtick(p);
			} else {
				put(p, next);
				p->pos += 2;
			}
			continue;
		case '\'':
			w->quoted = true;
			read_single(p);
			continue;
		case '"':
			w->quoted = true;
			read_dq(p, flags & W_DELIM);
			continue;
		case '$':
			if ((flags & W_DELIM) && (next == '\'' || next == '"')) {
				/* bash drops the $ of $'...' and $"..." in a delimiter and decodes
				 * no escape: `<<$'EOF'` ends at EOF; a backslash in it is not modelled */
				const char *q = memchr(p->s + here + 2, next, p->n - here - 2);
				const char *bs = memchr(p->s + here + 2, '\\', p->n - here - 2);

				if (bs && (!q || bs < q))
					unmodeled(p, "backslash in a $'...' or $\"...\" here-document delimiter",
						  here);
				p->pos++;
				continue;
			}
			if (flags & W_DELIM)
				break;
			w->quoted |= next == '\'' || next == '"';
			read_dollar(p, false);
			continue;
		case '`':
			if (flags & W_DELIM)
				break;
			read_backtick(p);
			continue;
		}
		put(p, c);
		p->pos++;
	}
	if (!p->failed && p->pos == w->start)
		fail(p, "unexpected character", p->pos);
	if (!p->failed) {
		w->text = zsp_arena_strndup(p->a, p->buf + mark, p->top - mark);
		if (!w->text)
			oom(p);
	}
	p->top = mark;
	return !p->failed;
}

/* ---- redirects ---- */

static size_t op_len(const parser *p, size_t j, bool has_fd)
{
	char c = at(p, j), d = at(p, j + 1), e = at(p, j + 2);

	if (c == '<' && d == '<')
		return e == '<' || e == '-' ? 3 : 2;
	if (c == '<')
		return d == '(' ? 0 : d == '>' || d == '&' ? 2 : 1;
	if (c == '>')
		return d == '(' ? 0 : d == '>' || d == '|' || d == '&' ? 2 : 1;
	if (c == '&' && d == '>' && !has_fd)
		return e == '>' ? 3 : 2;
	return 0;
}

/* a redirect operator at pos, with its optional fd number or {varname} */
static bool redirect_at(const parser *p, size_t *fdlen, size_t *oplen)
{
	size_t i = p->pos, j = i, k;

	if (is_digit(at(p, j))) {
		while (is_digit(at(p, j)))
			j++;
	} else if (at(p, j) == '{' && is_name_start(at(p, j + 1))) {
		for (j++; is_name_char(at(p, j)); j++)
			;
		if (at(p, j) != '}')
			return false;
		j++;
	}
	if (j > i && at(p, j) != '<' && at(p, j) != '>')
		return false;
	k = op_len(p, j, j > i);
	if (fdlen)
		*fdlen = j - i;
	if (oplen)
		*oplen = k;
	return k > 0;
}

static bool is_fd_word(const char *w)
{
	size_t i = 0;

	while (is_digit(w[i]))
		i++;
	if (w[i] == '-')
		i++;
	return i > 0 && w[i] == '\0';
}

static bool parse_redirect(parser *p, redirs *r)
{
	size_t start = p->pos, fdlen = 0, oplen = 0, total;
	const char *op;
	zsp_sh_cmd e = { ZSP_SH_REDIRECT, NULL, NULL, 2, 0, p->depth, start };
	const char **argv;
	word w;

	redirect_at(p, &fdlen, &oplen);
	op = p->s + start + fdlen;
	total = fdlen + oplen;
	p->pos = start + total;
	skip_blanks(p);
	if (eof(p) || (is_delim(p, cur(p)) && !procsub_at(p)))
		return fail(p, "redirect without a target", start);
	if (op[0] == '<' && op[1] == '<' && op[2] != '<') {
		if (!read_word(p, W_DELIM, &w))
			return false;
		if (p->nhd == MAX_HEREDOCS)
			return fail(p, "too many here-documents on one line", start);
		if (p->in_bt || p->in_body)
			unmodeled(p, p->in_bt ? "here-document inside `...`"
					      : "here-document inside a here-document's substitution", start);
		p->hd[p->nhd++] = (heredoc){ w.text, strlen(w.text), start, w.quoted, oplen == 3 };
		return true;
	}
	if (!read_word(p, 0, &w))
		return false;
	if (op[0] == '<' && op[1] == '<')
		return true;  /* a here-string is input, not a file */
	if (oplen == 2 && op[0] != '&' && op[1] == '&' && is_fd_word(w.text))
		return true;
	if (strcmp(w.text, "/dev/null") == 0)
		return true;
	e.text = zsp_arena_printf(p->a, "%.*s %s", (int)total, p->s + start, w.text);
	argv = zsp_arena_calloc(p->a, 3, sizeof *argv);
	if (!e.text || !argv)
		return oom(p);
	argv[0] = zsp_arena_strndup(p->a, p->s + start, total);
	argv[1] = w.text;
	e.argv = argv;
	if (!argv[0])
		return oom(p);
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 4;
		zsp_sh_cmd *v = zsp_arena_calloc(p->a, cap, sizeof *v);

		if (!v)
			return oom(p);
		if (r->n)
			memcpy(v, r->v, r->n * sizeof *v);
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = e;
	return true;
}

/* ---- commands ---- */

/* redirects after a compound command; then only an operator or a closer may follow */
static status finish_compound(parser *p)
{
	redirs r = { 0 };

	for (;;) {
		skip_blanks(p);
		if (p->failed || !redirect_at(p, NULL, NULL))
			break;
		parse_redirect(p, &r);
	}
	emit_redirs(p, &r);
	if (!p->failed && !eof(p) && !is_delim(p, cur(p)) && closer_at(p) < 0)
		fail(p, "unexpected word after a compound command", p->pos);
	return p->failed ? ERR : DONE;
}

static bool expect_word(parser *p, const char *w, size_t open, const char *unterminated)
{
	skip_blanks(p);
	if (word_at(p, w)) {
		p->pos += strlen(w);
		return true;
	}
	if (eof(p))
		return fail(p, unterminated, open);
	return unexpected(p);
}

/* A non-empty command list ended by one of `ends` (")" is the character). */
static bool body(parser *p, size_t open, const char *unterminated, const char *const *ends)
{
	size_t count = 0;

	if (!parse_list(p, &count))
		return false;
	if (count)
		return true;
	if (eof(p))
		return fail(p, unterminated, open);
	for (; *ends; ends++)
		if (strcmp(*ends, ")") == 0 ? cur(p) == ')' : word_at(p, *ends))
			return fail(p, "empty command list", p->pos);
	return unexpected(p);
}

static status parse_subshell(parser *p)
{
	static const char *const ends[] = { ")", NULL };
	size_t open = p->pos;

	if (enter(p, open)) {
		p->pos++;
		if (body(p, open, "unterminated ( subshell", ends)) {
			if (cur(p) == ')')
				p->pos++;
			else if (eof(p))
				fail(p, "unterminated ( subshell", open);
			else
				unexpected(p);
		}
	}
	leave(p);
	return p->failed ? ERR : finish_compound(p);
}

static status parse_group(parser *p)
{
	static const char *const ends[] = { "}", NULL };
	size_t open = p->pos;

	if (enter(p, open)) {
		p->pos++;
		if (body(p, open, "unterminated { group", ends))
			expect_word(p, "}", open, "unterminated { group");
	}
	leave(p);
	return p->failed ? ERR : finish_compound(p);
}

/* ((...)): arithmetic, or two subshells when the parentheses say so */
static status parse_dparen(parser *p)
{
	size_t open = p->pos;
	int k = arith_probe(p, open + 2);

	if (k == 0)
		return parse_subshell(p);
	if (k < 0) {
		fail(p, "unterminated ((...)) arithmetic", open);
		return ERR;
	}
	found(p, "arithmetic command ((...))", open);
	p->pos += 2;
	if (!scan_form(p, '(', ')', open, false, true, "unterminated ((...)) arithmetic"))
		return ERR;
	check_arith(p, open + 2, p->pos - 2);
	return finish_compound(p);
}

static status parse_if(parser *p)
{
	static const char *const then_end[] = { "then", NULL };
	static const char *const body_end[] = { "elif", "else", "fi", NULL };
	static const char *const fi_end[] = { "fi", NULL };
	static const char *const u = "unterminated if";
	size_t open = p->pos;

	if (enter(p, open)) {
		p->pos += 2;
		for (;;) {
			if (!body(p, open, u, then_end) || !expect_word(p, "then", open, u) ||
			    !body(p, open, u, body_end))
				break;
			if (word_at(p, "elif")) {
				p->pos += 4;
				continue;
			}
			if (word_at(p, "else")) {
				p->pos += 4;
				if (!body(p, open, u, fi_end))
					break;
			}
			expect_word(p, "fi", open, u);
			break;
		}
	}
	leave(p);
	return p->failed ? ERR : finish_compound(p);
}

static status parse_while(parser *p)
{
	static const char *const do_end[] = { "do", NULL };
	static const char *const done_end[] = { "done", NULL };
	size_t open = p->pos;
	const char *u = p->s[open] == 'w' ? "unterminated while" : "unterminated until";

	if (enter(p, open)) {
		p->pos += 5;
		if (body(p, open, u, do_end) && expect_word(p, "do", open, u) &&
		    body(p, open, u, done_end))
			expect_word(p, "done", open, u);
	}
	leave(p);
	return p->failed ? ERR : finish_compound(p);
}

static bool is_name(const word *w)
{
	const char *s = w->text;

	if (w->quoted || !is_name_start(*s))
		return false;
	while (is_name_char(*s))
		s++;
	return *s == '\0';
}

/* the header of for/select, up to the body */
static bool for_head(parser *p, size_t open, bool is_for, const char *u)
{
	word w;

	skip_blanks(p);
	if (is_for && cur(p) == '(' && at(p, p->pos + 1) == '(') {
		size_t a = p->pos;

		if (arith_probe(p, a + 2) != 1)
			return fail(p, "malformed for ((...))", a);
		found(p, "arithmetic for ((...))", a);
		p->pos += 2;
		if (!scan_form(p, '(', ')', a, false, true, "malformed for ((...))"))
			return false;
		check_arith(p, a + 2, p->pos - 2);
		skip_blanks(p);
		if (cur(p) == ';')
			p->pos++;
		return true;
	}
	if (eof(p))
		return fail(p, u, open);
	if (is_delim(p, cur(p)))
		return unexpected(p);
	if (!read_word(p, 0, &w))
		return false;
	if (!is_name(&w))
		return fail(p, "not a variable name after for/select", w.start);
	if (!skip_newlines(p))
		return false;
	if (word_at(p, "in")) {
		p->pos += 2;
		for (;;) {
			skip_blanks(p);
			if (eof(p))
				return fail(p, u, open);
			if (cur(p) == ';' || cur(p) == '\n')
				break;
			if (is_delim(p, cur(p)) && !procsub_at(p))
				return unexpected(p);
			if (!read_word(p, 0, &w))
				return false;
		}
	}
	if (cur(p) == ';')
		p->pos++;
	return true;
}

static status parse_for(parser *p, bool is_for)
{
	static const char *const done_end[] = { "done", NULL };
	static const char *const brace_end[] = { "}", NULL };
	size_t open = p->pos;
	const char *u = is_for ? "unterminated for" : "unterminated select";

	if (enter(p, open)) {
		p->pos += is_for ? 3 : 6;
		if (for_head(p, open, is_for, u) && skip_newlines(p)) {
			if (word_at(p, "do")) {
				p->pos += 2;
				if (body(p, open, u, done_end))
					expect_word(p, "done", open, u);
			} else if (word_at(p, "{")) {
				p->pos++;
				if (body(p, open, u, brace_end))
					expect_word(p, "}", open, u);
			} else if (eof(p)) {
				fail(p, u, open);
			} else {
				unexpected(p);
			}
		}
	}
	leave(p);
	return p->failed ? ERR : finish_compound(p);
}

/* one `pattern | pattern )` of a case item */
static bool case_patterns(parser *p, size_t open, const char *u)
{
	word w;

	if (cur(p) == '(')
		p->pos++;
	for (;;) {
		skip_blanks(p);
		if (eof(p))
			return fail(p, u, open);
		if (is_delim(p, cur(p)) && !procsub_at(p))
			return unexpected(p);
		if (!read_word(p, 0, &w))
			return false;
		skip_blanks(p);
		if (cur(p) != '|' || at(p, p->pos + 1) == '|')
			break;
		p->pos++;
	}
	if (cur(p) == ')') {
		p->pos++;
		return true;
	}
	return eof(p) ? fail(p, u, open) : unexpected(p);
}

static status parse_case(parser *p)
{
	static const char *const u = "unterminated case";
	size_t open = p->pos, count;
	word w;

	if (!enter(p, open))
		goto out;
	p->pos += 4;
	skip_blanks(p);
	if (eof(p)) {
		fail(p, u, open);
		goto out;
	}
	if ((is_delim(p, cur(p)) && !procsub_at(p) && !unexpected(p)) || !read_word(p, 0, &w) ||
	    !skip_newlines(p) || !expect_word(p, "in", open, u))
		goto out;
	for (;;) {
		if (!skip_newlines(p))
			break;
		if (word_at(p, "esac")) {
			p->pos += 4;
			break;
		}
		if (eof(p)) {
			fail(p, u, open);
			break;
		}
		count = 0;
		if (!case_patterns(p, open, u) || !parse_list(p, &count))
			break;
		skip_blanks(p);
		if (p->n - p->pos >= 3 && memcmp(p->s + p->pos, ";;&", 3) == 0)
			p->pos += 3;
		else if (cur(p) == ';' && (at(p, p->pos + 1) == ';' || at(p, p->pos + 1) == '&'))
			p->pos += 2;
		else if (!word_at(p, "esac")) {
			if (eof(p))
				fail(p, u, open);
			else
				unexpected(p);
			break;
		}
	}
out:
	leave(p);
	return p->failed ? ERR : finish_compound(p);
}

static bool compound_at(const parser *p)
{
	static const char *const words[] = { "{", "if", "while", "until", "for", "select", "case", "[[" };

	if (cur(p) == '(')
		return true;
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (word_at(p, words[i]))
			return true;
	return false;
}

/* after `name ()` or `function name [()]`: the body, a compound command */
static status parse_funcbody(parser *p, size_t open)
{
	if (!skip_newlines(p))
		return ERR;
	if (eof(p))
		fail(p, "function definition without a body", open);
	else if (!compound_at(p))
		fail(p, "function body is not a compound command", p->pos);
	return p->failed ? ERR : parse_command(p);
}

static status parse_function(parser *p)
{
	size_t open = p->pos;
	word w;

	p->pos += 8;
	skip_blanks(p);
	if (eof(p) || is_delim(p, cur(p))) {
		fail(p, "'function' without a name", open);
		return ERR;
	}
	if (!read_word(p, 0, &w))
		return ERR;
	skip_blanks(p);
	if (cur(p) == '(') {
		p->pos++;
		skip_blanks(p);
		if (cur(p) != ')') {
			fail(p, "expected ')' after 'function name('", p->pos);
			return ERR;
		}
		p->pos++;
	}
	return parse_funcbody(p, open);
}

static bool is_integer(const char *w)
{
	w += *w == '-' || *w == '+';
	if (!*w)
		return false;
	while (is_digit(*w))
		w++;
	return *w == '\0';
}

static bool is_arith_test(const char *w)
{
	static const char *const ops[] = { "-eq", "-ne", "-lt", "-le", "-gt", "-ge" };

	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
		if (strcmp(w, ops[i]) == 0)
			return true;
	return false;
}

/* The operands [[ ]] evaluates: those of -eq and friends are arithmetic, the name of -v and
 * -R may carry a subscript. Only integers and plain names are modelled. */
static void check_cond_word(parser *p, const cmdb *b, const word *w)
{
	const char *prev = b->argc > 1 ? b->argv[b->argc - 2] : "";

	if ((strcmp(prev, "-v") == 0 || strcmp(prev, "-R") == 0) && strchr(w->text, '['))
		unmodeled(p, "array subscript evaluated by [[ -v ]]", w->start);
	else if ((is_arith_test(prev) && !is_integer(w->text)) ||
		 (!w->quoted && is_arith_test(w->text) && !is_integer(prev)))
		unmodeled(p, "arithmetic operand of [[ ]] that is not a number", w->start);
}

/* [[ ... ]]: one command of its words; && || ( ) < > inside are words, not operators */
static status parse_cond(parser *p)
{
	size_t open = p->pos, first = p->out->ncmds;
	cmdb b = { 0 };
	bool regex = false;
	word w;

	cb_push(p, &b, "[[", open);
	p->pos += 2;
	while (!p->failed) {
		char c, next;

		skip_blanks(p);
		c = cur(p);
		next = at(p, p->pos + 1);
		if (eof(p)) {
			fail(p, "unterminated [[", open);
		} else if (c == '\n') {
			eat_newline(p);
		} else if (c == ']' && next == ']' && is_delim(p, at(p, p->pos + 2))) {
			cb_push(p, &b, "]]", p->pos);
			p->pos += 2;
			break;
		} else if ((c == '&' && next == '&') || (c == '|' && next == '|')) {
			cb_push(p, &b, c == '&' ? "&&" : "||", p->pos);
			p->pos += 2;
		} else if (procsub_at(p)) {
			/* a word: -e <(cmd) runs cmd */
			if (read_word(p, 0, &w))
				cb_push(p, &b, w.text, w.start);
		} else if (c == '(' || c == ')' || c == '<' || c == '>') {
			cb_push(p, &b, c == '(' ? "(" : c == ')' ? ")" : c == '<' ? "<" : ">", p->pos);
			p->pos++;
		} else if (is_delim(p, c)) {
			unexpected(p);
		} else if (read_word(p, regex ? W_REGEX : 0, &w)) {
			regex = !w.quoted && strcmp(w.text, "=~") == 0;
			cb_push(p, &b, w.text, w.start);
			check_cond_word(p, &b, &w);
		}
	}
	emit_command(p, &b, first);
	return p->failed ? ERR : finish_compound(p);
}

static bool is_decl(const char *w)
{
	static const char *const decl[] = { "declare", "local", "export", "readonly", "typeset" };

	for (size_t i = 0; i < sizeof decl / sizeof *decl; i++)
		if (strcmp(w, decl[i]) == 0)
			return true;
	return false;
}

static bool name_in(const char *w, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(w, *names) == 0)
			return true;
	return false;
}

/* An assignment's subscript other than digits is arithmetic (or an associative array's key,
 * which the splitter cannot tell apart); an array value with [key]= keys likewise. */
static bool assign_unmodeled(const char *w)
{
	const char *eq = strchr(w, '='), *sub = strchr(w, '[');

	if (!eq)
		return false;
	if (sub && sub < eq) {
		for (sub++; is_digit(*sub); sub++)
			;
		if (*sub != ']' || sub == strchr(w, '[') + 1)
			return true;
	}
	return eq[1] == '(' && strchr(eq, '[') != NULL;
}

/* Builtins whose operands bash evaluates as code, names with subscripts, or arithmetic, and
 * those that change how later lines are read: what they run is not in the words. */
static void check_builtin(parser *p, const cmdb *b)
{
	static const char *const name_args[] = { "read", "mapfile", "readarray", "getopts", "wait",
						  "unset", "export", "readonly", "declare", "typeset",
						  "local", NULL };
	static const char *const typed[] = { "declare", "typeset", "local", NULL };
	static const char *const later[] = { "trap", "alias", "enable", "shopt", NULL };
	size_t i = b->nassign;
	const char *name;

	for (size_t k = 0; k < b->nassign; k++)
		if (assign_unmodeled(b->argv[k]))
			unmodeled(p, "array subscript in an assignment (bash evaluates it)", b->offset);
	while (i < b->argc && (strcmp(b->argv[i], "builtin") == 0 || strcmp(b->argv[i], "command") == 0))
		i++;
	if (i >= b->argc)
		return;
	name = b->argv[i++];
	if (name_in(name, later) && i < b->argc)
		unmodeled(p, strcmp(name, "trap") == 0    ? "trap runs its argument later" :
			     strcmp(name, "alias") == 0   ? "alias changes what later words run" :
			     strcmp(name, "enable") == 0  ? "enable changes what names run" :
							    "shopt changes how later lines are read",
			  b->offset);
	else if (strcmp(name, "let") == 0)
		for (; i < b->argc; i++)
			check_arith_word(p, b->argv[i], b->offset);
	else if (strcmp(name, "set") == 0)
		for (size_t k = i; k < b->argc && b->argv[k][0] == '-' && strcmp(b->argv[k], "--"); k++)
			if ((strcmp(b->argv[k], "-o") != 0 && strchr(b->argv[k], 'k')) ||
			    (k + 1 < b->argc && strcmp(b->argv[k + 1], "keyword") == 0))
				unmodeled(p, "set -k makes later words assignments", b->offset);
	for (size_t k = i; k < b->argc; k++) {
		const char *w = b->argv[k];

		if (strcmp(name, "printf") == 0 || strcmp(name, "test") == 0 || strcmp(name, "[") == 0) {
			const char *prev = b->argv[k - 1];
			bool named = strcmp(prev, "-v") == 0 || (strcmp(name, "printf") != 0 &&
								 strcmp(prev, "-R") == 0);

			if (strcmp(name, "printf") == 0 && strncmp(w, "-v", 2) == 0 && w[2]) {
				named = true;
				w += 2;
			}
			if (named && strchr(w, '['))
				unmodeled(p, "array subscript evaluated by a builtin", b->offset);
			if (strcmp(name, "printf") == 0 && w[0] != '-')
				break;  /* the format: options end */
		} else if (name_in(name, name_args)) {
			if (strchr(w, '[') || assign_unmodeled(w))
				unmodeled(p, "array subscript evaluated by a builtin", b->offset);
			else if (name_in(name, typed) && w[0] == '-' && strpbrk(w, "in"))
				unmodeled(p, "declare -i or -n: later assignments are evaluated", b->offset);
		}
	}
}

/* Words and redirects up to an operator. The command goes before the nested commands its
 * words produced, its redirects after them; what was read before an error is kept. */
static status parse_simple(parser *p)
{
	size_t first = p->out->ncmds;
	cmdb b = { 0 };
	redirs r = { 0 };
	bool decl = false;
	word w;

	for (;;) {
		bool leading = b.argc == b.nassign;
		char c;

		skip_blanks(p);
		if (eof(p) || p->failed)
			break;
		if (redirect_at(p, NULL, NULL)) {
			parse_redirect(p, &r);
			continue;
		}
		c = cur(p);
		if (is_delim(p, c) && !procsub_at(p))
			break;
		if (!read_word(p, leading || decl ? W_ASSIGN : 0, &w))
			break;
		if (leading && assign_len(p, w.start, p->pos))
			b.nassign++;
		else if (leading)
			decl = is_decl(w.text);
		cb_push(p, &b, w.text, w.start);
		if (b.argc == 1 && !b.nassign && !r.n && !w.quoted) {
			skip_blanks(p);
			if (cur(p) == '(') {
				size_t paren = p->pos++;

				skip_blanks(p);
				if (cur(p) != ')') {
					fail(p, "unexpected '('", paren);
					break;
				}
				p->pos++;
				return parse_funcbody(p, b.offset);
			}
		}
	}
	check_builtin(p, &b);
	emit_command(p, &b, first);
	emit_redirs(p, &r);
	return p->failed ? ERR : DONE;
}

/* coproc [NAME] command: the command runs beside the shell, wired to file descriptors the
 * splitter does not follow; its commands are listed, the input is unsupported */
static status parse_coproc(parser *p)
{
	size_t open = p->pos, name;
	status st;

	unmodeled(p, "coproc", open);
	p->pos += 6;
	skip_blanks(p);
	name = p->pos;
	while (is_name_char(cur(p)))
		p->pos++;
	if (p->pos > name && (cur(p) == ' ' || cur(p) == '\t')) {
		skip_blanks(p);
		if (!compound_at(p))
			p->pos = name;
	} else {
		p->pos = name;
	}
	st = parse_command(p);
	if (st == NONE)
		fail(p, "coproc without a command", open);
	return p->failed ? ERR : st;
}

static status parse_command(parser *p)
{
	char c;

	skip_blanks(p);
	c = cur(p);
	if (eof(p) || (c == '`' && p->in_bt))
		return NONE;
	if (c == '(')
		return at(p, p->pos + 1) == '(' ? parse_dparen(p) : parse_subshell(p);
	if (word_at(p, "{"))
		return parse_group(p);
	if (word_at(p, "if"))
		return parse_if(p);
	if (word_at(p, "while") || word_at(p, "until"))
		return parse_while(p);
	if (word_at(p, "for") || word_at(p, "select"))
		return parse_for(p, c == 'f');
	if (word_at(p, "case"))
		return parse_case(p);
	if (word_at(p, "function"))
		return parse_function(p);
	if (word_at(p, "[["))
		return parse_cond(p);
	if (word_at(p, "coproc"))
		return parse_coproc(p);
	if (closer_at(p) >= 0)
		return NONE;
	if (!redirect_at(p, NULL, NULL) && is_meta(c) && !procsub_at(p))
		return NONE;
	return parse_simple(p);
}

/* [!] command { | command }; the negation is dropped */
static status parse_pipeline(parser *p)
{
	bool negated = false;
	status st;

	skip_blanks(p);
	while (word_at(p, "!")) {
		p->pos++;
		negated = true;
		skip_blanks(p);
	}
	st = parse_command(p);
	if (st == NONE && negated) {
		fail(p, "'!' without a command", p->pos);
		return ERR;
	}
	while (st == DONE) {
		size_t op;

		skip_blanks(p);
		op = p->pos;
		if (cur(p) != '|' || at(p, op + 1) == '|')
			break;
		p->pos += at(p, op + 1) == '&' ? 2 : 1;
		if (!skip_newlines(p))
			return ERR;
		st = parse_command(p);
		if (st == NONE) {
			fail(p, "expected a command after '|'", op);
			return ERR;
		}
	}
	return st;
}

static status parse_and_or(parser *p)
{
	status st = parse_pipeline(p);

	while (st == DONE) {
		size_t op;
		char c;

		skip_blanks(p);
		op = p->pos;
		c = cur(p);
		if ((c != '&' && c != '|') || at(p, op + 1) != c)
			break;
		p->pos += 2;
		if (!skip_newlines(p))
			return ERR;
		st = parse_pipeline(p);
		if (st == NONE) {
			fail(p, c == '&' ? "expected a command after '&&'" : "expected a command after '||'",
			     op);
			return ERR;
		}
	}
	return st;
}

/* and-or lists separated by ; & and newlines, up to whatever cannot start a command */
static bool parse_list(parser *p, size_t *count)
{
	for (;;) {
		status st;
		char c, next;

		if (!skip_newlines(p) || !tick(p, 1))
			return false;
		st = parse_and_or(p);
		if (st == ERR)
			return false;
		if (st == NONE)
			return true;
		++*count;
		skip_blanks(p);
		c = cur(p);
		next = at(p, p->pos + 1);
		if ((c == ';' && next != ';' && next != '&') || (c == '&' && next != '&' && next != '>'))
			p->pos++;
		else if (c != '\n')
			return true;
	}
}

int zsp_sh_parse_n(zsp_arena *a, const char *cmd, size_t len, zsp_sh_result *out)
{
	parser p = { 0 };
	const char *nul = memchr(cmd, '\0', len);
	size_t count = 0;

	memset(out, 0, sizeof *out);
	p.a = a;
	p.s = cmd;
	p.out = out;
	p.n = nul ? (size_t)(nul - cmd) : len;
	if (p.n > ZSP_SH_MAX_SPLIT) {
		fail(&p, "command longer than 1 MiB", ZSP_SH_MAX_SPLIT);
		return ZSP_OK;
	}
	/* execve cuts the text at a NUL: what runs is the part before it, which is split */
	if (nul)
		unmodeled(&p, "NUL byte in the command", p.n);
	else if (p.n > ZSP_SH_MAX_INPUT)
		unmodeled(&p, "command longer than 64 KiB", ZSP_SH_MAX_INPUT);
	p.budget = ZSP_SH_STEPS_BASE + ZSP_SH_STEPS_PER_BYTE * (size_t)p.n;
	p.bufcap = p.n + 16;
	p.buf = zsp_arena_alloc(a, p.bufcap);
	if (!p.buf)
		return ZSP_EINTERNAL;
	if (parse_list(&p, &count) && !eof(&p))
		unexpected(&p);
	if (!p.failed && p.nhd)
		fail(&p, "here-document without its delimiter line", p.hd[0].where);
	return p.oom ? ZSP_EINTERNAL : ZSP_OK;
}

int zsp_sh_parse(zsp_arena *a, const char *cmd, zsp_sh_result *out)
{
	return zsp_sh_parse_n(a, cmd, strnlen(cmd, ZSP_SH_MAX_SPLIT + 1), out);
}
