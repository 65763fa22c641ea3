/* sbpl-eval.c: reads an SBPL profile (s-expressions), compiles its rules and filters, and decides
 * operations with Seatbelt's precedence. Strict: anything it does not know is an error. */
#include "config.h"

#include <ctype.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sbpl/sbpl-eval.h"

/* ---- allocation: everything of one profile is on one list, freed at once ---------------- */

struct block {
	struct block *next;
	max_align_t data[];
};

struct pool {
	struct block *blocks;
	regex_t **regexes;
	size_t nregexes, regexes_cap;
};

static void *pool_alloc(struct pool *pl, size_t size)
{
	struct block *b = calloc(1, sizeof(*b) + size);
	if (!b)
		return NULL;
	b->next = pl->blocks;
	pl->blocks = b;
	return b->data;
}

static void pool_free(struct pool *pl)
{
	for (size_t i = 0; i < pl->nregexes; i++)
		regfree(pl->regexes[i]);
	free(pl->regexes);
	while (pl->blocks) {
		struct block *next = pl->blocks->next;
		free(pl->blocks);
		pl->blocks = next;
	}
}

/* ---- the reader -------------------------------------------------------------------------- */

enum node_kind { N_LIST, N_ATOM, N_STRING, N_REGEX };

struct node {
	enum node_kind kind;
	unsigned line, col;
	char *text; /* atoms and strings, NUL-terminated */
	struct node **kids;
	size_t nkids, cap;
};

struct reader {
	const char *s;
	size_t len, pos;
	unsigned line, col;
	struct pool *pool;
	char *err;
	size_t errlen;
	bool failed;
};

static void fail_at(char *err, size_t errlen, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void fail_at(char *err, size_t errlen, unsigned line, unsigned col, const char *fmt, ...)
{
	int n = snprintf(err, errlen, "%u:%u: ", line, col);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
}

#define RFAIL(r, line, col, ...)                                                           \
	do {                                                                               \
		if (!(r)->failed)                                                          \
			fail_at((r)->err, (r)->errlen, (line), (col), __VA_ARGS__);       \
		(r)->failed = true;                                                        \
		return NULL;                                                               \
	} while (0)

static int peek(const struct reader *r)
{
	return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

static int next(struct reader *r)
{
	int c = peek(r);
	if (c < 0)
		return c;
	r->pos++;
	if (c == '\n') {
		r->line++;
		r->col = 1;
	} else {
		r->col++;
	}
	return c;
}

static void skip_space(struct reader *r)
{
	for (int c = peek(r); c >= 0; c = peek(r)) {
		if (c == ';')
			while (peek(r) >= 0 && peek(r) != '\n')
				next(r);
		else if (isspace(c))
			next(r);
		else
			break;
	}
}

static struct node *new_node(struct reader *r, enum node_kind kind, unsigned line, unsigned col)
{
	struct node *n = pool_alloc(r->pool, sizeof(*n));
	if (!n)
		RFAIL(r, line, col, "out of memory");
	n->kind = kind;
	n->line = line;
	n->col = col;
	return n;
}

static int hex_digit(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* One escape after a backslash in a "string": \\ \" \n \t \r \xHH. */
static int read_escape(struct reader *r, unsigned line, unsigned col)
{
	int c = next(r);
	switch (c) {
	case '\\':
	case '"':
		return c;
	case 'n':
		return '\n';
	case 't':
		return '\t';
	case 'r':
		return '\r';
	case 'x': {
		int h = hex_digit(next(r)), l = hex_digit(next(r));
		if (h < 0 || l < 0 || (h == 0 && l == 0))
			break;
		return h * 16 + l;
	}
	default:
		break;
	}
	fail_at(r->err, r->errlen, line, col, "bad escape in a string (known: \\\\ \\\" \\n \\t \\r \\xHH)");
	r->failed = true;
	return -1;
}

/* A "string" (escapes decoded) or a #"regex" (kept verbatim: the backslashes are the regex's). */
static struct node *read_string(struct reader *r, bool regex)
{
	unsigned line = r->line, col = r->col;
	struct node *n = new_node(r, regex ? N_REGEX : N_STRING, line, col);
	if (!n)
		return NULL;
	if (regex)
		next(r);
	next(r);
	size_t end = r->pos;
	while (end < r->len && r->s[end] != '"')
		end += r->s[end] == '\\' ? 2 : 1;
	char *out = pool_alloc(r->pool, end - r->pos + 1);
	if (!out)
		RFAIL(r, line, col, "out of memory");
	size_t o = 0;
	for (;;) {
		unsigned el = r->line, ec = r->col;
		int c = next(r);
		if (c < 0)
			RFAIL(r, line, col, "unterminated %s", regex ? "regex literal" : "string");
		if (c == '"')
			break;
		if (c == '\\' && regex) {
			out[o++] = '\\';
			c = next(r);
			if (c < 0)
				RFAIL(r, line, col, "unterminated regex literal");
		} else if (c == '\\') {
			c = read_escape(r, el, ec);
			if (c < 0)
				return NULL;
		}
		out[o++] = (char)c;
	}
	out[o] = 0;
	n->text = out;
	return n;
}

static bool atom_char(int c)
{
	return c >= 0 && !isspace(c) && c != '(' && c != ')' && c != '"' && c != ';';
}

static struct node *read_atom(struct reader *r)
{
	unsigned line = r->line, col = r->col;
	size_t start = r->pos;
	while (atom_char(peek(r)))
		next(r);
	struct node *n = new_node(r, N_ATOM, line, col);
	char *text = n ? pool_alloc(r->pool, r->pos - start + 1) : NULL;
	if (!text)
		RFAIL(r, line, col, "out of memory");
	memcpy(text, r->s + start, r->pos - start);
	n->text = text;
	return n;
}

static bool push_kid(struct reader *r, struct node *list, struct node *kid)
{
	if (list->nkids == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 4;
		struct node **kids = pool_alloc(r->pool, cap * sizeof(*kids));
		if (!kids)
			return false;
		if (list->nkids)
			memcpy(kids, list->kids, list->nkids * sizeof(*kids));
		list->kids = kids;
		list->cap = cap;
	}
	list->kids[list->nkids++] = kid;
	return true;
}

static struct node *read_form(struct reader *r, unsigned depth);

static struct node *read_list(struct reader *r, unsigned depth)
{
	unsigned line = r->line, col = r->col;
	if (depth >= SBPL_MAX_DEPTH)
		RFAIL(r, line, col, "nesting deeper than %u", SBPL_MAX_DEPTH);
	struct node *n = new_node(r, N_LIST, line, col);
	if (!n)
		return NULL;
	next(r);
	for (;;) {
		skip_space(r);
		int c = peek(r);
		if (c < 0)
			RFAIL(r, line, col, "unclosed parenthesis");
		if (c == ')') {
			next(r);
			return n;
		}
		struct node *kid = read_form(r, depth + 1);
		if (!kid)
			return NULL;
		if (!push_kid(r, n, kid))
			RFAIL(r, kid->line, kid->col, "out of memory");
	}
}

static struct node *read_form(struct reader *r, unsigned depth)
{
	int c = peek(r);
	if (c == '(')
		return read_list(r, depth);
	if (c == ')')
		RFAIL(r, r->line, r->col, "unexpected `)`");
	if (c == '"')
		return read_string(r, false);
	if (c == '#' && r->pos + 1 < r->len && r->s[r->pos + 1] == '"')
		return read_string(r, true);
	return read_atom(r);
}

/* ---- operations ---------------------------------------------------------------------------- */

/* What a filter can look at: the kind of target an operation has. */
enum target_class { T_NONE, T_PATH, T_NET, T_MACH, T_SYSCTL, T_PROC, T_SOCKET, T_IOKIT, T_PREF };

static const struct {
	const char *name;
	enum target_class cls;
} operations[] = {
	{ "file-read-data", T_PATH },        { "file-read-metadata", T_PATH },
	{ "file-read-xattr", T_PATH },       { "file-write-data", T_PATH },
	{ "file-write-create", T_PATH },     { "file-write-unlink", T_PATH },
	{ "file-write-mode", T_PATH },       { "file-write-owner", T_PATH },
	{ "file-write-times", T_PATH },      { "file-write-xattr", T_PATH },
	{ "file-write-flags", T_PATH },      { "file-write-setugid", T_PATH },
	{ "file-ioctl", T_PATH },            { "file-link", T_PATH },
	{ "file-revoke", T_PATH },           { "file-mount", T_PATH },
	{ "file-unmount", T_PATH },          { "file-chroot", T_PATH },
	{ "file-clone", T_PATH },            { "file-issue-extension", T_PATH },
	{ "process-exec", T_PATH },          { "process-exec-interpreter", T_PATH },
	{ "process-fork", T_NONE },          { "process-info-pidinfo", T_PROC },
	{ "process-info-listpids", T_PROC }, { "process-info-setcontrol", T_PROC },
	{ "process-info-dirtycontrol", T_PROC }, { "process-info-rusage", T_PROC },
	{ "process-info-pidfdinfo", T_PROC }, { "process-info-pidfileportinfo", T_PROC },
	{ "process-info-codesignature", T_PROC }, { "signal", T_PROC },
	{ "sysctl-read", T_SYSCTL },         { "sysctl-write", T_SYSCTL },
	{ "mach-lookup", T_MACH },           { "mach-register", T_MACH },
	{ "mach-priv-host-port", T_NONE },   { "ipc-posix-shm-read-data", T_NONE },
	{ "ipc-posix-shm-read-metadata", T_NONE }, { "ipc-posix-shm-write-data", T_NONE },
	{ "ipc-posix-shm-write-create", T_NONE }, { "ipc-posix-shm-write-unlink", T_NONE },
	{ "ipc-posix-sem", T_NONE },         { "ipc-sysv-shm", T_NONE },
	{ "ipc-sysv-sem", T_NONE },          { "ipc-sysv-msg", T_NONE },
	{ "network-outbound", T_NET },       { "network-inbound", T_NET },
	{ "network-bind", T_NET },           { "system-socket", T_SOCKET },
	{ "system-audit", T_NONE },          { "system-info", T_NONE },
	{ "system-fsctl", T_NONE },          { "pseudo-tty", T_NONE },
	{ "user-preference-read", T_PREF },  { "user-preference-write", T_PREF },
	{ "iokit-open", T_IOKIT },           { "iokit-get-properties", T_IOKIT },
	{ "iokit-set-properties", T_IOKIT }, { "lsopen", T_NONE },
	{ "appleevent-send", T_NONE },       { "nvram-get", T_NONE },
};

#define NOPERATIONS (sizeof(operations) / sizeof(operations[0]))

static int find_operation(const char *name)
{
	for (size_t i = 0; i < NOPERATIONS; i++)
		if (!strcmp(operations[i].name, name))
			return (int)i;
	return -1;
}

/* A rule's operation: a concrete name or a wildcard `prefix*` (`default` is the prefix ""). */
struct opref {
	const char *name;
	size_t prefix; /* wildcard: the length before `*` */
	bool wildcard;
};

static bool valid_wildcard(const char *name, size_t prefix)
{
	for (size_t i = 0; i < NOPERATIONS; i++)
		if (!strncmp(operations[i].name, name, prefix))
			return true;
	return false;
}

static bool op_covers(const struct opref *o, const char *concrete)
{
	return o->wildcard ? !strncmp(concrete, o->name, o->prefix) : !strcmp(concrete, o->name);
}

/* Is `general` a wildcard strictly wider than `specific`? */
static bool op_wider(const struct opref *general, const struct opref *specific)
{
	if (!general->wildcard)
		return false;
	if (!specific->wildcard)
		return op_covers(general, specific->name);
	return general->prefix < specific->prefix && !strncmp(specific->name, general->name, general->prefix);
}

/* ---- filters ----------------------------------------------------------------------------------- */

enum filter_kind {
	F_LITERAL, F_SUBPATH, F_REGEX, F_UNIX_LITERAL, F_REMOTE_IP, F_LOCAL_IP, F_TARGET_SAME,
	F_GLOBAL_NAME, F_SYSCTL_NAME, F_SYSCTL_PREFIX, F_SOCKET_DOMAIN, F_IOKIT_CLASS, F_PREF_DOMAIN,
	F_EXTENSION, F_ALL, F_ANY, F_NOT,
};

struct filter {
	enum filter_kind kind;
	char *str;         /* path, name or prefix */
	regex_t *re;
	bool host_any;     /* ip filters: "*" (else "localhost") */
	unsigned port;     /* ip filters: 0 = "*" */
	struct filter **kids;
	size_t nkids;
};

struct rule {
	bool allow;
	struct opref *ops;
	size_t nops;
	struct filter **filters; /* any of them (none: always) */
	size_t nfilters;
	unsigned line, col;
};

struct sbpl_profile {
	struct pool pool;
	struct rule *rules;
	size_t nrules;
	bool has_default, default_allow;
	unsigned default_line, default_col;
};

/* The compiler's state: the reader (for errors and the pool) and the -D values. */
struct comp {
	struct reader *r;
	const struct sbpl_param *params;
	size_t nparams;
};

#define CFAIL(cp, n, ...) RFAIL((cp)->r, (n)->line, (n)->col, __VA_ARGS__)

static bool is_head(const struct node *n, const char *name)
{
	return n->kind == N_LIST && n->nkids > 0 && n->kids[0]->kind == N_ATOM && !strcmp(n->kids[0]->text, name);
}

static const char *param_value(const struct comp *cp, const char *name)
{
	for (size_t i = cp->nparams; i-- > 0;)
		if (!strcmp(cp->params[i].name, name))
			return cp->params[i].value;
	return NULL;
}

static char *string_expr(struct comp *cp, const struct node *n, bool regex_ok);

static char *concat(struct comp *cp, const struct node *n, bool regex_ok)
{
	size_t total = 0;
	char **parts = pool_alloc(cp->r->pool, (n->nkids + 1) * sizeof(char *));
	if (!parts)
		CFAIL(cp, n, "out of memory");
	for (size_t i = 1; i < n->nkids; i++) {
		parts[i] = string_expr(cp, n->kids[i], regex_ok);
		if (!parts[i])
			return NULL;
		total += strlen(parts[i]);
	}
	char *out = pool_alloc(cp->r->pool, total + 1);
	if (!out)
		CFAIL(cp, n, "out of memory");
	for (size_t i = 1; i < n->nkids; i++)
		strcat(out, parts[i]);
	return out;
}

/* A string: "literal", (param "NAME"), (string-append ...); #"regex" only where regex_ok.
 * Parameter values are used verbatim, in regexes too (as sandbox-exec does). */
static char *string_expr(struct comp *cp, const struct node *n, bool regex_ok)
{
	if (n->kind == N_STRING || (n->kind == N_REGEX && regex_ok))
		return n->text;
	if (n->kind == N_REGEX)
		CFAIL(cp, n, "a regex literal where a string is expected");
	if (is_head(n, "param")) {
		if (n->nkids != 2 || n->kids[1]->kind != N_STRING)
			CFAIL(cp, n, "(param \"NAME\") takes one string");
		const char *v = param_value(cp, n->kids[1]->text);
		if (!v)
			CFAIL(cp, n->kids[1], "unknown parameter `%s` (give -D %s=VALUE)", n->kids[1]->text,
			      n->kids[1]->text);
		return (char *)v;
	}
	if (is_head(n, "string-append"))
		return concat(cp, n, regex_ok);
	if (n->kind == N_LIST && n->nkids > 0 && n->kids[0]->kind == N_ATOM)
		CFAIL(cp, n, "unknown string expression `(%s ...)`", n->kids[0]->text);
	CFAIL(cp, n, "expected a string, (param \"NAME\") or (string-append ...)");
}

static struct filter *new_filter(struct comp *cp, const struct node *n, enum filter_kind kind)
{
	struct filter *f = pool_alloc(cp->r->pool, sizeof(*f));
	if (!f)
		CFAIL(cp, n, "out of memory");
	f->kind = kind;
	return f;
}

static bool add_regex(struct pool *pl, regex_t *re)
{
	if (pl->nregexes == pl->regexes_cap) {
		size_t cap = pl->regexes_cap ? pl->regexes_cap * 2 : 8;
		regex_t **a = realloc(pl->regexes, cap * sizeof(*a));
		if (!a)
			return false;
		pl->regexes = a;
		pl->regexes_cap = cap;
	}
	pl->regexes[pl->nregexes++] = re;
	return true;
}

static struct filter *regex_filter(struct comp *cp, const struct node *n, const char *text)
{
	struct filter *f = new_filter(cp, n, F_REGEX);
	regex_t *re = f ? pool_alloc(cp->r->pool, sizeof(*re)) : NULL;
	if (!re)
		CFAIL(cp, n, "out of memory");
	int rc = regcomp(re, text, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char msg[256];
		regerror(rc, re, msg, sizeof(msg));
		CFAIL(cp, n, "bad regex \"%s\": %s", text, msg);
	}
	if (!add_regex(cp->r->pool, re)) {
		regfree(re);
		CFAIL(cp, n, "out of memory");
	}
	f->re = re;
	f->str = (char *)text;
	return f;
}

/* "host:port" with host `*` or `localhost` and port `*` or 1..65535. */
static struct filter *ip_filter(struct comp *cp, const struct node *n, enum filter_kind kind)
{
	if (n->nkids != 3 || n->kids[1]->kind != N_ATOM || strcmp(n->kids[1]->text, "ip") != 0)
		CFAIL(cp, n, "expected (%s ip \"HOST:PORT\")", n->kids[0]->text);
	const struct node *arg = n->kids[2];
	char *spec = string_expr(cp, arg, false);
	if (!spec)
		return NULL;
	char *colon = strrchr(spec, ':');
	if (!colon)
		CFAIL(cp, arg, "expected \"HOST:PORT\", got \"%s\"", spec);
	size_t hl = (size_t)(colon - spec);
	bool any = hl == 1 && spec[0] == '*';
	if (!any && !(hl == 9 && !strncmp(spec, "localhost", 9)))
		CFAIL(cp, arg, "the host of an ip filter is `*` or `localhost`, got \"%.*s\"", (int)hl, spec);
	unsigned port = 0;
	if (strcmp(colon + 1, "*") != 0) {
		char *end;
		unsigned long v = strtoul(colon + 1, &end, 10);
		if (!isdigit((unsigned char)colon[1]) || *end || v == 0 || v > 65535)
			CFAIL(cp, arg, "the port of an ip filter is `*` or 1..65535, got \"%s\"", colon + 1);
		port = (unsigned)v;
	}
	struct filter *f = new_filter(cp, n, kind);
	if (f) {
		f->host_any = any;
		f->port = port;
	}
	return f;
}

static struct filter *compile_filter(struct comp *cp, const struct node *n, unsigned depth);

static struct filter *combinator(struct comp *cp, const struct node *n, enum filter_kind kind, unsigned depth)
{
	if (kind == F_NOT && n->nkids != 2)
		CFAIL(cp, n, "(require-not FILTER) takes exactly one filter");
	struct filter *f = new_filter(cp, n, kind);
	if (!f)
		return NULL;
	f->nkids = n->nkids - 1;
	f->kids = pool_alloc(cp->r->pool, (f->nkids + 1) * sizeof(*f->kids));
	if (!f->kids)
		CFAIL(cp, n, "out of memory");
	for (size_t i = 0; i < f->nkids; i++)
		if (!(f->kids[i] = compile_filter(cp, n->kids[i + 1], depth + 1)))
			return NULL;
	return f;
}

/* (remote unix-socket (path-literal "/p")) */
static struct filter *unix_filter(struct comp *cp, const struct node *n)
{
	const struct node *p = n->nkids == 3 ? n->kids[2] : NULL;
	if (!p || !is_head(p, "path-literal") || p->nkids != 2)
		CFAIL(cp, n, "expected (remote unix-socket (path-literal \"/path\"))");
	struct filter *f = new_filter(cp, n, F_UNIX_LITERAL);
	if (f && !(f->str = string_expr(cp, p->kids[1], false)))
		return NULL;
	return f;
}

static const struct {
	const char *name;
	enum filter_kind kind;
} string_filters[] = {
	{ "literal", F_LITERAL },          { "subpath", F_SUBPATH },
	{ "global-name", F_GLOBAL_NAME },  { "sysctl-name", F_SYSCTL_NAME },
	{ "sysctl-name-prefix", F_SYSCTL_PREFIX }, { "iokit-user-client-class", F_IOKIT_CLASS },
	{ "preference-domain", F_PREF_DOMAIN }, { "extension", F_EXTENSION },
};

static struct filter *one_string_filter(struct comp *cp, const struct node *n, enum filter_kind kind)
{
	if (n->nkids != 2)
		CFAIL(cp, n, "(%s ...) takes one string", n->kids[0]->text);
	struct filter *f = new_filter(cp, n, kind);
	if (!f || !(f->str = string_expr(cp, n->kids[1], false)))
		return NULL;
	if (kind == F_SUBPATH) {
		size_t l = strlen(f->str);
		while (l > 1 && f->str[l - 1] == '/')
			f->str[--l] = 0;
	}
	return f;
}

static struct filter *compile_filter(struct comp *cp, const struct node *n, unsigned depth)
{
	if (depth >= SBPL_MAX_DEPTH)
		CFAIL(cp, n, "filters nested deeper than %u", SBPL_MAX_DEPTH);
	if (n->kind != N_LIST || n->nkids == 0 || n->kids[0]->kind != N_ATOM)
		CFAIL(cp, n, "expected a filter such as (literal \"/path\")");
	const char *head = n->kids[0]->text;
	for (size_t i = 0; i < sizeof(string_filters) / sizeof(string_filters[0]); i++)
		if (!strcmp(head, string_filters[i].name))
			return one_string_filter(cp, n, string_filters[i].kind);
	if (!strcmp(head, "regex")) {
		if (n->nkids != 2)
			CFAIL(cp, n, "(regex #\"...\") takes one regex");
		char *text = string_expr(cp, n->kids[1], true);
		return text ? regex_filter(cp, n->kids[1], text) : NULL;
	}
	if (!strcmp(head, "require-all"))
		return combinator(cp, n, F_ALL, depth);
	if (!strcmp(head, "require-any"))
		return combinator(cp, n, F_ANY, depth);
	if (!strcmp(head, "require-not"))
		return combinator(cp, n, F_NOT, depth);
	if (!strcmp(head, "remote") && n->nkids > 1 && n->kids[1]->kind == N_ATOM &&
	    !strcmp(n->kids[1]->text, "unix-socket"))
		return unix_filter(cp, n);
	if (!strcmp(head, "remote"))
		return ip_filter(cp, n, F_REMOTE_IP);
	if (!strcmp(head, "local"))
		return ip_filter(cp, n, F_LOCAL_IP);
	if (!strcmp(head, "target")) {
		if (n->nkids != 2 || n->kids[1]->kind != N_ATOM || strcmp(n->kids[1]->text, "same-sandbox") != 0)
			CFAIL(cp, n, "expected (target same-sandbox)");
		return new_filter(cp, n, F_TARGET_SAME);
	}
	if (!strcmp(head, "socket-domain")) {
		if (n->nkids != 2 || n->kids[1]->kind != N_ATOM)
			CFAIL(cp, n, "expected (socket-domain AF_NAME)");
		struct filter *f = new_filter(cp, n, F_SOCKET_DOMAIN);
		if (f)
			f->str = n->kids[1]->text;
		return f;
	}
	CFAIL(cp, n, "unknown filter `%s`", head);
}

/* ---- rules ----------------------------------------------------------------------------------- */

static bool compile_op(struct comp *cp, const struct node *n, struct opref *o)
{
	size_t l = strlen(n->text);
	o->name = n->text;
	o->wildcard = l > 0 && n->text[l - 1] == '*';
	o->prefix = o->wildcard ? l - 1 : l;
	if (o->wildcard ? valid_wildcard(n->text, o->prefix) : find_operation(n->text) >= 0)
		return true;
	fail_at(cp->r->err, cp->r->errlen, n->line, n->col, "unknown operation `%s`", n->text);
	cp->r->failed = true;
	return false;
}

static bool push_rule(struct comp *cp, sbpl_profile *p, const struct rule *r, size_t *cap)
{
	if (p->nrules == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct rule *a = pool_alloc(&p->pool, ncap * sizeof(*a));
		if (!a)
			return false;
		if (p->nrules)
			memcpy(a, p->rules, p->nrules * sizeof(*a));
		p->rules = a;
		*cap = ncap;
	}
	(void)cp;
	p->rules[p->nrules++] = *r;
	return true;
}

/* (allow|deny OPERATION... FILTER...), or (allow|deny default). */
static bool compile_rule(struct comp *cp, sbpl_profile *p, const struct node *n, size_t *cap)
{
	struct rule r = { .allow = !strcmp(n->kids[0]->text, "allow"), .line = n->line, .col = n->col };
	size_t i = 1;
	while (i < n->nkids && n->kids[i]->kind == N_ATOM)
		i++;
	if (i == 1) {
		fail_at(cp->r->err, cp->r->errlen, n->line, n->col, "(%s ...) names no operation", n->kids[0]->text);
		cp->r->failed = true;
		return false;
	}
	if (i == 2 && !strcmp(n->kids[1]->text, "default")) {
		if (n->nkids != 2) {
			fail_at(cp->r->err, cp->r->errlen, n->kids[2]->line, n->kids[2]->col,
				"(%s default) takes no filter", n->kids[0]->text);
			cp->r->failed = true;
			return false;
		}
		p->has_default = true;
		p->default_allow = r.allow;
		p->default_line = n->line;
		p->default_col = n->col;
		return true;
	}
	r.nops = i - 1;
	r.ops = pool_alloc(&p->pool, r.nops * sizeof(*r.ops));
	r.nfilters = n->nkids - i;
	r.filters = pool_alloc(&p->pool, (r.nfilters + 1) * sizeof(*r.filters));
	if (!r.ops || !r.filters)
		return false;
	for (size_t k = 0; k < r.nops; k++)
		if (!compile_op(cp, n->kids[k + 1], &r.ops[k]))
			return false;
	for (size_t k = 0; k < r.nfilters; k++)
		if (!(r.filters[k] = compile_filter(cp, n->kids[i + k], 0)))
			return false;
	return push_rule(cp, p, &r, cap);
}

static bool compile_top(struct comp *cp, sbpl_profile *p, const struct node *n, bool *version, size_t *cap)
{
	if (n->kind != N_LIST || n->nkids == 0 || n->kids[0]->kind != N_ATOM) {
		fail_at(cp->r->err, cp->r->errlen, n->line, n->col, "expected (version 1), (allow ...) or (deny ...)");
		cp->r->failed = true;
		return false;
	}
	const char *head = n->kids[0]->text;
	if (!strcmp(head, "version")) {
		if (n->nkids != 2 || n->kids[1]->kind != N_ATOM || strcmp(n->kids[1]->text, "1") != 0) {
			fail_at(cp->r->err, cp->r->errlen, n->line, n->col, "only (version 1) is known");
			cp->r->failed = true;
			return false;
		}
		*version = true;
		return true;
	}
	if (!strcmp(head, "allow") || !strcmp(head, "deny"))
		return compile_rule(cp, p, n, cap);
	fail_at(cp->r->err, cp->r->errlen, n->line, n->col, "unknown form `(%s ...)`", head);
	cp->r->failed = true;
	return false;
}

static bool compile_profile(struct comp *cp, sbpl_profile *p)
{
	struct reader *r = cp->r;
	bool version = false;
	size_t cap = 0;
	for (;;) {
		skip_space(r);
		if (peek(r) < 0)
			break;
		struct node *n = read_form(r, 0);
		if (!n || !compile_top(cp, p, n, &version, &cap)) {
			if (!r->failed)
				fail_at(r->err, r->errlen, r->line, r->col, "out of memory");
			return false;
		}
	}
	if (!version) {
		fail_at(r->err, r->errlen, 1, 1, "the profile has no (version 1)");
		return false;
	}
	return true;
}

sbpl_profile *sbpl_parse(const char *text, size_t len, const struct sbpl_param *params, size_t nparams,
			 char *err, size_t errlen)
{
	if (len > SBPL_MAX_INPUT) {
		fail_at(err, errlen, 1, 1, "the profile is larger than %u bytes", SBPL_MAX_INPUT);
		return NULL;
	}
	if (memchr(text, 0, len)) {
		fail_at(err, errlen, 1, 1, "the profile holds a NUL byte");
		return NULL;
	}
	sbpl_profile *p = calloc(1, sizeof(*p));
	if (!p) {
		fail_at(err, errlen, 1, 1, "out of memory");
		return NULL;
	}
	struct reader r = { .s = text, .len = len, .line = 1, .col = 1, .pool = &p->pool, .err = err,
			    .errlen = errlen };
	struct comp cp = { .r = &r, .params = params, .nparams = nparams };
	if (!compile_profile(&cp, p)) {
		sbpl_free(p);
		return NULL;
	}
	return p;
}

void sbpl_free(sbpl_profile *p)
{
	if (!p)
		return;
	pool_free(&p->pool);
	free(p);
}

/* ---- deciding ------------------------------------------------------------------------------ */

struct request {
	const char *op;
	enum target_class cls;
	const char *target; /* path or name */
	bool is_path;       /* a network target that is a unix socket path */
	bool loopback;      /* network: the remote host is localhost */
	unsigned port;
	const char *const *exts; /* the sandbox extensions the process holds for the target */
	size_t nexts;
};

static bool is_subpath(const char *root, const char *path)
{
	size_t l = strlen(root);
	if (l == 1 && root[0] == '/')
		return path[0] == '/';
	return !strncmp(root, path, l) && (path[l] == 0 || path[l] == '/');
}

static bool filter_matches(const struct filter *f, const struct request *q);

static bool all_or_any(const struct filter *f, const struct request *q, bool all)
{
	for (size_t i = 0; i < f->nkids; i++)
		if (filter_matches(f->kids[i], q) != all)
			return !all;
	return all;
}

static bool ip_matches(const struct filter *f, const struct request *q)
{
	if (q->cls != T_NET || q->is_path)
		return false;
	if (f->kind == F_LOCAL_IP && !strcmp(q->op, "network-outbound"))
		/* the local end of an outbound connection: an ephemeral port on loopback or not */
		return (f->host_any || q->loopback) && f->port == 0;
	if (f->kind == F_REMOTE_IP && strcmp(q->op, "network-outbound") != 0)
		return false;
	return (f->host_any || q->loopback) && (f->port == 0 || f->port == q->port);
}

static bool name_is(const struct request *q, enum target_class cls, const char *s)
{
	return q->cls == cls && q->target && !strcmp(q->target, s);
}

static bool filter_matches(const struct filter *f, const struct request *q)
{
	bool path = (q->cls == T_PATH || (q->cls == T_NET && q->is_path)) && q->target;
	switch (f->kind) {
	case F_LITERAL:
		return path && !strcmp(q->target, f->str);
	case F_SUBPATH:
		return path && is_subpath(f->str, q->target);
	case F_REGEX:
		return path && regexec(f->re, q->target, 0, NULL, 0) == 0;
	case F_UNIX_LITERAL:
		return q->cls == T_NET && q->is_path && !strcmp(q->target, f->str);
	case F_REMOTE_IP:
	case F_LOCAL_IP:
		return ip_matches(f, q);
	case F_TARGET_SAME:
		return name_is(q, T_PROC, "same-sandbox");
	case F_GLOBAL_NAME:
		return name_is(q, T_MACH, f->str);
	case F_SYSCTL_NAME:
		return name_is(q, T_SYSCTL, f->str);
	case F_SYSCTL_PREFIX:
		return q->cls == T_SYSCTL && q->target && !strncmp(q->target, f->str, strlen(f->str));
	case F_SOCKET_DOMAIN:
		return name_is(q, T_SOCKET, f->str);
	case F_IOKIT_CLASS:
		return name_is(q, T_IOKIT, f->str);
	case F_PREF_DOMAIN:
		return name_is(q, T_PREF, f->str);
	case F_EXTENSION:
		for (size_t i = 0; path && i < q->nexts; i++)
			if (!strcmp(q->exts[i], f->str))
				return true;
		return false;
	case F_ALL:
		return all_or_any(f, q, true);
	case F_ANY:
		return all_or_any(f, q, false);
	case F_NOT:
		return !filter_matches(f->kids[0], q);
	}
	return false;
}

static bool rule_filters_match(const struct rule *r, const struct request *q)
{
	if (r->nfilters == 0)
		return true;
	for (size_t i = 0; i < r->nfilters; i++)
		if (filter_matches(r->filters[i], q))
			return true;
	return false;
}

/* The rule's narrowest operation that covers the request (a concrete one, else the longest
 * wildcard), or NULL. */
static const struct opref *rule_op(const struct rule *r, const char *op)
{
	const struct opref *best = NULL;
	for (size_t i = 0; i < r->nops; i++) {
		const struct opref *o = &r->ops[i];
		if (!op_covers(o, op))
			continue;
		if (!best || !o->wildcard || (best->wildcard && o->prefix > best->prefix))
			best = o;
	}
	return best;
}

/* host:port, [v6]:port; loopback when the host is localhost, 127.x or ::1. */
static int parse_net_target(struct request *q, char *err, size_t errlen)
{
	const char *t = q->target;
	const char *colon = strrchr(t, ':');
	char *end;
	unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
	if (!colon || colon == t || !isdigit((unsigned char)colon[1]) || *end || port == 0 || port > 65535) {
		snprintf(err, errlen, "expected HOST:PORT or /socket/path, got \"%s\"", t);
		return -1;
	}
	size_t hl = (size_t)(colon - t);
	q->port = (unsigned)port;
	q->loopback = (hl == 9 && !strncasecmp(t, "localhost", 9)) || !strncmp(t, "127.", 4) ||
		      (hl == 5 && !strncmp(t, "[::1]", 5)) || (hl == 3 && !strncmp(t, "::1", 3));
	return 0;
}

int sbpl_decide(const sbpl_profile *p, const char *operation, const char *target, struct sbpl_verdict *v,
		char *err, size_t errlen)
{
	return sbpl_decide_ext(p, operation, target, NULL, 0, v, err, errlen);
}

int sbpl_decide_ext(const sbpl_profile *p, const char *operation, const char *target,
		    const char *const *exts, size_t nexts, struct sbpl_verdict *v, char *err, size_t errlen)
{
	int k = find_operation(operation);
	if (k < 0) {
		snprintf(err, errlen, "unknown operation `%s` (give a concrete one such as file-read-data)", operation);
		return -1;
	}
	struct request q = { .op = operation, .cls = operations[k].cls, .target = target, .exts = exts,
			     .nexts = nexts };
	if (q.cls != T_NONE && (!target || !*target)) {
		snprintf(err, errlen, "operation `%s` needs a target", operation);
		return -1;
	}
	if (q.cls == T_NET) {
		q.is_path = target[0] == '/';
		if (!q.is_path && parse_net_target(&q, err, errlen) != 0)
			return -1;
	}
	if (q.cls == T_PATH && target[0] != '/') {
		snprintf(err, errlen, "operation `%s` needs an absolute path, got \"%s\"", operation, target);
		return -1;
	}
	*v = (struct sbpl_verdict){ .allow = !p->has_default || p->default_allow, .line = p->default_line,
				    .col = p->default_col };
	const struct opref *deny_op = NULL; /* the op of the deny in force, if any */
	for (size_t i = 0; i < p->nrules; i++) {
		const struct rule *r = &p->rules[i];
		const struct opref *o = rule_op(r, operation);
		if (!o || !rule_filters_match(r, &q))
			continue;
		if (r->allow && deny_op && op_wider(o, deny_op))
			continue; /* a specific deny outlives a later wildcard allow */
		deny_op = r->allow ? NULL : o;
		*v = (struct sbpl_verdict){ .allow = r->allow, .line = r->line, .col = r->col };
	}
	return 0;
}
