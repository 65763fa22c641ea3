/* decide.h: the one decider: the oracle (doc/oracle.md), then, only when it says `ask`, the
 * grant store, then the audit trail. The session (runtime/session.c) is its only caller; zspc,
 * zsp-run and embedders all decide through the session. */
#ifndef ZSP_DECIDE_H
#define ZSP_DECIDE_H

#include <stdbool.h>

#include "compiler/ir.h"
#include "compiler/oracle.h"
#include "runtime/store.h"

typedef struct zsp_decider zsp_decider;

/* A decider for policy p (must outlive it), with env copied. NULL on out-of-memory. */
zsp_decider *zsp_decider_new(const zsp_ir_policy *p, const zsp_oracle_env *env);
void zsp_decider_free(zsp_decider *d);

/* The shell terminal requests are judged for from now on (env.shell; copied; NULL: /bin/sh).
 * ZSP_OK, or ZSP_EINTERNAL on out-of-memory (the shell is then unchanged). */
int zsp_decider_set_shell(zsp_decider *d, const char *shell);

/* What a decision is recorded with; members may be NULL. */
typedef struct zsp_decide_ctx {
	zsp_store *store;        /* grants and the audit trail; NULL: none */
	const char *store_error; /* why the store the caller wanted is missing */
	const char *thread, *project;
	bool record;             /* append the decision to the audit trail */
	const char *policy_hash; /* hex sha-256 of the policy's IR, for the trail */
} zsp_decide_ctx;

/* Decides req (parsed from request, the text the audit trail keeps) with the oracle, then the
 * grants on an ask: a grant's answer is written into v (reason "grant", rule "grant N", no
 * location) and x->grant is N. A store that cannot be read leaves the oracle's answer (never an
 * allow) and sets x->store_error. With ctx->record the decision is appended to the audit trail.
 * Strings live in arena a. ZSP_OK; ZSP_EINTERNAL on out-of-memory; ZSP_EIO when the decision had
 * to be recorded and was not (v and x are filled, x->audit_error says why): not a decision to
 * act on (doc/store.md "When the audit trail cannot be written"). */
int zsp_decider_decide(zsp_decider *d, zsp_arena *a, const char *request, const zsp_ir_request *req,
		       bool explain, const zsp_decide_ctx *ctx, zsp_verdict *v, zsp_verdict_extra *x);

/* Appends what a person answered at a prompt (reason "prompt", rule how) to the audit trail.
 * ZSP_OK, or ZSP_EIO with why in err. */
int zsp_decider_record_answer(zsp_decider *d, const char *request, int answer, const char *how,
			      const zsp_decide_ctx *ctx, char *err, size_t errlen);

/* Whether the arguments of a request of kind are paths (the path tools, read, write, exec). */
bool zsp_decider_path_request(const char *kind);

/* Coverage: how many decisions each rule took part in (zsp_oracle_hits). */
const unsigned *zsp_decider_hits(const zsp_decider *d, size_t *n);

/* The account of the real uid (the password database, else the uid in decimal; never $USER,
 * which the agent sets), for grants and the audit trail. Static storage. */
const char *zsp_decider_user(void);

/* The policy's fingerprint for the audit trail: the hex SHA-256 of the IR JSON of a set holding
 * only p, as `zspc --emit ir` prints a file with that one policy and no tests. Returns an enum
 * zsp_status (zsp.h): ZSP_OK, or ZSP_EINTERNAL on out-of-memory. */
int zsp_policy_hash(const zsp_ir *ir, const zsp_ir_policy *p, char hex[65]);

#endif
