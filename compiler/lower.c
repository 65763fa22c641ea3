/* lower.c: checks policies and tests and lowers them to the IR: extends merge, parameters
 * (resolved where -D or a default gives a value, symbolic otherwise), tools, net, process. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/hint.h"
#include "compiler/cache.h"
#include "compiler/checks.h"
#include "compiler/compile.h"
#include "compiler/path.h"

static const char *const builtin_params[] = { "HOME", "TMPDIR", "UID", "USER", "WORKSPACE" };
#define NBUILTIN (sizeof(builtin_params) / sizeof(builtin_params[0]))

/* A policy's rules before normalization: its bases' rules (already merged) plus its own. */
struct raw {
	zsp_ir_param *params;
	size_t nparams, params_cap;
	zsp_decision def;
	zsp_ir_fs_rule *fs;        /* read/write/deny, and protect names (protect != NULL) */
	size_t nfs, fs_cap;
	int net_mode;
	zsp_loc net_mode_loc;
	zsp_ir_host *hosts;
	size_t nhosts, hosts_cap;
	zsp_ir_unix *unixs;
	size_t nunix, unix_cap;
	bool env_clear;
	zsp_ir_env *keep, *unset, *set;
	size_t nkeep, keep_cap, nunset, unset_cap, nset, set_cap;
	zsp_ir_limit limits[ZSP_LIMIT_COUNT];
	zsp_ir_syscall *sys;
	size_t nsys, sys_cap;
	zsp_ir_tool *tools;
	size_t ntools, tools_cap;
	size_t *tool_caps;         /* capacity of each tool's rule array */
	size_t tool_caps_cap;
	zsp_ir_env *sens;          /* `sensitive` names */
	size_t nsens, sens_cap;
	zsp_ir_cache *caches;      /* `cache` (parts with unresolved paths) */
	size_t ncaches, caches_cap;
	zsp_ir_limit cache_limit, tmp_limit;
	int tmp_mode;              /* enum zsp_tmp_mode */
	zsp_loc tmp_loc;
};

struct policy_state {
	zsp_ast_policy *ast;
	int mark;                  /* 0 new, 1 being lowered (extends cycle check), 2 done */
	struct policy_state *via;  /* while being lowered: the policy whose extends led here */
	bool ok;
	bool bad_hosts;            /* a host rule of its own had an error (no -Wno-effect then) */
	struct raw raw;
	bool *param_used;          /* by index into raw.params */
	size_t own_set_from;       /* raw.set entries from here on are this policy's own */
};

/* A string that may hold ${NAME} references, kept to be checked once all params are known. */
struct ref_site {
	const zsp_ast_str *str;
};

zsp_loc zsp_str_loc(const zsp_ast_str *s, size_t off, size_t len)
{
	zsp_loc l = s->loc;
	if (!s->raw || off + len > s->len)
		return l;
	l.begin = s->loc.begin + 1 + (uint32_t)off;
	l.end = l.begin + (uint32_t)(len ? len : 1);
	return l;
}

static void path_error(zsp_cc *cc, const zsp_ast_str *s, const zsp_path_error *e)
{
	if (e->msg && strcmp(e->msg, "out of memory") == 0) {
		cc->oom = true;
		return;
	}
	zsp_diag_error(cc->diag, zsp_str_loc(s, e->off, e->len), "%s", e->msg);
	if (e->hint)
		zsp_diag_hint(cc->diag, "%s", e->hint);
}

static bool is_builtin(const char *name)
{
	for (size_t i = 0; i < NBUILTIN; i++)
		if (strcmp(name, builtin_params[i]) == 0)
			return true;
	return false;
}

static zsp_ir_param *find_param(struct raw *r, const char *name)
{
	for (size_t i = 0; i < r->nparams; i++)
		if (strcmp(r->params[i].name, name) == 0)
			return &r->params[i];
	return NULL;
}

static struct policy_state *find_policy(zsp_cc *cc, const char *name)
{
	for (size_t i = 0; i < cc->npols; i++)
		if (strcmp(cc->pols[i].ast->name->s, name) == 0)
			return &cc->pols[i];
	return NULL;
}

/* Calls fn for every ${NAME} in s; returns false if fn does. */
static bool each_ref(const char *s, bool (*fn)(void *ctx, const char *name, size_t nlen, size_t off),
		     void *ctx)
{
	for (const char *p = s; (p = strstr(p, "${")) != NULL;) {
		const char *close = strchr(p, '}');
		if (!close)
			return true; /* malformed references are the path checker's job */
		if (!fn(ctx, p + 2, (size_t)(close - p - 2), (size_t)(p - s)))
			return false;
		p = close + 1;
	}
	return true;
}

struct refcheck {
	zsp_cc *cc;
	struct policy_state *ps;
	const zsp_ast_str *str;
	bool ok;
};

static bool check_one_ref(void *ctx, const char *name, size_t nlen, size_t off)
{
	struct refcheck *rc = ctx;
	char buf[128];
	if (nlen >= sizeof(buf))
		nlen = sizeof(buf) - 1;
	memcpy(buf, name, nlen);
	buf[nlen] = '\0';
	struct raw *r = &rc->ps->raw;
	for (size_t i = 0; i < r->nparams; i++) {
		if (strcmp(r->params[i].name, buf) == 0) {
			rc->ps->param_used[i] = true;
			return true;
		}
	}
	if (is_builtin(buf))
		return true;
	zsp_diag_error(rc->cc->diag, zsp_str_loc(rc->str, off, nlen + 3),
		       "undefined parameter `%s`", buf);
	const char *cands[256];
	size_t n = 0;
	for (size_t i = 0; i < NBUILTIN; i++)
		cands[n++] = builtin_params[i];
	for (size_t i = 0; i < r->nparams && n < 256; i++)
		cands[n++] = r->params[i].name;
	const char *best = zsp_closest(buf, cands, n);
	if (best)
		zsp_diag_hint(rc->cc->diag, "did you mean `${%s}`?", best);
	else
		zsp_diag_hint(rc->cc->diag, "declare it with `param %s;` in the policy", buf);
	rc->ok = false;
	return true;
}

static bool check_refs(zsp_cc *cc, struct policy_state *ps, const zsp_ast_str *s)
{
	struct refcheck rc = { cc, ps, s, true };
	each_ref(s->s, check_one_ref, &rc);
	return rc.ok;
}

/* --- extends: copy a base's merged rules into the child ------------------------------- */

static bool same_place(zsp_loc a, zsp_loc b)
{
	return a.src == b.src && a.begin == b.begin;
}

/* Appends src's items that dst lacks: with diamond extends (two bases sharing a base), the
 * shared base's rules arrive twice and must count once. */
#define APPEND_ALL(cc, dst, n, cap, src, sn)                                   \
	do {                                                                   \
		size_t n0_ = (n);                                              \
		for (size_t i_ = 0; i_ < (sn); i_++) {                         \
			bool have_ = false;                                    \
			for (size_t j_ = 0; j_ < n0_ && !have_; j_++)          \
				have_ = same_place((dst)[j_].loc, (src)[i_].loc); \
			if (have_)                                             \
				continue;                                      \
			void *slot_ = ZSP_PUSH(cc, dst, n, cap);               \
			if (!slot_)                                            \
				return false;                                  \
			memcpy(slot_, &(src)[i_], sizeof(*(src)));             \
		}                                                              \
	} while (0)

static zsp_ir_tool *find_tool(struct raw *r, const char *name)
{
	for (size_t i = 0; i < r->ntools; i++)
		if (strcmp(r->tools[i].name, name) == 0)
			return &r->tools[i];
	return NULL;
}

static zsp_ir_tool *add_tool(zsp_cc *cc, struct raw *r, const char *name, zsp_loc loc)
{
	size_t n = r->ntools;
	zsp_ir_tool *t = ZSP_PUSH(cc, r->tools, r->ntools, r->tools_cap);
	size_t nc = n;
	size_t *cap = ZSP_PUSH(cc, r->tool_caps, nc, r->tool_caps_cap);
	if (!t || !cap)
		return NULL;
	*cap = 0;
	t->name = name;
	t->loc = loc;
	return t;
}

static zsp_ir_tool_rule *add_tool_rule(zsp_cc *cc, struct raw *r, zsp_ir_tool *t)
{
	size_t idx = (size_t)(t - r->tools);
	return ZSP_PUSH(cc, t->rules, t->nrules, r->tool_caps[idx]);
}

static bool merge_base(zsp_cc *cc, struct raw *dst, const struct raw *b)
{
	for (size_t i = 0; i < b->nparams; i++) {
		if (find_param(dst, b->params[i].name))
			continue;
		zsp_ir_param *p = ZSP_PUSH(cc, dst->params, dst->nparams, dst->params_cap);
		if (!p)
			return false;
		*p = b->params[i];
	}
	if (b->def)
		dst->def = b->def;
	APPEND_ALL(cc, dst->fs, dst->nfs, dst->fs_cap, b->fs, b->nfs);
	if (b->net_mode_loc.src) {
		dst->net_mode = b->net_mode;
		dst->net_mode_loc = b->net_mode_loc;
	}
	APPEND_ALL(cc, dst->hosts, dst->nhosts, dst->hosts_cap, b->hosts, b->nhosts);
	APPEND_ALL(cc, dst->unixs, dst->nunix, dst->unix_cap, b->unixs, b->nunix);
	dst->env_clear |= b->env_clear;
	APPEND_ALL(cc, dst->keep, dst->nkeep, dst->keep_cap, b->keep, b->nkeep);
	APPEND_ALL(cc, dst->unset, dst->nunset, dst->unset_cap, b->unset, b->nunset);
	APPEND_ALL(cc, dst->set, dst->nset, dst->set_cap, b->set, b->nset);
	for (int k = 0; k < ZSP_LIMIT_COUNT; k++)
		if (b->limits[k].set)
			dst->limits[k] = b->limits[k];
	APPEND_ALL(cc, dst->sys, dst->nsys, dst->sys_cap, b->sys, b->nsys);
	APPEND_ALL(cc, dst->sens, dst->nsens, dst->sens_cap, b->sens, b->nsens);
	APPEND_ALL(cc, dst->caches, dst->ncaches, dst->caches_cap, b->caches, b->ncaches);
	if (b->cache_limit.set)
		dst->cache_limit = b->cache_limit;
	if (b->tmp_limit.set)
		dst->tmp_limit = b->tmp_limit;
	if (b->tmp_mode) {
		dst->tmp_mode = b->tmp_mode;
		dst->tmp_loc = b->tmp_loc;
	}
	for (size_t i = 0; i < b->ntools; i++) {
		const zsp_ir_tool *bt = &b->tools[i];
		zsp_ir_tool *t = find_tool(dst, bt->name);
		if (!t && !(t = add_tool(cc, dst, bt->name, bt->loc)))
			return false;
		if (bt->def)
			t->def = bt->def;
		t->case_sensitive = bt->case_sensitive;
		t->judge_substitutions = bt->judge_substitutions;
		size_t had = t->nrules;
		for (size_t j = 0; j < bt->nrules; j++) {
			bool have = false;
			for (size_t k = 0; k < had && !have; k++)
				have = same_place(t->rules[k].loc, bt->rules[j].loc);
			if (have)
				continue;
			zsp_ir_tool_rule *r = add_tool_rule(cc, dst, t);
			if (!r)
				return false;
			*r = bt->rules[j];
		}
	}
	return true;
}

/* --- a policy's own statements --------------------------------------------------------- */

struct seen {
	zsp_loc def, mode, clear, limits[ZSP_LIMIT_COUNT], cache_limit, tmp, tmp_limit;
};

static void twice_in(zsp_cc *cc, zsp_loc now, zsp_loc before, const char *what, const char *where)
{
	zsp_diag_error(cc->diag, now, "%s is set twice in this %s", what, where);
	zsp_diag_note(cc->diag, before, "first set here");
}

static void twice(zsp_cc *cc, zsp_loc now, zsp_loc before, const char *what)
{
	twice_in(cc, now, before, what, "policy");
}

static void lower_fs(zsp_cc *cc, struct policy_state *ps, const zsp_ast_stmt *st)
{
	struct raw *r = &ps->raw;
	for (const zsp_ast_str *s = st->args; s; s = s->next) {
		zsp_path_error e = { 0 };
		unsigned flags = st->op == ZSP_FS_PROTECT ? ZSP_PATH_ALLOW_RELATIVE : 0;
		char *norm = zsp_path_normalize(cc->a, s->s, flags, &e);
		if (!norm) {
			path_error(cc, s, &e);
			continue;
		}
		if (st->op == ZSP_FS_PROTECT && (norm[0] == '/' || strncmp(norm, "${", 2) == 0 ||
						 strncmp(norm, "**", 2) == 0)) {
			zsp_diag_error(cc->diag, s->loc,
				       "`protect` takes a name relative to each writable root, not `%s`", s->s);
			zsp_diag_hint(cc->diag, "write `protect \".git\";`, or use `deny`/`read` for a fixed path");
			continue;
		}
		if (!check_refs(cc, ps, s))
			continue;
		zsp_ir_fs_rule *rule = ZSP_PUSH(cc, r->fs, r->nfs, r->fs_cap);
		if (!rule)
			return;
		rule->access = st->op == ZSP_FS_WRITE ? ZSP_ACCESS_WRITE
			     : st->op == ZSP_FS_DENY ? ZSP_ACCESS_DENY : ZSP_ACCESS_READ;
		rule->path = norm;
		rule->written = s->s;
		rule->protect = st->op == ZSP_FS_PROTECT ? norm : NULL;
		rule->policy = ps->ast->name->s;
		rule->loc = s->loc;
	}
}

/* `cache NAME` (a tool of compiler/cache.c) or `cache "PATH"` (a directory mounted where it is). */
static void lower_cache(zsp_cc *cc, struct policy_state *ps, const zsp_ast_stmt *st)
{
	struct raw *r = &ps->raw;
	zsp_ir_cache c = { .policy = ps->ast->name->s, .loc = st->name_loc };
	if (st->name) {
		const zsp_cache_tool *t = zsp_cache_tool_find(st->name);
		if (!t) {
			const char *names[32];
			size_t n = zsp_cache_tool_names(names, 32);
			zsp_diag_error(cc->diag, st->name_loc, "unknown cache `%s`", st->name);
			const char *best = zsp_closest(st->name, names, n);
			if (best)
				zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
			else
				zsp_diag_hint(cc->diag, "the known caches are cargo, go, maven, npm, pip and uv; "
					      "give any other tool's directory as a path: `cache \"~/.cache/TOOL\";`");
			return;
		}
		c.name = t->name;
		c.parts = t->parts;
		c.nparts = t->nparts;
	} else {
		const zsp_ast_str *s = st->value;
		zsp_path_error e = { 0 };
		char *norm = zsp_path_normalize(cc->a, s->s, ZSP_PATH_NO_GLOB, &e);
		if (!norm) {
			path_error(cc, s, &e);
			return;
		}
		if (strncmp(norm, "**", 2) == 0 || strcmp(norm, "/") == 0 ||
		    (norm[0] == '$' && strchr(norm, '}') && !strchr(norm, '/'))) {
			zsp_diag_error(cc->diag, s->loc, "a cache is a directory of a tool's, not `%s`", s->s);
			zsp_diag_hint(cc->diag, "name the tool's own directory, e.g. `cache \"~/.cache/bazel\";`");
			return;
		}
		if (!check_refs(cc, ps, s))
			return;
		zsp_ir_cache_part *part = zsp_arena_calloc(cc->a, 1, sizeof(*part));
		char id[14];
		zsp_cache_path_id(norm, id);
		if (!part || !(part->id = zsp_arena_strdup(cc->a, id))) {
			cc->oom = true;
			return;
		}
		part->path = norm;
		c.name = s->s;
		c.is_path = true;
		c.parts = part;
		c.nparts = 1;
	}
	for (size_t i = 0; i < r->ncaches; i++) {
		if (strcmp(r->caches[i].parts[0].id, c.parts[0].id) != 0)
			continue;
		if (strcmp(r->caches[i].policy, c.policy) == 0) {
			zsp_diag_warning(cc->diag, ZSP_W_DUPLICATE, c.loc, "cache `%s` repeated", c.name);
			zsp_diag_note(cc->diag, r->caches[i].loc, "first named here");
		}
		return;   /* a base's: the same cache */
	}
	zsp_ir_cache *slot = ZSP_PUSH(cc, r->caches, r->ncaches, r->caches_cap);
	if (slot)
		*slot = c;
}

/* `cache limit Q;` and `tmp limit Q;`: a size, at least 1 MiB, or unlimited. */
static void lower_store_limit(zsp_cc *cc, const zsp_ast_stmt *st, zsp_loc *seen, const char *what,
			      zsp_ir_limit *out)
{
	const zsp_ast_quantity *q = &st->qty;
	if (seen->src)
		twice_in(cc, st->loc, *seen, what, "policy");
	*seen = st->loc;
	if (q->unit != ZSP_UNIT_SIZE && q->unit != ZSP_UNIT_UNLIMITED) {
		zsp_diag_error(cc->diag, q->loc, "%s takes a size (B KiB MiB GiB TiB, or unlimited)", what);
		return;
	}
	if (q->unit == ZSP_UNIT_SIZE && (q->overflow || q->value < (1ULL << 20) || q->value > (1ULL << 62))) {
		zsp_diag_error(cc->diag, q->loc, "%s is out of range (1 MiB - 2^62 bytes)", what);
		return;
	}
	*out = (zsp_ir_limit){ .set = true, .unlimited = q->unit == ZSP_UNIT_UNLIMITED, .value = q->value,
			       .loc = st->loc };
}

static void lower_net(zsp_cc *cc, struct policy_state *ps, const zsp_ast_stmt *st)
{
	struct raw *r = &ps->raw;
	for (const zsp_ast_str *s = st->args; s; s = s->next) {
		if (st->kind == ZSP_ST_NET_HOST) {
			const char *host;
			unsigned port;
			if (!zsp_check_host(cc, s, true, &host, &port)) {
				ps->bad_hosts = true;
				continue;
			}
			zsp_ir_host *h = ZSP_PUSH(cc, r->hosts, r->nhosts, r->hosts_cap);
			if (!h)
				return;
			h->decision = st->decision;
			h->host = host;
			h->port = port;
			h->loc = s->loc;
		} else {
			zsp_path_error e = { 0 };
			char *norm = zsp_path_normalize(cc->a, s->s, ZSP_PATH_NO_GLOB, &e);
			if (!norm) {
				path_error(cc, s, &e);
				continue;
			}
			if (strncmp(norm, "**", 2) == 0) {
				zsp_diag_error(cc->diag, s->loc, "a unix socket is one path, not a pattern");
				continue;
			}
			if (!check_refs(cc, ps, s))
				continue;
			zsp_ir_unix *u = ZSP_PUSH(cc, r->unixs, r->nunix, r->unix_cap);
			if (!u)
				return;
			u->decision = st->decision;
			u->path = norm;
			u->loc = s->loc;
		}
	}
}

static void lower_env(zsp_cc *cc, struct policy_state *ps, const zsp_ast_stmt *st)
{
	struct raw *r = &ps->raw;
	if (st->kind == ZSP_ST_ENV_SET) {
		if (!zsp_check_env_name(cc, st->args, false) || !check_refs(cc, ps, st->value))
			return;
		zsp_ir_env *e = NULL;
		for (size_t i = 0; i < r->nset && !e; i++) {
			if (strcmp(r->set[i].name, st->args->s) != 0)
				continue;
			if (i >= ps->own_set_from) {
				zsp_diag_error(cc->diag, st->loc, "`%s` is set twice in this policy",
					       st->args->s);
				zsp_diag_note(cc->diag, r->set[i].loc, "first set here");
				return;
			}
			e = &r->set[i]; /* a child's value replaces its base's */
		}
		if (!e)
			e = ZSP_PUSH(cc, r->set, r->nset, r->set_cap);
		if (!e)
			return;
		e->name = st->args->s;
		e->value = st->value->s;
		e->loc = st->loc;
		return;
	}
	for (const zsp_ast_str *s = st->args; s; s = s->next) {
		if (!zsp_check_env_name(cc, s, true))
			continue;
		zsp_ir_env *e = st->kind == ZSP_ST_ENV_KEEP ? ZSP_PUSH(cc, r->keep, r->nkeep, r->keep_cap)
							    : ZSP_PUSH(cc, r->unset, r->nunset, r->unset_cap);
		if (!e)
			return;
		e->name = s->s;
		e->loc = s->loc;
	}
}

static void lower_syscalls(zsp_cc *cc, struct policy_state *ps, const zsp_ast_stmt *st)
{
	struct raw *r = &ps->raw;
	int err = 1; /* EPERM */
	if (st->decision == ZSP_ALLOW && (st->kill || st->name || st->err)) {
		zsp_diag_error(cc->diag, st->err_loc, "`syscalls allow` takes no errno or `kill`");
		return;
	}
	if (st->name) {
		if (zsp_check_errno(cc, st->name, st->err_loc, &err) != ZSP_OK)
			return;
	} else if (st->err) {
		if (st->err < 1 || st->err > 4095) {
			zsp_diag_error(cc->diag, st->err_loc, "errno %d is out of range (1 to 4095)", st->err);
			return;
		}
		err = st->err;
	} else if (st->kill) {
		err = 0;
	}
	for (const zsp_ast_str *s = st->args; s; s = s->next) {
		int nr;
		if (zsp_check_syscall(cc, s, &nr) != ZSP_OK)
			continue;
		zsp_ir_syscall *sc = ZSP_PUSH(cc, r->sys, r->nsys, r->sys_cap);
		if (!sc)
			return;
		sc->name = s->s;
		sc->nr = nr;
		sc->action = st->decision;
		sc->err = st->decision == ZSP_DENY ? err : 0;
		sc->kill = st->kill;
		sc->loc = s->loc;
	}
}

/* `safe` is a set of terminal commands to allow: a deny or ask of it would deny the commands
 * that can do no harm and leave the others to the rules below it. */
static bool safe_fits(zsp_cc *cc, const char *tool, zsp_decision d, const zsp_ast_matcher *m)
{
	if (strcmp(tool, "terminal") != 0) {
		zsp_diag_error(cc->diag, m->loc, "`safe` names terminal commands; `%s` runs none", tool);
		zsp_diag_hint(cc->diag, "write `allow safe;` in the block of tool \"terminal\"");
		return false;
	}
	if (d != ZSP_ALLOW) {
		zsp_diag_error(cc->diag, m->loc, "`%s safe`: the known-safe commands can only be allowed",
			       zsp_decision_name(d));
		zsp_diag_hint(cc->diag, "write `allow safe;`, and deny or ask with regexes");
		return false;
	}
	return true;
}

/* `substitutions judged;` is about the shell check of terminal commands: no other tool has one */
static bool substitutions_fit(zsp_cc *cc, const char *tool, const zsp_ast_stmt *b)
{
	if (strcmp(tool, "terminal") == 0)
		return true;
	zsp_diag_error(cc->diag, b->loc, "`substitutions` is a setting of terminal commands; `%s` runs none",
		       tool);
	zsp_diag_hint(cc->diag, "write `substitutions %s;` in the block of tool \"terminal\"",
		      b->op ? "judged" : "denied");
	return false;
}

static void lower_tool(zsp_cc *cc, struct policy_state *ps, const zsp_ast_stmt *st)
{
	struct raw *r = &ps->raw;
	const char *name = st->args->s;
	if (!name[0]) {
		zsp_diag_error(cc->diag, st->args->loc, "empty tool name");
		return;
	}
	if (!zsp_tool_known(name)) {
		zsp_diag_warning(cc->diag, ZSP_W_UNKNOWN_TOOL, st->args->loc, "unknown tool `%s`", name);
		static const char *const known[] = {
			"terminal", "edit_file", "write_file", "read_file", "delete_path",
			"create_directory", "list_directory", "copy_path", "move_path", "fetch",
			"search_web",
		};
		const char *best = zsp_closest(name, known, sizeof(known) / sizeof(known[0]));
		if (best)
			zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
	}
	zsp_loc def_seen = { 0 }, case_seen = { 0 }, subst_seen = { 0 };
	const zsp_ir_tool *inherited = find_tool(r, name);
	/* without its own `case`, the block keeps the one of the base it extends */
	bool case_sensitive = inherited ? inherited->case_sensitive : false;
	bool judge_substitutions = false;
	for (const zsp_ast_stmt *b = st->body; b; b = b->next) {
		if (b->kind == ZSP_ST_TOOL_CASE) {
			if (case_seen.src)
				twice_in(cc, b->loc, case_seen, "`case`", "tool block");
			case_seen = b->loc;
			case_sensitive = b->op == 1;
		} else if (b->kind == ZSP_ST_TOOL_SUBSTITUTIONS) {
			if (!substitutions_fit(cc, name, b))
				continue;
			if (subst_seen.src)
				twice_in(cc, b->loc, subst_seen, "`substitutions`", "tool block");
			subst_seen = b->loc;
			judge_substitutions = b->op == 1;
		}
	}
	zsp_ir_tool *t = find_tool(r, name);
	if (!t && !(t = add_tool(cc, r, name, st->args->loc)))
		return;
	t->loc = st->args->loc;
	if (case_seen.src)
		t->case_sensitive = case_sensitive;
	/* likewise `substitutions` */
	if (subst_seen.src)
		t->judge_substitutions = judge_substitutions;
	for (const zsp_ast_stmt *b = st->body; b; b = b->next) {
		if (b->kind == ZSP_ST_TOOL_DEFAULT) {
			if (def_seen.src)
				twice_in(cc, b->loc, def_seen, "`default`", "tool block");
			def_seen = b->loc;
			t->def = b->decision;
			continue;
		}
		if (b->kind != ZSP_ST_TOOL_RULE)
			continue;
		for (const zsp_ast_matcher *m = b->matchers; m; m = m->next) {
			bool cs = m->flag == 'c' ? true : m->flag == 'i' ? false : case_sensitive;
			const char *pattern = m->text;
			if (m->is_safe) {
				if (!safe_fits(cc, name, b->decision, m))
					continue;
				pattern = NULL;
			} else if (m->is_path) {
				if (!zsp_tool_takes_paths(name) && zsp_tool_known(name)) {
					zsp_diag_error(cc->diag, m->loc,
						       "`path` matchers are for path tools; `%s` takes no path", name);
					zsp_diag_hint(cc->diag, "match its input with a regex: /.../");
					continue;
				}
				zsp_path_error e = { 0 };
				pattern = zsp_path_normalize(cc->a, m->text, ZSP_PATH_ALLOW_RELATIVE, &e);
				if (!pattern) {
					path_error(cc, m->str, &e);
					continue;
				}
				if (!check_refs(cc, ps, m->str))
					continue;
			} else if (!zsp_check_regex(cc, m, cs)) {
				continue;
			} else if (b->decision == ZSP_ALLOW && strcmp(name, "terminal") == 0) {
				zsp_lint_allow_regex(cc, m, cs);
			}
			zsp_ir_tool_rule *rule = add_tool_rule(cc, r, t);
			if (!rule)
				return;
			rule->decision = b->decision;
			rule->is_path = m->is_path;
			rule->safe = m->is_safe;
			rule->pattern = pattern;
			rule->case_sensitive = cs;
			rule->loc = m->loc;
		}
	}
}

static bool mentions(const char *s, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = s; p && (p = strstr(p, "${")) != NULL; p += 2)
		if (strncmp(p + 2, name, n) == 0 && p[2 + n] == '}')
			return true;
	return false;
}

/* Does a rule inherited from a base refer to ${name}? (Own statements were counted when
 * their references were checked.) */
static bool inherited_use(const struct raw *r, const char *name)
{
	for (size_t j = 0; j < r->nparams; j++)
		if (r->params[j].def && mentions(r->params[j].def, name))
			return true;
	for (size_t j = 0; j < r->nfs; j++)
		if (mentions(r->fs[j].path, name))
			return true;
	for (size_t j = 0; j < r->nunix; j++)
		if (mentions(r->unixs[j].path, name))
			return true;
	for (size_t j = 0; j < r->nset; j++)
		if (mentions(r->set[j].value, name))
			return true;
	for (size_t j = 0; j < r->ncaches; j++)   /* a known tool's paths are in its home */
		for (size_t k = 0; k < r->caches[j].nparts; k++)
			if (mentions(r->caches[j].parts[k].path, name))
				return true;
	for (size_t j = 0; j < r->ntools; j++)
		for (size_t k = 0; k < r->tools[j].nrules; k++)
			if (r->tools[j].rules[k].is_path && mentions(r->tools[j].rules[k].pattern, name))
				return true;
	return false;
}

/* `sensitive NAME;`: names (relative globs such as ".vscode" or "*.pem") below which a
 * path tool's allow becomes ask, wherever they appear in a path. */
static void lower_sensitive(zsp_cc *cc, struct policy_state *ps, const zsp_ast_stmt *st)
{
	struct raw *r = &ps->raw;
	for (const zsp_ast_str *s = st->args; s; s = s->next) {
		zsp_path_error e = { 0 };
		char *norm = zsp_path_normalize(cc->a, s->s, ZSP_PATH_ALLOW_RELATIVE, &e);
		if (!norm) {
			path_error(cc, s, &e);
			continue;
		}
		if (norm[0] == '/' || norm[0] == '$' || strncmp(norm, "**", 2) == 0) {
			zsp_diag_error(cc->diag, s->loc,
				       "`sensitive` takes a name matched anywhere in a path, not `%s`", s->s);
			zsp_diag_hint(cc->diag, "write `sensitive \".vscode\";`; it applies under every directory");
			continue;
		}
		zsp_ir_env *e2 = ZSP_PUSH(cc, r->sens, r->nsens, r->sens_cap);
		if (!e2)
			return;
		e2->name = norm;
		e2->loc = s->loc;
	}
}

static void lower_own(zsp_cc *cc, struct policy_state *ps)
{
	struct raw *r = &ps->raw;
	struct seen seen = { 0 };
	const zsp_ast_policy *pol = ps->ast;
	size_t first_own_param = r->nparams, first_own_host = r->nhosts;
	ps->own_set_from = r->nset;

	/* Parameters first: rules may use a parameter declared below them. */
	for (const zsp_ast_stmt *st = pol->stmts; st; st = st->next) {
		if (st->kind != ZSP_ST_PARAM)
			continue;
		zsp_ir_param *prev = find_param(r, st->name);
		if (prev && prev->loc.src && (size_t)(prev - r->params) >= first_own_param) {
			zsp_diag_error(cc->diag, st->name_loc, "parameter `%s` is declared twice", st->name);
			zsp_diag_note(cc->diag, prev->loc, "first declared here");
			continue;
		}
		zsp_ir_param *p = prev;
		if (!p && !(p = ZSP_PUSH(cc, r->params, r->nparams, r->params_cap)))
			return;
		p->name = st->name;
		p->builtin = is_builtin(st->name);
		p->def = st->value ? st->value->s : (prev ? prev->def : NULL);
		p->loc = st->name_loc;
	}
	ps->param_used = zsp_arena_calloc(cc->a, r->nparams + 1, sizeof(bool));
	if (!ps->param_used) {
		cc->oom = true;
		return;
	}
	for (const zsp_ast_stmt *st = pol->stmts; st; st = st->next) {
		if (st->kind == ZSP_ST_PARAM && st->value)
			check_refs(cc, ps, st->value);
	}

	for (const zsp_ast_stmt *st = pol->stmts; st && !cc->oom; st = st->next) {
		switch (st->kind) {
		case ZSP_ST_PARAM:
			break;
		case ZSP_ST_DEFAULT:
			if (seen.def.src)
				twice(cc, st->loc, seen.def, "`default`");
			seen.def = st->loc;
			r->def = st->decision;
			break;
		case ZSP_ST_FS:
			lower_fs(cc, ps, st);
			break;
		case ZSP_ST_NET_MODE:
			if (seen.mode.src)
				twice(cc, st->loc, seen.mode, "the network `mode`");
			seen.mode = st->loc;
			r->net_mode = st->op;
			r->net_mode_loc = st->loc;
			break;
		case ZSP_ST_NET_HOST:
		case ZSP_ST_NET_UNIX:
			lower_net(cc, ps, st);
			break;
		case ZSP_ST_ENV_CLEAR:
			if (seen.clear.src) {
				zsp_diag_warning(cc->diag, ZSP_W_DUPLICATE, st->loc, "`env clear` repeated");
				zsp_diag_note(cc->diag, seen.clear, "first given here");
			}
			seen.clear = st->loc;
			r->env_clear = true;
			break;
		case ZSP_ST_ENV_KEEP:
		case ZSP_ST_ENV_UNSET:
		case ZSP_ST_ENV_SET:
			lower_env(cc, ps, st);
			break;
		case ZSP_ST_LIMIT: {
			zsp_ir_limit lim = { 0 };
			int k;
			if (zsp_check_limit(cc, st, &lim, &k) != ZSP_OK)
				break;
			if (seen.limits[k].src) {
				char what[64];
				snprintf(what, sizeof(what), "limit `%s`", st->name);
				twice(cc, st->loc, seen.limits[k], what);
			}
			seen.limits[k] = st->loc;
			r->limits[k] = lim;
			break;
		}
		case ZSP_ST_SYSCALLS:
			lower_syscalls(cc, ps, st);
			break;
		case ZSP_ST_SENSITIVE:
			lower_sensitive(cc, ps, st);
			break;
		case ZSP_ST_CACHE:
			lower_cache(cc, ps, st);
			break;
		case ZSP_ST_CACHE_LIMIT:
			lower_store_limit(cc, st, &seen.cache_limit, "`cache limit`", &r->cache_limit);
			break;
		case ZSP_ST_TMP_LIMIT:
			lower_store_limit(cc, st, &seen.tmp_limit, "`tmp limit`", &r->tmp_limit);
			break;
		case ZSP_ST_TMP:
			if (seen.tmp.src)
				twice(cc, st->loc, seen.tmp, "`tmp`");
			seen.tmp = st->loc;
			r->tmp_mode = st->op;
			r->tmp_loc = st->loc;
			break;
		case ZSP_ST_TOOL: {
			for (const zsp_ast_stmt *o = pol->stmts; o != st; o = o->next) {
				if (o->kind == ZSP_ST_TOOL && strcmp(o->args->s, st->args->s) == 0) {
					zsp_diag_error(cc->diag, st->args->loc,
						       "tool `%s` has two blocks in this policy", st->args->s);
					zsp_diag_note(cc->diag, o->args->loc, "first block here");
					goto next;
				}
			}
			lower_tool(cc, ps, st);
			break;
		}
		default:
			break;
		}
next:;
	}

	if (r->nparams) {
		/* Parameters this policy declared but nothing in it (or its bases) uses. */
		for (size_t i = 0; i < r->nparams; i++) {
			if (ps->param_used[i] || !r->params[i].loc.src || i < first_own_param)
				continue;
			if (!inherited_use(r, r->params[i].name))
				zsp_diag_warning(cc->diag, ZSP_W_UNUSED_PARAM, r->params[i].loc,
						 "parameter `%s` is declared but never used", r->params[i].name);
		}
	}
	if (r->tmp_mode == ZSP_TMP_HOST && seen.tmp_limit.src)
		zsp_diag_warning(cc->diag, ZSP_W_NO_EFFECT, seen.tmp_limit,
				 "`tmp limit` has no effect: with `tmp host` the sandbox uses the host's /tmp");
	if (r->net_mode == ZSP_NET_NONE) {
		for (size_t i = first_own_host; i < r->nhosts; i++) {
			zsp_diag_warning(cc->diag, ZSP_W_NO_EFFECT, r->hosts[i].loc,
					 "host rule has no effect: the network mode is `none`");
			zsp_diag_hint(cc->diag, "set `mode proxy;` to allow only the listed hosts");
		}
	} else if (r->net_mode == ZSP_NET_PROXY && seen.mode.src && !ps->bad_hosts) {
		size_t allows = 0;
		for (size_t i = 0; i < r->nhosts; i++)
			allows += r->hosts[i].decision == ZSP_ALLOW;
		if (!allows)
			zsp_diag_warning(cc->diag, ZSP_W_NO_EFFECT, seen.mode,
					 "`mode proxy` with no `allow` host rule allows no host");
	}
}

static bool lower_policy(zsp_cc *cc, struct policy_state *ps);

static bool lower_bases(zsp_cc *cc, struct policy_state *ps)
{
	for (const zsp_ast_str *e = ps->ast->extends; e; e = e->next) {
		struct policy_state *base = find_policy(cc, e->s);
		if (!base) {
			zsp_diag_error(cc->diag, e->loc, "policy `%s` extends unknown policy `%s`",
				       ps->ast->name->s, e->s);
			const char *cands[512];
			size_t n = 0;
			for (size_t i = 0; i < cc->npols && n < 512; i++)
				cands[n++] = cc->pols[i].ast->name->s;
			const char *best = zsp_closest(e->s, cands, n);
			if (best)
				zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
			return false;
		}
		if (base == ps || base->mark == 1) {
			/* the chain runs base -> ... -> ps -> base; walk it back from ps */
			char chain[1024];
			size_t len = (size_t)snprintf(chain, sizeof(chain), "`%s`", base->ast->name->s);
			const struct policy_state *path[64];
			size_t np = 0;
			for (const struct policy_state *q = ps; q && q != base && np < 64; q = q->via)
				path[np++] = q;
			while (np-- > 0 && len < sizeof(chain))
				len += (size_t)snprintf(chain + len, sizeof(chain) - len, " -> `%s`",
							path[np]->ast->name->s);
			if (len < sizeof(chain))
				snprintf(chain + len, sizeof(chain) - len, " -> `%s`", base->ast->name->s);
			zsp_diag_error(cc->diag, e->loc, "extends cycle: %s", chain);
			return false;
		}
		if (base->mark == 0) {
			base->via = ps;
			if (!lower_policy(cc, base))
				return false;
		}
		if (!base->ok)
			return false;
		if (!merge_base(cc, &ps->raw, &base->raw))
			return false;
	}
	return true;
}

static bool lower_policy(zsp_cc *cc, struct policy_state *ps)
{
	ps->mark = 1;
	unsigned errors = cc->diag->errors;
	bool bases_ok = lower_bases(cc, ps);
	lower_own(cc, ps);
	ps->mark = 2;
	ps->ok = bases_ok && cc->diag->errors == errors && !cc->oom;
	return ps->ok;
}

/* --- parameters: values and substitution ----------------------------------------------- */

static const char *define_of(zsp_cc *cc, const char *name)
{
	for (size_t i = 0; i < cc->c->ndefines; i++)
		if (strcmp(cc->c->defines[i].name, name) == 0) {
			/* the IR outlives the compiler's options: copy into the arena */
			const char *v = zsp_arena_strdup(cc->a, cc->c->defines[i].value);
			cc->c->defines[i].used = true;
			if (!v)
				cc->oom = true;
			return v;
		}
	return NULL;
}

/* Parameter values are literal text: inside a pattern their glob characters are escaped. */
static void append_escaped(char **out, size_t *len, size_t *cap, zsp_arena *a, const char *s,
			   size_t n, bool escape)
{
	for (size_t i = 0; i < n; i++) {
		if (*len + 3 > *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			char *p = zsp_arena_alloc(a, ncap);
			if (!p)
				return;
			if (*out)
				memcpy(p, *out, *len);
			*out = p;
			*cap = ncap;
		}
		if (escape && strchr("*?[\\", s[i]))
			(*out)[(*len)++] = '\\';
		(*out)[(*len)++] = s[i];
		(*out)[*len] = '\0';
	}
}

struct subst_ctx {
	zsp_cc *cc;
	struct raw *r;
	const char **values;       /* per param, resolved lazily */
	int *state;                /* 0 new, 1 resolving, 2 done */
	size_t *via;               /* while resolving: the parameter whose default needs this one */
	size_t cur;                /* the parameter being resolved, or SIZE_MAX */
	bool cycle;
	char chain[512];           /* the cycle, "`A` -> `B` -> `A`" */
};

static const char *param_value(struct subst_ctx *sc, size_t i);

static const char *substitute(struct subst_ctx *sc, const char *in, bool escape)
{
	char *out = NULL;
	size_t len = 0, cap = 0;
	const char *p = in;
	append_escaped(&out, &len, &cap, sc->cc->a, "", 0, false);
	while (*p) {
		const char *ref = strstr(p, "${");
		const char *close = ref ? strchr(ref, '}') : NULL;
		if (!ref || !close) {
			append_escaped(&out, &len, &cap, sc->cc->a, p, strlen(p), false);
			break;
		}
		append_escaped(&out, &len, &cap, sc->cc->a, p, (size_t)(ref - p), false);
		char name[128];
		size_t nlen = (size_t)(close - ref - 2);
		snprintf(name, sizeof(name), "%.*s", (int)(nlen < 127 ? nlen : 127), ref + 2);
		const char *v = NULL;
		for (size_t i = 0; i < sc->r->nparams; i++)
			if (strcmp(sc->r->params[i].name, name) == 0)
				v = param_value(sc, i);
		if (!v && is_builtin(name) && !find_param(sc->r, name))
			v = define_of(sc->cc, name);
		if (v)
			append_escaped(&out, &len, &cap, sc->cc->a, v, strlen(v), escape);
		else
			append_escaped(&out, &len, &cap, sc->cc->a, ref, (size_t)(close - ref + 1), false);
		p = close + 1;
	}
	if (!out)
		sc->cc->oom = true;
	return out ? out : "";
}

static const char *param_value(struct subst_ctx *sc, size_t i)
{
	if (sc->state[i] == 2)
		return sc->values[i];
	if (sc->state[i] == 1) {
		if (!sc->cycle) {
			size_t path[64], np = 0, len;
			for (size_t q = sc->cur; q != SIZE_MAX && q != i && np < 64; q = sc->via[q])
				path[np++] = q;
			len = (size_t)snprintf(sc->chain, sizeof(sc->chain), "`%s`", sc->r->params[i].name);
			while (np-- > 0 && len < sizeof(sc->chain))
				len += (size_t)snprintf(sc->chain + len, sizeof(sc->chain) - len, " -> `%s`",
							sc->r->params[path[np]].name);
			if (len < sizeof(sc->chain))
				snprintf(sc->chain + len, sizeof(sc->chain) - len, " -> `%s`",
					 sc->r->params[i].name);
		}
		sc->cycle = true;
		return NULL;
	}
	sc->state[i] = 1;
	sc->via[i] = sc->cur;
	sc->cur = i;
	zsp_ir_param *p = &sc->r->params[i];
	const char *d = define_of(sc->cc, p->name);
	if (d) {
		p->from_define = true;
		sc->values[i] = d;
	} else if (p->def) {
		sc->values[i] = substitute(sc, p->def, false);
	}
	sc->cur = sc->via[i];
	sc->state[i] = 2;
	return sc->values[i];
}

/* Re-normalizes a pattern after substitution; the value of a parameter may need it. */
static const char *resolve_path(zsp_cc *cc, struct subst_ctx *sc, const char *path, zsp_loc loc,
				unsigned flags, bool *ok)
{
	*ok = true;
	if (!strstr(path, "${"))
		return path;
	const char *s = substitute(sc, path, !(flags & ZSP_PATH_NO_GLOB));
	if (strcmp(s, path) == 0)
		return path;
	zsp_path_error e = { 0 };
	char *norm = zsp_path_normalize(cc->a, s, flags, &e);
	if (!norm) {
		if (s[0] != '/' && s[0] != '*' && !(flags & ZSP_PATH_ALLOW_RELATIVE))
			zsp_diag_error(cc->diag, loc,
				       "with its parameters resolved, this path is `%s`, which is not absolute", s);
		else
			zsp_diag_error(cc->diag, loc, "with its parameters resolved, this path is `%s`: %s", s,
				       e.msg ? e.msg : "invalid");
		zsp_diag_hint(cc->diag, "a parameter used as a path must be an absolute path");
		*ok = false;
		return path;
	}
	return norm;
}

/* The caches with their paths resolved; each mounted part also becomes a write rule at its
 * place (fs[*n...]), which the oracle and the normalization see like any other. */
static bool finish_caches(zsp_cc *cc, struct subst_ctx *sc, struct policy_state *ps, zsp_ir_policy *out,
			  zsp_ir_fs_rule *fs, size_t *nfs)
{
	struct raw *r = &ps->raw;
	bool ok = true, one;
	out->caches = zsp_arena_calloc(cc->a, r->ncaches + 1, sizeof(*out->caches));
	if (!out->caches)
		return false;
	for (size_t i = 0; i < r->ncaches; i++) {
		zsp_ir_cache *c = &out->caches[out->ncaches++];
		*c = r->caches[i];
		zsp_ir_cache_part *parts = zsp_arena_calloc(cc->a, c->nparts + 1, sizeof(*parts));
		if (!parts)
			return false;
		for (size_t k = 0; k < c->nparts; k++) {
			parts[k] = r->caches[i].parts[k];
			parts[k].path = resolve_path(cc, sc, parts[k].path, c->loc, ZSP_PATH_NO_GLOB, &one);
			ok &= one;
			if (parts[k].env) {
				for (size_t j = ps->own_set_from; j < r->nset; j++)
					if (strcmp(r->set[j].name, parts[k].env) == 0)
						zsp_diag_warning(cc->diag, ZSP_W_NO_EFFECT, r->set[j].loc,
								 "`env set \"%s\"` has no effect: `cache %s` sets it to "
								 "the sandbox's own cache", parts[k].env, c->name);
				continue;
			}
			fs[(*nfs)++] = (zsp_ir_fs_rule){ .access = ZSP_ACCESS_WRITE, .path = parts[k].path,
							 .written = c->name, .cache = c->name, .part = &parts[k],
							 .policy = c->policy, .loc = c->loc };
		}
		c->parts = parts;
	}
	out->cache_limit = r->cache_limit;
	if (!out->cache_limit.set)
		out->cache_limit.value = ZSP_CACHE_LIMIT_DEFAULT;
	out->tmp_private = r->tmp_mode != ZSP_TMP_HOST;
	out->tmp_loc = r->tmp_loc;
	out->tmp_limit = r->tmp_limit;
	if (!out->tmp_limit.set)
		out->tmp_limit.value = ZSP_TMP_LIMIT_DEFAULT;
	return ok;
}

static int cmp_tool(const void *a, const void *b)
{
	return strcmp(((const zsp_ir_tool *)a)->name, ((const zsp_ir_tool *)b)->name);
}

static bool finish_policy(zsp_cc *cc, struct policy_state *ps, zsp_ir_policy *out)
{
	struct raw *r = &ps->raw;
	struct subst_ctx sc = { .cc = cc, .r = r, .cur = SIZE_MAX };
	sc.values = zsp_arena_calloc(cc->a, r->nparams + 1, sizeof(char *));
	sc.state = zsp_arena_calloc(cc->a, r->nparams + 1, sizeof(int));
	sc.via = zsp_arena_calloc(cc->a, r->nparams + 1, sizeof(size_t));
	if (!sc.values || !sc.state || !sc.via)
		return false;
	out->name = ps->ast->name->s;
	out->loc = ps->ast->loc;
	for (const zsp_ast_str *e = ps->ast->extends; e; e = e->next)
		out->nextends++;
	out->extends = zsp_arena_calloc(cc->a, out->nextends + 1, sizeof(char *));
	size_t ne = 0;
	for (const zsp_ast_str *e = ps->ast->extends; e; e = e->next)
		out->extends[ne++] = e->s;

	/* Parameters: declared ones and the built-ins, sorted by name. */
	size_t np = r->nparams;
	for (size_t i = 0; i < NBUILTIN; i++)
		np += !find_param(r, builtin_params[i]);
	out->params = zsp_arena_calloc(cc->a, np + 1, sizeof(zsp_ir_param));
	if (!out->params)
		return false;
	for (size_t i = 0; i < r->nparams; i++) {
		/* resolve first: that records whether the value came from -D */
		const char *value = param_value(&sc, i);
		out->params[out->nparams] = r->params[i];
		out->params[out->nparams].value = value;
		if (sc.cycle) {
			zsp_diag_error(cc->diag, r->params[i].loc, "circular parameter defaults: %s",
				       sc.chain);
			return false;
		}
		out->nparams++;
	}
	for (size_t i = 0; i < NBUILTIN; i++) {
		if (find_param(r, builtin_params[i]))
			continue;
		zsp_ir_param *p = &out->params[out->nparams++];
		p->name = builtin_params[i];
		p->builtin = true;
		p->value = define_of(cc, builtin_params[i]);
		p->from_define = p->value != NULL;
	}
	for (size_t i = 1; i < out->nparams; i++) {
		zsp_ir_param t = out->params[i];
		size_t j = i;
		for (; j > 0 && strcmp(out->params[j - 1].name, t.name) > 0; j--)
			out->params[j] = out->params[j - 1];
		out->params[j] = t;
	}

	out->def = r->def ? r->def : ZSP_ASK;
	bool ok = true, one;
	size_t nmounted = 0;
	for (size_t i = 0; i < r->ncaches; i++)
		for (size_t k = 0; k < r->caches[i].nparts; k++)
			nmounted += r->caches[i].parts[k].env == NULL;
	zsp_ir_fs_rule *fs = zsp_arena_calloc(cc->a, r->nfs + nmounted + 1, sizeof(*fs));
	if (!fs)
		return false;
	for (size_t i = 0; i < r->nfs; i++) {
		fs[i] = r->fs[i];
		fs[i].path = resolve_path(cc, &sc, r->fs[i].path, r->fs[i].loc,
					  r->fs[i].protect ? ZSP_PATH_ALLOW_RELATIVE : 0, &one);
		if (r->fs[i].protect)
			fs[i].protect = fs[i].path;
		ok &= one;
	}
	size_t nfs = r->nfs;
	ok &= finish_caches(cc, &sc, ps, out, fs, &nfs);
	zsp_fs_normalize(cc, out, fs, nfs);

	out->net_mode = r->net_mode;
	out->net_mode_loc = r->net_mode_loc;
	out->hosts = r->hosts;
	out->nhosts = r->nhosts;
	out->unix_socks = zsp_arena_calloc(cc->a, r->nunix + 1, sizeof(zsp_ir_unix));
	if (!out->unix_socks)
		return false;
	for (size_t i = 0; i < r->nunix; i++) {
		out->unix_socks[i] = r->unixs[i];
		out->unix_socks[i].path = resolve_path(cc, &sc, r->unixs[i].path, r->unixs[i].loc,
						       ZSP_PATH_NO_GLOB, &one);
		ok &= one;
		if (one && out->unix_socks[i].decision == ZSP_ALLOW)
			zsp_check_unix_socket(cc, out->unix_socks[i].path, out->unix_socks[i].loc);
	}
	out->nunix = r->nunix;
	out->env_clear = r->env_clear;
	out->env_keep = r->keep;
	out->nenv_keep = r->nkeep;
	out->env_unset = r->unset;
	out->nenv_unset = r->nunset;
	out->env_set = zsp_arena_calloc(cc->a, r->nset + 1, sizeof(zsp_ir_env));
	if (!out->env_set)
		return false;
	for (size_t i = 0; i < r->nset; i++) {
		out->env_set[i] = r->set[i];
		out->env_set[i].value = substitute(&sc, r->set[i].value, false);
	}
	out->nenv_set = r->nset;
	memcpy(out->limits, r->limits, sizeof(out->limits));
	out->syscalls = r->sys;
	out->nsyscalls = r->nsys;
	out->tools = r->tools;
	out->ntools = r->ntools;
	out->sensitive = r->sens;
	out->nsensitive = r->nsens;
	if (out->ntools)
		qsort(out->tools, out->ntools, sizeof(*out->tools), cmp_tool);
	for (size_t i = 0; i < out->ntools; i++) {
		for (size_t j = 0; j < out->tools[i].nrules; j++) {
			zsp_ir_tool_rule *tr = &out->tools[i].rules[j];
			if (tr->is_path)
				tr->pattern = resolve_path(cc, &sc, tr->pattern, tr->loc,
							   ZSP_PATH_ALLOW_RELATIVE, &one), ok &= one;
		}
	}
	return ok && !cc->oom;
}

/* --- tests ------------------------------------------------------------------------------ */

static void lower_test(zsp_cc *cc, const zsp_ast_test *t, zsp_ir_test *out)
{
	struct policy_state *ps = find_policy(cc, t->name->s);
	out->policy = t->name->s;
	out->loc = t->loc;
	if (!ps) {
		zsp_diag_error(cc->diag, t->name->loc, "test `%s` names no policy", t->name->s);
		const char *cands[512];
		size_t n = 0;
		for (size_t i = 0; i < cc->npols && n < 512; i++)
			cands[n++] = cc->pols[i].ast->name->s;
		const char *best = zsp_closest(t->name->s, cands, n);
		if (best)
			zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
		else
			zsp_diag_hint(cc->diag, "a test block is named after the policy it tests");
	}
	size_t nd = 0, nx = 0, dcap = 0, xcap = 0;
	for (const zsp_ast_stmt *st = t->stmts; st; st = st->next) {
		if (st->kind == ZSP_ST_DEFINE) {
			bool declared = is_builtin(st->name) || (ps && find_param(&ps->raw, st->name));
			if (ps && !declared) {
				zsp_diag_error(cc->diag, st->name_loc,
					       "policy `%s` has no parameter `%s`", t->name->s, st->name);
				const char *cands[256];
				size_t n = 0;
				for (size_t i = 0; i < NBUILTIN; i++)
					cands[n++] = builtin_params[i];
				for (size_t i = 0; i < ps->raw.nparams && n < 256; i++)
					cands[n++] = ps->raw.params[i].name;
				const char *best = zsp_closest(st->name, cands, n);
				if (best)
					zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
				continue;
			}
			for (size_t i = 0; i < nd; i++) {
				if (strcmp(out->defines[i].name, st->name) == 0) {
					char what[160];
					snprintf(what, sizeof(what), "parameter `%s`", st->name);
					twice_in(cc, st->name_loc, out->defines[i].loc, what, "test");
					goto next;
				}
			}
			zsp_ir_define *d = ZSP_PUSH(cc, out->defines, nd, dcap);
			if (!d)
				return;
			d->name = st->name;
			d->value = st->value->s;
			d->loc = st->name_loc;
		} else if (st->kind == ZSP_ST_EXPECT) {
			if (!zsp_check_request(cc, st))
				continue;
			zsp_ir_expect *x = ZSP_PUSH(cc, out->expects, nx, xcap);
			if (!x)
				return;
			x->decision = st->decision;
			x->loc = st->loc;
			x->req.kind = st->name;
			for (const zsp_ast_str *a = st->args; a; a = a->next)
				x->req.nargs++;
			x->req.args = zsp_arena_calloc(cc->a, x->req.nargs + 1, sizeof(char *));
			if (!x->req.args)
				return;
			size_t i = 0;
			for (const zsp_ast_str *a = st->args; a; a = a->next)
				x->req.args[i++] = a->s;
		}
next:;
	}
	out->ndefines = nd;
	out->nexpects = nx;
}

/* --- the whole compilation -------------------------------------------------------------- */

static bool valid_policy_name(const char *s)
{
	size_t n = strlen(s);
	return n >= 1 && n <= 64 &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static int cmp_policy(const void *a, const void *b)
{
	return strcmp(((const zsp_ir_policy *)a)->name, ((const zsp_ir_policy *)b)->name);
}

int zsp_lower(zsp_cc *cc, zsp_ir *ir)
{
	size_t cap = 0;
	for (size_t f = 0; f < cc->nfiles; f++) {
		for (zsp_ast_policy *p = cc->files[f]->policies; p; p = p->next) {
			if (!valid_policy_name(p->name->s)) {
				zsp_diag_error(cc->diag, p->name->loc, "invalid policy name `%s`", p->name->s);
				zsp_diag_hint(cc->diag, "a name is 1 to 64 characters of A-Z a-z 0-9 _ . -");
				continue;
			}
			struct policy_state *prev = find_policy(cc, p->name->s);
			if (prev) {
				zsp_diag_error(cc->diag, p->name->loc, "policy `%s` is defined twice", p->name->s);
				zsp_diag_note(cc->diag, prev->ast->name->loc, "first defined here");
				continue;
			}
			struct policy_state *ps = ZSP_PUSH(cc, cc->pols, cc->npols, cap);
			if (!ps)
				return ZSP_EINTERNAL;
			ps->ast = p;
		}
	}
	for (size_t i = 0; i < cc->npols && !cc->oom; i++)
		if (cc->pols[i].mark == 0)
			lower_policy(cc, &cc->pols[i]);

	/* -D names must mean something in this compilation. */
	for (size_t i = 0; i < cc->c->ndefines; i++) {
		const char *name = cc->c->defines[i].name;
		bool known = is_builtin(name);
		for (size_t j = 0; j < cc->npols && !known; j++)
			known = find_param(&cc->pols[j].raw, name) != NULL;
		if (!known) {
			zsp_diag_error_noloc(cc->diag, "-D %s: no policy declares a parameter `%s`", name, name);
			const char *cands[256];
			size_t n = 0;
			for (size_t j = 0; j < NBUILTIN; j++)
				cands[n++] = builtin_params[j];
			for (size_t j = 0; j < cc->npols; j++)
				for (size_t k = 0; k < cc->pols[j].raw.nparams && n < 256; k++)
					cands[n++] = cc->pols[j].raw.params[k].name;
			const char *best = zsp_closest(name, cands, n);
			if (best)
				zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
			return ZSP_EUSAGE;
		}
	}

	ir->policies = zsp_arena_calloc(cc->a, cc->npols + 1, sizeof(zsp_ir_policy));
	if (!ir->policies)
		return ZSP_EINTERNAL;
	if (cc->diag->errors == 0) {
		for (size_t i = 0; i < cc->npols && !cc->oom; i++)
			if (finish_policy(cc, &cc->pols[i], &ir->policies[ir->npolicies]))
				ir->npolicies++;
	}
	if (ir->npolicies)
		qsort(ir->policies, ir->npolicies, sizeof(*ir->policies), cmp_policy);

	size_t tcap = 0;
	for (size_t f = 0; f < cc->nfiles && !cc->oom; f++) {
		for (zsp_ast_test *t = cc->files[f]->tests; t; t = t->next) {
			zsp_ir_test *it = ZSP_PUSH(cc, ir->tests, ir->ntests, tcap);
			if (!it)
				return ZSP_EINTERNAL;
			lower_test(cc, t, it);
		}
	}
	if (cc->oom)
		return ZSP_EINTERNAL;
	return cc->diag->errors ? ZSP_EPOLICY : ZSP_OK;
}
