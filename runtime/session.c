/* session.c: libzsp's public API for asking (zsp.h): one policy, one machine, many requests,
 * answers as an enum, as a structured result (runtime/session.h) and as the JSON line zspc
 * --format json prints. Every decision of every caller is made here, by the one decider. An
 * embedder's session fills the built-in parameters its set was compiled without, and refuses
 * to decide while a rule names one that has no value (doc/oracle.md "Libzsp"). */
#include "config.h"

#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "compiler/oracle.h"
#include "compiler/params.h"
#include "compiler/path.h"
#include "lang/err.h"
#include "runtime/decide.h"
#include "runtime/session.h"

extern char **environ;

struct zsp_grants {
	zsp_store *store;
};

struct zsp_session {
	const zsp_ir *ir;
	const zsp_ir_policy *p;
	zsp_policy_set *bound; /* the set compiled again with the parameters this session filled */
	char *refusal;       /* why every decision is refused; NULL: the session decides */
	bool placed;         /* a relative or `~` request path needs the workspace or home given */
	bool has_workspace, has_home;
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
	zsp_policy_set_free(s->bound);
	free(s->refusal);
	free(s->thread);
	free(s->project);
	free(s->store_error);
	free(s);
}

/* A rule that names a parameter without a value: it names no place, so the oracle would pass
 * over it, and a `deny "~/.ssh"` compiled without HOME would deny nothing. */
struct unresolved {
	char name[72];           /* the parameter */
	const char *text;        /* the rule's path as written (or as the IR has it) */
	zsp_loc loc;
};

static bool unresolved_in(const char *path, const char *text, zsp_loc loc, struct unresolved *u)
{
	const char *ref = strstr(path, "${");
	const char *close = ref ? strchr(ref, '}') : NULL;
	if (!ref)
		return false;
	size_t n = close ? (size_t)(close - ref - 2) : strlen(ref + 2);
	snprintf(u->name, sizeof(u->name), "%.*s", (int)(n < 64 ? n : 64), ref + 2);
	u->text = text ? text : path;
	u->loc = loc;
	return true;
}

/* The first rule of p the oracle judges (fs, unix sockets, path rules of tools) that names a
 * parameter without a value, into u; false when there is none. */
static bool find_unresolved(const zsp_ir_policy *p, struct unresolved *u)
{
	for (size_t i = 0; i < p->nfs; i++)
		if (unresolved_in(p->fs[i].path, p->fs[i].written, p->fs[i].loc, u))
			return true;
	for (size_t i = 0; i < p->nunix; i++)
		if (unresolved_in(p->unix_socks[i].path, NULL, p->unix_socks[i].loc, u))
			return true;
	for (size_t t = 0; t < p->ntools; t++)
		for (size_t j = 0; j < p->tools[t].nrules; j++) {
			const zsp_ir_tool_rule *r = &p->tools[t].rules[j];
			if (r->is_path && unresolved_in(r->pattern, NULL, r->loc, u))
				return true;
		}
	return false;
}

/* The value p has for built-in parameter name: NULL when it has none, or when its value still
 * holds another parameter. */
static const char *param_value(const zsp_ir_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nparams; i++)
		if (strcmp(p->params[i].name, name) == 0)
			return p->params[i].value && !strstr(p->params[i].value, "${") ? p->params[i].value
										      : NULL;
	return NULL;
}

/* a and b name the same directory, lexically */
static bool same_dir(const char *a, const char *b)
{
	char na[PATH_MAX], nb[PATH_MAX];
	return zsp_path_lexical(a, na, sizeof(na)) && zsp_path_lexical(b, nb, sizeof(nb)) &&
	       strcmp(na, nb) == 0;
}

/* Why the session refuses every decision, malloc'd; NULL when it decides (or on out-of-memory,
 * then *oom). */
static char *refusal_of(const zsp_ir_policy *p, bool *oom)
{
	struct unresolved u;
	char *why = NULL, loc[PATH_MAX + 64];
	*oom = false;
	if (!find_unresolved(p, &u))
		return NULL;
	const char *where = zsp_loc_string(loc, sizeof(loc), u.loc);
	bool home = strcmp(u.name, "HOME") == 0, given = home || strcmp(u.name, "WORKSPACE") == 0;
	char remedy[256];
	if (given)
		snprintf(remedy, sizeof(remedy), "give the session a %s, or define %s "
			 "(zsp_compiler_define) before compiling", home ? "home directory" : "workspace",
			 u.name);
	else
		snprintf(remedy, sizeof(remedy), "define %s (zsp_compiler_define) before compiling",
			 u.name);
	if (asprintf(&why, "parameter %s has no value, and the rule `%s`%s%s names it: nothing is "
		     "decided without it (%s)", u.name, u.text, where ? " at " : "", where ? where : "",
		     remedy) < 0) {
		*oom = true;
		return NULL;
	}
	return why;
}

/* A session for p of ir (bound: a set of the session's own, or NULL), judging against env,
 * refusing with refusal (taken over; NULL: it decides). */
static int session_make(const zsp_ir *ir, const zsp_ir_policy *p, zsp_policy_set *bound,
			char *refusal, const zsp_oracle_env *env, zsp_session **out)
{
	zsp_session *s = calloc(1, sizeof(*s));
	if (!s) {
		zsp_policy_set_free(bound);
		free(refusal);
		return ZSP_EINTERNAL;
	}
	s->ir = ir;
	s->p = p;
	s->bound = bound;
	s->refusal = refusal;
	s->d = zsp_decider_new(p, env);
	s->a = zsp_arena_new();
	if (!s->d || !s->a) {
		zsp_session_free(s);
		return ZSP_EINTERNAL;
	}
	*out = s;
	return ZSP_OK;
}

int zsp_session_new_env(const zsp_policy_set *set, const char *policy, const zsp_oracle_env *env,
			zsp_session **out)
{
	if (!out)
		return ZSP_EUSAGE;
	*out = NULL;
	const zsp_ir *ir = set ? zsp_policy_set_ir(set) : NULL;
	const zsp_ir_policy *p = ir ? zsp_ir_pick_policy(ir, policy) : NULL;
	if (!p || (env->workspace && env->workspace[0] != '/') || (env->home && env->home[0] != '/'))
		return ZSP_EUSAGE;
	return session_make(ir, p, NULL, NULL, env, out);
}

/* The built-ins the caller's workspace and home and this process give (compiler/params.c)
 * that p has no value for, compiled into a set of the session's own: *bound (NULL when p
 * needed none). ZSP_OK, also when the policy does not compile with them (*why says so, and
 * the session refuses); ZSP_EINTERNAL on out-of-memory. */
static int fill_builtins(const zsp_policy_set *set, const zsp_ir_policy *p, const char *workspace,
			 const char *home, zsp_policy_set **bound, char **why)
{
	struct unresolved u;
	zsp_builtin_params b;
	const char *names[ZSP_BUILTIN_MAX], *values[ZSP_BUILTIN_MAX];
	size_t n = 0;
	char err[600];
	*bound = NULL;
	*why = NULL;
	if (!find_unresolved(p, &u))
		return ZSP_OK;
	/* getpwuid_r: a host may make sessions in several threads at once */
	uid_t uid = getuid();
	struct passwd pwbuf, *pw = NULL;
	char pwtext[4096];
	if (getpwuid_r(uid, &pwbuf, pwtext, sizeof(pwtext), &pw) != 0)
		pw = NULL;   /* then USER is left out, and a rule naming it refuses */
	zsp_builtin_params_fill_home(&b, uid, pw, environ, workspace, home);
	for (size_t i = 0; i < b.n; i++) {
		if (param_value(p, b.names[i]))
			continue;
		names[n] = b.names[i];
		values[n++] = b.values[i];
	}
	if (n == 0)
		return ZSP_OK;
	int rc = zsp_policy_set_bind(set, names, values, n, bound, err, sizeof(err));
	if (rc == ZSP_EINTERNAL)
		return rc;
	if (rc != ZSP_OK && asprintf(why, "with the values this session gives its parameters the "
				     "policy does not compile: %s", err) < 0)
		return ZSP_EINTERNAL;
	return ZSP_OK;
}

/* Why workspace or home (either may be NULL) cannot go with the values p was compiled with,
 * malloc'd into *why; NULL when they can. ZSP_OK, or ZSP_EINTERNAL on out-of-memory. */
static int conflict(const zsp_ir_policy *p, const char *workspace, const char *home, char **why)
{
	const char *ws = param_value(p, "WORKSPACE"), *hm = param_value(p, "HOME");
	*why = NULL;
	if (workspace && ws && !same_dir(workspace, ws))
		return asprintf(why, "the session's workspace %s is not the WORKSPACE the policy was "
				"compiled with, %s: a relative path in a request would not name the "
				"place the rules name", workspace, ws) < 0 ? ZSP_EINTERNAL : ZSP_OK;
	if (home && hm && !same_dir(home, hm))
		return asprintf(why, "the session's home %s is not the HOME the policy was compiled "
				"with, %s: `~` in a request would not name the place `~` names in the "
				"rules", home, hm) < 0 ? ZSP_EINTERNAL : ZSP_OK;
	return ZSP_OK;
}

int zsp_session_new(const zsp_policy_set *set, const char *policy, const char *workspace,
		    const char *home, zsp_session **out)
{
	/* An embedder's session fails closed: a parameter the host defined when compiling keeps its
	 * value, workspace and home fill WORKSPACE and HOME when it did not (the process the other
	 * built-ins), and a rule whose parameter still has no value makes every decision refused. */
	if (!out)
		return ZSP_EUSAGE;
	*out = NULL;
	const zsp_ir *ir = set ? zsp_policy_set_ir(set) : NULL;
	const zsp_ir_policy *p = ir ? zsp_ir_pick_policy(ir, policy) : NULL;
	if (!p || (workspace && workspace[0] != '/') || (home && home[0] != '/'))
		return ZSP_EUSAGE;
	char *why = NULL;
	zsp_policy_set *bound = NULL;
	bool oom = false;
	if (conflict(p, workspace, home, &why) != ZSP_OK ||
	    (!why && fill_builtins(set, p, workspace, home, &bound, &why) != ZSP_OK))
		return ZSP_EINTERNAL;
	if (bound) {
		ir = zsp_policy_set_ir(bound);
		if (!(p = zsp_ir_find_policy(ir, p->name))) {   /* the same files: cannot happen */
			zsp_policy_set_free(bound);
			return ZSP_EINTERNAL;
		}
	}
	if (!why && !(why = refusal_of(p, &oom)) && oom) {
		zsp_policy_set_free(bound);
		return ZSP_EINTERNAL;
	}
	/* the places the rules were compiled with, when the caller names none */
	zsp_oracle_env env = { .workspace = workspace ? workspace : param_value(p, "WORKSPACE"),
			       .home = home ? home : param_value(p, "HOME"), .resolve_symlinks = true };
	int rc = session_make(ir, p, bound, why, &env, out);
	if (rc == ZSP_OK) {
		(*out)->placed = true;
		(*out)->has_workspace = env.workspace != NULL;
		(*out)->has_home = env.home != NULL;
	}
	return rc;
}

const char *zsp_session_refusal(const zsp_session *s)
{
	return s ? s->refusal : "no session";
}

int zsp_session_set_shell(zsp_session *s, const char *shell)
{
	if (!s || (shell && shell[0] != '/'))
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

/* Why req names a path s cannot place (relative without a workspace, under `~` without a
 * home), or NULL. Judged against "/" or as a name under it, such a path would not be the one
 * the agent means. */
static const char *unplaced(const zsp_session *s, const zsp_ir_request *req)
{
	if (!s->placed || !zsp_decider_path_request(req->kind))
		return NULL;
	for (size_t i = 0; i < req->nargs; i++) {
		const char *a = req->args[i];
		bool tilde = a[0] == '~' && (a[1] == '/' || a[1] == '\0');
		if (tilde && !s->has_home)
			return "a path under `~`, and the session has no home directory";
		if (!tilde && a[0] != '/' && !s->has_workspace)
			return "a relative path, and the session has no workspace";
	}
	return NULL;
}

static int decide(zsp_session *s, const char *text, const zsp_ir_request *req, bool explain,
		  zsp_session_result *r)
{
	char *made = NULL;
	if ((r->error = unplaced(s, req)))
		return r->status = ZSP_EUSAGE;
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
	r->answer = rc == ZSP_OK ? zsp_decision_answer(s->v.decision) : ZSP_ANSWER_DENY;
	return rc;
}

/* Starts r as no decision: a deny, whatever the caller does with it. false when s refuses to
 * decide (r then says why). */
static bool begin(zsp_session *s, zsp_session_result *r)
{
	memset(r, 0, sizeof(*r));
	r->answer = ZSP_ANSWER_DENY;
	if (s->refusal) {
		r->error = s->refusal;
		r->status = ZSP_EUSAGE;
		return false;
	}
	zsp_arena_reset(s->a);
	return true;
}

int zsp_session_decide_text(zsp_session *s, const char *request, bool explain, zsp_session_result *r)
{
	char err[256];
	if (!begin(s, r))
		return r->status;
	if (zsp_request_parse(s->a, request, &s->req, err, sizeof(err)) != 0) {
		r->error = zsp_arena_strdup(s->a, err);
		return r->status = r->error ? ZSP_EUSAGE : ZSP_EINTERNAL;
	}
	return decide(s, request, &s->req, explain, r);
}

int zsp_session_decide_req(zsp_session *s, const zsp_ir_request *req, bool explain,
			   zsp_session_result *r)
{
	if (!begin(s, r))
		return r->status;
	return decide(s, NULL, req, explain, r);
}

static void error_json(FILE *f, const char *why)
{
	fputs("{\"decision\":\"error\",\"error\":", f);
	zsp_json_string(f, why);
	fputs("}\n", f);
}

void zsp_session_result_json(FILE *f, const zsp_session *s, const zsp_session_result *r)
{
	if (r->status == ZSP_EUSAGE)
		error_json(f, r->error);
	else if (r->v)
		zsp_verdict_json(f, s->p->name, r->req, r->v, r->v->explain, r->x);
}

int zsp_session_decide(zsp_session *s, const char *request, int explain, int *answer,
		       char **json)
{
	zsp_session_result r = { .status = ZSP_EUSAGE, .answer = ZSP_ANSWER_DENY };
	char *buf = NULL;
	size_t len = 0;
	if (answer)
		*answer = ZSP_ANSWER_DENY;
	if (json)
		*json = NULL;
	int rc;
	if (!s || !request || !answer)
		r.error = !s ? "no session" : !request ? "no request" : "nowhere to put the answer";
	else if ((rc = zsp_session_decide_text(s, request, explain != 0, &r)) == ZSP_EINTERNAL)
		return rc;
	if (answer)
		*answer = r.answer;
	if (!json)
		return r.status;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return ZSP_EINTERNAL;
	zsp_session_result_json(f, s, &r);   /* without a session, r is an error */
	if (fclose(f) != 0) {
		free(buf);
		return ZSP_EINTERNAL;
	}
	*json = buf;
	return r.status;
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
	if (!s)
		return ZSP_EUSAGE;
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
	if (!s || !request)
		return zsp_err(err, errlen, ZSP_EUSAGE, "audit trail: no %s", s ? "request" : "session");
	if (answer != ZSP_ANSWER_ALLOW && answer != ZSP_ANSWER_ASK && answer != ZSP_ANSWER_DENY)
		return zsp_err(err, errlen, ZSP_EUSAGE, "audit trail: %d is not an answer", answer);
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
	zsp_err_clear(err, errlen);
	if (!out)
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: nowhere to put the handle");
	*out = NULL;
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
	zsp_err_clear(err, errlen);
	if (!out)
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: nowhere to put the handle");
	*out = NULL;
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
	if (!g)
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: no handle");
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
	if (!g)
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: no handle");
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
	if (removed)
		*removed = 0;
	if (!g)
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: no handle");
	if (!thread || !*thread)
		return zsp_err(err, errlen, ZSP_EUSAGE, "grant store: ending a thread needs its ID");
	if (zsp_store_end_thread(g->store, thread, &n, msg, sizeof(msg)) != ZSP_OK)
		return zsp_err(err, errlen, ZSP_EIO, "grant store: %s", msg);
	if (removed)
		*removed = n;
	return ZSP_OK;
}
