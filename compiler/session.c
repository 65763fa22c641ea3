/* session.c: the oracle behind libzsp's public API (zsp.h): one policy, one machine, many
 * requests, answers as an enum and as the JSON line zspc --format json prints. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "oracle.h"

struct zsp_session {
	const zsp_ir_policy *p;
	zsp_oracle_env env;
	char *workspace, *home;
	zsp_oracle *o;
	zsp_arena *a;        /* reset for each decision */
};

void zsp_session_free(zsp_session *s)
{
	if (!s)
		return;
	zsp_oracle_free(s->o);
	zsp_arena_free(s->a);
	free(s->workspace);
	free(s->home);
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
	s->p = p;
	s->workspace = workspace ? strdup(workspace) : NULL;
	s->home = home ? strdup(home) : NULL;
	s->env.workspace = s->workspace;
	s->env.home = s->home;
	s->env.resolve_symlinks = true;
	s->o = zsp_oracle_new(p, &s->env);
	s->a = zsp_arena_new();
	if (!s->o || !s->a || (workspace && !s->workspace) || (home && !s->home)) {
		zsp_session_free(s);
		return ZSP_EINTERNAL;
	}
	*out = s;
	return ZSP_OK;
}

int zsp_session_decide(zsp_session *s, const char *request, int explain, int *answer,
		       char **json)
{
	zsp_arena *a = s->a;
	zsp_ir_request req;
	zsp_verdict v;
	char err[256];
	char *buf = NULL;
	size_t len = 0;
	int rc = ZSP_OK;
	if (json)
		*json = NULL;
	zsp_arena_reset(a);
	FILE *f = json ? open_memstream(&buf, &len) : NULL;
	if (json && !f)
		return ZSP_EINTERNAL;
	if (zsp_request_parse(a, request, &req, err, sizeof(err)) != 0) {
		rc = ZSP_EUSAGE;
		if (f) {
			fputs("{\"decision\":\"error\",\"error\":", f);
			zsp_json_string(f, err);
			fputs("}\n", f);
		}
	} else if (zsp_oracle_decide(s->o, a, &req, explain != 0, &v) != 0) {
		rc = ZSP_EINTERNAL;
	} else {
		*answer = zsp_decision_exit(v.decision);
		if (f)
			zsp_verdict_json(f, s->p->name, &req, &v, explain != 0);
	}
	if (f && fclose(f) != 0)
		rc = ZSP_EINTERNAL;
	if (json && rc != ZSP_EINTERNAL)
		*json = buf;
	else
		free(buf);
	return rc;
}
