/* session.c: libzsp's public API for asking (zsp.h): one policy, one machine, many requests,
 * answers as an enum, as a structured result (runtime/session.h) and as the JSON line zspc
 * --format json prints. Every decision of every caller is made here, by the one decider. */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compile.h"
#include "compiler/oracle.h"
#include "lang/err.h"
#include "runtime/decide.h"
#include "runtime/session.h"

struct zsp_grants {
	zsp_store *store;
};

struct zsp_session {
	const zsp_ir *ir;
	const zsp_ir_policy *p;
	zsp_decider *d;      /* the oracle, the grants, the audit trail */
	zsp_arena *a;        /* the last decision: reset for each */
	zsp_ir_request req;
	zsp_verdict v;
	zsp_verdict_extra x;
	zsp_decide_ctx ctx;
	char *thread, *project, *store_error;
	char hash[65];       /* the policy's, for the audit trail */
};

/* ---- sessions --------------------------------------------------------------------------- */

void zsp_session_free(zsp_session *s)
{
	if (!s)
		return;
	zsp_decider_free(s->d);
	zsp_arena_free(s->a);
	free(s->thread);
	free(s->project);
	free(s->store_error);
	free(s);
}

/* A rule of p that names a parameter without a value, or NULL. Such a rule names no place, so
 * the oracle would pass over it: a `deny "~/.ssh"` compiled without HOME would deny nothing. */
static const char *unresolved_rule(const zsp_ir_policy *p)
{
	for (size_t i = 0; i < p->nfs; i++)
		if (strstr(p->fs[i].path, "${"))
			return p->fs[i].path;
	for (size_t i = 0; i < p->nunix; i++)
		if (strstr(p->unix_socks[i].path, "${"))
			return p->unix_socks[i].path;
	for (size_t t = 0; t < p->ntools; t++)
		for (size_t j = 0; j < p->tools[t].nrules; j++)
			if (p->tools[t].rules[j].is_path && strstr(p->tools[t].rules[j].pattern, "${"))
				return p->tools[t].rules[j].pattern;
	return NULL;
}

int zsp_session_new_env(const zsp_policy_set *set, const char *policy, const zsp_oracle_env *env,
			zsp_session **out)
{
	const zsp_ir *ir = zsp_policy_set_ir(set);
	const zsp_ir_policy *p = zsp_ir_pick_policy(ir, policy);
	*out = NULL;
	if (!p || (env->workspace && env->workspace[0] != '/') || (env->home && env->home[0] != '/'))
		return ZSP_EUSAGE;
	zsp_session *s = calloc(1, sizeof(*s));
	if (!s)
		return ZSP_EINTERNAL;
	s->ir = ir;
	s->p = p;
	s->d = zsp_decider_new(p, env);
	s->a = zsp_arena_new();
	if (!s->d || !s->a) {
		zsp_session_free(s);
		return ZSP_EINTERNAL;
	}
	*out = s;
	return ZSP_OK;
}

int zsp_session_new(const zsp_policy_set *set, const char *policy, const char *workspace,
		    const char *home, zsp_session **out)
{
	/* An embedder's session fails closed: it never decides with a rule that names a parameter
	 * the host did not define (HOME, WORKSPACE: zsp_compiler_define before compiling). zspc and
	 * zsp-run always define the built-in ones (compiler/params.c); test blocks define their own. */
	const zsp_ir_policy *p = zsp_ir_pick_policy(zsp_policy_set_ir(set), policy);
	*out = NULL;
	if (p && unresolved_rule(p))
		return ZSP_EUSAGE;
	zsp_oracle_env env = { .workspace = workspace, .home = home, .resolve_symlinks = true };
	return zsp_session_new_env(set, policy, &env, out);
}

int zsp_session_set_shell(zsp_session *s, const char *shell)
{
	if (shell && shell[0] != '/')
		return ZSP_EUSAGE;
	return zsp_decider_set_shell(s->d, shell);
}

const zsp_ir_policy *zsp_session_policy(const zsp_session *s)
{
	return s->p;
}

const unsigned *zsp_session_hits(const zsp_session *s, size_t *n)
{
	return zsp_decider_hits(s->d, n);
}

static int decide(zsp_session *s, const char *text, const zsp_ir_request *req, bool explain,
		  zsp_session_result *r)
{
	char *made = NULL;
	if (!text && s->ctx.record && !(text = made = zsp_request_text(req)))
		return r->status = ZSP_EINTERNAL;
	int rc = zsp_decider_decide(s->d, s->a, text, req, explain, &s->ctx, &s->v, &s->x);
	free(made);
	if (rc == ZSP_EINTERNAL)
		return r->status = rc;
	r->req = req;
	r->v = &s->v;
	r->x = &s->x;
	r->status = rc;
	/* an unrecorded decision is still told, but no caller may act on it */
	r->answer = rc == ZSP_OK ? zsp_decision_exit(s->v.decision) : ZSP_ANSWER_DENY;
	return rc;
}

int zsp_session_decide_text(zsp_session *s, const char *request, bool explain, zsp_session_result *r)
{
	char err[256];
	memset(r, 0, sizeof(*r));
	r->answer = ZSP_ANSWER_DENY;
	zsp_arena_reset(s->a);
	if (zsp_request_parse(s->a, request, &s->req, err, sizeof(err)) != 0) {
		r->error = zsp_arena_strdup(s->a, err);
		return r->status = r->error ? ZSP_EUSAGE : ZSP_EINTERNAL;
	}
	return decide(s, request, &s->req, explain, r);
}

int zsp_session_decide_req(zsp_session *s, const zsp_ir_request *req, bool explain,
			   zsp_session_result *r)
{
	memset(r, 0, sizeof(*r));
	r->answer = ZSP_ANSWER_DENY;
	zsp_arena_reset(s->a);
	return decide(s, NULL, req, explain, r);
}

void zsp_session_result_json(FILE *f, const zsp_session *s, const zsp_session_result *r)
{
	if (r->status == ZSP_EUSAGE) {
		fputs("{\"decision\":\"error\",\"error\":", f);
		zsp_json_string(f, r->error);
		fputs("}\n", f);
		return;
	}
	if (r->v)
		zsp_verdict_json(f, s->p->name, r->req, r->v, r->v->explain, r->x);
}

int zsp_session_decide(zsp_session *s, const char *request, int explain, int *answer,
		       char **json)
{
	zsp_session_result r;
	char *buf = NULL;
	size_t len = 0;
	*answer = ZSP_ANSWER_DENY;
	if (json)
		*json = NULL;
	int rc = zsp_session_decide_text(s, request, explain != 0, &r);
	if (rc == ZSP_EINTERNAL)
		return rc;
	*answer = r.answer;
	if (!json)
		return rc;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return ZSP_EINTERNAL;
	zsp_session_result_json(f, s, &r);
	if (fclose(f) != 0) {
		free(buf);
		return ZSP_EINTERNAL;
	}
	*json = buf;
	return rc;
}

/* The thread and project decisions are made for, copied. */
static int set_scope(zsp_session *s, const char *thread, const char *project)
{
	char canon[PATH_MAX];
	if (project && (project[0] != '/' || !realpath(project, canon)))
		return ZSP_EUSAGE;
	char *t = thread ? strdup(thread) : NULL;
	char *pr = project ? strdup(canon) : NULL;
	if ((thread && !t) || (project && !pr)) {
		free(t);
		free(pr);
		return ZSP_EINTERNAL;
	}
	free(s->thread);
	free(s->project);
	s->thread = t;
	s->project = pr;
	s->ctx.thread = t;
	s->ctx.project = pr;
	return ZSP_OK;
}

int zsp_session_use_grants(zsp_session *s, zsp_grants *g, const char *thread, const char *project,
			   int record)
{
	int rc = set_scope(s, g ? thread : NULL, g ? project : NULL);
	if (rc != ZSP_OK)
		return rc;
	if (g && zsp_policy_hash(s->ir, s->p, s->hash) != 0)
		return ZSP_EINTERNAL;
	free(s->store_error);
	s->store_error = NULL;
	s->ctx.store = g ? g->store : NULL;
	s->ctx.store_error = NULL;
	s->ctx.record = g && record;
	s->ctx.policy_hash = g ? s->hash : NULL;
	return ZSP_OK;
}

int zsp_session_grants_missing(zsp_session *s, const char *why, const char *thread,
			       const char *project, int record)
{
	int rc = set_scope(s, thread, project);
	if (rc != ZSP_OK)
		return rc;
	char *w = strdup(why);
	if (!w || zsp_policy_hash(s->ir, s->p, s->hash) != 0) {
		free(w);
		return ZSP_EINTERNAL;
	}
	free(s->store_error);
	s->store_error = w;
	s->ctx.store = NULL;
	s->ctx.store_error = w;
	s->ctx.record = record != 0;
	s->ctx.policy_hash = s->hash;
	return ZSP_OK;
}

int zsp_session_record_answer(zsp_session *s, const char *request, int answer, const char *how,
			      char *err, size_t errlen)
{
	char msg[512];
	zsp_err_clear(err, errlen);
	if (!s->ctx.record)
		return ZSP_OK;
	if (zsp_decider_record_answer(s->d, request, answer, how, &s->ctx, msg, sizeof(msg)) != ZSP_OK)
		return zsp_err(err, errlen, ZSP_EIO, "audit trail: %s", msg);
	return ZSP_OK;
}

/* ---- the grant store -------------------------------------------------------------------- */

int zsp_grants_open_at(const zsp_store_where *where, zsp_grants **out, char *err, size_t errlen)
{
	char msg[1024];
	*out = NULL;
	zsp_err_clear(err, errlen);
	zsp_grants *g = calloc(1, sizeof(*g));
	if (!g)
		return zsp_err(err, errlen, ZSP_EINTERNAL, "out of memory");
	if (zsp_store_open(where, &g->store, msg, sizeof(msg)) != ZSP_OK) {
		free(g);
		return zsp_err(err, errlen, ZSP_EIO, "grant store: %s", msg);
	}
	*out = g;
	return ZSP_OK;
}

int zsp_grants_open(const char *state_dir, zsp_grants **out, char *err, size_t errlen)
{
	*out = NULL;
	zsp_err_clear(err, errlen);
	if (state_dir && state_dir[0] != '/')
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: the state directory must be absolute (got '%s')",
			    state_dir);
	/* an embedder's thread grants are its own: in this process's memory, gone with g */
	zsp_store_where where = { state_dir, NULL, true };
	return zsp_grants_open_at(&where, out, err, errlen);
}

void zsp_grants_close(zsp_grants *g)
{
	if (!g)
		return;
	zsp_store_close(g->store);
	free(g);
}


int zsp_grants_add(zsp_grants *g, const struct zsp_grant_spec *spec, long long *id, char *err,
		   size_t errlen)
{
	char msg[1024], canon[PATH_MAX];
	zsp_err_clear(err, errlen);
	if (!spec)
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: invalid grant: none given");
	zsp_grant gr = {
		.scope = spec->scope,
		.thread = spec->thread,
		.project = spec->project,
		.tool = spec->tool,
		.match = spec->match,
		.pattern = spec->pattern,
		.decision = spec->decision,
		.policy = spec->policy,
		.who = zsp_decider_user(),
		.expires = spec->expires,
	};
	/* canonical, as zsp_session_use_grants makes the session's project */
	if (spec->project) {
		if (spec->project[0] != '/' || !realpath(spec->project, canon))
			return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: invalid grant: the project must be an "
				    "existing absolute directory (got '%s')", spec->project);
		gr.project = canon;
	}
	/* a grant the store refuses to take is the caller's mistake; any other failure the store's */
	if (zsp_store_validate(&gr, msg, sizeof(msg)) != ZSP_OK)
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: %s", msg);
	int64_t gid;
	if (zsp_store_add(g->store, &gr, &gid, msg, sizeof(msg)) != ZSP_OK)
		return zsp_err(err, errlen, ZSP_EIO, "grant store: %s", msg);
	if (id)
		*id = (long long)gid;
	return ZSP_OK;
}

int zsp_grants_revoke(zsp_grants *g, long long id, int *found, char *err, size_t errlen)
{
	char msg[1024];
	bool there = false;
	zsp_err_clear(err, errlen);
	if (found)
		*found = 0;
	if (zsp_store_revoke(g->store, (int64_t)id, &there, msg, sizeof(msg)) != ZSP_OK)
		return zsp_err(err, errlen, ZSP_EIO, "grant store: %s", msg);
	/* no such grant is not an error: the caller learns it through *found */
	if (found)
		*found = there;
	return ZSP_OK;
}

int zsp_grants_end_thread(zsp_grants *g, const char *thread, int *removed, char *err, size_t errlen)
{
	char msg[1024];
	int n = 0;
	zsp_err_clear(err, errlen);
	if (!thread || !*thread)
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: ending a thread needs its ID");
	if (zsp_store_end_thread(g->store, thread, &n, msg, sizeof(msg)) != ZSP_OK)
		return zsp_err(err, errlen, ZSP_EIO, "grant store: %s", msg);
	if (removed)
		*removed = n;
	return ZSP_OK;
}
