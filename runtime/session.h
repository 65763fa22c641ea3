/* session.h: libzsp's session (zsp.h) as the in-tree programs use it: the structured result
 * behind zsp_session_decide's JSON line, requests already parsed (test blocks), coverage, and
 * grant stores that keep thread grants on disk. One decision path: zspc --query, --batch and
 * --test, zsp-run -c and embedders all decide here. */
#ifndef ZSP_SESSION_H
#define ZSP_SESSION_H

#include <stdbool.h>
#include <stdio.h>

#include "compiler/oracle.h"
#include "compiler/zsp.h"
#include "runtime/store.h"

/* One decision. Everything it points to lives in the session until its next decision. */
typedef struct zsp_session_result {
	int status;                  /* ZSP_OK; ZSP_EUSAGE: a malformed request (error says why);
				      * ZSP_EIO: decided but not recorded: do not act on it */
	int answer;                  /* enum zsp_answer; ZSP_ANSWER_DENY unless a decision was made */
	const char *error;
	const zsp_ir_request *req;   /* NULL for a malformed request */
	const zsp_verdict *v;        /* the verdict, a grant's answer written in */
	const zsp_verdict_extra *x;  /* the grant that answered, store and audit errors */
} zsp_session_result;

/* A session of the in-tree programs, which compile with the values they mean (zspc --query the
 * machine's built-ins, a test block its own definitions): it fills no parameter and refuses
 * none, and a rule on a parameter without a value is passed over (doc/oracle.md). Its oracle
 * judges paths as written only when env->resolve_symlinks is false. */
int zsp_session_new_env(const zsp_policy_set *set, const char *policy, const zsp_oracle_env *env,
			zsp_session **out);

/* Decides request text, or a request already parsed (its strings must outlive the call). Both
 * fill *r and return r->status (ZSP_EINTERNAL on out-of-memory). */
int zsp_session_decide_text(zsp_session *s, const char *request, bool explain, zsp_session_result *r);
int zsp_session_decide_req(zsp_session *s, const zsp_ir_request *req, bool explain,
			   zsp_session_result *r);

/* The one JSON form of a result (doc/oracle.md "JSON"): the line zsp_session_decide returns. */
void zsp_session_result_json(FILE *f, const zsp_session *s, const zsp_session_result *r);

const zsp_ir_policy *zsp_session_policy(const zsp_session *s);
const unsigned *zsp_session_hits(const zsp_session *s, size_t *n);

/* The grant store at where (thread grants on disk in its runtime directory unless
 * where->threads_in_memory), for zsp-run -c and zspc --query. As zsp_grants_open. */
int zsp_grants_open_at(const zsp_store_where *where, zsp_grants **out, char *err, size_t errlen);
/* The grants were asked for (thread, project or record) but the store cannot be opened: every
 * decision says why (store_error) and, with record, fails with ZSP_EIO (nothing is recorded). */
int zsp_session_grants_missing(zsp_session *s, const char *why, const char *thread,
			       const char *project, int record);

#endif
