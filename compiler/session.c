/* session.c: the oracle behind libzsp's public API (zsp.h): one policy, one machine, many
 * requests, answers as an enum and as the JSON line zspc --format json prints. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/decide.h"
#include "compile.h"
#include "oracle.h"

struct zsp_session {
	const zsp_ir_policy *p;
	zsp_decider *d;      /* the oracle (without a grant store) */
};

void zsp_session_free(zsp_session *s)
{
	if (!s)
		return;
	zsp_decider_free(s->d);
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
	int r = zsp_decider_verdict(s->d, request, explain != 0, NULL, NULL, false, NULL, &req, &v,
				    &x, err, sizeof(err));
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
