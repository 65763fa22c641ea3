/* gitcfg.c: a git config reader that follows git 2.39's config.c character by character
 * (get_next_char, get_base_var, get_value, parse_value), the allow-list of safe keys, and
 * the readers of config and pointer files that neither follow a last symlink nor block. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/gitcfg.h"
#include "compiler/textesc.h"
#include "compiler/zsp.h"

static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return status;
}

/* ---- the parser ----------------------------------------------------------------------- */

/* git's sane_ctype, not the locale's: space is only SP, TAB, LF and CR (no VT, no FF). */
static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_keychar(int c)
{
	return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

typedef struct reader {
	const unsigned char *p;
	size_t len, pos;
	unsigned line;      /* of the character last returned */
	unsigned next_line;
	bool eof;
	char *err;
	size_t errlen;
} reader;

/* git's get_next_char: CR LF reads as LF, a lone CR stays; the end reads as LF (again and
 * again) with eof set. */
static int next_char(reader *r)
{
	r->line = r->next_line;
	if (r->pos >= r->len) {
		r->eof = true;
		return '\n';
	}
	int c = r->p[r->pos++];
	if (c == '\r' && r->pos < r->len && r->p[r->pos] == '\n') {
		r->pos++;
		c = '\n';
	}
	if (c == '\n')
		r->next_line++;
	return c;
}

#define SYNTAX(r, ...) fail((r)->err, (r)->errlen, ZSP_EPOLICY, __VA_ARGS__)

/* After `[`: the section (and subsection) into hdr as git builds its key stem, "core",
 * "remote.origin" (legacy, lower-cased) or "remote" "." "Origin" (quoted, kept). Then split at
 * the first dot, as git's key is split: *sub is NULL without a dot. */
static int parse_header(reader *r, char *hdr, char **sub)
{
	size_t n = 0;
	int c;
	unsigned start = r->line;

	for (;;) {
		c = next_char(r);
		if (r->eof)
			return SYNTAX(r, "line %u: the section header does not end", start);
		if (c == ']' || is_space(c))
			break;
		if (!is_keychar(c) && c != '.')
			return SYNTAX(r, "line %u: a section name holds only letters, digits, `-` and `.`",
				      r->line);
		hdr[n++] = (char)lower(c);
	}
	if (c != ']') {
		/* get_extended_base_var: blanks, then `"subsection"` and `]` right after it */
		do {
			if (c == '\n')
				return SYNTAX(r, "line %u: the section header does not end on its line",
					      r->line);
			c = next_char(r);
		} while (is_space(c));
		if (c != '"')
			return SYNTAX(r, "line %u: a space in a section header must come before a "
				      "quoted subsection", r->line);
		hdr[n++] = '.';
		for (;;) {
			c = next_char(r);
			if (c == '\n')
				return SYNTAX(r, "line %u: the subsection's quote does not end on its line",
					      r->line);
			if (c == '"')
				break;
			if (c == '\\') {
				c = next_char(r);
				if (c == '\n')
					return SYNTAX(r, "line %u: the subsection's quote does not end on "
						      "its line", r->line);
				/* git drops the backslash of any other pair; refused as a likely typo
				 * that would name another subsection than the one meant */
				if (c != '\\' && c != '"')
					return SYNTAX(r, "line %u: a subsection knows only the escapes "
						      "`\\\"` and `\\\\`", r->line);
			}
			hdr[n++] = (char)c;
		}
		if (next_char(r) != ']')
			return SYNTAX(r, "line %u: `]` must follow the subsection's closing quote",
				      r->line);
	}
	hdr[n] = '\0';
	char *dot = memchr(hdr, '.', n);
	if (n == 0 || dot == hdr)
		return SYNTAX(r, "line %u: the section name is empty", start);
	*sub = NULL;
	if (dot) {
		*dot = '\0';
		*sub = dot + 1;
	}
	return ZSP_OK;
}

/* git's parse_value, after `=`: blanks outside quotes are dropped at the ends and each kept
 * one becomes a space; `#` and `;` outside quotes start a comment; `\` escapes n t b \ " and
 * joins the next line (inside quotes too); a quote left open at the line's end is an error. */
static int parse_value(reader *r, char *out)
{
	size_t n = 0, space = 0;
	bool quote = false, comment = false;

	for (;;) {
		int c = next_char(r);
		if (c == '\n') {
			if (quote)
				return SYNTAX(r, "line %u: a quoted value does not end (a `\"` is missing)",
					      r->line);
			out[n] = '\0';
			return ZSP_OK;
		}
		if (comment)
			continue;
		if (is_space(c) && !quote) {
			if (n)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; space; space--)
			out[n++] = ' ';
		if (c == '\\') {
			c = next_char(r);
			switch (c) {
			case '\n':
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return SYNTAX(r, "line %u: unknown escape in a value (git knows `\\n` "
					      "`\\t` `\\b` `\\\\` `\\\"` and `\\` at the line's end)", r->line);
			}
			out[n++] = (char)c;
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		out[n++] = (char)c;
	}
}

/* git_parse_source after a letter: the rest of the name, blanks, then `=` and a value or the
 * end of the line. */
static int parse_entry(reader *r, int first, zsp_gitcfg_entry *e, char *kv)
{
	size_t n = 0;
	int c;

	e->line = r->line;
	kv[n++] = (char)lower(first);
	for (;;) {
		c = next_char(r);
		if (r->eof || !is_keychar(c))
			break;
		kv[n++] = (char)lower(c);
	}
	while (c == ' ' || c == '\t')
		c = next_char(r);
	kv[n++] = '\0';
	e->name = kv;
	e->value = NULL;
	if (c == '\n')
		return ZSP_OK;
	if (c != '=')
		return SYNTAX(r, "line %u: a variable name holds only letters, digits and `-`, and "
			      "is followed by `=` or the end of the line", r->line);
	e->value = kv + n;
	return parse_value(r, kv + n);
}

/* A NUL ends git's strings early: the value git uses is not the one written. */
static int check_nul(reader *r)
{
	const unsigned char *nul = memchr(r->p, '\0', r->len);
	if (!nul)
		return ZSP_OK;
	unsigned line = 1;
	for (const unsigned char *s = r->p; s < nul; s++)
		line += *s == '\n';
	return SYNTAX(r, "line %u: a NUL byte", line);
}

/* git skips a whole UTF-8 byte order mark and rejects a partial one. */
static int skip_bom(reader *r)
{
	static const unsigned char bom[] = { 0xEF, 0xBB, 0xBF };
	if (r->len == 0 || r->p[0] != bom[0])
		return ZSP_OK;
	if (r->len < 3 || memcmp(r->p, bom, 3) != 0)
		return SYNTAX(r, "line 1: an incomplete byte order mark");
	r->pos = 3;
	return ZSP_OK;
}

static int parse_all(reader *r, char *hdr, char *kv, zsp_gitcfg_fn fn, void *ctx)
{
	zsp_gitcfg_entry e = { 0 };
	bool comment = false, have_section = false;
	int st;

	for (;;) {
		int c = next_char(r);
		if (c == '\n') {
			if (r->eof)
				return ZSP_OK;
			comment = false;
			continue;
		}
		if (comment || is_space(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			char *sub = NULL;
			if ((st = parse_header(r, hdr, &sub)) != ZSP_OK)
				return st;
			e.section = hdr;
			e.subsection = sub;
			have_section = true;
			continue;
		}
		if (!is_alpha(c))
			return SYNTAX(r, "line %u: expected a section header, a variable name or a "
				      "comment", r->line);
		/* git would pass a key without a section to its callbacks, which match none */
		if (!have_section)
			return SYNTAX(r, "line %u: a variable before any section header", r->line);
		if ((st = parse_entry(r, c, &e, kv)) != ZSP_OK)
			return st;
		if (fn && fn(ctx, &e) != 0)
			return ZSP_OK;
	}
}

int zsp_gitcfg_parse(const char *text, size_t len, zsp_gitcfg_fn fn, void *ctx, char *err,
		     size_t errlen)
{
	reader r = { .p = (const unsigned char *)text, .len = len, .line = 1, .next_line = 1,
		     .err = err, .errlen = errlen };
	int st;

	if (err && errlen)
		err[0] = '\0';
	if (len > ZSP_GITCFG_MAX)
		return SYNTAX(&r, "line 1: larger than %d bytes", ZSP_GITCFG_MAX);
	if (len && !text)
		return fail(err, errlen, ZSP_EINTERNAL, "no text");
	if ((st = check_nul(&r)) != ZSP_OK || (st = skip_bom(&r)) != ZSP_OK)
		return st;
	/* Each of the section stem and one name-and-value is at most as long as the input
	 * (no construct writes more bytes than it reads), plus the NUL bytes. */
	char *mem = malloc(2 * len + 4);
	if (!mem)
		return fail(err, errlen, ZSP_EINTERNAL, "out of memory");
	st = parse_all(&r, mem, mem + len + 2, fn, ctx);
	free(mem);
	return st;
}

/* ---- the allow-list ------------------------------------------------------------------- */

enum check {
	PLAIN,  /* any value */
	URL,    /* a URL or path git fetches from: no helper, no option, no unknown scheme */
	REMOTE, /* a remote's name, which git also takes as a URL */
};

/* sub: NULL for none, "*" for any; name "*" for any. Keys as git spells them, lower-cased. */
static const struct safe_key {
	const char *section, *sub, *name;
	enum check check;
} safe_keys[] = {
	{ "core", NULL, "repositoryformatversion", PLAIN },
	/* where the work tree is (git submodule add writes it into .git/modules/NAME/config):
	 * what git runs comes from the config and the hooks, never from the work tree */
	{ "core", NULL, "worktree", PLAIN },
	{ "core", NULL, "filemode", PLAIN },
	{ "core", NULL, "bare", PLAIN },
	{ "core", NULL, "logallrefupdates", PLAIN },
	{ "core", NULL, "ignorecase", PLAIN },
	{ "core", NULL, "precomposeunicode", PLAIN },
	{ "core", NULL, "autocrlf", PLAIN },
	{ "core", NULL, "eol", PLAIN },
	{ "core", NULL, "safecrlf", PLAIN },
	{ "core", NULL, "symlinks", PLAIN },
	{ "core", NULL, "quotepath", PLAIN },
	{ "core", NULL, "abbrev", PLAIN },
	{ "core", NULL, "compression", PLAIN },
	{ "core", NULL, "loosecompression", PLAIN },
	{ "core", NULL, "bigfilethreshold", PLAIN },
	{ "core", NULL, "checkstat", PLAIN },
	{ "core", NULL, "trustctime", PLAIN },
	{ "core", NULL, "untrackedcache", PLAIN },
	{ "core", NULL, "splitindex", PLAIN },
	{ "core", NULL, "preloadindex", PLAIN },
	{ "core", NULL, "sparsecheckout", PLAIN },
	{ "core", NULL, "sparsecheckoutcone", PLAIN },
	{ "core", NULL, "multipackindex", PLAIN },
	{ "core", NULL, "commitgraph", PLAIN },
	{ "core", NULL, "whitespace", PLAIN },
	{ "core", NULL, "warnambiguousrefs", PLAIN },
	{ "core", NULL, "fsyncmethod", PLAIN },
	{ "core", NULL, "filesreflocktimeout", PLAIN },
	{ "core", NULL, "packedreflocktimeout", PLAIN },
	{ "core", NULL, "notesref", PLAIN },
	{ "user", NULL, "name", PLAIN },
	{ "user", NULL, "email", PLAIN },
	{ "author", NULL, "name", PLAIN },
	{ "author", NULL, "email", PLAIN },
	{ "committer", NULL, "name", PLAIN },
	{ "committer", NULL, "email", PLAIN },
	{ "init", NULL, "defaultbranch", PLAIN },
	{ "extensions", NULL, "objectformat", PLAIN },
	{ "extensions", NULL, "preciousobjects", PLAIN },
	/* a filtered clone: the promisor remote is fetched from as `git fetch` would */
	{ "extensions", NULL, "partialclone", REMOTE },
	{ "remote", "*", "url", URL },
	{ "remote", "*", "pushurl", URL },
	{ "remote", "*", "fetch", PLAIN },
	{ "remote", "*", "push", PLAIN },
	{ "remote", "*", "mirror", PLAIN },
	{ "remote", "*", "tagopt", PLAIN },
	{ "remote", "*", "prune", PLAIN },
	{ "remote", "*", "prunetags", PLAIN },
	{ "remote", "*", "skipdefaultupdate", PLAIN },
	{ "remote", "*", "promisor", PLAIN },
	{ "remote", "*", "partialclonefilter", PLAIN },
	{ "branch", "*", "remote", REMOTE },
	{ "branch", "*", "pushremote", REMOTE },
	{ "branch", "*", "merge", PLAIN },
	{ "branch", "*", "rebase", PLAIN },
	{ "branch", "*", "description", PLAIN },
	{ "pull", NULL, "rebase", PLAIN },
	{ "pull", NULL, "ff", PLAIN },
	{ "push", NULL, "default", PLAIN },
	{ "push", NULL, "autosetupremote", PLAIN },
	{ "push", NULL, "followtags", PLAIN },
	{ "fetch", NULL, "prune", PLAIN },
	{ "fetch", NULL, "prunetags", PLAIN },
	{ "merge", NULL, "ff", PLAIN },
	{ "merge", NULL, "conflictstyle", PLAIN },
	{ "rebase", NULL, "autosquash", PLAIN },
	{ "rebase", NULL, "autostash", PLAIN },
	/* colours and slot colours (color.diff.meta): values are colour names only */
	{ "color", NULL, "*", PLAIN },
	{ "color", "*", "*", PLAIN },
	{ "status", NULL, "short", PLAIN },
	{ "status", NULL, "branch", PLAIN },
	{ "status", NULL, "showuntrackedfiles", PLAIN },
	{ "diff", NULL, "renames", PLAIN },
	{ "diff", NULL, "algorithm", PLAIN },
	{ "diff", NULL, "mnemonicprefix", PLAIN },
	{ "diff", NULL, "noprefix", PLAIN },
	{ "diff", NULL, "context", PLAIN },
	{ "submodule", "*", "url", URL },
	{ "submodule", "*", "path", PLAIN },
	{ "submodule", "*", "branch", PLAIN },
	{ "submodule", "*", "active", PLAIN },
	{ "submodule", "*", "shallow", PLAIN },
	{ "submodule", "*", "ignore", PLAIN },
	{ "submodule", "*", "fetchrecursesubmodules", PLAIN },
	{ "advice", NULL, "*", PLAIN },
	{ "gc", NULL, "auto", PLAIN },
	{ "gc", NULL, "autodetach", PLAIN },
};

/* Unsafe keys with a reason more precise than "not on the list". */
static const struct unsafe_key {
	const char *section, *sub, *name, *why;
} unsafe_keys[] = {
	{ "include", NULL, "*", "includes another file" },
	{ "include", "*", "*", "includes another file" },
	{ "includeif", "*", "*", "includes another file" },
	{ "includeif", NULL, "*", "includes another file" },
	{ "alias", NULL, "*", "an alias may run a shell command (`!`)" },
	{ "alias", "*", "*", "an alias may run a shell command (`!`)" },
	{ "core", NULL, "fsmonitor", "git runs it as a program" },
	{ "core", NULL, "hookspath", "names the hooks directory, whose programs git runs" },
	{ "core", NULL, "sshcommand", "git runs it as a program" },
	{ "core", NULL, "pager", "git runs it as a program" },
	{ "core", NULL, "editor", "git runs it as a program" },
	{ "core", NULL, "askpass", "git runs it as a program" },
	{ "core", NULL, "gitproxy", "git runs it as a program" },
	{ "core", NULL, "alternaterefscommand", "git runs it as a program" },
	{ "core", NULL, "excludesfile", "makes git read a file it names" },
	{ "core", NULL, "attributesfile", "makes git read a file it names, whose filters run" },
	{ "extensions", NULL, "worktreeconfig",
	  "makes git read config.worktree, another config file" },
	{ "diff", NULL, "external", "git runs it as a program" },
	{ "diff", "*", "command", "git runs it as a program" },
	{ "diff", "*", "textconv", "git runs it as a program" },
	{ "merge", "*", "driver", "git runs it as a program" },
	{ "filter", "*", "*", "git runs filters as programs" },
	{ "submodule", "*", "update", "may be `!command`, which git runs" },
	{ "remote", "*", "uploadpack", "git runs it as a program" },
	{ "remote", "*", "receivepack", "git runs it as a program" },
	{ "remote", "*", "vcs", "git runs a remote helper named by it" },
	{ "url", "*", "insteadof", "rewrites URLs, perhaps to a transport helper" },
	{ "url", "*", "pushinsteadof", "rewrites URLs, perhaps to a transport helper" },
	{ "credential", NULL, "helper", "git runs it as a program" },
	{ "credential", "*", "helper", "git runs it as a program" },
	{ "sequence", NULL, "editor", "git runs it as a program" },
	{ "gpg", NULL, "program", "git runs it as a program" },
	{ "gpg", "*", "program", "git runs it as a program" },
	{ "pager", NULL, "*", "git runs it as a program" },
};

static const char not_listed[] =
	"is not on the list of keys known to be safe (git may run a program or read a file it names)";

static bool part_matches(const char *pattern, const char *s)
{
	if (!pattern)
		return !s;
	return s && (strcmp(pattern, "*") == 0 || strcmp(pattern, s) == 0);
}

static bool key_matches(const char *section, const char *sub, const char *name,
			const zsp_gitcfg_entry *e)
{
	return strcmp(section, e->section) == 0 && part_matches(sub, e->subsection) &&
	       part_matches(name, e->name);
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7F)
			return true;
	return false;
}

/* git's transport_get runs git-remote-HELPER for `HELPER::...` and for an unknown
 * `scheme://`; ssh takes a host starting with `-` as an option. */
static const char *url_problem(const char *v)
{
	static const char *const schemes[] = { "https", "http", "ssh", "git", "file" };

	if (!v)
		return "has no value";
	if (!*v)
		return "is empty";
	if (has_control(v))
		return "holds a control character";
	if (v[0] == '-')
		return "starts with `-`, which ssh or git would take as an option";
	if (strstr(v, "::"))
		return "holds `::`, which makes git run a transport helper";
	const char *sep = strstr(v, "://"), *host;
	size_t hostlen;
	if (sep) {
		size_t i, n = (size_t)(sep - v);
		for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
			if (strlen(schemes[i]) == n && memcmp(v, schemes[i], n) == 0)
				break;
		if (i == sizeof(schemes) / sizeof(schemes[0]))
			return "has a URL scheme other than https, http, ssh, git or file "
			       "(git would run a transport helper)";
		host = sep + 3;
		hostlen = strcspn(host, "/");
	} else {
		const char *colon = strchr(v, ':'), *slash = strchr(v, '/');
		if (!colon || (slash && slash < colon))
			return NULL; /* a local path */
		host = v; /* scp-like [user@]host:path or [host:port]:path */
		const char *close = v[0] == '[' ? strchr(v, ']') : NULL;
		hostlen = close ? (size_t)(close - v) : (size_t)(colon - v);
	}
	/* user, host ([bracketed] too) and port each reach ssh as an argument of their own */
	for (size_t i = 0; i < hostlen; i++)
		if (host[i] == '-' && (i == 0 || strchr("@[:", host[i - 1])))
			return "names a user, host or port starting with `-`, which ssh would take "
			       "as an option";
	return NULL;
}

bool zsp_gitcfg_safe(const zsp_gitcfg_entry *e, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	for (size_t i = 0; i < sizeof(unsafe_keys) / sizeof(unsafe_keys[0]); i++) {
		const struct unsafe_key *k = &unsafe_keys[i];
		if (key_matches(k->section, k->sub, k->name, e)) {
			*why = k->why;
			return false;
		}
	}
	for (size_t i = 0; i < sizeof(safe_keys) / sizeof(safe_keys[0]); i++) {
		const struct safe_key *k = &safe_keys[i];
		if (!key_matches(k->section, k->sub, k->name, e))
			continue;
		if (k->check != PLAIN && (*why = url_problem(e->value)) != NULL)
			return false;
		*why = NULL;
		return true;
	}
	*why = not_listed;
	return false;
}

/* ---- vetting a changed config ------------------------------------------------------- */

typedef struct centry {
	char *key;                 /* section \1 subsection \1 name \1 value (or \2: no value) */
	unsigned line;
	bool safe, used;
	char shown[256];           /* the key for a message, escaped */
	const char *why;
} centry;

typedef struct clist {
	centry *e;
	size_t n, cap;
	bool oom;
} clist;

static int collect(void *ctx, const zsp_gitcfg_entry *e)
{
	clist *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		centry *ne = realloc(l->e, cap * sizeof(*ne));
		if (!ne) {
			l->oom = true;
			return 1;
		}
		l->e = ne;
		l->cap = cap;
	}
	centry *c = &l->e[l->n];
	memset(c, 0, sizeof(*c));
	const char *sub = e->subsection ? e->subsection : "";
	if (asprintf(&c->key, "%s\1%s%s\1%s\1%s%s", e->section, e->subsection ? "s" : "n", sub, e->name,
		     e->value ? "v" : "b", e->value ? e->value : "") < 0) {
		l->oom = true;
		return 1;
	}
	c->line = e->line;
	c->safe = zsp_gitcfg_safe(e, &c->why);
	if (!c->why)
		c->why = not_listed;
	zsp_gitcfg_key(e, c->shown, sizeof(c->shown));
	l->n++;
	return 0;
}

static void clist_free(clist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->e[i].key);
	free(l->e);
	memset(l, 0, sizeof(*l));
}

/* Parses text into l. 0, or -1 (git could not read it, or out of memory: l->oom). */
static int parse_into(const char *text, size_t len, clist *l)
{
	char err[256];
	int rc = zsp_gitcfg_parse(text, len, collect, l, err, sizeof(err));
	return rc == ZSP_OK && !l->oom ? 0 : -1;
}

/* Marks in n what old (the config at launch) does not account for: an unsafe variable is kept
 * only where old has the same one (section, subsection, name and value), one for one. Returns
 * the number of variables refused. */
static size_t judge(clist *n, clist *old)
{
	size_t refused = 0;
	for (size_t i = 0; i < old->n; i++)
		old->e[i].used = false;
	for (size_t i = 0; i < n->n; i++) {
		centry *c = &n->e[i];
		c->used = true;    /* kept */
		if (c->safe)
			continue;
		bool found = false;
		for (size_t k = 0; k < old->n && !found; k++)
			if (!old->e[k].used && strcmp(old->e[k].key, c->key) == 0)
				old->e[k].used = found = true;
		if (!found) {
			c->used = false;
			refused++;
		}
	}
	return refused;
}

/* The line holding the variable that starts on line `line` ends where its value ends: a
 * backslash before the newline (outside a comment) continues it. Returns the offset just past
 * its last newline (or len). */
static size_t value_end(const char *t, size_t len, size_t off)
{
	bool quote = false, comment = false;
	for (size_t i = off; i < len; i++) {
		char c = t[i];
		if (c == '\n')
			return i + 1;
		if (comment)
			continue;
		if (c == '"')
			quote = !quote;
		else if (!quote && (c == ';' || c == '#'))
			comment = true;
		else if (c == '\\' && i + 1 < len)
			i++;   /* an escape, or a continuation: the newline after it does not end it */
	}
	return len;
}

static size_t line_offset(const char *t, size_t len, unsigned line)
{
	size_t off = 0;
	for (unsigned l = 1; l < line && off < len; off++)
		if (t[off] == '\n')
			l++;
	return off;
}

/* text without the variables of n that were refused. malloc'd, *olen bytes; NULL when out of
 * memory. */
static char *without_refused(const char *t, size_t len, const clist *n, size_t *olen)
{
	char *out = malloc(len + 1);
	if (!out)
		return NULL;
	size_t o = 0, at = 0;
	for (size_t i = 0; i < n->n; i++) {
		if (n->e[i].used)
			continue;
		size_t start = line_offset(t, len, n->e[i].line);
		if (start < at)
			continue;  /* on a line already taken out */
		memcpy(out + o, t + at, start - at);
		o += start - at;
		at = value_end(t, len, start);
	}
	memcpy(out + o, t + at, len - at);
	o += len - at;
	out[o] = 0;
	*olen = o;
	return out;
}


int zsp_gitcfg_vet(const char *old, size_t oldlen, const char *text, size_t len, zsp_gitcfg_refused_fn fn,
		   void *ctx, char **out, size_t *outlen, char *err, size_t errlen)
{
	clist n = { 0 }, o = { 0 }, r = { 0 };
	char *rtext = NULL;
	size_t rlen = 0;
	int rc = ZSP_OK;
	*out = NULL;
	*outlen = 0;
	/* an old config zsp cannot read vouches for nothing */
	if (old && parse_into(old, oldlen, &o) != 0) {
		if (o.oom)
			goto oom;
		clist_free(&o);
	}
	if (parse_into(text, len, &n) != 0) {
		if (n.oom)
			goto oom;
		snprintf(err, errlen, "it is not a config git reads with certainty");
		rc = ZSP_EPOLICY;
		goto done;
	}
	size_t refused = judge(&n, &o);
	if (!(rtext = refused ? without_refused(text, len, &n, &rlen) : malloc(len + 1)))
		goto oom;
	if (!refused) {
		memcpy(rtext, text, len);
		rtext[len] = 0;
		rlen = len;
	} else {
		/* what is left must hold on its own: taking a line out must not have given another
		 * variable another section (a header on the line taken out) */
		int prc = parse_into(rtext, rlen, &r);
		if (r.oom)
			goto oom;
		if (prc != 0 || judge(&r, &o) != 0) {
			snprintf(err, errlen, "what is left after taking out %s does not read the same",
				 refused == 1 ? "the unsafe variable" : "the unsafe variables");
			rc = ZSP_EPOLICY;
		}
	}
	for (size_t i = 0; i < n.n && fn; i++)
		if (!n.e[i].used)
			fn(ctx, n.e[i].shown, n.e[i].why, rc == ZSP_OK);
	if (rc == ZSP_OK) {
		*out = rtext;
		*outlen = rlen;
		rtext = NULL;
	}
	goto done;
oom:
	snprintf(err, errlen, "out of memory");
	rc = ZSP_EINTERNAL;
done:
	free(rtext);
	clist_free(&n);
	clist_free(&o);
	clist_free(&r);
	return rc;
}

/* ---- messages ------------------------------------------------------------------------- */

/* Copies s into buf, cut at a UTF-8 character boundary. */
static void copy_cut(char *buf, size_t size, const char *s)
{
	size_t n = strlen(s);
	if (n >= size) {
		n = size - 1;
		while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
}

const char *zsp_gitcfg_key(const zsp_gitcfg_entry *e, char *buf, size_t size)
{
	if (!buf || !size)
		return buf;
	const char *sub = e->subsection;
	size_t n = strlen(e->section) + (sub ? strlen(sub) + 1 : 0) + strlen(e->name) + 2;
	char *raw = malloc(n);
	char *shown = NULL;
	if (raw) {
		snprintf(raw, n, "%s%s%s.%s", e->section, sub ? "." : "", sub ? sub : "", e->name);
		shown = zsp_text_plain(raw) ? raw : zsp_text_escape(raw);
	}
	copy_cut(buf, size, shown ? shown : "(a key: out of memory)");
	if (shown != raw)
		free(shown);
	free(raw);
	return buf;
}

/* ---- files ---------------------------------------------------------------------------- */

/* Opens path without following a last symlink or waiting on a FIFO, and reads at most cap
 * bytes of a regular file. */
static int read_capped(int dirfd, const char *path, size_t cap, char **text, size_t *len,
		       char *err, size_t errlen)
{
	struct stat st;
	*text = NULL;
	*len = 0;
	if (err && errlen)
		err[0] = '\0';
	/* a first look, so that a device is never opened (opening some has effects) */
	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return fail(err, errlen, ZSP_ENOINPUT, "%s: %s", path, strerror(errno));
		return fail(err, errlen, ZSP_EIO, "%s: %s", path, strerror(errno));
	}
	if (S_ISLNK(st.st_mode))
		return fail(err, errlen, ZSP_EPOLICY, "%s: a symbolic link", path);
	if (!S_ISREG(st.st_mode))
		return fail(err, errlen, ZSP_EPOLICY, "%s: not a regular file", path);

	int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			return fail(err, errlen, ZSP_EPOLICY, "%s: a symbolic link", path);
		if (errno == ENOENT || errno == ENOTDIR)
			return fail(err, errlen, ZSP_ENOINPUT, "%s: %s", path, strerror(errno));
		return fail(err, errlen, ZSP_EIO, "%s: %s", path, strerror(errno));
	}
	/* again on what was opened: it may have been swapped since the first look */
	int st_code = ZSP_OK;
	if (fstat(fd, &st) != 0)
		st_code = fail(err, errlen, ZSP_EIO, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		st_code = fail(err, errlen, ZSP_EPOLICY, "%s: not a regular file", path);
	else if ((unsigned long long)st.st_size > cap)
		st_code = fail(err, errlen, ZSP_EPOLICY, "%s: larger than %zu bytes", path, cap);
	if (st_code != ZSP_OK) {
		close(fd);
		return st_code;
	}
	/* read to the end, not to st_size: the file may grow meanwhile */
	size_t size = (size_t)st.st_size + 1, n = 0;
	char *buf = malloc(size + 1);
	while (buf) {
		if (n == size) {
			if (size > cap)
				break;
			size = size * 2 > cap + 1 ? cap + 1 : size * 2;
			char *nb = realloc(buf, size + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		ssize_t got = read(fd, buf + n, size - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			st_code = fail(err, errlen, ZSP_EIO, "%s: %s", path, strerror(errno));
			break;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (!buf)
		return fail(err, errlen, ZSP_EINTERNAL, "%s: out of memory", path);
	if (st_code == ZSP_OK && n > cap)
		st_code = fail(err, errlen, ZSP_EPOLICY, "%s: larger than %zu bytes", path, cap);
	if (st_code != ZSP_OK) {
		free(buf);
		return st_code;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return ZSP_OK;
}

int zsp_gitcfg_read_file(int dirfd, const char *path, char **text, size_t *len, char *err,
			 size_t errlen)
{
	return read_capped(dirfd, path, ZSP_GITCFG_MAX, text, len, err, errlen);
}

int zsp_git_pointer_read(int dirfd, const char *path, const char *prefix, char *out, size_t size,
			 char *err, size_t errlen)
{
	char *text;
	size_t len;
	size_t plen = prefix ? strlen(prefix) : 0;
	int st = read_capped(dirfd, path, PATH_MAX + plen + 2, &text, &len, err, errlen);
	if (st != ZSP_OK)
		return st;
	if (out && size)
		out[0] = '\0';
	if (memchr(text, '\0', len))
		st = fail(err, errlen, ZSP_EPOLICY, "%s: a NUL byte", path);
	else if (prefix && strncmp(text, prefix, plen) != 0)
		st = fail(err, errlen, ZSP_EPOLICY, "%s: does not start with `%s`", path, prefix);
	if (st != ZSP_OK) {
		free(text);
		return st;
	}
	while (len > plen && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	text[len] = '\0';
	const char *p = text + plen;
	size_t n = len - plen;
	if (n == 0)
		st = fail(err, errlen, ZSP_EPOLICY, "%s: names no path", path);
	else if (has_control(p))
		st = fail(err, errlen, ZSP_EPOLICY, "%s: a control character or a second line", path);
	else if (p[0] == ' ' || p[0] == '\t' || p[n - 1] == ' ' || p[n - 1] == '\t')
		/* git keeps these in some readers and strips them in others */
		st = fail(err, errlen, ZSP_EPOLICY, "%s: a space or tab around the path", path);
	else if (!out || n >= size)
		st = fail(err, errlen, ZSP_EPOLICY, "%s: the path is too long", path);
	else
		memcpy(out, p, n + 1);
	free(text);
	return st;
}
