/* session.c: the oracle and the grant store behind libzsp's public API (zsp.h): one policy, one
 * machine, many requests, answers as an enum and as the JSON line zspc --format json prints. */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/decide.h"
#include "compile.h"
#include "oracle.h"

struct zsp_grants {
	zsp_store *store;
};

struct zsp_session {
	const zsp_ir *ir;
	const zsp_ir_policy *p;
	zsp_decider *d;      /* the oracle, and the grants once zsp_session_use_grants gave them */
	char *thread, *project;
	bool record;
	char hash[65];       /* the policy's, for the audit trail */
};

/* *err = the message (when err is not NULL); returns status. */
static int fail(char **err, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char **err, int status, const char *fmt, ...)
{
	if (!err)
		return status;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return status;
}

/* ---- sessions --------------------------------------------------------------------------- */

void zsp_session_free(zsp_session *s)
{
	if (!s)
		return;
	zsp_decider_free(s->d);
	free(s->thread);
	free(s->project);
	free(s);
}

int zsp_session_new(const zsp_policy_set *set, const char *policy, const char *workspace,
		    const char *home, zsp_session **out)
{
	const zsp_ir *ir = zsp_policy_set_ir(set);
	const zsp_ir_policy *p = policy ? zsp_ir_find_policy(ir, policy)
				: ir->npolicies == 1 ? &ir->policies[0] : NULL;
	*out = NULL;
	if (!p || (workspace && workspace[0] != '/') || (home && home[0] != '/'))
		return ZSP_EUSAGE;
	zsp_session *s = calloc(1, sizeof(*s));
	if (!s)
		return ZSP_EINTERNAL;
	s->ir = ir;
	s->p = p;
	s->d = zsp_decider_new(p, NULL, workspace, home);
	if (!s->d) {
		zsp_session_free(s);
		return ZSP_EINTERNAL;
	}
	*out = s;
	return ZSP_OK;
}

int zsp_session_decide(zsp_session *s, const char *request, int explain, int *answer,
		       char **json)
{
	zsp_ir_request req;
	zsp_verdict v;
	zsp_verdict_extra x;
	char err[256];
	char *buf = NULL;
	size_t len = 0;
	int rc = ZSP_OK;
	if (json)
		*json = NULL;
	FILE *f = json ? open_memstream(&buf, &len) : NULL;
	if (json && !f)
		return ZSP_EINTERNAL;
	int r = zsp_decider_verdict(s->d, request, explain != 0, s->thread, s->project, s->record,
				    s->hash, &req, &v, &x, err, sizeof(err));
	if (r == ZSP_EUSAGE) {
		rc = ZSP_EUSAGE;
		if (f) {
			fputs("{\"decision\":\"error\",\"error\":", f);
			zsp_json_string(f, err);
			fputs("}\n", f);
		}
	} else if (r == ZSP_EINTERNAL) {
		rc = ZSP_EINTERNAL;
	} else {
		/* an unrecorded decision is still told, but the host must not act on it */
		rc = r == 0 ? ZSP_OK : ZSP_EIO;
		*answer = zsp_decision_exit(v.decision);
		if (f)
			zsp_verdict_json(f, s->p->name, &req, &v, explain != 0, &x);
	}
	if (f && fclose(f) != 0)
		rc = ZSP_EINTERNAL;
	if (json && rc != ZSP_EINTERNAL)
		*json = buf;
	else
		free(buf);
	return rc;
}

int zsp_session_use_grants(zsp_session *s, zsp_grants *g, const char *thread, const char *project,
			   int record)
{
	char canon[PATH_MAX], hash[65];
	char *t = NULL, *pr = NULL;
	if (g) {
		if (project && (project[0] != '/' || !realpath(project, canon)))
			return ZSP_EUSAGE;
		t = thread ? strdup(thread) : NULL;
		pr = project ? strdup(canon) : NULL;
		if ((thread && !t) || (project && !pr) || zsp_policy_hash(s->ir, s->p, hash) != 0) {
			free(t);
			free(pr);
			return ZSP_EINTERNAL;
		}
		memcpy(s->hash, hash, sizeof(hash));
	}
	free(s->thread);
	free(s->project);
	s->thread = t;
	s->project = pr;
	s->record = g && record;
	zsp_decider_set_store(s->d, g ? g->store : NULL);
	return ZSP_OK;
}

/* ---- the grant store -------------------------------------------------------------------- */

int zsp_grants_open(const char *state_dir, zsp_grants **out, char **err)
{
	char msg[1024];
	*out = NULL;
	if (err)
		*err = NULL;
	if (state_dir && state_dir[0] != '/')
		return fail(err, ZSP_EUSAGE, "grant store: the state directory must be absolute (got '%s')",
			    state_dir);
	zsp_grants *g = calloc(1, sizeof(*g));
	if (!g)
		return fail(err, ZSP_EINTERNAL, "out of memory");
	/* an embedder's thread grants are its own: in this process's memory, gone with g */
	zsp_store_where where = { state_dir, NULL, true };
	if (zsp_store_open(&where, &g->store, msg, sizeof(msg)) != 0) {
		free(g);
		return fail(err, ZSP_EIO, "grant store: %s", msg);
	}
	*out = g;
	return ZSP_OK;
}

void zsp_grants_close(zsp_grants *g)
{
	if (!g)
		return;
	zsp_store_close(g->store);
	free(g);
}


int zsp_grants_add(zsp_grants *g, const struct zsp_grant_spec *spec, long long *id, char **err)
{
	char msg[1024], canon[PATH_MAX];
	if (err)
		*err = NULL;
	if (!spec)
		return fail(err, ZSP_EUSAGE, "grant store: invalid grant: none given");
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
			return fail(err, ZSP_EUSAGE, "grant store: invalid grant: the project must be an "
				    "existing absolute directory (got '%s')", spec->project);
		gr.project = canon;
	}
	/* a grant the store refuses to take is the caller's mistake; any other failure the store's */
	if (zsp_store_validate(&gr, msg, sizeof(msg)) != 0)
		return fail(err, ZSP_EUSAGE, "grant store: %s", msg);
	int64_t gid;
	if (zsp_store_add(g->store, &gr, &gid, msg, sizeof(msg)) != 0)
		return fail(err, ZSP_EIO, "grant store: %s", msg);
	if (id)
		*id = (long long)gid;
	return ZSP_OK;
}

int zsp_grants_revoke(zsp_grants *g, long long id, char **err)
{
	char msg[1024];
	if (err)
		*err = NULL;
	int r = zsp_store_revoke(g->store, (int64_t)id, msg, sizeof(msg));
	if (r < 0)
		return fail(err, ZSP_EIO, "grant store: %s", msg);
	return r == 1 ? fail(err, 1, "grant store: no grant %lld", id) : ZSP_OK;
}

int zsp_grants_end_thread(zsp_grants *g, const char *thread, int *removed, char **err)
{
	char msg[1024];
	int n = 0;
	if (err)
		*err = NULL;
	if (!thread || !*thread)
		return fail(err, ZSP_EUSAGE, "grant store: ending a thread needs its ID");
	if (zsp_store_end_thread(g->store, thread, &n, msg, sizeof(msg)) != 0)
		return fail(err, ZSP_EIO, "grant store: %s", msg);
	if (removed)
		*removed = n;
	return ZSP_OK;
}
