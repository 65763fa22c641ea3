/* oracle.c: decides requests against one policy's IR. Tool requests follow doc/oracle.md
 * (built-in rules, substitution check, deny, ask, allow, defaults); sandbox requests follow the
 * fs, net and syscall rules, judging paths as written and after resolving symlinks. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/builtin.h"
#include "compiler/checks.h"
#include "compiler/files.h"
#include "compiler/hardening.h"
#include "compiler/host.h"
#include "compiler/oracle.h"
#include "lang/buf.h"
#include "compiler/path.h"
#include "compiler/regex.h"
#include "compiler/resolve.h"
#include "compiler/safe.h"
#include "compiler/shell.h"
#include "compiler/zsp.h"

struct zsp_oracle {
	const zsp_ir_policy *p;
	const zsp_oracle_env *env;
	zsp_regex ***re;        /* per tool, per rule: NULL for path rules */
	unsigned *hits;         /* coverage, numbered as zsp_oracle_hits says */
	size_t nhits;
	size_t tool_base;       /* index of the first tool rule in hits */
	size_t *tool_first;     /* per tool: index of its first rule in hits */
	/* Per fs and tool rule, numbered as hits: the rule as written and its location, formatted
	 * once here because every decision quotes the rules it used. */
	zsp_arena *texts;
	const char **rule_texts, **rule_locs;
	struct fs_info *fs;     /* per fs rule: what matching needs, computed once */
};

/* Precomputed per fs rule so that a decision does not re-derive it for every request. */
struct fs_info {
	size_t depth;           /* components of a literal rule */
	size_t len;             /* strlen of the rule's path */
	const char *name;       /* "**" + "/NAME" with a literal NAME: matches a component NAME */
	const char *comp;       /* "**" + "/GLOB" with GLOB one component: matches a component */
	size_t pre, suf;        /* GLOB's literal first and last bytes: a component matching it
				 * starts with the pre first bytes and ends with the suf last */
	char *lit;              /* a glob's literal leading directories: "/home" for a rule on
				 * "/home" + a glob component + more */
};

/* ---- verdict helpers -------------------------------------------------------------------- */

/* The strings joined, in a; NULL on out-of-memory. What every decision says is built with it:
 * zsp_arena_printf formats twice and costs more than the rest of a path decision. */
static char *concat(zsp_arena *a, ...) __attribute__((sentinel));
static char *concat(zsp_arena *a, ...)
{
	va_list ap;
	size_t len = 0;
	va_start(ap, a);
	for (const char *s; (s = va_arg(ap, const char *));)
		len += strlen(s);
	va_end(ap);
	char *out = zsp_arena_alloc(a, len + 1), *p = out;
	if (!out)
		return NULL;
	va_start(ap, a);
	for (const char *s; (s = va_arg(ap, const char *));)
		p = stpcpy(p, s);
	va_end(ap);
	*p = '\0';
	return out;
}

static int trace(zsp_arena *a, zsp_verdict *v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int trace(zsp_arena *a, zsp_verdict *v, const char *fmt, ...)
{
	char buf[1024];
	if (!v->explain)
		return 0; /* nobody will read it: formatting is a fifth of a decision */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	const char **t = zsp_arena_grow(a, v->trace, v->ntrace, &v->trace_cap, sizeof(*t));
	if (!t)
		return -1;
	v->trace = t;
	v->trace[v->ntrace] = zsp_arena_strdup(a, buf);
	return v->trace[v->ntrace++] ? 0 : -1;
}

static void decide(zsp_verdict *v, zsp_decision d, const char *reason, const char *detail)
{
	v->decision = d;
	v->reason = reason;
	v->detail = detail;
}

static int rank(zsp_decision d)
{
	return d == ZSP_DENY ? 3 : d == ZSP_ASK ? 2 : d == ZSP_ALLOW ? 1 : 0;
}

static const char *loc_text(zsp_arena *a, zsp_loc loc)
{
	if (!loc.src)
		return "built in";
	unsigned line, col;
	zsp_source_position(loc.src, loc.begin, &line, &col);
	return zsp_arena_printf(a, "%s:%u:%u", loc.src->path, line, col);
}

/* loc_text of a rule's location: the text cache_rule_texts made when loc is a rule's */
static const char *rule_loc_text(const zsp_oracle *o, zsp_arena *a, zsp_loc loc)
{
	const zsp_ir_policy *p = o->p;
	if (!loc.src)
		return "built in";
	for (size_t i = 0; i < p->nfs; i++)
		if (p->fs[i].loc.src == loc.src && p->fs[i].loc.begin == loc.begin)
			return o->rule_locs[i];
	for (size_t i = 0; i < p->ntools; i++)
		for (size_t j = 0; j < p->tools[i].nrules; j++) {
			zsp_loc r = p->tools[i].rules[j].loc;
			if (r.src == loc.src && r.begin == loc.begin)
				return o->rule_locs[o->tool_first[i] + j];
		}
	return loc_text(a, loc);
}

static const char *rule_text(zsp_arena *a, const zsp_ir_tool_rule *r)
{
	if (r->safe)
		return zsp_arena_printf(a, "%s safe", zsp_decision_name(r->decision));
	if (r->is_path)
		return zsp_arena_printf(a, "%s path \"%s\"", zsp_decision_name(r->decision), r->pattern);
	return zsp_arena_printf(a, "%s /%s/%s", zsp_decision_name(r->decision), r->pattern,
				r->case_sensitive ? "c" : "");
}

static const char *fs_rule_text(zsp_arena *a, const zsp_ir_fs_rule *r)
{
	if (r->protect)
		return zsp_arena_printf(a, "protect \"%s\" under \"%s\"", r->protect, r->root);
	if (r->cache)   /* the sandbox's own directory there: the host's is never written */
		return zsp_arena_printf(a, "cache %s at \"%s\" (the sandbox's own)", r->cache, r->path);
	return zsp_arena_printf(a, "%s \"%s\"", zsp_access_name(r->access), r->path);
}

/* Formats every fs and tool rule once. Hosts' rules are rare in decisions: not cached. */
static bool cache_rule_texts(zsp_oracle *o)
{
	const zsp_ir_policy *p = o->p;
	o->texts = zsp_arena_new();
	o->rule_texts = calloc(o->nhits + 1, sizeof(*o->rule_texts));
	o->rule_locs = calloc(o->nhits + 1, sizeof(*o->rule_locs));
	if (!o->texts || !o->rule_texts || !o->rule_locs)
		return false;
	for (size_t i = 0; i < p->nfs; i++) {
		o->rule_texts[i] = fs_rule_text(o->texts, &p->fs[i]);
		o->rule_locs[i] = loc_text(o->texts, p->fs[i].loc);
		if (!o->rule_texts[i] || !o->rule_locs[i])
			return false;
	}
	for (size_t i = 0; i < p->ntools; i++) {
		for (size_t j = 0; j < p->tools[i].nrules; j++) {
			size_t k = o->tool_first[i] + j;
			o->rule_texts[k] = rule_text(o->texts, &p->tools[i].rules[j]);
			o->rule_locs[k] = loc_text(o->texts, p->tools[i].rules[j].loc);
			if (!o->rule_texts[k] || !o->rule_locs[k])
				return false;
		}
	}
	return true;
}

static bool fs_info_init(zsp_oracle *o);

/* ---- setup ------------------------------------------------------------------------------ */

zsp_oracle *zsp_oracle_new(const zsp_ir_policy *p, const zsp_oracle_env *env)
{
	zsp_oracle *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->p = p;
	o->env = env;
	size_t ntool_rules = 0;
	for (size_t i = 0; i < p->ntools; i++)
		ntool_rules += p->tools[i].nrules;
	o->tool_base = p->nfs + p->nhosts;
	o->nhits = o->tool_base + ntool_rules;
	o->hits = calloc(o->nhits + 1, sizeof(*o->hits));
	o->re = calloc(p->ntools + 1, sizeof(*o->re));
	o->tool_first = calloc(p->ntools + 1, sizeof(*o->tool_first));
	if (!o->hits || !o->re || !o->tool_first) {
		zsp_oracle_free(o);
		return NULL;
	}
	size_t next = o->tool_base;
	for (size_t i = 0; i < p->ntools; i++) {
		const zsp_ir_tool *t = &p->tools[i];
		o->tool_first[i] = next;
		next += t->nrules;
		o->re[i] = calloc(t->nrules + 1, sizeof(*o->re[i]));
		if (!o->re[i]) {
			zsp_oracle_free(o);
			return NULL;
		}
		for (size_t j = 0; j < t->nrules; j++) {
			if (t->rules[j].is_path || t->rules[j].safe)
				continue;
			/* the compiler checked every regex: a NULL here is out of memory */
			o->re[i][j] = zsp_regex_compile(t->rules[j].pattern, t->rules[j].case_sensitive);
			if (!o->re[i][j]) {
				zsp_oracle_free(o);
				return NULL;
			}
		}
	}
	if (!cache_rule_texts(o) || !fs_info_init(o)) {
		zsp_oracle_free(o);
		return NULL;
	}
	return o;
}

void zsp_oracle_free(zsp_oracle *o)
{
	if (!o)
		return;
	if (o->re) {
		for (size_t i = 0; i < o->p->ntools; i++) {
			if (!o->re[i])
				continue;
			for (size_t j = 0; j < o->p->tools[i].nrules; j++)
				zsp_regex_free(o->re[i][j]);
			free(o->re[i]);
		}
	}
	free(o->re);
	free(o->hits);
	free(o->tool_first);
	for (size_t i = 0; o->fs && i < o->p->nfs; i++)
		free(o->fs[i].lit);
	free(o->fs);
	free(o->rule_texts);
	free(o->rule_locs);
	zsp_arena_free(o->texts);
	free(o);
}

const unsigned *zsp_oracle_hits(const zsp_oracle *o, size_t *n)
{
	*n = o->nhits;
	return o->hits;
}

/* ---- concrete paths --------------------------------------------------------------------- */

int zsp_oracle_resolve(const zsp_oracle_env *env, zsp_arena *a, const char *arg, zsp_oracle_path *out)
{
	*out = (zsp_oracle_path){ 0 };
	const char *base = "", *rest = arg;
	if (arg[0] == '~' && (arg[1] == '/' || arg[1] == '\0') && env->home) {
		base = env->home;
		rest = arg + 1;
	} else if (arg[0] != '/') {
		base = env->workspace ? env->workspace : "/";
	}
	/* joined as the requester would open it: folding its `..` first would skip symlinks */
	char *joined = concat(a, base, "/", rest, NULL);
	size_t cap = joined ? strlen(joined) + 2 : 0;
	char *abs = joined ? zsp_arena_alloc(a, cap) : NULL;
	if (!abs || !zsp_path_lexical(joined, abs, cap))
		return -1;
	out->abs = abs;
	if (!env->resolve_symlinks)
		return 0;
	char *res;
	const char *why;
	switch (zsp_resolve_path(a, joined, env->workspace, &res, &why)) {
	case ZSP_RESOLVE_OK:
		out->resolved = strcmp(res, abs) != 0 ? res : NULL;
		return 0;
	case ZSP_RESOLVE_UNKNOWN:
		out->unknown = zsp_arena_printf(a, "%s: %s", abs, why);
		return out->unknown ? 0 : -1;
	default:
		return -1;
	}
}

static bool under(const char *root, const char *path)
{
	return root && zsp_path_is_prefix(root, path);
}

/* ---- fs rules --------------------------------------------------------------------------- */

/* Depth at which a glob rule applies to path: the deepest prefix of path it matches, or -1. */
static long glob_depth(const char *pattern, const char *path, char *scratch)
{
	size_t len = strlen(path);
	long best = -1, depth = 0;
	for (size_t end = 1; end <= len; end++) {
		if (end != len && path[end] != '/')
			continue;
		depth++;
		memcpy(scratch, path, end);
		scratch[end] = '\0';
		if (zsp_glob_match(pattern, scratch))
			best = depth;
	}
	if (best < 0 && strcmp(path, "/") == 0 && zsp_glob_match(pattern, "/"))
		best = 0;
	return best;
}

/* glob_depth for a pattern "**" + "/" + comp, where comp is one component: the same prefixes,
 * numbered the same, each matching when its last component matches comp. */
static long comp_depth(const struct fs_info *f, const char *path)
{
	const char *comp = f->comp, *tail = comp + strlen(comp) - f->suf;
	size_t len = strlen(path);
	long best = -1, depth = 0;
	for (size_t end = 1; end <= len; end++) {
		if (end != len && path[end] != '/')
			continue;
		depth++;
		size_t e = end, s;
		while (e > 0 && path[e - 1] == '/')
			e--;
		for (s = e; s > 0 && path[s - 1] != '/'; s--)
			;
		if (e - s < f->pre || memcmp(path + s, comp, f->pre) != 0 || e - s < f->suf ||
		    memcmp(path + e - f->suf, tail, f->suf) != 0)
			continue;
		if (e > s && zsp_glob_match_component(comp, path + s, e - s))
			best = depth;
	}
	return best;
}

/* zsp_path_is_prefix(rule, path) for a rule of length n and a path of length plen */
static bool rule_is_prefix(const char *rule, size_t n, const char *path, size_t plen)
{
	if (n == 1 && rule[0] == '/')
		return path[0] == '/';
	/* the last bytes differ first: most rules share their leading directories */
	return n > 0 && plen >= n && rule[n - 1] == path[n - 1] && (path[n] == '\0' || path[n] == '/') &&
	       memcmp(rule, path, n) == 0;
}

/* Depth of the deepest component of path equal to name, or -1. */
static long name_depth(const char *name, const char *path)
{
	size_t n = strlen(name);
	long best = -1, depth = 0;
	for (const char *c = path; *c;) {
		while (*c == '/')
			c++;
		if (!*c)
			break;
		const char *e = strchr(c, '/');
		size_t len = e ? (size_t)(e - c) : strlen(c);
		depth++;
		if (len == n && memcmp(c, name, n) == 0)
			best = depth;
		c += len;
	}
	return best;
}

static bool fs_info_init(zsp_oracle *o)
{
	const zsp_ir_policy *p = o->p;
	o->fs = calloc(p->nfs + 1, sizeof(*o->fs));
	if (!o->fs)
		return false;
	for (size_t i = 0; i < p->nfs; i++) {
		const char *path = p->fs[i].path;
		struct fs_info *f = &o->fs[i];
		f->depth = zsp_path_depth(path);
		f->len = strlen(path);
		if (!p->fs[i].glob)
			continue;
		if (strncmp(path, "**/", 3) == 0 && !strchr(path + 3, '/') && !zsp_glob_has_meta(path + 3) &&
		    !strchr(path + 3, '\\')) {
			f->name = path + 3;
		} else if (strncmp(path, "**/", 3) == 0 && path[3] && !strchr(path + 3, '/') &&
			   strcmp(path + 3, "**") != 0) {
			f->comp = path + 3;
			/* before the first wildcard; after the last when no class or escape is there to
			 * make a later byte part of one */
			f->pre = strcspn(f->comp, "*?[\\");
			size_t n = strlen(f->comp);
			if (!strpbrk(f->comp, "[\\"))
				for (f->suf = 0; f->suf < n && !strchr("*?", f->comp[n - 1 - f->suf]); f->suf++)
					;
		} else if (path[0] == '/') {
			/* the components before the first one with a glob character */
			size_t cut = 1, end = 1;
			while (path[end]) {
				size_t next = end;
				while (path[next] && path[next] != '/')
					next++;
				char *comp = strndup(path + end, next - end);
				bool meta = !comp || zsp_glob_has_meta(comp) || strchr(comp, '\\');
				free(comp);
				if (meta)
					break;
				cut = next;
				end = path[next] ? next + 1 : next;
			}
			if (!(f->lit = strndup(path, cut)))
				return false;
		}
	}
	return true;
}

/* The rule deciding a concrete absolute path: the most specific one covering it, ties going
 * deny > write > read. NULL when none covers it. */
static const zsp_ir_fs_rule *fs_rule_for(const zsp_oracle *o, const char *path, size_t *index)
{
	const zsp_ir_policy *p = o->p;
	const zsp_ir_fs_rule *best = NULL;
	long best_depth = -1;
	char stack_scratch[PATH_MAX + 1];
	size_t plen = strlen(path);
	/* long paths get a scratch buffer of their own: a glob deny must not be skipped */
	char *scratch = plen <= PATH_MAX ? stack_scratch : malloc(plen + 1);
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		const struct fs_info *f = &o->fs[i];
		long d;
		if (r->path[0] == '$')
			continue; /* an unresolved parameter names no concrete place */
		if (!r->glob)
			d = rule_is_prefix(r->path, f->len, path, plen) ? (long)f->depth : -1;
		else if (f->name)
			d = name_depth(f->name, path);
		else if (f->comp)
			d = comp_depth(f, path);
		else if (f->lit && !zsp_path_is_prefix(f->lit, path))
			d = -1;
		else if (!scratch)
			d = r->access == ZSP_ACCESS_DENY ? (long)plen : -1; /* out of memory: fail closed */
		else
			d = glob_depth(r->path, path, scratch);
		if (d < 0)
			continue;
		if (d > best_depth || (d == best_depth && r->access > best->access)) {
			best = r;
			best_depth = d;
			*index = i;
		}
	}
	if (scratch != stack_scratch)
		free(scratch);
	return best;
}

const zsp_ir_fs_rule *zsp_oracle_fs_rule(const zsp_oracle *o, const char *path)
{
	size_t index;
	return fs_rule_for(o, path, &index);
}

static bool access_allows(zsp_access have, const char *want)
{
	if (have == ZSP_ACCESS_DENY || have == 0)
		return false;
	return strcmp(want, "write") == 0 ? have == ZSP_ACCESS_WRITE : true;
}

/* decide_fs with the paths made by env (the oracle's own, or one that resolves no symlinks) */
static int decide_fs_in(zsp_oracle *o, const zsp_oracle_env *env, zsp_arena *a, const char *want,
			const char *arg, zsp_verdict *v)
{
	zsp_oracle_path path;
	if (zsp_oracle_resolve(env, a, arg, &path))
		return -1;
	const char *paths[2] = { path.abs, path.resolved };
	decide(v, ZSP_ALLOW, "fs-rule", NULL);
	for (int i = 0; i < 2 && paths[i]; i++) {
		size_t idx = 0;
		const zsp_ir_fs_rule *r = fs_rule_for(o, paths[i], &idx);
		const char *as = i == 0 ? "as written" : "with symlinks resolved";
		if (!r) {
			if (trace(a, v, "%s: %s: no rule covers it: denied", as, paths[i]))
				return -1;
			decide(v, ZSP_DENY, "fs-uncovered", concat(a, "no rule covers ", paths[i], NULL));
			v->rule = NULL;
			v->loc = (zsp_loc){ 0 };
			break;
		}
		o->hits[idx]++;
		bool ok = access_allows(r->access, want);
		const char *text = zsp_arena_strdup(a, o->rule_texts[idx]);
		if (trace(a, v, "%s: %s: %s (%s) %s %s", as, paths[i], text, o->rule_locs[idx],
			  ok ? "allows" : "refuses", want))
			return -1;
		if (v->decision == ZSP_ALLOW || !ok) {
			v->rule = text;
			v->loc = r->loc;
		}
		if (!ok) {
			decide(v, ZSP_DENY, "fs-rule", concat(a, want, " ", paths[i], NULL));
			break;
		}
	}
	if (path.unknown && v->decision == ZSP_ALLOW) {
		/* the sandbox cannot ask: what cannot be followed is refused */
		decide(v, ZSP_DENY, "unresolvable-path", path.unknown);
		v->rule = NULL;
		v->loc = (zsp_loc){ 0 };
		return trace(a, v, "unresolvable: %s: denied", path.unknown);
	}
	return 0;
}

static int decide_fs(zsp_oracle *o, zsp_arena *a, const char *want, const char *arg, zsp_verdict *v)
{
	return decide_fs_in(o, o->env, a, want, arg, v);
}

/* ---- network and syscalls --------------------------------------------------------------- */

/* The host rule of `decision` covering the canonical host on port, or -1. */
static long host_rule(const zsp_ir_policy *p, zsp_decision decision, const char *host, unsigned port)
{
	for (size_t i = 0; i < p->nhosts; i++) {
		const zsp_ir_host *h = &p->hosts[i];
		if (h->decision == decision && (!h->port || h->port == port) && zsp_host_matches(h->host, host))
			return (long)i;
	}
	return -1;
}

/* The verdict quotes the rule as lowered: canonical host, port or `*`. */
static int host_verdict(const zsp_oracle *o, zsp_arena *a, long i, const char *host, unsigned port,
			zsp_verdict *v)
{
	const zsp_ir_host *h = &o->p->hosts[i];
	bool deny = h->decision == ZSP_DENY;
	/* coverage from several threads: relaxed atomics, nothing else reads them meanwhile */
	__atomic_fetch_add(&o->hits[o->p->nfs + (size_t)i], 1, __ATOMIC_RELAXED);
	decide(v, h->decision, "net-rule", zsp_arena_printf(a, "%s:%u is %s", host, port, deny ? "denied" : "allowed"));
	v->rule = zsp_arena_printf(a, "%s \"%s:%s\"", deny ? "deny" : "allow", h->host,
				   h->port ? zsp_arena_printf(a, "%u", h->port) : "*");
	v->loc = h->loc;
	return trace(a, v, "net: %s (%s) %s %s:%u%s", v->rule, loc_text(a, h->loc), deny ? "denies" : "allows",
		     host, port, deny ? "" : " through the proxy");
}

int zsp_oracle_connect(const zsp_oracle *o, zsp_arena *a, const char *host, unsigned port, bool explain,
		       zsp_verdict *v)
{
	const zsp_ir_policy *p = o->p;
	memset(v, 0, sizeof(*v));
	v->explain = explain;
	char canon[ZSP_HOST_MAX];
	zsp_host_kind kind;
	zsp_host_error e;
	/* fail closed on what no rule could name: such a host is a bad request, never an allow */
	if (!zsp_host_canon(host, strlen(host), 0, canon, &kind, &e)) {
		decide(v, ZSP_DENY, "bad-request", zsp_arena_printf(a, "%s: %s", e.code, e.msg));
		return trace(a, v, "net: host `%s`: %s (%s): denied", host, e.msg, e.code) ? ZSP_EINTERNAL : ZSP_OK;
	}
	if (port < 1 || port > 65535) {
		decide(v, ZSP_DENY, "bad-request", "host-port: a port is 1 to 65535");
		return trace(a, v, "net: port %u is not 1 to 65535: denied", port) ? ZSP_EINTERNAL : ZSP_OK;
	}
	if (explain && strcmp(canon, host) != 0 && trace(a, v, "net: `%s` is `%s`", host, canon))
		return ZSP_EINTERNAL;
	int rc;
	long i;
	if (p->net_mode == ZSP_NET_NONE) {
		decide(v, ZSP_DENY, "net-none", "the policy has no network (`mode none`)");
		rc = trace(a, v, "net: mode none: every connection is refused");
	} else if ((i = host_rule(p, ZSP_DENY, canon, port)) >= 0) {
		rc = host_verdict(o, a, i, canon, port, v); /* deny beats allow, whatever the order */
	} else if (p->net_mode == ZSP_NET_FULL) {
		decide(v, ZSP_ALLOW, "net-full", "the policy gives the host's network (`mode full`)");
		rc = trace(a, v, "net: mode full and no deny rule matches");
	} else if ((i = host_rule(p, ZSP_ALLOW, canon, port)) >= 0) {
		rc = host_verdict(o, a, i, canon, port, v);
	} else {
		decide(v, ZSP_DENY, "net-not-allowed", zsp_arena_printf(a, "%s:%u is not on the allow list", canon, port));
		rc = trace(a, v, "net: mode proxy and no allow rule matches %s:%u", canon, port);
	}
	if (rc == 0 && !v->detail && v->rule) {
		const char *where = rule_loc_text(o, a, v->loc);
		v->detail = where ? concat(a, v->rule, " (", where, ")", NULL) : NULL;
	}
	return rc == 0 && v->detail ? ZSP_OK : ZSP_EINTERNAL;
}

/* `connect "HOST:PORT"`: split here, decided by zsp_oracle_connect, as the proxy asks. */
static int decide_connect(zsp_oracle *o, zsp_arena *a, const char *arg, zsp_verdict *v)
{
	char canon[ZSP_HOST_MAX];
	zsp_host_kind kind;
	zsp_host_error e;
	unsigned port;
	bool explain = v->explain;
	if (!zsp_hostport_parse(arg, 0, canon, &kind, &port, &e)) {
		decide(v, ZSP_DENY, "bad-request", zsp_arena_printf(a, "%s: %s%s%s", e.code, e.msg,
								      e.hint[0] ? "; " : "", e.hint));
		return trace(a, v, "net: `%s` is not HOST:PORT (%s): denied", arg, e.code);
	}
	/* the host as written: zsp_oracle_connect canonicalizes it itself, as for the proxy */
	const char *colon = arg[0] == '[' ? strstr(arg, "]:") + 1 : strrchr(arg, ':');
	char *host = zsp_arena_strndup(a, arg, (size_t)(colon - arg));
	if (!host)
		return -1;
	return zsp_oracle_connect(o, a, host, port, explain, v) == ZSP_OK ? 0 : -1;
}

static int decide_syscall(zsp_oracle *o, zsp_arena *a, const char *name, zsp_verdict *v)
{
	const zsp_ir_policy *p = o->p;
	const zsp_ir_syscall *own = NULL;
	for (size_t i = 0; i < p->nsyscalls; i++)
		if (strcmp(p->syscalls[i].name, name) == 0)
			own = &p->syscalls[i];
	if (own && own->action == ZSP_DENY) {
		decide(v, ZSP_DENY, "syscall-rule", zsp_arena_printf(a, "%s is denied by the policy", name));
		v->rule = zsp_arena_printf(a, "syscalls deny \"%s\"", name);
		v->loc = own->loc;
		return trace(a, v, "syscall: %s (%s)", v->rule, loc_text(a, own->loc));
	}
	const zsp_hardening_call *h = zsp_hardening_find(name);
	if (h && !own) {
		decide(v, ZSP_DENY, "syscall-hardening", zsp_arena_printf(a, "%s: %s", name, h->why));
		return trace(a, v, "syscall: %s is in the built-in hardening set (%s)", name, h->why);
	}
	if (h) {
		decide(v, ZSP_ALLOW, "syscall-rule", zsp_arena_printf(a, "%s is lifted from the hardening set", name));
		v->rule = zsp_arena_printf(a, "syscalls allow \"%s\"", name);
		v->loc = own->loc;
		return trace(a, v, "syscall: %s (%s) lifts the hardening rule", v->rule, loc_text(a, own->loc));
	}
	decide(v, ZSP_ALLOW, "syscall-allowed", zsp_arena_printf(a, "%s is not restricted", name));
	return trace(a, v, "syscall: %s is neither in the hardening set nor denied by the policy", name);
}

/* ---- tools ------------------------------------------------------------------------------ */

static const zsp_ir_tool *find_tool(const zsp_ir_policy *p, const char *name, size_t *index)
{
	for (size_t i = 0; i < p->ntools; i++)
		if (strcmp(p->tools[i].name, name) == 0) {
			*index = i;
			return &p->tools[i];
		}
	return NULL;
}

/* The texts rules are matched against, each prepared once for the regexes' prefilters (NULL
 * ones stay NULL). NULL on out-of-memory. */
static zsp_regex_subject *subjects(zsp_arena *a, const char *const *texts, size_t n)
{
	zsp_regex_subject *out = zsp_arena_calloc(a, n + 1, sizeof(*out));
	for (size_t k = 0; out && k < n; k++)
		if (texts[k])
			zsp_regex_subject_init(&out[k], texts[k], strlen(texts[k]));
	return out;
}

/* Matches one rule against the texts (subj: the same, prepared). 1 match, 0 none, -1 the regex
 * hit its limit. */
static int rule_matches(zsp_oracle *o, size_t ti, size_t ri, const char *const *texts,
			const zsp_regex_subject *subj, size_t ntexts)
{
	const zsp_ir_tool_rule *r = &o->p->tools[ti].rules[ri];
	if (r->safe)   /* judged per command by all_allowed: it matches no text */
		return 0;
	for (size_t k = 0; k < ntexts; k++) {
		if (!texts[k])
			continue;
		int m;
		bool hit = false;
		if (r->is_path)
			m = zsp_glob_match(r->pattern, texts[k]);
		else
			m = zsp_regex_search_subject(o->re[ti][ri], &subj[k], &hit) == ZSP_OK
				    ? hit : -1;   /* a failed search: fail closed, as the caller says */
		if (m)
			return m;
	}
	return 0;
}

/* The tool's own default, then the policy's. */
static void fall_to_default(zsp_arena *a, const zsp_oracle *o, const zsp_ir_tool *t, zsp_verdict *v)
{
	if (t && t->def) {
		decide(v, t->def, t->def == ZSP_DENY ? "tool-disabled" : "tool-default",
		       concat(a, "the default of tool `", t->name, "`", NULL));
		v->rule = concat(a, "default ", zsp_decision_name(t->def), NULL);
		v->loc = t->loc;
		return;
	}
	decide(v, o->p->def, "policy-default", concat(a, "the default of policy `", o->p->name, "`", NULL));
	v->rule = concat(a, "default ", zsp_decision_name(o->p->def), NULL);
}

/* Deny and ask rules: any text matching decides. Returns 1 when decided, 0 not, -1 on oom. */
static int first_match(zsp_oracle *o, zsp_arena *a, size_t ti, zsp_decision which,
		       const char *const *texts, const zsp_regex_subject *subj, size_t ntexts,
		       zsp_verdict *v)
{
	const zsp_ir_tool *t = &o->p->tools[ti];
	for (size_t ri = 0; ri < t->nrules; ri++) {
		if (t->rules[ri].decision != which)
			continue;
		int m = rule_matches(o, ti, ri, texts, subj, ntexts);
		if (m == 0)
			continue;
		size_t k = o->tool_first[ti] + ri;
		o->hits[k]++;
		v->rule = zsp_arena_strdup(a, o->rule_texts[k]);
		v->loc = t->rules[ri].loc;
		if (m < 0) {
			decide(v, ZSP_DENY, "regex-limit", "the regex needed more work than the match limit allows");
			return trace(a, v, "%s (%s): match limit reached: denied (fail closed)", v->rule,
				     o->rule_locs[k]) ? -1 : 1;
		}
		decide(v, which, "rule", NULL);
		return trace(a, v, "%s (%s) matches", v->rule, o->rule_locs[k]) ? -1 : 1;
	}
	return 0;
}

/* Allow needs every entry matched by some allow rule. An entry is a group of `per` spellings
 * of one thing (NULL ones skipped): a rule matching any spelling of the group covers it.
 * unsafe (terminal only, else NULL) says why each entry is not known safe (NULL: it is), for
 * `allow safe`. Returns 1 decided, 0 not, -1 oom. */
static int all_allowed(zsp_oracle *o, zsp_arena *a, size_t ti, const char *const *texts,
		       size_t nentries, size_t per, const char *const *shown_as,
		       const char *const *unsafe, zsp_verdict *v)
{
	const zsp_ir_tool *t = &o->p->tools[ti];
	if (nentries == 0)
		return 0;
	zsp_regex_subject *subj = subjects(a, texts, nentries * per);
	if (!subj)
		return -1;
	size_t last = 0;
	bool any = false;
	for (size_t k = 0; k < nentries; k++) {
		const char *const *group = &texts[k * per];
		const char *shown = NULL;
		for (size_t j = 0; j < per && !shown; j++)
			shown = group[j];
		if (!shown)
			continue;
		if (shown_as)
			shown = shown_as[k];
		bool found = false;
		for (size_t ri = 0; ri < t->nrules && !found; ri++) {
			if (t->rules[ri].decision != ZSP_ALLOW)
				continue;
			int m = t->rules[ri].safe ? unsafe && !unsafe[k]
						  : rule_matches(o, ti, ri, group, &subj[k * per], per);
			if (m < 0) {
				v->rule = zsp_arena_strdup(a, o->rule_texts[o->tool_first[ti] + ri]);
				v->loc = t->rules[ri].loc;
				decide(v, ZSP_DENY, "regex-limit", "the regex needed more work than the match limit allows");
				return trace(a, v, "%s: match limit reached: denied (fail closed)", v->rule) ? -1 : 1;
			}
			if (m) {
				found = any = true;
				last = ri;
				o->hits[o->tool_first[ti] + ri]++;
				if (trace(a, v, "`%s` is allowed by %s (%s)", shown,
					  o->rule_texts[o->tool_first[ti] + ri], o->rule_locs[o->tool_first[ti] + ri]))
					return -1;
			}
		}
		if (!found && unsafe)
			return trace(a, v, "`%s` matches no allow rule (not known safe: %s)", shown,
				     unsafe[k]) ? -1 : 0;
		if (!found)
			return trace(a, v, "`%s` matches no allow rule", shown) ? -1 : 0;
	}
	if (!any)
		return 0;
	decide(v, ZSP_ALLOW, "rule", NULL);
	v->rule = zsp_arena_strdup(a, o->rule_texts[o->tool_first[ti] + last]);
	v->loc = t->rules[last].loc;
	return 1;
}

/* Zed's exception: with nothing but allowing settings, the substitution check is skipped. */
static bool allows_everything(const zsp_oracle *o, const zsp_ir_tool *t)
{
	zsp_decision d = t && t->def ? t->def : o->p->def;
	if (d != ZSP_ALLOW)
		return false;
	for (size_t i = 0; t && i < t->nrules; i++)
		if (t->rules[i].decision != ZSP_ALLOW)
			return false;
	return true;
}

static int decide_texts(zsp_oracle *o, zsp_arena *a, const zsp_ir_tool *t, size_t ti,
			const char *const *texts, size_t ntexts, const char *const *entries,
			size_t nentries, size_t per, const char *const *shown_as,
			const char *const *unsafe, zsp_verdict *v)
{
	int r;
	if (!t) {
		fall_to_default(a, o, NULL, v);
		return trace(a, v, "no `tool` block for this tool: %s", v->detail);
	}
	zsp_regex_subject *subj = subjects(a, texts, ntexts);
	if (!subj)
		return -1;
	if ((r = first_match(o, a, ti, ZSP_DENY, texts, subj, ntexts, v)) != 0)
		return r < 0 ? -1 : 0;
	if ((r = first_match(o, a, ti, ZSP_ASK, texts, subj, ntexts, v)) != 0)
		return r < 0 ? -1 : 0;
	if ((r = all_allowed(o, a, ti, entries, nentries, per, shown_as, unsafe, v)) != 0)
		return r < 0 ? -1 : 0;
	fall_to_default(a, o, t, v);
	return trace(a, v, "no rule decides: %s is `%s`", v->detail, zsp_decision_name(v->decision));
}

/* The shells whose syntax compiler/shell.c models: POSIX sh and what bash adds. */
static const char *const modeled_shells[] = { "sh", "dash", "bash" };

/* Can a path be changed by the sandbox? A shell the policy lets it write could be any program
 * by the time it runs, whatever its name. */
static bool sandbox_writes(zsp_oracle *o, const char *path)
{
	size_t idx = 0;
	const zsp_ir_fs_rule *r = fs_rule_for(o, path, &idx);
	return r && r->access == ZSP_ACCESS_WRITE;
}

/* Is the shell the commands run with one the oracle models? It is known by the name of the
 * file the path leads to (its symlinks resolved unless the oracle judges paths as written): a
 * path that does not resolve, or that the sandbox may write, is not known. 0 modeled, 1 not
 * (*why says why, for people), -1 out of memory. */
static int shell_unmodeled(zsp_oracle *o, zsp_arena *a, zsp_verdict *v, const char **why)
{
	const char *shell = o->env->shell, *file = shell;
	*why = NULL;
	if (!shell)
		return 0;
	char *real = o->env->resolve_symlinks ? realpath(shell, NULL) : NULL;
	if (o->env->resolve_symlinks && !real) {
		*why = zsp_arena_printf(a, "the shell %s does not resolve on this machine (%s)", shell,
					strerror(errno));
	} else if (real) {
		file = zsp_arena_strdup(a, real);
		free(real);
		if (!file)
			return -1;
	}
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	bool known = false;
	for (size_t i = 0; i < sizeof(modeled_shells) / sizeof(modeled_shells[0]); i++)
		known |= strcmp(base, modeled_shells[i]) == 0;
	if (*why)
		;
	else if (sandbox_writes(o, shell) || sandbox_writes(o, file))
		*why = zsp_arena_printf(a, "the shell %s is a file the sandbox may write: it could be any "
					"program", shell);
	else if (!known)
		*why = zsp_arena_printf(a, "the shell %s is `%s`, not one the oracle models (sh, dash, bash)",
					shell, base);
	else
		return trace(a, v, "shell: %s is `%s`, which the oracle models", shell, base) ? -1 : 0;
	if (!*why || trace(a, v, "%s: the rules read the command as sh would, and an allow becomes ask", *why))
		return -1;
	return 1;
}

/* What allow rules see of a word whose value is unknown: one byte that is not UTF-8. Patterns
 * are UTF-8, and PCRE2 (PCRE2_MATCH_INVALID_UTF) matches nothing across an invalid byte, not
 * even `.`: no allow rule can match the word, or the command around it with `.*`. */
#define UNKNOWN_WORD "\xff"

/* A word whose value the text does not show: it holds `$`, a backquote, or a process
 * substitution (a /dev/fd path, fed by commands that are entries of their own). */
static bool unknown_word(const char *w)
{
	return strpbrk(w, "$`") || strstr(w, "<(") || strstr(w, ">(");
}

/* The entries as allow rules see them when the text has substitutions: every unknown_word()
 * is UNKNOWN_WORD (the parse does not say which are quoted: a literal `'$x'` is
 * taken for unknown too, which only ever allows less). *entries becomes a new array.
 * *unknown_command is set when a command word (after the assignments) is unknown: that
 * command could be any program, and a regex that matches the empty string (`/^/`, `/a?/`)
 * would match the placeholder, so no allow rule may cover it. */
static int unknown_words(zsp_arena *a, const zsp_sh_result *sh, const char ***entries,
			 bool *unknown_command)
{
	const char **out = zsp_arena_calloc(a, sh->ncmds + 1, sizeof(char *));
	if (!out)
		return -1;
	*unknown_command = false;
	for (size_t i = 0; i < sh->ncmds; i++) {
		const zsp_sh_cmd *c = &sh->cmds[i];
		out[i] = c->text;
		if (!unknown_word(c->text))
			continue;
		if (c->kind == ZSP_SH_COMMAND && c->nassign < c->argc && unknown_word(c->argv[c->nassign]))
			*unknown_command = true;
		size_t len = 1;
		for (size_t k = 0; k < c->argc; k++)
			len += strlen(c->argv[k]) + 1;
		char *t = zsp_arena_alloc(a, len), *p = t;
		if (!t)
			return -1;
		for (size_t k = 0; k < c->argc; k++) {
			const char *w = unknown_word(c->argv[k]) ? UNKNOWN_WORD : c->argv[k];
			if (k)
				*p++ = ' ';
			p = stpcpy(p, w);
		}
		*p = '\0';
		out[i] = t;
	}
	*entries = out;
	return 0;
}

static bool has_safe_rule(const zsp_ir_tool *t)
{
	for (size_t i = 0; t && i < t->nrules; i++)
		if (t->rules[i].safe)
			return true;
	return false;
}

/* ---- the files commands read and write (doc/oracle.md "File rules for commands") ---- */

typedef struct file_check {
	zsp_oracle *o;
	zsp_arena *a;
	zsp_verdict *v;       /* the decision's: only its trace grows here */
	zsp_verdict deny;     /* the first file the fs rules refuse (decision DENY), else NONE */
	const char *unknown;  /* why some file cannot be judged (the first), or NULL */
	struct judged {
		const char *want, *path;
	} done[16];           /* the files judged so far (allowed: a refused one ends the check) */
	size_t ndone;
	const char *clean;    /* a directory with no symlink on the way (no_symlink_on_the_way) */
} file_check;

/* Names that are the command's own descriptors or the terminal, not files rules name. */
static bool not_a_file(const char *w)
{
	static const char *const fds[] = { "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr",
					   "/dev/tty" };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (strcmp(w, fds[i]) == 0)
			return true;
	return strncmp(w, "/dev/fd/", 8) == 0 || strncmp(w, "/proc/self/fd/", 14) == 0 ||
	       strncmp(w, "<(", 2) == 0 || strncmp(w, ">(", 2) == 0;
}

static int file_unknown(file_check *fc, const zsp_file_use *f, const char *why)
{
	if (!fc->unknown)
		fc->unknown = zsp_arena_printf(fc->a, "`%s`: %s", f->what, why);
	if (!fc->unknown)
		return -1;
	return trace(fc->a, fc->v, "file rules: `%s`: %s: it cannot be allowed", f->what, why);
}

/* Is no component of the absolute path a symlink, as far as it exists? Then it resolves to
 * itself, and one lstat per component says so more cheaply than resolving it: commands name
 * many files, most of them plain, most in the same directories. fc->clean is a directory found
 * plain earlier in this decision: its components are not looked at again. */
static bool no_symlink_on_the_way(file_check *fc, const char *path)
{
	char buf[PATH_MAX + 1];
	size_t len = strlen(path), from = 1, last_dir = 0;
	if (len > PATH_MAX || strncmp(path, "/proc", 5) == 0)
		return false;
	memcpy(buf, path, len + 1);
	if (fc->clean && zsp_path_is_prefix(fc->clean, path) && strcmp(fc->clean, "/") != 0)
		from = (last_dir = strlen(fc->clean)) + 1;
	for (size_t end = from; end <= len; end++) {
		if (end != len && buf[end] != '/')
			continue;
		struct stat st;
		char keep = buf[end];
		buf[end] = '\0';
		int rc = lstat(buf, &st);
		buf[end] = keep;
		if (rc != 0 && errno != ENOENT)
			return false;
		if (rc != 0)
			break; /* nothing below a missing component exists */
		if (S_ISLNK(st.st_mode))
			return false;
		if (S_ISDIR(st.st_mode))
			last_dir = end;
	}
	if (last_dir > 0 && (!fc->clean || strlen(fc->clean) != last_dir))
		fc->clean = zsp_arena_strndup(fc->a, path, last_dir);
	return true;
}

/* decide_fs on one concrete path, its trace added to the decision's. 1 refused (fc->deny
 * filled), 0 allowed, -1 out of memory. A path judged already in this decision is not judged
 * again. */
static int file_refused(file_check *fc, const zsp_file_use *f, const char *want,
			const char *path, const char *named)
{
	for (size_t k = 0; k < fc->ndone; k++)
		if (fc->done[k].want[0] == want[0] && strcmp(fc->done[k].path, path) == 0)
			return 0;
	if (fc->ndone < sizeof(fc->done) / sizeof(fc->done[0]))
		fc->done[fc->ndone++] = (struct judged){ want, path };
	zsp_verdict one = *fc->v;
	one.rule = NULL;
	one.loc = (zsp_loc){ 0 };
	/* a path without symlinks is judged as written only: the same answer, without resolving */
	const zsp_oracle_env *env = fc->o->env;
	zsp_oracle_env plain = *env;
	plain.resolve_symlinks = false;
	bool cheap = env->resolve_symlinks && no_symlink_on_the_way(fc, path);
	int rc = trace(fc->a, fc->v, "file rules: `%s` %s %s", f->what, want[0] == 'r' ? "reads" : "writes",
		       named) || (one.trace = fc->v->trace, one.ntrace = fc->v->ntrace,
				  one.trace_cap = fc->v->trace_cap,
				  decide_fs_in(fc->o, cheap ? &plain : env, fc->a, want, path, &one));
	if (rc)
		return -1;
	fc->v->trace = one.trace;
	fc->v->ntrace = one.ntrace;
	fc->v->trace_cap = one.trace_cap;
	if (one.decision != ZSP_DENY)
		return 0;
	/* a terminal command can ask: a path the sandbox's view cannot follow is unknown */
	if (strcmp(one.reason, "unresolvable-path") == 0)
		return file_unknown(fc, f, one.detail) < 0 ? -1 : 0;
	fc->deny = one;
	fc->deny.detail = zsp_arena_printf(fc->a, "`%s` %s %s: %s", f->what,
					   want[0] == 'r' ? "reads" : "writes", named, one.detail);
	return fc->deny.detail ? 1 : -1;
}

/* A path with wildcards, or a whole tree: its literal leading directories are judged as a
 * path, and any fs rule refusing the access that one of its expansions (or a file below it)
 * may reach makes it unknown. */
static int judge_pattern(file_check *fc, const zsp_file_use *f, const char *want,
			 const char *path, bool tree)
{
	const zsp_ir_policy *p = fc->o->p;
	size_t cut = strlen(path);
	for (const char *c = path; *c; c++)
		if (*c == '*' || *c == '?' || *c == '[') {
			while (c > path && c[-1] != '/')
				c--;
			cut = c > path + 1 ? (size_t)(c - path - 1) : 1;
			break;
		}
	char *lead = zsp_arena_strndup(fc->a, path, cut);
	if (!lead)
		return -1;
	int rc = file_refused(fc, f, want, lead, path);
	if (rc)
		return rc < 0 ? -1 : 0;
	bool visible = (f->access & ZSP_FILE_VISIBLE) != 0;
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (r->path[0] == '$' || access_allows(r->access, want))
			continue;
		/* a literal rule over the leading directories lost to the one that allowed them */
		if (!r->glob && zsp_path_is_prefix(r->path, lead))
			continue;
		if (!zsp_glob_overlap(path, r->path, tree, visible))
			continue;
		fc->o->hits[i]++;
		return file_unknown(fc, f, zsp_arena_printf(fc->a, "%s %s may reach %s (%s)",
							    want[0] == 'r' ? "reading" : "writing", path,
							    fc->o->rule_texts[i], fc->o->rule_locs[i]));
	}
	return 0;
}

/* Has the path a component `..`? */
static bool has_dotdot(const char *w)
{
	for (const char *c = w; (c = strstr(c, "..")); c += 2)
		if ((c == w || c[-1] == '/') && (c[2] == '/' || !c[2]))
			return true;
	return false;
}

static int judge_concrete(file_check *fc, const zsp_file_use *f, const char *path);

/* A file a command names, `~` or absolute. A `..` after a symlink leaves from the link's
 * target, as the kernel walks it (doc/oracle.md "Path tools"): such a word is judged where
 * it leads as well as folded as text. Without a `..`, the text alone makes it absolute, and
 * decide_fs resolves it. What cannot be followed (/proc/self/fd/N) is unknown. */
static int judge_path(file_check *fc, const zsp_file_use *f, const char *word)
{
	const zsp_oracle_env *env = fc->o->env;
	zsp_oracle_env plain = *env;
	plain.resolve_symlinks = false;
	zsp_oracle_path rp;
	if (zsp_oracle_resolve(env->resolve_symlinks && has_dotdot(word) ? env : &plain, fc->a, word, &rp))
		return -1;
	if (rp.unknown)
		return file_unknown(fc, f, rp.unknown);
	if (judge_concrete(fc, f, rp.abs) < 0)
		return -1;
	if (rp.resolved && fc->deny.decision != ZSP_DENY && judge_concrete(fc, f, rp.resolved) < 0)
		return -1;
	return 0;
}

static int judge_concrete(file_check *fc, const zsp_file_use *f, const char *path)
{
	const zsp_oracle_env *env = fc->o->env;
	bool glob = strpbrk(path, "*?[") != NULL, tree = f->tree;
	struct stat st;
	/* a tree is what lies below a directory: a file, or nothing, on this machine has nothing
	 * below it (a tree the text makes first is made by commands judged on their own) */
	if (tree && !glob && env->resolve_symlinks &&
	    (stat(path, &st) == 0 ? !S_ISDIR(st.st_mode) : errno == ENOENT || errno == ENOTDIR))
		tree = false;
	/* where the symlinks inside a tree lead is not known without walking it */
	if (tree && (f->access & ZSP_FILE_FOLLOW))
		return file_unknown(fc, f, zsp_arena_printf(fc->a, "it follows the symlinks below %s, "
							   "which may lead anywhere", path));
	for (unsigned acc = ZSP_FILE_READ; acc <= ZSP_FILE_WRITE; acc <<= 1) {
		if (!(f->access & acc))
			continue;
		const char *want = acc == ZSP_FILE_READ ? "read" : "write";
		int rc = glob || tree ? judge_pattern(fc, f, want, path, tree)
				      : file_refused(fc, f, want, path, path);
		if (rc < 0)
			return -1;
		if (fc->deny.decision == ZSP_DENY)
			return 0;
	}
	return 0;
}

/* The hook of the built-in walk (zsp_builtin_env.file): every file a command of the table
 * names. The first refused one decides; words without a known value are unknown. */
static int judge_file(void *arg, const zsp_file_use *f)
{
	file_check *fc = arg;
	const char *w = f->word;
	if (fc->deny.decision == ZSP_DENY)
		return 0;
	if (!w)
		return file_unknown(fc, f, "it names files the text does not show (xargs input, "
					   "another root)");
	if (!*w || not_a_file(w))
		return 0;
	if (strpbrk(w, "$`") || strstr(w, "{}"))
		return file_unknown(fc, f, zsp_arena_printf(fc->a, "the file `%s` has no known value", w));
	if (w[0] == '~' && ((w[1] && w[1] != '/') || !fc->o->env->home))
		return file_unknown(fc, f, zsp_arena_printf(fc->a, "the file `%s` is in an unknown home", w));
	if (w[0] == '/' || w[0] == '~')
		return judge_path(fc, f, w);
	if (f->ndirs == 0)
		return file_unknown(fc, f, zsp_arena_printf(fc->a, "the file `%s` is relative to a directory "
							   "that is not known", w));
	for (size_t k = 0; k < f->ndirs && fc->deny.decision != ZSP_DENY; k++) {
		if (!f->dirs[k])
			return file_unknown(fc, f, "the directory it runs in is not known");
		char *abs = concat(fc->a, f->dirs[k], "/", w, NULL);
		if (!abs || judge_path(fc, f, abs) < 0)
			return -1;
	}
	return 0;
}

static int decide_terminal(zsp_oracle *o, zsp_arena *a, const char *cmd, zsp_verdict *v)
{
	size_t ti = 0;
	const zsp_ir_tool *t = find_tool(o->p, "terminal", &ti);
	zsp_sh_result sh;
	const char *unmodeled = NULL;
	v->shell = o->env->shell;
	if (shell_unmodeled(o, a, v, &unmodeled) < 0)
		return -1;
	/* (a shell the oracle does not model: unmodeled says why) */
	if (zsp_sh_parse(a, cmd, &sh) != 0)
		return -1;
	v->subcommands = zsp_arena_calloc(a, sh.ncmds + 1, sizeof(char *));
	if (!v->subcommands)
		return -1;
	for (size_t i = 0; i < sh.ncmds; i++)
		v->subcommands[v->nsub++] = sh.cmds[i].text;

	zsp_builtin_hit hit;
	bool b;
	/* the command starts in the workspace; the files its commands name are judged by the
	 * fs rules in the same walk, unless the terminal allows everything (Zed's semantics) or
	 * the policy has no fs rules to judge them by */
	file_check fc = { .o = o, .a = a, .v = v };
	zsp_builtin_env where = { .home = o->env->home, .cwd = o->env->workspace,
				  .unknown_rm = t && t->judge_substitutions };
	if (o->p->nfs && !allows_everything(o, t)) {
		where.file = judge_file;
		where.file_arg = &fc;
	}
	if (zsp_builtin_check(a, cmd, &sh, &where, &hit, &b) != ZSP_OK)
		return -1;
	if (b) {
		decide(v, ZSP_DENY, "builtin", zsp_arena_printf(a, "%s: `%s`", hit.message, hit.what));
		v->rule = zsp_arena_printf(a, "builtin:%s", hit.rule);
		return trace(a, v, "built-in rule %s: %s: denied; no setting can lift it", hit.rule, hit.message);
	}
	if (trace(a, v, "built-in rules: no match"))
		return -1;
	if (fc.deny.decision == ZSP_DENY) {
		decide(v, ZSP_DENY, fc.deny.reason, fc.deny.detail);
		v->rule = fc.deny.rule;
		v->loc = fc.deny.loc;
		return trace(a, v, "file rules: %s: denied whatever the terminal rules say", fc.deny.detail);
	}
	/* under `substitutions judged;` a substitution is no reason to deny: its commands are
	 * entries like the others, and its result an unknown word (doc/oracle.md, steps 2 and 5) */
	bool subst_judged = sh.finding == ZSP_SH_SUBSTITUTION && t && t->judge_substitutions;
	if (subst_judged) {
		if (trace(a, v, "%s at byte %zu: the terminal judges substitutions, so its commands are "
			  "entries and its result an unknown word", sh.why, sh.where))
			return -1;
	} else if (sh.finding != ZSP_SH_CLEAN) {
		if (!allows_everything(o, t)) {
			bool sub = sh.finding == ZSP_SH_SUBSTITUTION;
			/* a parse that ran out of steps is denied like any unsupported text; its
			 * reason says so (doc/oracle.md "Reason codes") */
			bool over = !sub && strcmp(sh.why, ZSP_SH_WHY_BUDGET) == 0;
			decide(v, ZSP_DENY, sub ? "substitution" : over ? "budget" : "unsupported",
			       zsp_arena_printf(a, "%s at byte %zu", sh.why, sh.where));
			return trace(a, v, "%s: %s at byte %zu: denied whatever the rules say",
				     sub ? "substitution check" : "shell parser", sh.why, sh.where);
		}
		if (trace(a, v, "%s, but the terminal's settings allow everything: check skipped", sh.why))
			return -1;
	} else if (trace(a, v, "substitution check: none found")) {
		return -1;
	}
	/* deny and ask look at the whole command and at each entry; allow must cover each entry */
	const char **texts = zsp_arena_calloc(a, sh.ncmds + 2, sizeof(char *));
	if (!texts)
		return -1;
	texts[0] = cmd;
	for (size_t i = 0; i < sh.ncmds; i++)
		texts[i + 1] = sh.cmds[i].text;
	/* a simple command's one entry is often the command itself: search that text once */
	size_t same = sh.ncmds == 1 && strcmp(cmd, texts[1]) == 0;
	/* deny and ask rules also see each command with its wrappers stripped and the scripts it
	 * runs; allow rules only the commands as they run (doc/oracle.md, step 3) */
	const char **unwrapped = NULL, **judged = texts + same;
	size_t nunwrapped = 0, njudged = sh.ncmds + 1 - same;
	bool complete = true;
	if (t && t->nrules && !allows_everything(o, t)) {
		if (zsp_builtin_unwrap(a, &sh, &unwrapped, &nunwrapped, &complete) != ZSP_OK)
			return -1;
		if (!complete) {
			decide(v, ZSP_DENY, "unsupported",
			       "more wrappers or nested scripts than the deny and ask rules can be checked through");
			return trace(a, v, "unwrapping: %s: denied", v->detail);
		}
		if (nunwrapped) {
			judged = zsp_arena_calloc(a, njudged + nunwrapped + 1, sizeof(char *));
			if (!judged)
				return -1;
			memcpy(judged, texts + same, njudged * sizeof(char *));
			memcpy(judged + njudged, unwrapped, nunwrapped * sizeof(char *));
			njudged += nunwrapped;
		}
	}
	/* allow rules see an unknown word as a placeholder no literal matches */
	const char **entries = texts + 1;
	size_t nentries = sh.ncmds;
	bool unknown_command = false;
	if (sh.finding == ZSP_SH_SUBSTITUTION && unknown_words(a, &sh, &entries, &unknown_command) < 0)
		return -1;
	if (unknown_command) {
		nentries = 0;  /* all_allowed then allows nothing */
		if (trace(a, v, "a command word is a substitution: it could be any program, and no allow rule covers it"))
			return -1;
	}
	/* `allow safe` judges the commands themselves, only in a text that parsed cleanly or whose
	 * substitutions are judged (a word holding one is never safe) */
	const char **unsafe = NULL;
	if (has_safe_rule(t) && (sh.finding == ZSP_SH_CLEAN || subst_judged) &&
	    zsp_safe_judge(a, &sh, &unsafe) != ZSP_OK)
		return -1;
	if (decide_texts(o, a, t, ti, judged, njudged, entries, nentries, 1, texts + 1, unsafe, v) != 0)
		return -1;
	/* a file no rule could judge: no allow (doc/oracle.md "File rules for commands") */
	if (fc.unknown && v->decision == ZSP_ALLOW) {
		const char *by = v->rule;
		decide(v, ZSP_ASK, "fs-unknown", fc.unknown);
		v->rule = NULL;
		v->loc = (zsp_loc){ 0 };
		if (trace(a, v, "an allow%s%s, but %s: ask", by ? " by " : "", by ? by : "", fc.unknown))
			return -1;
	}
	/* the rules read the command as sh would run it: under another shell an allow proves
	 * nothing (zsh runs code from a glob qualifier); a deny or an ask stands */
	if (!unmodeled || v->decision != ZSP_ALLOW || allows_everything(o, t))
		return 0;
	const char *by = v->rule;
	decide(v, ZSP_ASK, "unsupported", zsp_arena_printf(a, "%s: the rules cannot tell what it runs", unmodeled));
	v->rule = NULL;
	v->loc = (zsp_loc){ 0 };
	return trace(a, v, "an allow%s%s under a shell the oracle does not model: ask", by ? " by " : "", by ? by : "");
}

/* Does name (a relative glob) match a run of whole components somewhere in path? */
static bool names_part_of(const char *name, const char *path)
{
	char buf[PATH_MAX + 1];
	size_t len = strlen(path);
	if (len > PATH_MAX)
		return true; /* too long to check: treat as sensitive (fail towards asking) */
	for (size_t start = 0; start < len; start++) {
		if (path[start] == '/')
			continue;
		if (start > 0 && path[start - 1] != '/')
			continue;
		for (size_t end = start + 1; end <= len; end++) {
			if (end != len && path[end] != '/')
				continue;
			memcpy(buf, path + start, end - start);
			buf[end - start] = '\0';
			if (zsp_glob_match(name, buf))
				return true;
		}
	}
	return false;
}

/* Agent configuration: Zed's .zed and .agents/skills, and the policy's `sensitive` names. */
static const char *sensitive_path(const zsp_ir_policy *p, const char *path)
{
	static const char *const builtin[] = { ".zed", ".agents/skills" };
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (names_part_of(builtin[i], path))
			return builtin[i];
	for (size_t i = 0; i < p->nsensitive; i++)
		if (names_part_of(p->sensitive[i].name, path))
			return p->sensitive[i].name;
	return NULL;
}

/* path relative to root (NULL when it is not strictly below root) */
static const char *relative_to(const char *root, const char *path)
{
	if (!root || !under(root, path) || strcmp(root, path) == 0)
		return NULL;
	return path + strlen(root) + (strcmp(root, "/") != 0);
}

static int decide_one_path(zsp_oracle *o, zsp_arena *a, const zsp_ir_tool *t, size_t ti,
			   const char *arg, zsp_verdict *v)
{
	const zsp_oracle_env *env = o->env;
	const char *ws = env->workspace, *ws_real = NULL;
	zsp_oracle_path path, wpath;
	if (zsp_oracle_resolve(env, a, arg, &path))
		return -1;
	const char *abs = path.abs, *res = path.resolved;
	if (ws && env->resolve_symlinks) {
		/* the workspace itself may be reached through a symlink */
		if (zsp_oracle_resolve(env, a, ws, &wpath))
			return -1;
		ws_real = wpath.resolved;
	}
	const char *rel = relative_to(ws, abs);
	const char *rel_res = res ? relative_to(ws, res) : NULL, *res_alias = NULL;
	if (res && !rel_res && (rel_res = relative_to(ws_real, res)) != NULL) {
		/* below the workspace's real place: also spelt under the workspace's name */
		res_alias = zsp_arena_printf(a, "%s/%s", strcmp(ws, "/") ? ws : "", rel_res);
		if (!res_alias)
			return -1;
	}
	/* Deny and ask rules match any spelling: as given, absolute, relative to the workspace,
	 * and the same with symlinks resolved (also under the workspace's name when the
	 * workspace is itself a symlink). Allow rules must cover the path that is reached: its
	 * absolute or workspace-relative form, and the resolved one when it differs. The raw
	 * spelling alone cannot allow (`src/../../etc/x` is not below `src`), and a spelling no
	 * rule names does not pull an allowed path down to the default. */
	const char *texts[7] = { arg, abs, rel, NULL, res, rel_res, res_alias };
	if (trace(a, v, "path `%s`: absolute %s%s%s", arg, abs, res ? ", resolved " : "", res ? res : ""))
		return -1;
	if (!t) {
		fall_to_default(a, o, NULL, v);
		if (trace(a, v, "no `tool` block for this tool: %s", v->detail))
			return -1;
	} else if (decide_texts(o, a, t, ti, texts, 7, texts + 1, res ? 2 : 1, 3, NULL, NULL, v)) {
		return -1;
	}
	if (v->decision == ZSP_DENY)
		return 0;
	if (path.unknown) {
		decide(v, ZSP_ASK, "unresolvable-path", path.unknown);
		return trace(a, v, "unresolvable: %s: ask", path.unknown);
	}
	if (res && ws && (under(ws, abs) || under(ws_real, abs)) && !under(ws, res) &&
	    !under(ws_real, res)) {
		decide(v, ZSP_ASK, "symlink-escape",
		       zsp_arena_printf(a, "%s leads out of the workspace to %s", abs, res));
		return trace(a, v, "symlink escape: %s resolves to %s, outside %s: ask", abs, res, ws);
	}
	const char *name = v->decision == ZSP_ALLOW ? sensitive_path(o->p, abs) : NULL;
	if (!name && v->decision == ZSP_ALLOW && res)
		name = sensitive_path(o->p, res);
	if (name) {
		decide(v, ZSP_ASK, "sensitive-path",
		       zsp_arena_printf(a, "%s is under `%s`, which is sensitive", abs, name));
		return trace(a, v, "sensitive name `%s`: allow becomes ask", name);
	}
	return 0;
}

static int decide_path_tool(zsp_oracle *o, zsp_arena *a, const zsp_ir_request *req, zsp_verdict *v)
{
	size_t ti = 0;
	const zsp_ir_tool *t = find_tool(o->p, req->kind, &ti);
	zsp_verdict out = *v;
	out.decision = ZSP_DECISION_NONE;
	for (size_t i = 0; i < req->nargs; i++) {
		zsp_verdict one = *v;
		if (decide_one_path(o, a, t, ti, req->args[i], &one))
			return -1;
		/* copy and move: a deny on either path denies, allow needs both */
		if (rank(one.decision) > rank(out.decision))
			out = one;
		v->trace = one.trace;
		v->ntrace = one.ntrace;
		v->trace_cap = one.trace_cap;
	}
	out.trace = v->trace;
	out.ntrace = v->ntrace;
	out.trace_cap = v->trace_cap;
	*v = out;
	return 0;
}

/* ---- entry ------------------------------------------------------------------------------ */

int zsp_oracle_decide(zsp_oracle *o, zsp_arena *a, const zsp_ir_request *req, bool explain,
		      zsp_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->explain = explain;
	const char *k = req->kind;
	int rc;
	char err[256];
	if (!zsp_request_valid(req, err, sizeof(err))) {
		decide(v, ZSP_DENY, "bad-request", zsp_arena_strdup(a, err));
		return trace(a, v, "bad request: %s", err) == 0 ? ZSP_OK : ZSP_EINTERNAL;
	}
	if (strcmp(k, "terminal") == 0) {
		rc = decide_terminal(o, a, req->args[0], v);
	} else if (strcmp(k, "read") == 0 || strcmp(k, "write") == 0 || strcmp(k, "exec") == 0) {
		rc = decide_fs(o, a, strcmp(k, "write") == 0 ? "write" : "read", req->args[0], v);
	} else if (strcmp(k, "connect") == 0) {
		rc = decide_connect(o, a, req->args[0], v);
	} else if (strcmp(k, "syscall") == 0) {
		rc = decide_syscall(o, a, req->args[0], v);
	} else if (zsp_tool_takes_paths(k)) {
		rc = decide_path_tool(o, a, req, v);
	} else {
		/* fetch, search_web: the text; MCP tools: only defaults */
		size_t ti = 0;
		const zsp_ir_tool *t = find_tool(o->p, k, &ti);
		const char *const *texts = req->args;
		rc = decide_texts(o, a, t, ti, texts, req->nargs, texts, req->nargs, 1, NULL, NULL, v);
	}
	if (rc == 0 && !v->detail && v->rule) {
		const char *where = rule_loc_text(o, a, v->loc);
		v->detail = where ? concat(a, v->rule, " (", where, ")", NULL) : NULL;
	}
	return rc == 0 ? ZSP_OK : ZSP_EINTERNAL; /* the helpers fail only on out-of-memory */
}

/* ---- requests --------------------------------------------------------------------------- */

bool zsp_request_valid(const zsp_ir_request *req, char *err, size_t errsize)
{
	unsigned arity;
	if (zsp_request_arity(req->kind, &arity) != ZSP_OK) {
		snprintf(err, errsize, "unknown request `%s`", req->kind);
		return false;
	}
	if (arity != req->nargs) {
		snprintf(err, errsize, "`%s` takes %u argument%s, not %zu", req->kind, arity,
			 arity == 1 ? "" : "s", req->nargs);
		return false;
	}
	return true;
}

static int put_utf8(char *out, unsigned long c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xC0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xE0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		out[2] = (char)(0x80 | (c & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
	out[3] = (char)(0x80 | (c & 0x3F));
	return 4;
}

char *zsp_request_text(const zsp_ir_request *req)
{
	zsp_buf b = { 0 };
	zsp_buf_puts(&b, req->kind);
	for (size_t i = 0; i < req->nargs; i++) {
		zsp_buf_puts(&b, " \"");
		for (const unsigned char *c = (const unsigned char *)req->args[i]; *c; c++) {
			if (*c == '"' || *c == '\\')
				zsp_buf_printf(&b, "\\%c", *c);
			else if (*c == '\n')
				zsp_buf_puts(&b, "\\n");
			else if (*c == '\t')
				zsp_buf_puts(&b, "\\t");
			else if (*c == '\r')
				zsp_buf_puts(&b, "\\r");
			else if (*c < 0x20 || *c == 0x7f)
				zsp_buf_printf(&b, "\\x%02x", *c);
			else
				zsp_buf_putc(&b, (char)*c);
		}
		zsp_buf_putc(&b, '"');
	}
	return zsp_buf_take(&b, NULL);
}

int zsp_request_parse(zsp_arena *a, const char *text, zsp_ir_request *out, char *err, size_t errsize)
{
	const char *p = text;
	memset(out, 0, sizeof(*out));
	while (isspace((unsigned char)*p))
		p++;
	const char *ks = p;
	while (isalnum((unsigned char)*p) || *p == '_' || *p == ':' || *p == '.' || *p == '-')
		p++;
	if (p == ks) {
		snprintf(err, errsize, "expected a request kind such as `terminal` at column %zu",
			 (size_t)(ks - text) + 1);
		return ZSP_EUSAGE;
	}
	out->kind = zsp_arena_strndup(a, ks, (size_t)(p - ks));
	out->args = zsp_arena_calloc(a, 3, sizeof(char *));
	if (!out->kind || !out->args) {
		snprintf(err, errsize, "out of memory");
		return ZSP_EINTERNAL;
	}
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == ';')
			break;
		if (*p != '"') {
			snprintf(err, errsize, "expected a \"string\" at column %zu", (size_t)(p - text) + 1);
			return ZSP_EUSAGE;
		}
		if (out->nargs == 2) {
			snprintf(err, errsize, "too many arguments at column %zu", (size_t)(p - text) + 1);
			return ZSP_EUSAGE;
		}
		const char *start = ++p;
		char *buf = zsp_arena_alloc(a, strlen(p) + 1);
		size_t n = 0;
		if (!buf) {
			snprintf(err, errsize, "out of memory");
			return ZSP_EINTERNAL;
		}
		while (*p && *p != '"') {
			if (*p != '\\') {
				buf[n++] = *p++;
				continue;
			}
			p++;
			switch (*p) {
			case '\\': case '"': buf[n++] = *p++; break;
			case 'n': buf[n++] = '\n'; p++; break;
			case 't': buf[n++] = '\t'; p++; break;
			case 'r': buf[n++] = '\r'; p++; break;
			case 'x': {
				char hex[3] = { 0 };
				if (isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
					hex[0] = p[1];
					hex[1] = p[2];
					unsigned long c = strtoul(hex, NULL, 16);
					if (c > 0 && c < 0x80) {
						buf[n++] = (char)c;
						p += 3;
						break;
					}
				}
				snprintf(err, errsize, "bad \\x escape at column %zu", (size_t)(p - text));
				return ZSP_EUSAGE;
			}
			case 'u': {
				char *end;
				unsigned long c = p[1] == '{' ? strtoul(p + 2, &end, 16) : 0;
				if (p[1] != '{' || *end != '}' || c == 0 || c > 0x10FFFF ||
				    (c >= 0xD800 && c <= 0xDFFF)) {
					snprintf(err, errsize, "bad \\u{...} escape at column %zu", (size_t)(p - text));
					return ZSP_EUSAGE;
				}
				n += (size_t)put_utf8(buf + n, c);
				p = end + 1;
				break;
			}
			default:
				snprintf(err, errsize, "unknown escape at column %zu", (size_t)(p - text));
				return ZSP_EUSAGE;
			}
		}
		if (*p != '"') {
			snprintf(err, errsize, "unterminated string starting at column %zu",
				 (size_t)(start - text));
			return ZSP_EUSAGE;
		}
		p++;
		buf[n] = '\0';
		out->args[out->nargs++] = buf;
	}
	return zsp_request_valid(out, err, errsize) ? ZSP_OK : ZSP_EUSAGE;
}
